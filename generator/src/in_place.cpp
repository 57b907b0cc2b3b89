#include "in_place.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "weft/error.h"
#include "weft/ir/execute.h"
#include "weft/ir/inplace.h"
#include "weft/ir/validate.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::gen {

namespace {

using ir::OpKind;
using ir::ValueId;

std::size_t below(std::mt19937_64& rng, std::size_t n) {
  return static_cast<std::size_t>(rng() % n);
}

// Later readers of `from` (nodes after `after`, and the graph's outputs) read `to` instead.
void redirect(ir::Graph& graph, ValueId from, ValueId to, std::size_t after) {
  auto& nodes = graph.mutable_nodes();
  for (std::size_t m = after + 1; m < nodes.size(); ++m) {
    for (ValueId& in : nodes[m].inputs) {
      if (in == from) in = to;
    }
  }
  for (ValueId& out : graph.mutable_outputs()) {
    if (out == from) out = to;
  }
}

// Appends a node, then moves it to position `at`; returns its one output.
ValueId insert_node(ir::Graph& graph, std::size_t at, OpKind op, std::vector<ValueId> inputs,
                    ir::Attributes attrs, ir::TensorType type) {
  const ValueId out = graph.add_node(op, std::move(inputs), std::move(attrs), {std::move(type)})[0];
  auto& nodes = graph.mutable_nodes();
  ir::Node node = std::move(nodes.back());
  nodes.pop_back();
  nodes.insert(nodes.begin() + static_cast<std::ptrdiff_t>(at), std::move(node));
  return out;
}

std::string fresh_name(const ir::Graph& graph, const std::string& stem) {
  for (int k = 0;; ++k) {
    const std::string name = stem + std::to_string(k);
    if (!graph.find_leaf(ir::LeafKind::Input, name) &&
        !graph.find_leaf(ir::LeafKind::Parameter, name)) {
      return name;
    }
  }
}

// Values uniform in [lo, hi) of `type` (drawn in float64, then rounded to its dtype).
Tensor draw(const ir::TensorType& type, double lo, double hi, ::weft::Generator& gen) {
  Tensor values = empty(type.shape, dtype(Dtype::Float64));
  uniform_(values, lo, hi, &gen);
  return values.to(type.dtype);
}

// Whether the case stays valid and finite with its writes: value_search's check, which runs
// the writes as written in the case's dtypes and as dataflow in float64.
bool runs_finite(const ir::Graph& graph, const ir::TensorMap& values) {
  try {
    ir::validate(graph);
  } catch (const std::exception&) {
    return false;
  }
  return check_finite(graph, values, ir::random_cotangents(graph, 1)).finite;
}

class Writer {
 public:
  Writer(GeneratedCase& result, std::mt19937_64& rng)
      : graph_(result.graph), values_(result.values.values), rng_(rng), gen_(rng()) {}

  // One write after the producer of fresh value `target`: in place on it, through a slice or a
  // select of it, or a copy of a new input into a slot of it.
  void write_after(ValueId target) {
    const std::size_t producer = *graph_.producer(target);
    const ir::TensorType type = graph_.type(target);
    const auto rank = static_cast<std::int64_t>(type.shape.size());
    std::size_t at = producer + 1;
    const std::size_t kind = rank == 0 ? 0 : below(rng_, 4);
    if (kind == 0) {  // x.op_()
      const ValueId written = write(at, target);
      redirect(graph_, target, written, at);
      return;
    }
    const auto dim = static_cast<std::int64_t>(below(rng_, static_cast<std::size_t>(rank)));
    const std::int64_t size = type.shape[static_cast<std::size_t>(dim)];
    if (size < 1) return;
    ir::Attributes view_attrs;
    ir::TensorType slot = type;
    const bool by_select = kind == 2;
    if (by_select) {
      const auto index = static_cast<std::int64_t>(below(rng_, static_cast<std::size_t>(size)));
      view_attrs.set("dim", dim).set("index", index);
      slot.shape.erase(slot.shape.begin() + dim);
    } else {
      const auto start = static_cast<std::int64_t>(below(rng_, static_cast<std::size_t>(size)));
      const auto end =
          start + 1 +
          static_cast<std::int64_t>(below(rng_, static_cast<std::size_t>(size - start)));
      const std::int64_t step = 1 + static_cast<std::int64_t>(below(rng_, 2));
      view_attrs.set("dim", dim).set("start", start).set("end", end).set("step", step);
      slot.shape[static_cast<std::size_t>(dim)] = (end - start + step - 1) / step;
    }
    const OpKind scatter = by_select ? OpKind::SelectScatter : OpKind::SliceScatter;
    ir::Attributes writeback = view_attrs;
    writeback.set("writeback", true);
    ValueId src;
    if (kind == 3) {  // base[slot] = a new input
      const ValueId leaf = graph_.add_input(fresh_name(graph_, "slot"), slot);
      values_[graph_.value(leaf).name] = draw(slot, -1.0, 1.0, gen_);
      src = leaf;
    } else {  // slice(base).op_() or select(base).op_()
      const ValueId view = insert_node(graph_, at++, by_select ? OpKind::Select : OpKind::Slice,
                                       {target}, view_attrs, slot);
      src = write(at++, view);
    }
    const ValueId base = insert_node(graph_, at, scatter, {target, src}, writeback, type);
    redirect(graph_, target, base, at);
  }

  // Marks nodes whose first input nobody else reads to run in place, where the graph allows.
  void mark_last_readers() {
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
      ir::Node& node = graph_.mutable_nodes()[n];
      if (!ir::can_run_in_place(node.op) || node.attrs.has("rounding_mode") ||
          below(rng_, 2) == 0) {
        continue;
      }
      node.attrs.set("inplace", true);
      if (ir::in_place_problem(graph_)) graph_.mutable_nodes()[n].attrs.erase("inplace");
    }
  }

 private:
  // An in-place op on `target` (a fresh value or a view of one) at node position `at`.
  ValueId write(std::size_t at, ValueId target) {
    const ir::TensorType type = graph_.type(target);
    ir::Attributes attrs;
    attrs.set("inplace", true);
    switch (below(rng_, 11)) {
      case 0:
        return insert_node(graph_, at, OpKind::Relu, {target}, attrs, type);
      case 1:
        return insert_node(graph_, at, OpKind::Sigmoid, {target}, attrs, type);
      case 2:
        return insert_node(graph_, at, OpKind::Tanh, {target}, attrs, type);
      case 3:
        return insert_node(graph_, at, OpKind::Neg, {target}, attrs, type);
      case 4:
        attrs.set("min", -0.5).set("max", 0.75);
        return insert_node(graph_, at, OpKind::Clamp, {target}, attrs, type);
      case 5: {
        // x.masked_fill_(mask, v): mask a new bool input of x's shape or along its last dim.
        ir::TensorType mask{Dtype::Bool, type.shape};
        if (!mask.shape.empty() && below(rng_, 2) == 0) mask.shape = {type.shape.back()};
        const ValueId m = graph_.add_input(fresh_name(graph_, "mask"), mask);
        values_[graph_.value(m).name] =
            lt(draw({Dtype::Float64, mask.shape}, 0.0, 1.0, gen_), wrapped_scalar(0.5));
        attrs.set("value", below(rng_, 2) == 0 ? 0.0 : -1.5);
        return insert_node(graph_, at, OpKind::MaskedFill, {target, m}, attrs, type);
      }
      case 6: {
        // x[index] = v / x.index_put_((index,), v, accumulate=True): index a new input of
        // rows of x (all different without accumulate), v a new parameter of those rows or of
        // one row broadcast to them.
        if (type.shape.empty() || type.shape[0] < 1) return write(at, target);
        const std::int64_t rows = type.shape[0];
        const bool accumulate = below(rng_, 2) == 0;
        const auto count = static_cast<std::int64_t>(
            1 + below(rng_, static_cast<std::size_t>(accumulate ? rows + 2 : rows)));
        std::vector<std::int64_t> index;
        if (accumulate) {  // rows drawn freely, repeats added up
          for (std::int64_t k = 0; k < count; ++k) {
            index.push_back(static_cast<std::int64_t>(below(rng_, static_cast<std::size_t>(rows))));
          }
        } else {  // the first `count` of a shuffled 0..rows-1
          index.resize(static_cast<std::size_t>(rows));
          std::iota(index.begin(), index.end(), std::int64_t{0});
          std::shuffle(index.begin(), index.end(), rng_);
          index.resize(static_cast<std::size_t>(count));
        }
        const ValueId i = graph_.add_input(fresh_name(graph_, "rows"), {Dtype::Int64, {count}});
        values_[graph_.value(i).name] = tensor(index);
        ir::TensorType values{type.dtype, type.shape};
        values.shape[0] = count;
        if (type.shape.size() > 1 && below(rng_, 2) == 0) values.shape.erase(values.shape.begin());
        const ValueId v = graph_.add_parameter(fresh_name(graph_, "put"), values);
        values_[graph_.value(v).name] = draw(values, -1.0, 1.0, gen_);
        attrs.set("accumulate", accumulate);
        return insert_node(graph_, at, OpKind::IndexPut, {target, i, v}, attrs, type);
      }
      case 7: {
        // x.copy_(src): src a new parameter of x's shape or of its last dim (broadcast).
        ir::TensorType src{type.dtype, type.shape};
        if (!src.shape.empty() && below(rng_, 2) == 0) src.shape = {type.shape.back()};
        const ValueId s = graph_.add_parameter(fresh_name(graph_, "src"), src);
        values_[graph_.value(s).name] = draw(src, -1.0, 1.0, gen_);
        return insert_node(graph_, at, OpKind::Copy, {target, s}, attrs, type);
      }
      default: {
        // x.add_(w), x.sub_(w, alpha=2), x.mul_(w), x.div_(w): w a new parameter along the last
        // dim, away from 0.
        static constexpr OpKind kOps[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div};
        const OpKind op = kOps[below(rng_, 4)];
        ir::TensorType weight{type.dtype, {}};
        if (!type.shape.empty()) weight.shape = {type.shape.back()};
        const ValueId w = graph_.add_parameter(fresh_name(graph_, "scale"), weight);
        values_[graph_.value(w).name] = draw(weight, 0.5, 1.5, gen_);
        if (op == OpKind::Sub) attrs.set("alpha", 2.0);
        return insert_node(graph_, at, op, {target, w}, attrs, type);
      }
    }
  }

  ir::Graph& graph_;
  ir::TensorMap& values_;
  std::mt19937_64& rng_;
  ::weft::Generator gen_;
};

}  // namespace

void add_in_place_writes(GeneratedCase& result, std::mt19937_64& rng) {
  if (!result.values.finite || result.graph.shape_set_count() > 1) return;
  const GeneratedCase before = result;
  Writer writer(result, rng);
  // Fresh floating values free for writing, not read before any later node reads them.
  std::vector<ValueId> targets;
  for (std::size_t n = 0; n < result.graph.nodes().size(); ++n) {
    const ir::Node& node = result.graph.nodes()[n];
    if (node.outputs.size() != 1 || !is_floating(result.graph.type(node.outputs[0]).dtype))
      continue;
    ir::Graph probe = result.graph;
    ir::Attributes attrs;
    attrs.set("inplace", true);
    const ir::TensorType type = probe.type(node.outputs[0]);
    const ValueId written = insert_node(probe, n + 1, OpKind::Neg, {node.outputs[0]}, attrs, type);
    redirect(probe, node.outputs[0], written, n + 1);
    if (!ir::in_place_problem(probe)) targets.push_back(node.outputs[0]);
  }
  std::shuffle(targets.begin(), targets.end(), rng);
  const std::size_t writes =
      targets.empty() ? 0 : 1 + below(rng, std::min<std::size_t>(targets.size(), 2));
  for (std::size_t k = 0; k < writes; ++k) writer.write_after(targets[k]);
  writer.mark_last_readers();
  if (ir::count_in_place(result.graph) == 0 || ir::in_place_problem(result.graph) ||
      !runs_finite(result.graph, result.values.values)) {
    result = before;
  }
}

}  // namespace weft::gen
