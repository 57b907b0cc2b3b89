// Normalization layers. Forward follows torch/nn/modules/batchnorm.py and normalization.py:
// which statistics to use and the momentum factor are decided here; the arithmetic is in
// ops/norm.cpp.
#include "weft/nn/normalization.h"

#include <string>
#include <utility>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::nn {

BatchNormBase::BatchNormBase(std::int64_t num_features_, double eps_,
                             std::optional<double> momentum_, bool affine_,
                             bool track_running_stats_)
    : num_features(num_features_),
      eps(eps_),
      momentum(momentum_),
      affine(affine_),
      track_running_stats(track_running_stats_) {
  if (num_features < 0) {
    throw Error("num_features must be non-negative, got " + std::to_string(num_features));
  }
  // Registration order gives torch's state_dict order: weight, bias, running_mean, running_var,
  // num_batches_tracked.
  if (affine) {
    weight = register_parameter("weight", ones({num_features}));
    bias = register_parameter("bias", zeros({num_features}));
  }
  if (track_running_stats) {
    running_mean = register_buffer("running_mean", zeros({num_features}));
    running_var = register_buffer("running_var", ones({num_features}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, dtype(Dtype::Int64)));
  }
}

void BatchNormBase::reset_running_stats() {
  if (!track_running_stats) return;
  autograd::NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1.0);
  num_batches_tracked.zero_();
}

void BatchNormBase::reset_parameters() {
  reset_running_stats();
  if (!affine) return;
  autograd::NoGradGuard no_grad;
  weight.fill_(1.0);
  bias.zero_();
}

Tensor BatchNormBase::forward(const Tensor& input) {
  check_input_dim(input);
  double factor = momentum.value_or(0.0);
  if (is_training() && track_running_stats) {
    autograd::NoGradGuard no_grad;
    num_batches_tracked.fill_(num_batches_tracked.item() + 1);
    // momentum = None: a cumulative moving average, 1/num_batches_tracked.
    if (!momentum) factor = 1.0 / num_batches_tracked.item();
  }
  // Batch statistics in training, or in eval when there are no running ones.
  const bool use_batch_stats = is_training() || !running_mean.defined();
  // The running stats are updated only when they are tracked and we are training.
  const bool pass_running = !is_training() || track_running_stats;
  return batch_norm(input, pass_running ? running_mean : Tensor(),
                    pass_running ? running_var : Tensor(), weight, bias, use_batch_stats, factor,
                    eps);
}

BatchNorm1d::BatchNorm1d(std::int64_t num_features_, double eps_, std::optional<double> momentum_,
                         bool affine_, bool track_running_stats_)
    : BatchNormBase(num_features_, eps_, momentum_, affine_, track_running_stats_) {}

void BatchNorm1d::check_input_dim(const Tensor& input) const {
  if (input.dim() != 2 && input.dim() != 3) {
    throw Error("expected 2D or 3D input (got " + std::to_string(input.dim()) + "D input)");
  }
}

BatchNorm2d::BatchNorm2d(std::int64_t num_features_, double eps_, std::optional<double> momentum_,
                         bool affine_, bool track_running_stats_)
    : BatchNormBase(num_features_, eps_, momentum_, affine_, track_running_stats_) {}

void BatchNorm2d::check_input_dim(const Tensor& input) const {
  if (input.dim() != 4) {
    throw Error("expected 4D input (got " + std::to_string(input.dim()) + "D input)");
  }
}

LayerNorm::LayerNorm(std::vector<std::int64_t> normalized_shape_, double eps_,
                     bool elementwise_affine_)
    : normalized_shape(std::move(normalized_shape_)),
      eps(eps_),
      elementwise_affine(elementwise_affine_) {
  for (std::int64_t s : normalized_shape) {
    if (s < 0) {
      throw Error("LayerNorm: normalized_shape must be non-negative, got " +
                  shape_str(normalized_shape));
    }
  }
  if (elementwise_affine) {
    weight = register_parameter("weight", ones(normalized_shape));
    bias = register_parameter("bias", zeros(normalized_shape));
  }
}

void LayerNorm::reset_parameters() {
  if (!elementwise_affine) return;
  autograd::NoGradGuard no_grad;
  weight.fill_(1.0);
  bias.zero_();
}

Tensor LayerNorm::forward(const Tensor& input) {
  return layer_norm(input, normalized_shape, weight, bias, eps);
}

RMSNorm::RMSNorm(std::vector<std::int64_t> normalized_shape_, std::optional<double> eps_,
                 bool elementwise_affine_)
    : normalized_shape(std::move(normalized_shape_)),
      eps(eps_),
      elementwise_affine(elementwise_affine_) {
  for (std::int64_t s : normalized_shape) {
    if (s < 0) {
      throw Error("RMSNorm: normalized_shape must be non-negative, got " +
                  shape_str(normalized_shape));
    }
  }
  if (elementwise_affine) weight = register_parameter("weight", ones(normalized_shape));
}

void RMSNorm::reset_parameters() {
  if (!elementwise_affine) return;
  autograd::NoGradGuard no_grad;
  weight.fill_(1.0);
}

Tensor RMSNorm::forward(const Tensor& input) {
  return rms_norm(input, normalized_shape, weight, eps);
}

}  // namespace weft::nn
