// The passes that change the graph's structure: remove nodes (ddmin), feed a node's consumers
// its own input, cut outputs, turn parameters into inputs.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "passes.h"
#include "weft/ir/execute.h"

namespace weft::reduce {

namespace {

// Every value of the case by id, as the engine computes it in the declared dtypes: what a
// removed node's consumers read from now on.
std::vector<Tensor> computed_values(const Case& c) {
  ir::ExecutionOptions options;
  options.keep_values = true;
  return ir::execute(c.graph, c.values, options).values;
}

std::string node_list(const ir::Graph& graph, const std::set<std::size_t>& nodes) {
  std::string text;
  std::size_t shown = 0;
  for (std::size_t n : nodes) {
    if (shown++ == 4) {
      text += ", …";
      break;
    }
    text += (text.empty() ? "" : ", ") + std::string(ir::op_name(graph.nodes()[n].op));
  }
  return text;
}

Candidate removal(const Case& c, const std::vector<Tensor>& computed,
                  const std::set<std::size_t>& removed) {
  Candidate candidate{remove_nodes(c, computed, removed), "nodes", ""};
  candidate.description = fmt::format("removed {} node{} ({})", removed.size(),
                                      removed.size() == 1 ? "" : "s", node_list(c.graph, removed));
  return candidate;
}

}  // namespace

bool remove_nodes_pass(State& state, Evaluator& evaluator) {
  bool changed = false;
  const auto removable = [&state] {
    std::vector<std::size_t> items;
    for (std::size_t n = 0; n < state.current.graph.nodes().size(); ++n) {
      if (!state.finding.node || *state.finding.node != n) items.push_back(n);
    }
    return items;
  };
  std::vector<Tensor> computed = computed_values(state.current);
  // Most bugs live in one node: try that first.
  if (state.finding.node && state.current.graph.nodes().size() > 1) {
    const std::vector<std::size_t> others = removable();
    std::vector<Candidate> candidates{
        removal(state.current, computed, std::set<std::size_t>(others.begin(), others.end()))};
    if (auto accepted = evaluator.first_showing(candidates)) {
      accept(state, evaluator, std::move(candidates[accepted->index]), std::move(*accepted));
      computed = computed_values(state.current);
      changed = true;
    }
  }
  // ddmin: remove chunks of the other nodes, halving the chunks when none can go.
  std::size_t granularity = 2;
  while (!evaluator.exhausted()) {
    const std::vector<std::size_t> items = removable();
    if (items.empty()) break;
    granularity = std::min(granularity, items.size());
    std::vector<Candidate> candidates;
    for (std::size_t chunk = 0; chunk < granularity; ++chunk) {
      const std::size_t begin = chunk * items.size() / granularity;
      const std::size_t end = (chunk + 1) * items.size() / granularity;
      const std::set<std::size_t> removed(items.begin() + static_cast<std::ptrdiff_t>(begin),
                                          items.begin() + static_cast<std::ptrdiff_t>(end));
      if (!removed.empty()) candidates.push_back(removal(state.current, computed, removed));
    }
    if (auto accepted = evaluator.first_showing(candidates)) {
      accept(state, evaluator, std::move(candidates[accepted->index]), std::move(*accepted));
      computed = computed_values(state.current);
      changed = true;
      granularity = std::max<std::size_t>(granularity - 1, 2);
      continue;
    }
    if (granularity >= items.size()) break;
    granularity = std::min(granularity * 2, items.size());
  }
  return changed;
}

bool bypass_pass(State& state, Evaluator& evaluator) {
  return accept_greedily(state, evaluator, [](const State& s) {
    std::vector<Candidate> candidates;
    const ir::Graph& graph = s.current.graph;
    for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
      if (s.finding.node && *s.finding.node == n) continue;
      const ir::Node& node = graph.nodes()[n];
      for (ir::ValueId out : node.outputs) {
        for (ir::ValueId in : node.inputs) {
          if (graph.type(in) != graph.type(out)) continue;
          candidates.push_back(Candidate{
              substitute(s.current, out, in), "bypass",
              fmt::format("{} bypassed (its consumers read its input)", ir::node_label(graph, n))});
          break;
        }
      }
    }
    return candidates;
  });
}

bool cut_outputs_pass(State& state, Evaluator& evaluator) {
  return accept_greedily(state, evaluator, [](const State& s) {
    std::vector<Candidate> candidates;
    const std::vector<ir::ValueId>& outputs = s.current.graph.outputs();
    if (outputs.size() < 2) return candidates;
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      std::vector<ir::ValueId> kept = outputs;
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(k));
      candidates.push_back(
          Candidate{keep_outputs(s.current, kept), "outputs", fmt::format("output {} cut", k)});
    }
    return candidates;
  });
}

bool parameters_pass(State& state, Evaluator& evaluator) {
  return accept_greedily(state, evaluator, [](const State& s) {
    std::vector<Candidate> candidates;
    const std::vector<ir::ValueId>& parameters = s.current.graph.parameters();
    if (parameters.empty()) return candidates;
    candidates.push_back(Candidate{parameters_to_inputs(s.current, parameters), "leaves",
                                   "every parameter made an input"});
    if (parameters.size() > 1) {
      for (ir::ValueId id : parameters) {
        candidates.push_back(
            Candidate{parameters_to_inputs(s.current, {id}), "leaves",
                      "parameter '" + s.current.graph.value(id).name + "' made an input"});
      }
    }
    return candidates;
  });
}

}  // namespace weft::reduce
