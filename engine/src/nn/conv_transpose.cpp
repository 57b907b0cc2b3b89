// Transposed convolution layers, following torch/nn/modules/conv.py (_ConvTransposeNd): the
// constructor's checks, PyTorch's initialisation, and _output_padding for a requested size.
#include "weft/nn/conv_transpose.h"

#include <cmath>
#include <string>
#include <vector>

#include "weft/error.h"
#include "weft/nn/init.h"
#include "weft/ops.h"

namespace weft::nn {

template <std::size_t D>
ConvTransposeNd<D>::ConvTransposeNd(ConvTransposeOptions<D> options_)
    : options(std::move(options_)) {
  const std::int64_t in = options.in_channels(), out = options.out_channels();
  const std::int64_t groups = options.groups();
  if (groups <= 0) throw Error("groups must be a positive integer");
  if (in % groups != 0) throw Error("in_channels must be divisible by groups");
  if (out % groups != 0) throw Error("out_channels must be divisible by groups");
  if (options.padding_mode() != "zeros") {
    throw Error("Only \"zeros\" padding mode is supported for ConvTranspose" + std::to_string(D) +
                "d");
  }
  std::vector<std::int64_t> shape{in, out / groups};
  for (std::size_t d = 0; d < D; ++d) shape.push_back(options.kernel_size()[d]);
  weight = register_parameter("weight", weft::empty(shape));
  if (options.bias()) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

template <std::size_t D>
void ConvTransposeNd<D>::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (!bias.defined()) return;
  const std::int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
  if (fan_in == 0) {
    init::zeros_(bias);
    return;
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  init::uniform_(bias, -bound, bound);
}

template <std::size_t D>
Tensor ConvTransposeNd<D>::run(const Tensor& input,
                               const std::vector<std::int64_t>& output_padding) {
  const std::vector<std::int64_t> stride = options.stride().vec();
  const std::vector<std::int64_t> padding = options.padding().vec();
  const std::vector<std::int64_t> dilation = options.dilation().vec();
  if constexpr (D == 1) {
    return conv_transpose1d(input, weight, bias, stride, padding, output_padding, options.groups(),
                            dilation);
  } else {
    return conv_transpose2d(input, weight, bias, stride, padding, output_padding, options.groups(),
                            dilation);
  }
}

template <std::size_t D>
Tensor ConvTransposeNd<D>::forward(const Tensor& input) {
  return run(input, options.output_padding().vec());
}

template <std::size_t D>
Tensor ConvTransposeNd<D>::forward(const Tensor& input,
                                   const std::vector<std::int64_t>& output_size) {
  const std::int64_t spatial_start = input.dim() - static_cast<std::int64_t>(D);
  std::vector<std::int64_t> wanted = output_size;
  if (wanted.size() == D + 1 || wanted.size() == D + 2) {
    wanted.erase(wanted.begin(), wanted.end() - static_cast<std::ptrdiff_t>(D));
  }
  if (wanted.size() != D) {
    throw Error("ConvTranspose" + std::to_string(D) + "D: for " + std::to_string(input.dim()) +
                "D input, output_size must have " + std::to_string(D) + " or " +
                std::to_string(D + 2) + " elements (got " + std::to_string(output_size.size()) +
                ")");
  }
  std::vector<std::int64_t> output_padding(D);
  for (std::size_t d = 0; d < D; ++d) {
    const std::int64_t in = input.size(spatial_start + static_cast<std::int64_t>(d));
    const std::int64_t smallest = (in - 1) * options.stride()[d] - 2 * options.padding()[d] +
                                  options.dilation()[d] * (options.kernel_size()[d] - 1) + 1;
    const std::int64_t largest = smallest + options.stride()[d] - 1;
    if (wanted[d] < smallest || wanted[d] > largest) {
      throw Error("requested an output size of " + shape_str(wanted) +
                  ", but valid sizes range from " + std::to_string(smallest) + " to " +
                  std::to_string(largest) + " (for an input of " +
                  shape_str(std::vector<std::int64_t>(input.sizes().begin() + spatial_start,
                                                      input.sizes().end())) +
                  ")");
    }
    output_padding[d] = wanted[d] - smallest;
  }
  return run(input, output_padding);
}

template class ConvTransposeNd<1>;
template class ConvTransposeNd<2>;

}  // namespace weft::nn
