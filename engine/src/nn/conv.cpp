// Convolution layers, following torch/nn/modules/conv.py: argument checks in the constructor,
// non-"zeros" padding modes and uneven "same" padding done by padding the input first.
#include "weft/nn/conv.h"

#include <cmath>
#include <string>

#include "weft/error.h"
#include "weft/nn/init.h"
#include "weft/ops.h"

namespace weft::nn {

template <std::size_t D>
ExpandingArray<D>::ExpandingArray(const std::vector<std::int64_t>& values) {
  if (values.size() != D) {
    throw Error("expected " + std::to_string(D) + " values, but got " +
                std::to_string(values.size()) + ": " + shape_str(values));
  }
  for (std::size_t i = 0; i < D; ++i) values_[i] = values[i];
}

template <std::size_t D>
ConvNd<D>::ConvNd(ConvOptions<D> options_) : options(std::move(options_)) {
  const std::int64_t in = options.in_channels(), out = options.out_channels();
  const std::int64_t groups = options.groups();
  if (groups <= 0) throw Error("groups must be a positive integer");
  if (in % groups != 0) throw Error("in_channels must be divisible by groups");
  if (out % groups != 0) throw Error("out_channels must be divisible by groups");
  const std::string& mode = options.padding_mode();
  if (mode != "zeros" && mode != "reflect" && mode != "replicate" && mode != "circular") {
    throw Error(
        "padding_mode must be one of {'zeros', 'reflect', 'replicate', 'circular'}, but got "
        "padding_mode='" +
        mode + "'");
  }
  left_padding_.assign(D, 0);
  right_padding_.assign(D, 0);
  if (const auto* name = std::get_if<std::string>(&options.padding())) {
    if (*name != "valid" && *name != "same") {
      throw Error("Invalid padding string '" + *name + "', should be one of {'valid', 'same'}");
    }
    if (*name == "same") {
      for (std::size_t d = 0; d < D; ++d) {
        if (options.stride()[d] != 1) {
          throw Error("padding='same' is not supported for strided convolutions");
        }
        // Total padding dilation·(k − 1); the extra element of an odd total goes on the right.
        const std::int64_t total = options.dilation()[d] * (options.kernel_size()[d] - 1);
        left_padding_[d] = total / 2;
        right_padding_[d] = total - total / 2;
      }
    }
  } else {
    const auto& sizes = std::get<ExpandingArray<D>>(options.padding());
    for (std::size_t d = 0; d < D; ++d) {
      if (sizes[d] < 0) throw Error("negative padding is not supported");
      left_padding_[d] = right_padding_[d] = sizes[d];
    }
  }
  std::vector<std::int64_t> shape{out, in / groups};
  for (std::size_t d = 0; d < D; ++d) shape.push_back(options.kernel_size()[d]);
  weight = register_parameter("weight", weft::empty(shape));
  if (options.bias()) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

template <std::size_t D>
void ConvNd<D>::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (!bias.defined()) return;
  const std::int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
  if (fan_in == 0) {
    init::zeros_(bias);  // PyTorch leaves it uninitialised memory
    return;
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  init::uniform_(bias, -bound, bound);
}

template <std::size_t D>
Tensor ConvNd<D>::forward(const Tensor& input) {
  Tensor x = input;
  std::vector<std::int64_t> padding = left_padding_;
  const bool uneven = left_padding_ != right_padding_;
  if (options.padding_mode() != "zeros" || uneven) {
    // F.pad takes (left, right) pairs starting from the last dim.
    std::vector<std::int64_t> pads;
    for (std::size_t d = D; d-- > 0;) {
      pads.push_back(left_padding_[d]);
      pads.push_back(right_padding_[d]);
    }
    const std::string mode =
        options.padding_mode() == "zeros" ? "constant" : options.padding_mode();
    x = pad(x, pads, mode);
    padding.assign(D, 0);
  }
  const std::vector<std::int64_t> stride = options.stride().vec();
  const std::vector<std::int64_t> dilation = options.dilation().vec();
  if constexpr (D == 1) {
    return conv1d(x, weight, bias, stride, padding, dilation, options.groups());
  } else {
    return conv2d(x, weight, bias, stride, padding, dilation, options.groups());
  }
}

template class ExpandingArray<1>;
template class ExpandingArray<2>;
template class ExpandingArray<3>;  // 3-D pooling layers (conv stays 1-D and 2-D)
template class ConvNd<1>;
template class ConvNd<2>;

}  // namespace weft::nn
