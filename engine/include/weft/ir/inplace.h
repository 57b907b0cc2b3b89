#pragma once
// In-place writes in the graph IR (a program form), kept as dataflow.
//
// A node of an op that has an in-place variant (relu_, add_, clamp_, masked_fill_, ...) may carry
// the attribute "inplace": the programs every path runs write its result into its first input's
// storage (x.relu_(), F.relu(x, inplace=True), x.add_(y)). Its meaning in the graph does not
// change: its output is the op's result, and the graph stays pure dataflow for the reference,
// the rounding model and the reducer. When the first input is a slice or a select of a value,
// the write changes that value too, as in PyTorch; a slice_scatter/select_scatter node marked
// "writeback" names the value after the write (functionalized: the base with the slice replaced
// by the written result), and later readers of the base read it. Programs write a writeback as
// the base itself (no copy), so those readers see the write through the view. A writeback whose
// src is any other value is a copy into the slot (base[1:3] = src, copy_ into a view).
//
// in_place_problem() keeps every such graph meaning the same written both ways: the written
// storage belongs to no leaf, a value is written at most once, no node reads a value from before
// the write that shares its storage (it would see the write), and nothing saved for backward is
// overwritten (PyTorch's "modified by an inplace operation" error).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/graph.h"
#include "weft/tensor.h"

namespace weft::ir {

// Ops whose nodes may carry "inplace" (the engine and LibTorch both have the in-place variant).
bool can_run_in_place(OpKind op);
// Whether the node is marked "inplace" / "writeback".
bool is_in_place(const Node& node);
bool is_writeback(const Node& node);
// Ops whose outputs share storage with their first input in PyTorch and the engine (views, and
// ops that may return their input itself: contiguous, a cast to the same dtype, dropout off).
bool may_alias_input(const Node& node);

// A writeback that copies its src into a slot of its base (base[1:3] = src), rather than
// naming the base after an in-place write through slice(base)/select(base).
bool writes_into_slot(const Graph& graph, const Node& node);

// Per value: the value whose storage it shares (itself for a fresh one).
std::vector<ValueId> storage_roots(const Graph& graph);

// Why the graph's in-place writes could change what it means ("" when they cannot); validate()
// reports it on the node at fault.
struct InPlaceProblem {
  std::size_t node = 0;
  std::string message;
};
std::optional<InPlaceProblem> in_place_problem(const Graph& graph);

// The node as written: the in-place op applied to inputs[0] (returned, the same tensor), or a
// writeback's base (inputs[0], already written through its view).
std::vector<Tensor> run_node_as_written(const Node& node, const std::vector<Tensor>& inputs);

// How many nodes are marked "inplace".
std::size_t count_in_place(const Graph& graph);
// Every "inplace" and "writeback" mark removed: the same dataflow written without mutation.
void clear_in_place(Graph& graph);
void clear_in_place(Node& node);

}  // namespace weft::ir
