#pragma once
// Normalization layers (torch.nn.BatchNorm1d, BatchNorm2d, LayerNorm) with PyTorch's
// constructor arguments, parameter/buffer names and train/eval behaviour.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/nn/module.h"

namespace weft::nn {

// The shared part of BatchNorm1d/2d (torch's _BatchNorm). Parameters weight [C] and bias [C]
// (when affine); buffers running_mean [C], running_var [C] and num_batches_tracked (int64
// scalar) when track_running_stats. Training normalizes with batch statistics and updates the
// running ones; eval uses the running ones. momentum = nullopt means a cumulative average.
class BatchNormBase : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  void reset_running_stats();
  void reset_parameters();  // weight = 1, bias = 0, and the running stats reset

  std::int64_t num_features;
  double eps;
  std::optional<double> momentum;
  bool affine;
  bool track_running_stats;
  Tensor weight;  // undefined unless affine
  Tensor bias;
  Tensor running_mean;  // undefined unless track_running_stats
  Tensor running_var;
  Tensor num_batches_tracked;

 protected:
  BatchNormBase(std::int64_t num_features, double eps, std::optional<double> momentum, bool affine,
                bool track_running_stats);
  // Throws torch's message when the input's rank is wrong for this layer.
  virtual void check_input_dim(const Tensor& input) const = 0;
};

// Over [N, C] or [N, C, L] inputs.
class BatchNorm1d : public BatchNormBase {
 public:
  explicit BatchNorm1d(std::int64_t num_features, double eps = 1e-5,
                       std::optional<double> momentum = 0.1, bool affine = true,
                       bool track_running_stats = true);

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Over [N, C, H, W] inputs.
class BatchNorm2d : public BatchNormBase {
 public:
  explicit BatchNorm2d(std::int64_t num_features, double eps = 1e-5,
                       std::optional<double> momentum = 0.1, bool affine = true,
                       bool track_running_stats = true);

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Normalizes over the trailing dims given by normalized_shape; weight (ones) and bias (zeros)
// of that shape when elementwise_affine.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(std::vector<std::int64_t> normalized_shape, double eps = 1e-5,
                     bool elementwise_affine = true);

  Tensor forward(const Tensor& input) override;
  void reset_parameters();

  std::vector<std::int64_t> normalized_shape;
  double eps;
  bool elementwise_affine;
  Tensor weight;  // undefined unless elementwise_affine
  Tensor bias;
};

// torch.nn.RMSNorm: x / sqrt(mean(x²) + eps) over the trailing dims of normalized_shape, times
// weight (ones) when elementwise_affine; eps absent: the epsilon of the input's type.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(std::vector<std::int64_t> normalized_shape,
                   std::optional<double> eps = std::nullopt, bool elementwise_affine = true);

  Tensor forward(const Tensor& input) override;
  void reset_parameters();

  std::vector<std::int64_t> normalized_shape;
  std::optional<double> eps;
  bool elementwise_affine;
  Tensor weight;  // undefined unless elementwise_affine
};

}  // namespace weft::nn
