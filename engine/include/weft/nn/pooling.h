#pragma once
// Pooling layers (torch.nn.MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool2d/3d,
// AdaptiveMaxPool1d/2d): stateless, with
// options structs in the style of conv.h:
//   MaxPool2d(2)                                          // kernel_size (stride = kernel_size)
//   MaxPool2d(MaxPool2dOptions(3).stride(2).padding(1))
// Left out: return_indices, AvgPool's divisor_override, None in the adaptive pools' sizes.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "weft/nn/conv.h"  // ExpandingArray
#include "weft/nn/module.h"

namespace weft::nn {

#define WEFT_POOL_ARG(Options, Type, name) \
  Options& name(const Type& value) {       \
    name##_ = value;                       \
    return *this;                          \
  }                                        \
  const Type& name() const {               \
    return name##_;                        \
  }

// stride defaults to kernel_size (Python's stride=None).
template <std::size_t D>
class MaxPoolOptions {
 public:
  MaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  WEFT_POOL_ARG(MaxPoolOptions, ExpandingArray<D>, kernel_size)
  MaxPoolOptions& stride(const ExpandingArray<D>& value) {
    stride_ = value;
    return *this;
  }
  const std::optional<ExpandingArray<D>>& stride() const { return stride_; }
  WEFT_POOL_ARG(MaxPoolOptions, ExpandingArray<D>, padding)
  WEFT_POOL_ARG(MaxPoolOptions, ExpandingArray<D>, dilation)
  WEFT_POOL_ARG(MaxPoolOptions, bool, ceil_mode)

 private:
  ExpandingArray<D> kernel_size_;
  std::optional<ExpandingArray<D>> stride_;
  ExpandingArray<D> padding_ = 0;
  ExpandingArray<D> dilation_ = 1;
  bool ceil_mode_ = false;
};

template <std::size_t D>
class AvgPoolOptions {
 public:
  AvgPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  WEFT_POOL_ARG(AvgPoolOptions, ExpandingArray<D>, kernel_size)
  AvgPoolOptions& stride(const ExpandingArray<D>& value) {
    stride_ = value;
    return *this;
  }
  const std::optional<ExpandingArray<D>>& stride() const { return stride_; }
  WEFT_POOL_ARG(AvgPoolOptions, ExpandingArray<D>, padding)
  WEFT_POOL_ARG(AvgPoolOptions, bool, ceil_mode)
  WEFT_POOL_ARG(AvgPoolOptions, bool, count_include_pad)

 private:
  ExpandingArray<D> kernel_size_;
  std::optional<ExpandingArray<D>> stride_;
  ExpandingArray<D> padding_ = 0;
  bool ceil_mode_ = false;
  bool count_include_pad_ = true;
};

#undef WEFT_POOL_ARG

using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool2dOptions = MaxPoolOptions<2>;
using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool2dOptions = AvgPoolOptions<2>;
using MaxPool3dOptions = MaxPoolOptions<3>;
using AvgPool3dOptions = AvgPoolOptions<3>;

template <std::size_t D>
class MaxPoolNd : public Module {
 public:
  explicit MaxPoolNd(MaxPoolOptions<D> options) : options(std::move(options)) {}
  explicit MaxPoolNd(ExpandingArray<D> kernel_size) : options(kernel_size) {}
  Tensor forward(const Tensor& input) override;
  MaxPoolOptions<D> options;
};

template <std::size_t D>
class AvgPoolNd : public Module {
 public:
  explicit AvgPoolNd(AvgPoolOptions<D> options) : options(std::move(options)) {}
  explicit AvgPoolNd(ExpandingArray<D> kernel_size) : options(kernel_size) {}
  Tensor forward(const Tensor& input) override;
  AvgPoolOptions<D> options;
};

class MaxPool1d : public MaxPoolNd<1> {
 public:
  using MaxPoolNd<1>::MaxPoolNd;
};
class MaxPool2d : public MaxPoolNd<2> {
 public:
  using MaxPoolNd<2>::MaxPoolNd;
};
class AvgPool1d : public AvgPoolNd<1> {
 public:
  using AvgPoolNd<1>::AvgPoolNd;
};
class AvgPool2d : public AvgPoolNd<2> {
 public:
  using AvgPoolNd<2>::AvgPoolNd;
};
class MaxPool3d : public MaxPoolNd<3> {
 public:
  using MaxPoolNd<3>::MaxPoolNd;
};
class AvgPool3d : public AvgPoolNd<3> {
 public:
  using AvgPoolNd<3>::AvgPoolNd;
};

// Averages [N, C, H, W] or [C, H, W] inputs down to output_size = {H_out, W_out} (or one size
// for both).
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(ExpandingArray<2> output_size) : output_size(output_size) {}
  Tensor forward(const Tensor& input) override;
  ExpandingArray<2> output_size;
};

// The maximum of each adaptive window of [N, C, L] or [C, L] inputs, output_size = L_out.
class AdaptiveMaxPool1d : public Module {
 public:
  explicit AdaptiveMaxPool1d(std::int64_t output_size) : output_size(output_size) {}
  Tensor forward(const Tensor& input) override;
  std::int64_t output_size;
};

// The maximum of each adaptive window of [N, C, H, W] or [C, H, W] inputs, output_size =
// {H_out, W_out} (or one size for both).
class AdaptiveMaxPool2d : public Module {
 public:
  explicit AdaptiveMaxPool2d(ExpandingArray<2> output_size) : output_size(output_size) {}
  Tensor forward(const Tensor& input) override;
  ExpandingArray<2> output_size;
};

// Averages [N, C, T, H, W] or [C, T, H, W] inputs down to output_size = {T_out, H_out, W_out}
// (or one size for all three).
class AdaptiveAvgPool3d : public Module {
 public:
  explicit AdaptiveAvgPool3d(ExpandingArray<3> output_size) : output_size(output_size) {}
  Tensor forward(const Tensor& input) override;
  ExpandingArray<3> output_size;
};

}  // namespace weft::nn
