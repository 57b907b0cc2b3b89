#pragma once
// Graph edits of the reducer. Each takes a case (graph + leaf values) and returns a new one;
// none checks that the result still computes anything sensible: the evaluator runs every
// candidate on the engine before a worker sees it.
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"

namespace weft::reduce {

struct Case {
  ir::Graph graph;
  ir::TensorMap values;
};

// A proposed edit of the current case: the edited case and what the edit did.
struct Candidate {
  Case edited;
  std::string pass;
  std::string description;
};

// The case without the nodes no output depends on and the leaves no remaining node uses;
// leaves come first (inputs, then parameters), then the nodes in their order.
Case compact(const ir::Graph& graph, const ir::TensorMap& values);

// Removes `removed` (node indices): every value of theirs that a remaining node uses becomes a
// new input holding what it computed (`computed`: every value of the graph by id, as the
// engine executes it). Values of remaining nodes that lose all their users become outputs, so
// nothing the removed nodes observed is dropped. Outputs of removed nodes are dropped.
Case remove_nodes(const Case& current, const std::vector<Tensor>& computed,
                  const std::set<std::size_t>& removed);

// Every use of `from` (node inputs and outputs) reads `to` instead, which must have the same
// type and be defined before all of `from`'s users; what becomes dead is dropped.
Case substitute(const Case& current, ir::ValueId from, ir::ValueId to);

// Only `outputs` stay outputs; what becomes dead is dropped.
Case keep_outputs(const Case& current, const std::vector<ir::ValueId>& outputs);

// The parameters `ids` become inputs (same names and values).
Case parameters_to_inputs(const Case& current, const std::vector<ir::ValueId>& ids);

// A leaf name derived from `base` that no value or node of `graph` uses yet.
std::string unique_name(const ir::Graph& graph, const std::string& base);

// How many different values `value` holds.
std::size_t distinct_values(const Tensor& value);
// `value` (finite) with about half as many different values: of its sorted different values
// those at even ranks and the largest are kept, and every element becomes the nearest kept
// value (the smaller on a tie). The extremes stay, so a bug at the largest or the smallest
// value keeps showing.
Tensor with_fewer_distinct_values(const Tensor& value);

}  // namespace weft::reduce
