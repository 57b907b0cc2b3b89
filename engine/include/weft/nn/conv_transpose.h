#pragma once
// Transposed convolution layers (torch.nn.ConvTranspose1d, ConvTranspose2d), named like
// LibTorch's:
//   ConvTranspose2d(16, 8, 4)                                                // in, out, kernel
//   ConvTranspose2d(ConvTranspose2dOptions(16, 8, 4).stride(2).padding(1))   // anything else
// Defaults are Python's: stride 1, padding 0, output_padding 0, groups 1, bias true, dilation 1.
// Only the "zeros" padding mode exists, as in PyTorch.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/nn/conv.h"  // ExpandingArray
#include "weft/nn/module.h"

namespace weft::nn {

template <std::size_t D>
class ConvTransposeOptions {
 public:
  ConvTransposeOptions(std::int64_t in_channels, std::int64_t out_channels,
                       ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}

#define WEFT_CONV_TRANSPOSE_ARG(Type, name)       \
  ConvTransposeOptions& name(const Type& value) { \
    name##_ = value;                              \
    return *this;                                 \
  }                                               \
  const Type& name() const {                      \
    return name##_;                               \
  }

  WEFT_CONV_TRANSPOSE_ARG(std::int64_t, in_channels)
  WEFT_CONV_TRANSPOSE_ARG(std::int64_t, out_channels)
  WEFT_CONV_TRANSPOSE_ARG(ExpandingArray<D>, kernel_size)
  WEFT_CONV_TRANSPOSE_ARG(ExpandingArray<D>, stride)
  WEFT_CONV_TRANSPOSE_ARG(ExpandingArray<D>, padding)
  WEFT_CONV_TRANSPOSE_ARG(ExpandingArray<D>, output_padding)
  WEFT_CONV_TRANSPOSE_ARG(std::int64_t, groups)
  WEFT_CONV_TRANSPOSE_ARG(bool, bias)
  WEFT_CONV_TRANSPOSE_ARG(ExpandingArray<D>, dilation)
  WEFT_CONV_TRANSPOSE_ARG(std::string, padding_mode)
#undef WEFT_CONV_TRANSPOSE_ARG

 private:
  std::int64_t in_channels_;
  std::int64_t out_channels_;
  ExpandingArray<D> kernel_size_;
  ExpandingArray<D> stride_ = 1;
  ExpandingArray<D> padding_ = 0;
  ExpandingArray<D> output_padding_ = 0;
  std::int64_t groups_ = 1;
  bool bias_ = true;
  ExpandingArray<D> dilation_ = 1;
  std::string padding_mode_ = "zeros";
};

using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;

// weight [in, out / groups, *kernel_size] and bias [out], initialised as PyTorch's _ConvNd does
// (its fan-in is read from that weight: out / groups times the kernel).
template <std::size_t D>
class ConvTransposeNd : public Module {
 public:
  explicit ConvTransposeNd(ConvTransposeOptions<D> options);
  ConvTransposeNd(std::int64_t in_channels, std::int64_t out_channels,
                  ExpandingArray<D> kernel_size)
      : ConvTransposeNd(ConvTransposeOptions<D>(in_channels, out_channels, kernel_size)) {}

  Tensor forward(const Tensor& input) override;
  // output_size: the spatial sizes wanted (or with the batch and channel dims in front); the
  // output_padding that gives them is worked out per call, as torch's forward(input,
  // output_size) does. Sizes outside what the stride can reach are an error.
  Tensor forward(const Tensor& input, const std::vector<std::int64_t>& output_size);
  void reset_parameters();

  ConvTransposeOptions<D> options;
  Tensor weight;
  Tensor bias;  // undefined when options.bias() is false

 private:
  Tensor run(const Tensor& input, const std::vector<std::int64_t>& output_padding);
};

class ConvTranspose1d : public ConvTransposeNd<1> {
 public:
  using ConvTransposeNd<1>::ConvTransposeNd;
  using ConvTransposeNd<1>::forward;
};

class ConvTranspose2d : public ConvTransposeNd<2> {
 public:
  using ConvTransposeNd<2>::ConvTransposeNd;
  using ConvTransposeNd<2>::forward;
};

}  // namespace weft::nn
