// Graph edits of the reducer: every edit copies the graph, rewires it, and lets compact() drop
// what became dead and renumber the rest in the IR's usual order.
#include "edit.h"

#include <algorithm>
#include <map>

#include "weft/error.h"
#include "weft/ir/subgraph.h"
#include "weft/ir/validate.h"

namespace weft::reduce {

namespace {

// How many times each value is read: as a node input or as a graph output.
std::vector<int> use_counts(const ir::Graph& graph, const std::vector<bool>* skip_nodes) {
  std::vector<int> uses(graph.values().size(), 0);
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    if (skip_nodes && (*skip_nodes)[n]) continue;
    for (ir::ValueId id : graph.nodes()[n].inputs) ++uses[static_cast<std::size_t>(id)];
  }
  for (ir::ValueId id : graph.outputs()) ++uses[static_cast<std::size_t>(id)];
  return uses;
}

}  // namespace

Case compact(const ir::Graph& graph, const ir::TensorMap& values) {
  std::vector<bool> live(graph.values().size(), false);
  std::vector<bool> live_node(graph.nodes().size(), false);
  for (ir::ValueId id : graph.outputs()) live[static_cast<std::size_t>(id)] = true;
  for (std::size_t n = graph.nodes().size(); n-- > 0;) {
    const ir::Node& node = graph.nodes()[n];
    const bool used = std::any_of(node.outputs.begin(), node.outputs.end(), [&](ir::ValueId id) {
      return live[static_cast<std::size_t>(id)];
    });
    if (!used) continue;
    live_node[n] = true;
    for (ir::ValueId id : node.inputs) live[static_cast<std::size_t>(id)] = true;
  }
  Case result;
  ir::Subgraph copy = ir::copy_subgraph(graph, live, live_node);
  for (const auto& [old_id, new_id] : copy.renamed) {
    if (!graph.leaf_kind(old_id)) continue;
    const std::string& name = graph.value(old_id).name;
    const auto it = values.find(name);
    if (it == values.end()) throw Error("reducer: no value for leaf '" + name + "'");
    result.values.emplace(name, it->second);
    // A dynamic-shape input's later sets travel with it.
    for (std::size_t k = 1; k <= graph.value(old_id).shape_sets.size(); ++k) {
      const auto later = values.find(ir::shape_set_key(name, k));
      if (later != values.end()) result.values.emplace(later->first, later->second);
    }
  }
  result.graph = std::move(copy.graph);
  std::set<ir::ValueId> marked;
  for (ir::ValueId id : graph.outputs()) {
    const ir::ValueId mapped = copy.renamed.at(id);
    if (marked.insert(mapped).second) result.graph.mark_output(mapped);
  }
  return result;
}

Case remove_nodes(const Case& current, const std::vector<Tensor>& computed,
                  const std::set<std::size_t>& removed) {
  ir::Graph graph = current.graph;
  ir::TensorMap values = current.values;
  const std::vector<int> uses_before = use_counts(graph, nullptr);
  std::vector<bool> gone(graph.nodes().size(), false);
  for (std::size_t n : removed) gone.at(n) = true;

  // The values of removed nodes that a remaining node reads become inputs.
  std::map<ir::ValueId, ir::ValueId> replacement;
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    if (gone[n]) continue;
    for (ir::ValueId& id : graph.mutable_nodes()[n].inputs) {
      const std::optional<std::size_t> producer = graph.producer(id);
      if (!producer || !gone[*producer]) continue;
      auto it = replacement.find(id);
      if (it == replacement.end()) {
        const ir::Node& source = graph.nodes()[*producer];
        std::string base = source.name.empty() ? "v" + std::to_string(id) : source.name;
        if (source.outputs.size() > 1) {
          const auto k =
              std::find(source.outputs.begin(), source.outputs.end(), id) - source.outputs.begin();
          base += "_" + std::to_string(k);
        }
        const std::string name = unique_name(graph, base);
        const ir::TensorType type = graph.type(id);
        const auto index = static_cast<std::size_t>(id);
        if (index >= computed.size() || !computed[index].defined()) {
          throw Error("reducer: no computed value for value " + std::to_string(id));
        }
        values.emplace(name, computed[index]);
        it = replacement.emplace(id, graph.add_input(name, type)).first;
      }
      id = it->second;
    }
  }
  std::vector<ir::ValueId> outputs;
  for (ir::ValueId id : graph.outputs()) {
    const std::optional<std::size_t> producer = graph.producer(id);
    if (!producer || !gone[*producer]) outputs.push_back(id);
  }
  graph.mutable_outputs() = outputs;
  // What only removed nodes read is now observed as an output.
  const std::vector<int> uses_after = use_counts(graph, &gone);
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    if (gone[n]) continue;
    for (ir::ValueId id : graph.nodes()[n].outputs) {
      const auto index = static_cast<std::size_t>(id);
      if (uses_before[index] > 0 && uses_after[index] == 0) graph.mark_output(id);
    }
  }
  return compact(graph, values);
}

Case substitute(const Case& current, ir::ValueId from, ir::ValueId to) {
  ir::Graph graph = current.graph;
  for (ir::Node& node : graph.mutable_nodes()) {
    std::replace(node.inputs.begin(), node.inputs.end(), from, to);
  }
  std::vector<ir::ValueId>& outputs = graph.mutable_outputs();
  std::replace(outputs.begin(), outputs.end(), from, to);
  return compact(graph, current.values);
}

Case keep_outputs(const Case& current, const std::vector<ir::ValueId>& outputs) {
  ir::Graph graph = current.graph;
  graph.mutable_outputs() = outputs;
  return compact(graph, current.values);
}

Case parameters_to_inputs(const Case& current, const std::vector<ir::ValueId>& ids) {
  ir::Graph graph = current.graph;
  std::vector<ir::ValueId>& parameters = graph.mutable_leaves(ir::LeafKind::Parameter);
  std::vector<ir::ValueId>& inputs = graph.mutable_leaves(ir::LeafKind::Input);
  for (ir::ValueId id : ids) {
    const auto it = std::find(parameters.begin(), parameters.end(), id);
    if (it == parameters.end()) continue;
    parameters.erase(it);
    inputs.push_back(id);
  }
  return compact(graph, current.values);
}

std::string unique_name(const ir::Graph& graph, const std::string& base) {
  std::string stem;
  for (char c : base) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    stem += ok ? c : '_';
  }
  if (stem.empty() || (stem[0] >= '0' && stem[0] <= '9')) stem = "v" + stem;
  std::set<std::string> taken;
  for (const ir::Value& value : graph.values()) taken.insert(value.name);
  for (const ir::Node& node : graph.nodes()) taken.insert(node.name);
  if (taken.count(stem) == 0) return stem;
  for (int k = 1;; ++k) {
    const std::string name = stem + "_" + std::to_string(k);
    if (taken.count(name) == 0) return name;
  }
}

std::size_t distinct_values(const Tensor& value) {
  const std::vector<double> all = value.to_vector<double>();
  return std::set<double>(all.begin(), all.end()).size();
}

Tensor with_fewer_distinct_values(const Tensor& value) {
  std::vector<double> all = value.to_vector<double>();
  const std::set<double> distinct(all.begin(), all.end());
  std::vector<double> kept;
  std::size_t rank = 0;
  for (double v : distinct) {
    if (rank++ % 2 == 0 || v == *distinct.rbegin()) kept.push_back(v);
  }
  for (double& v : all) {
    const auto above = std::lower_bound(kept.begin(), kept.end(), v);
    if (above == kept.end()) {
      v = kept.back();
    } else if (above != kept.begin() && v - *(above - 1) <= *above - v) {
      v = *(above - 1);
    } else {
      v = *above;
    }
  }
  return tensor(all, value.sizes()).to(value.dtype());
}

}  // namespace weft::reduce
