#pragma once
// The engine's own check of its reference gradient (used by the oracle): when eager PyTorch's
// gradient disagrees with the float64 reference, central finite differences of the case's
// objective in float64 say which of the two is right. A reference that finite differences
// contradict while eager agrees with them is weft's bug, not PyTorch's.

#include <string>
#include <vector>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/oracle/backend.h"

namespace weft::oracle {

// True when, along two random directions over the floating leaves, the finite-difference
// derivative of sum_i <outputs_i, cotangents_i> agrees with `path`'s gradient and clearly not
// with `reference`'s. False when the differences cannot tell (a kink, a failure) or side with
// the reference. `why` receives the numbers.
bool finite_differences_contradict_reference(const ir::Graph& graph, const ir::TensorMap& values,
                                             const std::vector<Tensor>& cotangents,
                                             const ir::TensorMap& reference,
                                             const ir::TensorMap& path, std::string& why);

}  // namespace weft::oracle
