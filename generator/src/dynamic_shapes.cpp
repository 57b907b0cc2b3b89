// Later shape sets of a generated case (dynamic shapes).
#include "dynamic_shapes.h"

#include <map>
#include <vector>

#include "weft/gen/shrink.h"
#include "weft/gen/value_search.h"
#include "weft/ir/execute.h"
#include "weft/ir/shape_sets.h"

namespace weft::gen {

namespace {

// The graph at a proposal's shapes: every value's type as the rules derived it, each input's
// layout kept in kind.
ir::Graph graph_at(const ir::Graph& graph, const ShrunkGraph& proposal) {
  ir::Graph at = graph;
  at.clear_shape_sets();
  for (ir::Value& value : at.mutable_values()) {
    const ir::Shape& shape = proposal.value_shapes.at(static_cast<std::size_t>(value.id));
    if (value.has_layout()) value.strides = ir::relayout(value.type.shape, value.strides, shape);
    value.type.shape = shape;
  }
  return at;
}

// Input values for `at` (the parameters are the case's and must stay): the value search from
// the case's parameters, accepted when it finds finite values without moving a parameter.
std::optional<ir::TensorMap> inputs_for(const ir::Graph& at, const ir::TensorMap& values,
                                        std::uint64_t seed) {
  ValueSearchOptions search;
  search.seed = seed;
  search.max_iterations = 12;
  search.max_resamples = 2;
  for (ir::ValueId id : at.parameters()) {
    const std::string& name = at.value(id).name;
    search.initial[name] = values.at(name);
  }
  ValueSearchResult found = search_values(at, search);
  if (!found.finite) return std::nullopt;
  for (ir::ValueId id : at.parameters()) {
    const std::string& name = at.value(id).name;
    if (!identical(found.values.at(name), values.at(name))) return std::nullopt;
  }
  ir::TensorMap inputs;
  for (ir::ValueId id : at.inputs()) {
    const std::string& name = at.value(id).name;
    inputs[name] = found.values.at(name);
  }
  return ir::project_to_layouts(at, std::move(inputs));
}

}  // namespace

void add_shape_sets(GeneratedCase& result, std::uint64_t seed) {
  if (!result.values.finite || result.graph.inputs().empty()) return;
  ShrinkOptions options;
  options.seed = seed;
  options.recovery_attempts = 2000;
  const std::vector<ShrunkGraph> proposals = other_shape_sets(result.graph, 2, options);
  std::vector<std::map<ir::ValueId, ir::Shape>> kept;
  std::vector<ir::TensorMap> kept_inputs;
  // Whether the inputs whose shape stays need values of their own in some set: indices into
  // a dim that shrinks there, say (the first set's index 6 is out of range in a dim of 6).
  bool steady_inputs_move = false;
  for (std::size_t k = 0; k < proposals.size(); ++k) {
    const ir::Graph at = graph_at(result.graph, proposals[k]);
    std::optional<ir::TensorMap> inputs = inputs_for(at, result.values.values, seed + k + 1);
    if (!inputs) continue;
    std::map<ir::ValueId, ir::Shape> shapes;
    for (ir::ValueId id : at.inputs()) shapes[id] = at.type(id).shape;
    ir::TensorMap with_steady_values = result.values.values;
    for (ir::ValueId id : at.inputs()) {
      const std::string& name = at.value(id).name;
      if (shapes.at(id) != result.graph.type(id).shape) with_steady_values[name] = inputs->at(name);
    }
    steady_inputs_move =
        steady_inputs_move ||
        !check_finite(at, with_steady_values, ir::random_cotangents(at, seed + k + 1)).finite;
    kept.push_back(std::move(shapes));
    kept_inputs.push_back(std::move(*inputs));
  }
  ir::Graph& graph = result.graph;
  for (ir::ValueId id : graph.inputs()) {
    ir::Value& input = graph.mutable_values()[static_cast<std::size_t>(id)];
    bool moves = steady_inputs_move;
    for (const auto& shapes : kept) moves = moves || shapes.at(id) != input.type.shape;
    if (!moves) continue;  // the same shape and values in every set
    for (std::size_t k = 0; k < kept.size(); ++k) {
      input.shape_sets.push_back(kept[k].at(id));
      result.values.values[ir::shape_set_key(input.name, k + 1)] = kept_inputs[k].at(input.name);
    }
  }
}

}  // namespace weft::gen
