#pragma once
// Convolution layers (torch.nn.Conv1d, Conv2d). Arguments come as an options struct with
// chained setters, named like LibTorch's:
//   Conv2d(1, 32, 3)                                        // in, out, kernel_size
//   Conv2d(Conv2dOptions(1, 32, 3).stride(2).padding(1))    // anything else
// Defaults are Python's: stride 1, padding 0, dilation 1, groups 1, bias true, "zeros".

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "weft/nn/module.h"

namespace weft::nn {

// D sizes given as one number for every dim (3 → {3, 3}) or one per dim ({3, 5}), like
// LibTorch's ExpandingArray and Python's int-or-tuple arguments. Also used by pooling.h.
template <std::size_t D>
class ExpandingArray {
 public:
  ExpandingArray(std::int64_t value) { values_.fill(value); }  // NOLINT: implicit on purpose
  ExpandingArray(std::initializer_list<std::int64_t> values)
      : ExpandingArray(std::vector<std::int64_t>(values)) {}
  ExpandingArray(const std::vector<std::int64_t>& values);  // NOLINT: implicit on purpose

  std::vector<std::int64_t> vec() const { return {values_.begin(), values_.end()}; }
  std::int64_t operator[](std::size_t i) const { return values_[i]; }
  static constexpr std::size_t size() { return D; }

 private:
  std::array<std::int64_t, D> values_{};
};

// Convolution arguments. padding is sizes or one of the strings "valid" / "same".
template <std::size_t D>
class ConvOptions {
 public:
  using Padding = std::variant<ExpandingArray<D>, std::string>;

  ConvOptions(std::int64_t in_channels, std::int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}

#define WEFT_CONV_ARG(Type, name)        \
  ConvOptions& name(const Type& value) { \
    name##_ = value;                     \
    return *this;                        \
  }                                      \
  const Type& name() const {             \
    return name##_;                      \
  }

  WEFT_CONV_ARG(std::int64_t, in_channels)
  WEFT_CONV_ARG(std::int64_t, out_channels)
  WEFT_CONV_ARG(ExpandingArray<D>, kernel_size)
  WEFT_CONV_ARG(ExpandingArray<D>, stride)
  WEFT_CONV_ARG(Padding, padding)
  WEFT_CONV_ARG(ExpandingArray<D>, dilation)
  WEFT_CONV_ARG(std::int64_t, groups)
  WEFT_CONV_ARG(bool, bias)
  // "zeros", "reflect", "replicate" or "circular".
  WEFT_CONV_ARG(std::string, padding_mode)
#undef WEFT_CONV_ARG
  // padding(1) and padding("same") without spelling the variant.
  ConvOptions& padding(std::int64_t value) {
    return padding(Padding(ExpandingArray<D>(value)));
  }
  ConvOptions& padding(std::initializer_list<std::int64_t> value) {
    return padding(Padding(ExpandingArray<D>(value)));
  }
  ConvOptions& padding(const char* value) {
    return padding(Padding(std::string(value)));
  }

 private:
  std::int64_t in_channels_;
  std::int64_t out_channels_;
  ExpandingArray<D> kernel_size_;
  ExpandingArray<D> stride_ = 1;
  Padding padding_ = ExpandingArray<D>(0);
  ExpandingArray<D> dilation_ = 1;
  std::int64_t groups_ = 1;
  bool bias_ = true;
  std::string padding_mode_ = "zeros";
};

using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;

// The shared part of Conv1d/Conv2d (torch's _ConvNd): weight [out, in / groups, *kernel_size]
// and bias [out], initialised by reset_parameters as PyTorch does.
template <std::size_t D>
class ConvNd : public Module {
 public:
  explicit ConvNd(ConvOptions<D> options);
  ConvNd(std::int64_t in_channels, std::int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvNd(ConvOptions<D>(in_channels, out_channels, kernel_size)) {}

  Tensor forward(const Tensor& input) override;
  // weight: kaiming_uniform_(a = √5), i.e. U(±1/√fan_in); bias: U(±1/√fan_in).
  void reset_parameters();

  ConvOptions<D> options;
  Tensor weight;
  Tensor bias;  // undefined when options.bias() is false

 private:
  // Explicit (left, right) padding per dim from the padding option ("same" may be uneven).
  std::vector<std::int64_t> left_padding_;
  std::vector<std::int64_t> right_padding_;
};

class Conv1d : public ConvNd<1> {
 public:
  using ConvNd<1>::ConvNd;
};

class Conv2d : public ConvNd<2> {
 public:
  using ConvNd<2>::ConvNd;
};

}  // namespace weft::nn
