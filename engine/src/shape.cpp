#include "weft/shape.h"

#include <algorithm>

#include "weft/error.h"

namespace weft {

std::int64_t numel_of(IntList shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

Shape contiguous_strides(IntList shape) {
  Shape strides(shape.size());
  std::int64_t stride = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<std::int64_t>(shape[i], 1);
  }
  return strides;
}

std::string shape_str(IntList shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string tuple_str(IntList shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::int64_t wrap_dim(std::int64_t dim, std::int64_t rank) {
  const std::int64_t effective = std::max<std::int64_t>(rank, 1);
  if (dim < -effective || dim >= effective) {
    throw Error("Dimension out of range (expected to be in range of [" +
                std::to_string(-effective) + ", " + std::to_string(effective - 1) + "], but got " +
                std::to_string(dim) + ")");
  }
  return dim < 0 ? dim + effective : dim;
}

std::vector<std::int64_t> wrap_dims(IntList dims, std::int64_t rank, bool empty_is_all) {
  std::vector<std::int64_t> wrapped;
  if (dims.empty() && empty_is_all) {
    for (std::int64_t d = 0; d < rank; ++d) wrapped.push_back(d);
    return wrapped;
  }
  for (std::int64_t d : dims) {
    const std::int64_t w = wrap_dim(d, rank);
    if (std::find(wrapped.begin(), wrapped.end(), w) != wrapped.end()) {
      throw Error("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    }
    wrapped.push_back(w);
  }
  std::sort(wrapped.begin(), wrapped.end());
  // A rank-0 tensor reduced over dim 0/-1 reduces over nothing.
  if (rank == 0) wrapped.clear();
  return wrapped;
}

Shape broadcast_shapes(IntList a, IntList b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw Error("The size of tensor a (" + std::to_string(da) +
                  ") must match the size of tensor b (" + std::to_string(db) +
                  ") at non-singleton dimension " + std::to_string(i));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace weft
