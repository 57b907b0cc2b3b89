#pragma once
// How the judge treats results that depend on a random draw (weft/ir/random.h). PyTorch's
// generators and the engine's draw different numbers, so such a result is never compared with
// the reference's values. What is judged instead: its shape and dtype; that every call of a path
// returns the same values (each call runs under torch.manual_seed(kTorchSeed)); and, for an
// output that is a sampler's own result, the values its distribution allows (rand in [0, 1),
// randint_like in [low, high), bernoulli in {0, 1}, randperm a permutation, randn finite).
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "weft/ir/graph.h"
#include "weft/tensor.h"

namespace weft::oracle::random_judging {

struct DrawnResults {
  std::vector<bool> outputs;        // per graph output: drawn or computed from a draw
  std::set<std::string> gradients;  // leaves whose gradient flows through a draw's result
  std::vector<std::optional<std::size_t>> sampler;  // per output: the sampler node it is
};

DrawnResults drawn_results(const ir::Graph& graph);

// What `value`, the result of sampler node `node`, holds that its distribution cannot give:
// "1 at element 5, outside [0, 1)"; nullopt when every element is possible.
std::optional<std::string> impossible_draw(const ir::Node& node, const Tensor& value);

}  // namespace weft::oracle::random_judging
