#pragma once
// The op sweep's sample cases: for every op of the IR, small single-node graphs that vary the
// shapes (broadcasting, rank 0, size 0), every attribute and the dtypes the op accepts, with
// leaf values chosen inside the op's smooth domain so that finite differences are valid.
// Shared by the engine sweep (finite differences, float32 vs float64) and the torch sweep.

#include <cstdint>
#include <string>
#include <vector>

#include "weft/dtype.h"
#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/ir/op_kind.h"
#include "weft/tensor.h"

namespace weft::testing {

struct OpCase {
  // "conv2d/stride2_padding1": op name, then what the case varies.
  std::string label;
  // One node; its inputs are graph inputs (weights and biases: parameters), its outputs are
  // the graph's outputs, with the types the engine computed.
  ir::Graph graph;
  // Every leaf's value by name: floating leaves in the requested float dtype (values are
  // float32-representable, so float32 and float64 cases hold the same numbers), others in
  // their own dtype.
  ir::TensorMap values;
  // Central-difference step and tolerances (float64).
  double fd_eps = 1e-6;
  // false: piecewise constant in its floating inputs (floor, comparisons, casts to integers):
  // the gradients must be zero instead of matching finite differences.
  bool differentiable = true;
  // false: the case sits on a kink, a tie or a pole, where the gradient is PyTorch's
  // convention (a subgradient, a tie rule, inf), which central differences cannot check; the
  // torch sweep still compares it.
  bool fd_check = true;
  // false: the result depends on the float type by definition (nan_to_num's default
  // replacement of inf is the type's largest value), so float32 is not compared with float64.
  bool same_across_float_types = true;
  double fd_rtol = 1e-4;
  double fd_atol = 1e-6;
  // Leaves whose gradient PyTorch defines as zero in places where the derivative is not
  // (batch_norm's running statistics, embedding's padding_idx row): a float64 mask per leaf,
  // 1 where the gradient is the derivative, 0 where it must be zero. Absent: all ones.
  ir::TensorMap gradient_mask;
  // Non-empty when the engine refused to run the case while building it (its message); the
  // graph then has no node. Every case is one PyTorch accepts, so this is an engine bug.
  std::string engine_error;
  // Non-empty when LibTorch kills the process on this case (a known PyTorch bug; the text says
  // which, and names the corpus case that replays it through the worker pool, where a crash is
  // data). Tests that run LibTorch in-process skip the case; engine tests still run it.
  std::string torch_crash;
};

// The cases of `op`, floating leaves in `float_dtype` (Float32 or Float64). The same op gives
// the same labels and values (up to the float dtype) on every call.
std::vector<OpCase> op_cases(ir::OpKind op, Dtype float_dtype);

// The ops of ir::kAllOps for which op_cases returns nothing.
std::vector<ir::OpKind> ops_without_cases();

// A stable 64-bit hash of a label (FNV-1a), for per-case seeds.
std::uint64_t label_seed(const std::string& label);

struct Mismatch {
  bool ok = true;
  // What differs: "shape [2, 3] vs [3, 2]", "dtype float32 vs float64", "max error 3e-4 at
  // element 5 (got 1.2, expected 1.5), tolerance 1e-5".
  std::string message;
  double max_error = 0.0;
};

// Compares `got` to `expected`: shapes and dtypes exactly (unless `compare_dtypes` is false),
// floating values with |got - expected| <= atol * (1 + max|expected|) + rtol * |expected|
// (NaNs must match, infinities must be equal), other dtypes exactly.
Mismatch compare_tensors(const Tensor& got, const Tensor& expected, double rtol, double atol,
                         bool compare_dtypes = true);

}  // namespace weft::testing
