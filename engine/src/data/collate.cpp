#include "weft/data/collate.h"

#include <cstring>

#include "weft/ops.h"
#include "weft/shape.h"

namespace weft::data {

Tensor collate_tensors(const std::vector<Tensor>& batch, const std::string& where) {
  if (batch.empty()) throw Error("default_collate: expected at least one tensor, got none");
  const Tensor& first = batch.front();
  bool plain = true;  // contiguous, one dtype, no history: a row-by-row copy makes the batch
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const Tensor& t = batch[i];
    if (!t.defined()) {
      throw Error("default_collate: undefined tensor in sample " + std::to_string(i) +
                  (where.empty() ? "" : " at " + where));
    }
    if (t.sizes() != first.sizes()) {
      throw Error("default_collate: stack expects each tensor to be equal size, but got " +
                  shape_str(first.sizes()) + " at entry 0 and " + shape_str(t.sizes()) +
                  " at entry " + std::to_string(i) + (where.empty() ? "" : " at " + where));
    }
    plain = plain && t.dtype() == first.dtype() && t.is_contiguous() && !t.requires_grad() &&
            t.device() == kCPU;
  }
  if (!plain) return stack(batch, 0);
  std::vector<std::int64_t> shape{static_cast<std::int64_t>(batch.size())};
  shape.insert(shape.end(), first.sizes().begin(), first.sizes().end());
  Tensor out = empty(shape, dtype(first.dtype()));
  const std::size_t row_bytes = static_cast<std::size_t>(first.numel()) * itemsize(first.dtype());
  auto* dst = static_cast<char*>(out.raw_data());
  if (row_bytes > 0) {
    for (std::size_t i = 0; i < batch.size(); ++i) {
      std::memcpy(dst + i * row_bytes, batch[i].raw_data(), row_bytes);
    }
  }
  return out;
}

Tensor collate_scalars(const std::vector<std::int64_t>& batch) {
  return tensor(batch, {static_cast<std::int64_t>(batch.size())});
}
Tensor collate_scalars(const std::vector<std::int32_t>& batch) {
  return tensor(batch, {static_cast<std::int64_t>(batch.size())});
}
Tensor collate_scalars(const std::vector<double>& batch) {
  return tensor(batch, {static_cast<std::int64_t>(batch.size())});
}
Tensor collate_scalars(const std::vector<float>& batch) {
  return tensor(batch, {static_cast<std::int64_t>(batch.size())});
}
Tensor collate_scalars(const std::vector<bool>& batch) {
  return tensor(batch, {static_cast<std::int64_t>(batch.size())});
}

}  // namespace weft::data
