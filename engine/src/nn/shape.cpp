// Flatten and Unflatten: thin wrappers around flatten / reshape.
#include "weft/nn/shape.h"

#include <utility>

#include "weft/error.h"
#include "weft/ops.h"
#include "weft/shape.h"

namespace weft::nn {

Tensor Flatten::forward(const Tensor& input) {
  return flatten(input, start_dim, end_dim);
}

Unflatten::Unflatten(std::int64_t dim_, std::vector<std::int64_t> unflattened_size_)
    : dim(dim_), unflattened_size(std::move(unflattened_size_)) {
  if (unflattened_size.empty()) throw Error("unflattened_size must be non-empty");
}

Tensor Unflatten::forward(const Tensor& input) {
  const std::int64_t d = wrap_dim(dim, input.dim());
  std::vector<std::int64_t> shape(input.sizes().begin(), input.sizes().begin() + d);
  std::int64_t product = 1;
  bool inferred = false;
  for (std::int64_t s : unflattened_size) {
    shape.push_back(s);
    if (s == -1) {
      inferred = true;
    } else {
      product *= s;
    }
  }
  const std::int64_t size = input.size(d);
  if (inferred ? (product == 0 || size % product != 0) : product != size) {
    throw Error("unflatten: Provided sizes " + shape_str(unflattened_size) +
                " don't multiply up to the size of dim " + std::to_string(dim) + " (" +
                std::to_string(size) + ") in the input tensor");
  }
  shape.insert(shape.end(), input.sizes().begin() + d + 1, input.sizes().end());
  return reshape(input, shape);
}

}  // namespace weft::nn
