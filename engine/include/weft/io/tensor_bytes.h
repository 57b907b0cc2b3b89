#pragma once
// Tensors to and from the raw bytes safetensors stores (io::TensorBytes): one conversion for
// checkpoints, training states, traces and test cases.
#include "weft/io/safetensors.h"
#include "weft/tensor.h"

namespace weft::io {

// A detached, contiguous CPU copy of `tensor`'s elements.
TensorBytes to_bytes(const Tensor& tensor);
// A new tensor holding a copy of `bytes`.
Tensor from_bytes(const TensorBytes& bytes);

}  // namespace weft::io
