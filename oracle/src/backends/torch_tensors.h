#pragma once
// Conversions between engine tensors and ATen tensors, and the eager lowering of one node,
// shared by the LibTorch backends (defined in torch_eager.cpp). Private to the oracle library;
// includes ATen, so only translation units that already pay for torch headers include it.

#include <ATen/core/Tensor.h>

#include <vector>

#include "weft/dtype.h"
#include "weft/ir/graph.h"
#include "weft/tensor.h"

namespace weft::oracle {

at::ScalarType to_torch_dtype(Dtype dtype);
Dtype from_torch_dtype(at::ScalarType type);
// A fresh, contiguous CPU copy that shares nothing with `tensor`.
at::Tensor to_torch(const Tensor& tensor);
// An input or parameter as the paths build it: a fresh copy in the leaf's layout (strides and
// storage offset into its own buffer; contiguous without one), on the first CUDA device with
// `cuda`.
at::Tensor leaf_to_torch(const ir::Value& leaf, const Tensor& value, bool cuda = false);
// A copy into an engine tensor (detached).
Tensor from_torch(const at::Tensor& tensor);
std::vector<at::Tensor> lower_node(const ir::Node& node, const std::vector<at::Tensor>& in);
// Once per process: LibTorch single-threaded (parallelism comes from several workers) and a
// stack-trace fetcher that does not symbolize a backtrace for every c10::Error (~3 ms each).
void init_torch_once();

}  // namespace weft::oracle
