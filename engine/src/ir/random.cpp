#include "weft/ir/random.h"

#include <algorithm>

namespace weft::ir {

bool is_random_op(OpKind op) {
  switch (op) {
    case OpKind::Dropout:
    case OpKind::FeatureDropout:
    case OpKind::AlphaDropout:
    case OpKind::FeatureAlphaDropout:
    case OpKind::Rrelu:
    case OpKind::RandLike:
    case OpKind::RandnLike:
    case OpKind::Rand:
    case OpKind::Randn:
    case OpKind::RandintLike:
    case OpKind::Bernoulli:
    case OpKind::Randperm:
      return true;
    default:
      return false;
  }
}

bool is_sampler(OpKind op) {
  switch (op) {
    case OpKind::RandLike:
    case OpKind::RandnLike:
    case OpKind::Rand:
    case OpKind::Randn:
    case OpKind::RandintLike:
    case OpKind::Bernoulli:
    case OpKind::Randperm:
      return true;
    default:
      return false;
  }
}

bool draws_random(const Node& node) {
  switch (node.op) {
    case OpKind::Dropout:
    case OpKind::FeatureDropout:
    case OpKind::AlphaDropout:
    case OpKind::FeatureAlphaDropout: {
      const double p = node.attrs.get_float("p", 0.5);
      return node.attrs.get_bool("training", true) && p > 0.0 && p < 1.0;
    }
    case OpKind::Rrelu:
      return node.attrs.get_bool("training", true) &&
             node.attrs.get_float("lower", 1.0 / 8) < node.attrs.get_float("upper", 1.0 / 3);
    default:
      return is_random_op(node.op);
  }
}

std::vector<bool> random_dependent(const Graph& graph) {
  std::vector<bool> dependent(graph.values().size(), false);
  for (const Node& node : graph.nodes()) {  // nodes are in topological order
    bool drawn = draws_random(node);
    for (ValueId in : node.inputs) drawn = drawn || dependent[static_cast<std::size_t>(in)];
    if (!drawn) continue;
    for (ValueId out : node.outputs) dependent[static_cast<std::size_t>(out)] = true;
  }
  return dependent;
}

bool has_random_draws(const Graph& graph) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                     [](const Node& node) { return draws_random(node); });
}

}  // namespace weft::ir
