#include "weft/ir/inplace.h"

#include <map>

#include "weft/error.h"
#include "weft/ir/op_schema.h"
#include "weft/ops.h"

namespace weft::ir {

namespace {

// Producers whose output is fresh storage that their backward does not read, in PyTorch and in
// the engine (relu, exp, sigmoid, tanh, pow, sqrt, softmax... keep their result: a write into
// it is PyTorch's "modified by an inplace operation" error).
bool output_free_for_writing(OpKind op) {
  switch (op) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Log:
    case OpKind::LeakyRelu:
    case OpKind::Hardtanh:
    case OpKind::Clamp:
    case OpKind::Gelu:
    case OpKind::Silu:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::AddScalar:
    case OpKind::SubScalar:
    case OpKind::RsubScalar:
    case OpKind::MulScalar:
    case OpKind::DivScalar:
    case OpKind::Where:
    case OpKind::MaskedFill:
    case OpKind::IndexPut:
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::Matmul:
    case OpKind::Mm:
    case OpKind::Bmm:
    case OpKind::Linear:
    case OpKind::Addmm:
    case OpKind::Conv1d:
    case OpKind::Conv2d:
    case OpKind::ConvTranspose1d:
    case OpKind::ConvTranspose2d:
    case OpKind::AvgPool1d:
    case OpKind::AvgPool2d:
    case OpKind::AdaptiveAvgPool2d:
    case OpKind::AvgPool3d:
    case OpKind::AdaptiveAvgPool3d:
    case OpKind::Cat:
    case OpKind::Stack:
    case OpKind::Pad:
    case OpKind::Tril:
    case OpKind::Triu:
    case OpKind::Cumsum:
    case OpKind::Flip:
    case OpKind::Roll:
    case OpKind::Repeat:
    case OpKind::Gather:
    case OpKind::IndexSelect:
    case OpKind::Interpolate:
    case OpKind::Copy:
    case OpKind::MaskedScatter:
    case OpKind::Im2col:
    case OpKind::Col2im:
      return true;
    default:
      return false;
  }
}

// The views a write may go through: one step from a fresh value, never an expand (PyTorch
// refuses to write into a tensor whose elements share memory).
bool writable_view(OpKind op) {
  switch (op) {
    case OpKind::Slice:
    case OpKind::Select:
    case OpKind::Transpose:
    case OpKind::Permute:
    case OpKind::Unsqueeze:
    case OpKind::Squeeze:
      return true;
    default:
      return false;
  }
}

std::string value_label(const Graph& graph, ValueId id) {
  const Value& v = graph.value(id);
  return "value " + std::to_string(id) + (v.name.empty() ? "" : " '" + v.name + "'");
}

}  // namespace

bool can_run_in_place(OpKind op) {
  switch (op) {
    case OpKind::Relu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Exp:
    case OpKind::Neg:
    case OpKind::Clamp:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::MaskedFill:
    case OpKind::IndexPut:
    case OpKind::Copy:
      return true;
    default:
      return false;
  }
}

bool is_in_place(const Node& node) {
  return can_run_in_place(node.op) && node.attrs.get_bool("inplace", false);
}

bool is_writeback(const Node& node) {
  return (node.op == OpKind::SliceScatter || node.op == OpKind::SelectScatter) &&
         node.attrs.get_bool("writeback", false);
}

bool may_alias_input(const Node& node) {
  if (is_in_place(node) || is_writeback(node)) return true;
  switch (node.op) {
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Transpose:
    case OpKind::Permute:
    case OpKind::Expand:
    case OpKind::Slice:
    case OpKind::Select:
    case OpKind::Diagonal:  // a view in PyTorch, a copy in the engine
    case OpKind::Split:
    case OpKind::Chunk:
    case OpKind::Contiguous:
    case OpKind::Cast:
    case OpKind::Dropout:  // eval mode or p == 0 returns the input itself, in both
    case OpKind::FeatureDropout:
    case OpKind::AlphaDropout:
    case OpKind::FeatureAlphaDropout:
      return true;
    default:
      return false;
  }
}

std::vector<ValueId> storage_roots(const Graph& graph) {
  std::vector<ValueId> root(graph.values().size());
  for (std::size_t id = 0; id < root.size(); ++id) root[id] = static_cast<ValueId>(id);
  for (const Node& node : graph.nodes()) {
    if (node.inputs.empty() || !may_alias_input(node)) continue;
    const ValueId source = root[static_cast<std::size_t>(node.inputs[0])];
    for (ValueId out : node.outputs) root[static_cast<std::size_t>(out)] = source;
  }
  return root;
}

namespace {

// The writeback's in-place write into slice(base)/select(base) with its attributes, if its
// source is one: the node index of that write.
std::optional<std::size_t> write_through_view(const Graph& graph, const Node& writeback) {
  const auto write = graph.producer(writeback.inputs[1]);
  if (!write || !is_in_place(graph.nodes()[*write])) return std::nullopt;
  const auto view = graph.producer(graph.nodes()[*write].inputs[0]);
  if (!view) return std::nullopt;
  const Node& v = graph.nodes()[*view];
  const OpKind view_op = writeback.op == OpKind::SliceScatter ? OpKind::Slice : OpKind::Select;
  Attributes plain = writeback.attrs;
  plain.erase("writeback");
  if (v.op != view_op || v.inputs[0] != writeback.inputs[0] ||
      with_defaults(v.op, v.attrs) != with_defaults(v.op, plain)) {
    return std::nullopt;
  }
  return write;
}

}  // namespace

bool writes_into_slot(const Graph& graph, const Node& node) {
  return is_writeback(node) && !write_through_view(graph, node);
}

std::optional<InPlaceProblem> in_place_problem(const Graph& graph) {
  const auto& nodes = graph.nodes();
  const std::vector<ValueId> root = storage_roots(graph);
  auto root_of = [&](ValueId id) { return root[static_cast<std::size_t>(id)]; };
  // The node index that defines each value (leaves: none).
  std::vector<std::optional<std::size_t>> defined_by(graph.values().size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId out : nodes[n].outputs) defined_by[static_cast<std::size_t>(out)] = n;
  }
  std::map<ValueId, std::size_t> written;  // root → the node that writes it
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    ValueId target = 0;
    if (is_in_place(node)) {
      target = node.inputs[0];
      if (graph.type(node.outputs[0]) != graph.type(target)) {
        return InPlaceProblem{n, "an in-place result must keep its target's type (target " +
                                     to_string(graph.type(target)) + ", result " +
                                     to_string(graph.type(node.outputs[0])) + ")"};
      }
    } else if (is_writeback(node)) {
      if (write_through_view(graph, node)) continue;  // written by that in-place node
      // base[slot] = src: a copy into the slot of a fresh value.
      target = node.inputs[0];
      if (root_of(node.inputs[1]) == root_of(target)) {
        return InPlaceProblem{n, "writes into a slot of " + value_label(graph, target) +
                                     " a value that shares its storage"};
      }
    } else {
      continue;
    }
    const ValueId storage = root_of(target);
    // index_put_ and masked_fill_ refuse an operand that overlaps the tensor they write ("some
    // elements of the input tensor and the written-to tensor refer to a single memory location");
    // copy_ from an overlapping view reads elements it has already overwritten.
    if ((node.op == OpKind::IndexPut || node.op == OpKind::MaskedFill || node.op == OpKind::Copy) &&
        is_in_place(node)) {
      for (std::size_t k = 1; k < node.inputs.size(); ++k) {
        if (root_of(node.inputs[k]) == storage) {
          return InPlaceProblem{n, std::string(op_name(node.op)) + "_ reads " +
                                       value_label(graph, node.inputs[k]) +
                                       ", which shares the storage it writes (PyTorch refuses "
                                       "overlapping operands)"};
        }
      }
    }
    if (graph.leaf_kind(storage)) {
      return InPlaceProblem{n, "writes into the storage of leaf '" + graph.value(storage).name +
                                   "' (PyTorch refuses a write into a leaf that requires grad, "
                                   "and the next call would see changed inputs)"};
    }
    if (written.count(storage)) {
      return InPlaceProblem{n, "writes a second time into the storage of " +
                                   value_label(graph, storage) + " (written by node " +
                                   std::to_string(written[storage]) + ")"};
    }
    written[storage] = n;
    const std::size_t producer = *defined_by[static_cast<std::size_t>(storage)];
    if (!output_free_for_writing(nodes[producer].op)) {
      return InPlaceProblem{n, "writes into the result of " +
                                   std::string(op_name(nodes[producer].op)) +
                                   ", which is not fresh storage free for writing (its backward "
                                   "reads it, or it may share another value's storage)"};
    }
    if (target != storage) {
      const std::size_t view = *defined_by[static_cast<std::size_t>(target)];
      if (!writable_view(nodes[view].op) || nodes[view].inputs[0] != storage) {
        return InPlaceProblem{n, "writes through " + std::string(op_name(nodes[view].op)) +
                                     ": a write goes into a fresh value or one slice, select, "
                                     "transpose, permute, squeeze or unsqueeze of it"};
      }
    }
    // Before the write, only views read the storage (anything else may have saved it).
    for (std::size_t m = producer + 1; m < n; ++m) {
      for (ValueId in : nodes[m].inputs) {
        if (root_of(in) == storage && !may_alias_input(nodes[m])) {
          return InPlaceProblem{n, "writes into storage that node " + std::to_string(m) + " (" +
                                       std::string(op_name(nodes[m].op)) +
                                       ") read before the write (its backward may read it)"};
        }
      }
    }
  }
  // After a write, nothing reads a value of the written storage that is older than the write
  // (as written it would see the write); a writeback alone reads its base.
  for (const auto& [storage, n] : written) {
    auto stale = [&, n = n, storage = storage](ValueId id) {
      if (root_of(id) != storage) return false;
      const auto def = defined_by[static_cast<std::size_t>(id)];
      return !def || *def < n;
    };
    for (std::size_t m = n + 1; m < nodes.size(); ++m) {
      for (std::size_t k = 0; k < nodes[m].inputs.size(); ++k) {
        if (is_writeback(nodes[m]) && k == 0) continue;
        if (stale(nodes[m].inputs[k])) {
          return InPlaceProblem{m, "reads " + value_label(graph, nodes[m].inputs[k]) +
                                       " after node " + std::to_string(n) +
                                       " wrote its storage (read the written result instead)"};
        }
      }
    }
    for (ValueId out : graph.outputs()) {
      if (stale(out)) {
        return InPlaceProblem{n, "the graph returns " + value_label(graph, out) +
                                     ", whose storage this node writes afterwards"};
      }
    }
  }
  return std::nullopt;
}

std::vector<Tensor> run_node_as_written(const Node& node, const std::vector<Tensor>& inputs) {
  Tensor target = inputs[0];
  if (is_writeback(node)) {
    // Through a view, the in-place write already changed the base; otherwise base[slot] = src.
    if (inputs[1].storage() != target.storage()) {
      Tensor slot =
          node.op == OpKind::SliceScatter
              ? slice(target, node.attrs.get_int("dim", 0), node.attrs.get_int("start", 0),
                      node.attrs.get_int("end", INT64_MAX), node.attrs.get_int("step", 1))
              : select(target, node.attrs.get_int("dim"), node.attrs.get_int("index"));
      slot.copy_(inputs[1]);
    }
    return {target};
  }
  const Attributes& a = node.attrs;
  switch (node.op) {
    case OpKind::Relu:
      target.relu_();
      break;
    case OpKind::Sigmoid:
      target.sigmoid_();
      break;
    case OpKind::Tanh:
      target.tanh_();
      break;
    case OpKind::Exp:
      target.exp_();
      break;
    case OpKind::Neg:
      target.neg_();
      break;
    case OpKind::Clamp: {
      std::optional<double> min, max;
      if (a.has("min")) min = a.get_float("min");
      if (a.has("max")) max = a.get_float("max");
      target.clamp_(min, max);
      break;
    }
    case OpKind::Add:
      target.add_(inputs[1], a.get_float("alpha", 1.0));
      break;
    case OpKind::Sub:
      target.sub_(inputs[1], a.get_float("alpha", 1.0));
      break;
    case OpKind::Mul:
      target.mul_(inputs[1]);
      break;
    case OpKind::Div:
      if (a.has("rounding_mode")) throw Error("div_ with a rounding mode is not written in place");
      target.div_(inputs[1]);
      break;
    case OpKind::MaskedFill:
      target.masked_fill_(inputs[1], a.get_float("value"));
      break;
    case OpKind::IndexPut:
      target.index_put_(inputs[1], inputs[2], a.get_bool("accumulate", false));
      break;
    case OpKind::Copy:
      target.copy_(inputs[1]);
      break;
    default:
      throw Error(std::string(op_name(node.op)) + " has no in-place form");
  }
  return {target};
}

std::size_t count_in_place(const Graph& graph) {
  std::size_t count = 0;
  for (const Node& node : graph.nodes()) count += is_in_place(node) ? 1 : 0;
  return count;
}

void clear_in_place(Node& node) {
  node.attrs.erase("inplace");
  node.attrs.erase("writeback");
}

void clear_in_place(Graph& graph) {
  for (Node& node : graph.mutable_nodes()) clear_in_place(node);
}

}  // namespace weft::ir
