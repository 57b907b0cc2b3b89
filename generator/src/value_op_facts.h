#pragma once
// Per-op facts the value search reads besides the value domains (value_domains.cpp): which ops
// pass integer elements through to index slots, how large an index a slot takes, which slots
// need distinct indices, which ops pass gradients straight through, and a weight's fan-in.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "weft/ir/graph.h"
#include "weft/ir/op_kind.h"

namespace weft::gen {

// Whether `op`'s output holds some of the elements of its input `slot` unchanged, so that an
// integer leaf that flows through it still reaches an index slot as indices.
bool passes_elements(ir::OpKind op, std::size_t slot);
// The exclusive bound of the indices that input `slot` of `node` takes, if it is an index slot.
std::optional<std::int64_t> index_bound(const ir::Graph& graph, const ir::Node& node,
                                        std::size_t slot);
// Whether input `slot` of `node` needs indices without repeats (and along which dim of a
// tensor of `rank` dims).
bool needs_distinct_indices(const ir::Node& node, std::size_t slot);
std::optional<std::int64_t> distinct_dim(const ir::Node& node, std::size_t rank);
// Ops whose gradient the search's float64 copy passes straight through (flat ops).
bool straight_through(ir::OpKind op);
// The fan-in of a weight of shape `w` feeding `slot` of `node`, if the slot is a weight's.
std::optional<std::int64_t> fan_in(const ir::Node& node, std::size_t slot, const ir::Shape& w);

}  // namespace weft::gen
