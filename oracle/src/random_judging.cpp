#include "weft/oracle/random_judging.h"

#include <cmath>
#include <sstream>

#include "weft/ir/random.h"

namespace weft::oracle::random_judging {

namespace {

std::string number(double v) {
  std::ostringstream text;
  text << v;
  return text.str();
}

std::string at(double v, std::size_t i) {
  return number(v) + " at element " + std::to_string(i);
}

}  // namespace

DrawnResults drawn_results(const ir::Graph& graph) {
  const std::vector<bool> dependent = ir::random_dependent(graph);
  DrawnResults drawn;
  for (ir::ValueId out : graph.outputs()) {
    drawn.outputs.push_back(dependent[static_cast<std::size_t>(out)]);
    const std::optional<std::size_t> producer = graph.producer(out);
    const bool sampler = producer && ir::is_sampler(graph.nodes()[*producer].op);
    drawn.sampler.push_back(sampler ? producer : std::nullopt);
  }
  // A leaf's gradient is drawn when a node its gradient flows back from computes a drawn result
  // that reaches an output (y = x * bernoulli(p): x's gradient is the draw).
  std::vector<bool> live(graph.values().size(), false);
  for (ir::ValueId out : graph.outputs()) live[static_cast<std::size_t>(out)] = true;
  for (auto node = graph.nodes().rbegin(); node != graph.nodes().rend(); ++node) {
    bool feeds = false;
    for (ir::ValueId out : node->outputs) feeds = feeds || live[static_cast<std::size_t>(out)];
    if (!feeds || ir::is_sampler(node->op)) continue;  // no gradient flows into a sampler
    for (ir::ValueId in : node->inputs) live[static_cast<std::size_t>(in)] = true;
  }
  for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
    for (ir::ValueId leaf : graph.leaves(kind)) {
      std::vector<bool> reached(graph.values().size(), false);
      reached[static_cast<std::size_t>(leaf)] = true;
      bool through_draw = false;
      for (const ir::Node& node : graph.nodes()) {
        if (ir::is_sampler(node.op)) continue;
        bool from_leaf = false;
        for (ir::ValueId in : node.inputs)
          from_leaf = from_leaf || reached[static_cast<std::size_t>(in)];
        if (!from_leaf) continue;
        for (ir::ValueId out : node.outputs) {
          const auto id = static_cast<std::size_t>(out);
          reached[id] = true;
          through_draw = through_draw || (dependent[id] && live[id]);
        }
      }
      if (through_draw) drawn.gradients.insert(graph.value(leaf).name);
    }
  }
  return drawn;
}

std::optional<std::string> impossible_draw(const ir::Node& node, const Tensor& value) {
  const std::vector<double> v = value.to_vector<double>();
  switch (node.op) {
    case ir::OpKind::RandLike:
    case ir::OpKind::Rand:
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!(v[i] >= 0.0 && v[i] < 1.0)) return at(v[i], i) + ", outside [0, 1)";
      }
      return std::nullopt;
    case ir::OpKind::RandnLike:
    case ir::OpKind::Randn:
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!std::isfinite(v[i])) return at(v[i], i) + ", a normal draw is finite";
      }
      return std::nullopt;
    case ir::OpKind::RandintLike: {
      const double low = static_cast<double>(node.attrs.get_int("low", 0));
      const double high = static_cast<double>(node.attrs.get_int("high"));
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!(v[i] >= low && v[i] < high && v[i] == std::floor(v[i]))) {
          return at(v[i], i) + ", not an integer in [" + number(low) + ", " + number(high) + ")";
        }
      }
      return std::nullopt;
    }
    case ir::OpKind::Bernoulli:
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] != 0.0 && v[i] != 1.0) return at(v[i], i) + ", a bernoulli draw is 0 or 1";
      }
      return std::nullopt;
    case ir::OpKind::Randperm: {
      std::vector<bool> seen(v.size(), false);
      for (std::size_t i = 0; i < v.size(); ++i) {
        const double k = v[i];
        if (!(k >= 0 && k < static_cast<double>(v.size())) || k != std::floor(k) ||
            seen[static_cast<std::size_t>(k)]) {
          return at(k, i) + ", not a permutation of 0 .. " + std::to_string(v.size()) + " - 1";
        }
        seen[static_cast<std::size_t>(k)] = true;
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace weft::oracle::random_judging
