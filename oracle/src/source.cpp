// The source-text row of the op table (weft/oracle/source.h): a graph's forward as statements,
// one per node (source_expressions.cpp writes each op's call), the module form's submodules and
// the in-place writes. No torch headers.
#include "weft/oracle/source.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "weft/error.h"
#include "weft/ir/inplace.h"
#include "weft/ir/op_schema.h"

#include "source_emitter.h"
#include "source_literals.h"

namespace weft::oracle {
namespace source_detail {

EmittedForward Emitter::run() {
  EmittedForward out;
  std::set<std::string> taken;
  auto unique = [&](const std::string& leaf_name) {
    std::string ident = sanitize_identifier(leaf_name);
    // Leading underscores are nn.Module's private attributes (_parameters, _buffers, ...).
    if (ident[0] == '_' || looks_like_value_name(ident)) ident = "leaf" + ident;
    if (is_reserved_name(ident)) ident += "_";
    std::string candidate = ident;
    for (int k = 2; taken.count(candidate) > 0; ++k) candidate = ident + "_" + std::to_string(k);
    taken.insert(candidate);
    return candidate;
  };
  for (ir::ValueId id : graph_.inputs()) {
    const std::string& name = graph_.value(id).name;
    const std::string ident = unique(name);
    out.inputs.push_back(ident);
    out.identifiers[name] = ident;
    names_[static_cast<std::size_t>(id)] = ident;
  }
  for (ir::ValueId id : graph_.parameters()) {
    const std::string& name = graph_.value(id).name;
    const std::string ident = unique(name);
    out.parameters.push_back(ident);
    out.identifiers[name] = ident;
    names_[static_cast<std::size_t>(id)] = "self." + ident;
  }
  if (!script() && graph_.nn_modules()) plan_submodules(unique, out);
  for (std::size_t n = 0; n < graph_.nodes().size(); ++n) emit_node(n);
  std::string ret = "return (";
  for (ir::ValueId id : graph_.outputs()) {
    const std::string& expr = name_of(id, "output");
    out.outputs.push_back(expr);
    ret += expr + ", ";
  }
  if (!graph_.outputs().empty()) ret.resize(ret.size() - 1);  // "(a, b," and "(a,"
  if (graph_.outputs().size() > 1) ret.pop_back();
  ret += ")";
  lines_.push_back(ret);
  out.lines = std::move(lines_);
  return out;
}

template <typename Unique>
void Emitter::plan_submodules(Unique& unique, EmittedForward& out) {
  std::vector<int> reads(graph_.values().size(), 0);
  for (const ir::Node& node : graph_.nodes()) {
    for (ir::ValueId id : node.inputs) ++reads[static_cast<std::size_t>(id)];
  }
  for (ir::ValueId id : graph_.outputs()) ++reads[static_cast<std::size_t>(id)];
  auto owned = [&](ir::ValueId id) {
    return graph_.leaf_kind(id) == ir::LeafKind::Parameter && is_floating(graph_.type(id).dtype) &&
           reads[static_cast<std::size_t>(id)] == 1;
  };
  for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
    const ir::Node& node = graph_.nodes()[n];
    const Attributes a = ir::with_defaults(node.op, node.attrs);
    std::string constructor;
    std::vector<std::pair<ir::ValueId, std::string>> held;  // parameter, attribute
    const auto& in = node.inputs;
    switch (node.op) {
      case OpKind::Linear: {
        if (!owned(in[1]) || (in.size() > 2 && !owned(in[2]))) continue;
        const ir::Shape& w = shape_of(in[1]);
        if (w.size() != 2) continue;
        constructor = "torch.nn.Linear(" + int_literal(w[1]) + ", " + int_literal(w[0]) +
                      ", bias=" + bool_literal(in.size() > 2) + ")";
        held = {{in[1], "weight"}};
        if (in.size() > 2) held.emplace_back(in[2], "bias");
        break;
      }
      case OpKind::Conv1d:
      case OpKind::Conv2d: {
        if (!owned(in[1]) || (in.size() > 2 && !owned(in[2]))) continue;
        const ir::Shape& w = shape_of(in[1]);
        const std::size_t spatial_dims = node.op == OpKind::Conv1d ? 1 : 2;
        if (w.size() != 2 + spatial_dims) continue;
        const std::int64_t groups = a.get_int("groups");
        std::vector<std::int64_t> kernel(w.begin() + 2, w.end());
        constructor =
            std::string("torch.nn.") + (node.op == OpKind::Conv1d ? "Conv1d(" : "Conv2d(") +
            int_literal(w[1] * groups) + ", " + int_literal(w[0]) + ", " + kernel_literal(kernel) +
            ", stride=" + spatial(a.get_ints("stride")) +
            ", padding=" + spatial(a.get_ints("padding")) +
            ", dilation=" + spatial(a.get_ints("dilation")) + ", groups=" + int_literal(groups) +
            ", bias=" + bool_literal(in.size() > 2) + ")";
        held = {{in[1], "weight"}};
        if (in.size() > 2) held.emplace_back(in[2], "bias");
        break;
      }
      case OpKind::ConvTranspose1d:
      case OpKind::ConvTranspose2d: {
        if (!owned(in[1]) || (in.size() > 2 && !owned(in[2]))) continue;
        const ir::Shape& w = shape_of(in[1]);  // [in, out/groups, *kernel]
        const bool one_d = node.op == OpKind::ConvTranspose1d;
        if (w.size() != (one_d ? 3u : 4u)) continue;
        const std::int64_t groups = a.get_int("groups");
        std::vector<std::int64_t> kernel(w.begin() + 2, w.end());
        constructor = std::string("torch.nn.") + (one_d ? "ConvTranspose1d(" : "ConvTranspose2d(") +
                      int_literal(w[0]) + ", " + int_literal(w[1] * groups) + ", " +
                      kernel_literal(kernel) + ", stride=" + spatial(a.get_ints("stride")) +
                      ", padding=" + spatial(a.get_ints("padding")) +
                      ", output_padding=" + spatial(a.get_ints("output_padding")) +
                      ", groups=" + int_literal(groups) + ", bias=" + bool_literal(in.size() > 2) +
                      ", dilation=" + spatial(a.get_ints("dilation")) + ")";
        held = {{in[1], "weight"}};
        if (in.size() > 2) held.emplace_back(in[2], "bias");
        break;
      }
      case OpKind::LayerNorm: {
        if (in.size() == 3 && (!owned(in[1]) || !owned(in[2]))) continue;
        constructor = "torch.nn.LayerNorm(" + ints_literal(a.get_ints("normalized_shape")) +
                      ", eps=" + float_literal(a.get_float("eps")) +
                      ", elementwise_affine=" + bool_literal(in.size() == 3) + ")";
        if (in.size() == 3) held = {{in[1], "weight"}, {in[2], "bias"}};
        break;
      }
      case OpKind::GroupNorm:
      case OpKind::InstanceNorm: {
        if (in.size() == 3 && (!owned(in[1]) || !owned(in[2]))) continue;
        const ir::Shape& x = shape_of(in[0]);
        if (x.size() < 3 && node.op == OpKind::InstanceNorm) continue;
        const std::string eps = float_literal(a.get_float("eps"));
        const std::string affine = bool_literal(in.size() == 3);
        constructor = node.op == OpKind::GroupNorm
                          ? "torch.nn.GroupNorm(" + int_literal(a.get_int("num_groups")) + ", " +
                                int_literal(x[1]) + ", eps=" + eps + ", affine=" + affine + ")"
                          : "torch.nn.InstanceNorm" + std::to_string(x.size() - 2) + "d(" +
                                int_literal(x[1]) + ", eps=" + eps + ", affine=" + affine + ")";
        if (in.size() == 3) held = {{in[1], "weight"}, {in[2], "bias"}};
        break;
      }
      case OpKind::Embedding: {
        if (!owned(in[1])) continue;
        const ir::Shape& w = shape_of(in[1]);
        if (w.size() != 2) continue;
        std::string padding = "None";
        if (a.has("padding_idx")) {
          const std::int64_t idx = a.get_int("padding_idx");
          if (idx >= w[0] || idx < -w[0]) continue;  // refused by the functional form
          padding = int_literal(idx < 0 ? idx + w[0] : idx);
        }
        constructor = "torch.nn.Embedding(" + int_literal(w[0]) + ", " + int_literal(w[1]) +
                      ", padding_idx=" + padding + ")";
        held = {{in[1], "weight"}};
        break;
      }
      default:
        continue;
    }
    const std::string module = unique(std::string(ir::op_name(node.op)) + "_" + std::to_string(n));
    out.init_lines.push_back("self." + module + " = " + constructor);
    for (const auto& [id, attribute] : held) {
      const std::string& leaf = graph_.value(id).name;
      out.init_lines.push_back("self." + module + "." + attribute +
                               " = torch.nn.Parameter(params[" + string_literal(leaf) +
                               "], requires_grad=" + bool_literal(graph_.requires_grad()) + ")");
      out.submodule_parameters[leaf] = module + "." + attribute;
    }
    submodules_[n] = module;
  }
}

void Emitter::emit_node(std::size_t n) {
  const ir::Node& node = graph_.nodes()[n];
  const ir::OpSchema& schema = ir::schema(node.op);
  if (!schema.accepts_input_count(static_cast<int>(node.inputs.size()))) {
    refuse(n, std::string(schema.name()) + " expects " + schema.input_count_text() +
                  " inputs, got " + std::to_string(node.inputs.size()));
  }
  std::vector<std::string> in;
  for (ir::ValueId id : node.inputs) {
    in.push_back(name_of(id, ir::node_label(graph_, n) + ": input"));
  }
  std::vector<std::string> out;
  for (ir::ValueId id : node.outputs) out.push_back("v" + std::to_string(id));
  const Attributes a = ir::with_defaults(node.op, node.attrs);

  // Writes (weft/ir/inplace.h) are statements; their result keeps the written value's name.
  if (ir::is_in_place(node) || ir::is_writeback(node)) {
    emit_write(n, node, a, in);
    names_[static_cast<std::size_t>(node.outputs.at(0))] = in[0];
    return;
  }
  // Multi-output ops write their own statements; the others return one expression.
  // values, indices = torch.<op>(x, args) (var_mean, std_mean: var or std, mean).
  const auto two_outputs = [&](const std::string& args) {
    if (out.size() != 2)
      refuse(n, "the graph declares " + std::to_string(out.size()) + " outputs, " +
                    std::string(schema.name()) + " has 2");
    lines_.push_back(out[0] + ", " + out[1] + " = torch." + std::string(schema.name()) + "(" +
                     in[0] + ", " + args + ")" + tag(n));
  };
  if (node.op == OpKind::Max || node.op == OpKind::Min) {
    two_outputs(int_literal(a.get_int("dim")) + ", keepdim=" + bool_literal(a.get_bool("keepdim")));
  } else if (node.op == OpKind::Cummax || node.op == OpKind::Cummin) {
    two_outputs(int_literal(a.get_int("dim")));
  } else if (node.op == OpKind::VarMean || node.op == OpKind::StdMean) {
    two_outputs(optional_dims(a.get_ints("dim")) +
                ", correction=" + int_literal(a.get_int("correction")) +
                ", keepdim=" + bool_literal(a.get_bool("keepdim")));
  } else if (node.op == OpKind::Sort) {
    two_outputs("dim=" + int_literal(a.get_int("dim")) +
                ", descending=" + bool_literal(a.get_bool("descending")) + stable_argument(a));
  } else if (node.op == OpKind::Topk) {
    two_outputs(int_literal(a.get_int("k")) + ", dim=" + int_literal(a.get_int("dim")) +
                ", largest=" + bool_literal(a.get_bool("largest")) + ", sorted=True");
  } else if (node.op == OpKind::Split || node.op == OpKind::Chunk) {
    std::string call;
    if (node.op == OpKind::Chunk) {
      call = "torch.chunk(" + in[0] + ", " + int_literal(a.get_int("chunks")) + ", " +
             int_literal(a.get_int("dim")) + ")";
    } else {
      // One size: the chunk size (torch.split(x, 2)); several: the sections.
      const auto& sizes = a.get_ints("split_size");
      const std::string size_text = sizes.size() == 1 ? int_literal(sizes[0]) : ints_literal(sizes);
      const char* fn = sizes.size() != 1 && script() ? "torch.split_with_sizes(" : "torch.split(";
      call = fn + in[0] + ", " + size_text + ", " + int_literal(a.get_int("dim")) + ")";
    }
    const std::string parts = out.empty() ? std::string("parts") : out[0] + "_parts";
    lines_.push_back(parts + " = " + call + tag(n));
    for (std::size_t k = 0; k < out.size(); ++k) {
      lines_.push_back(out[k] + " = " + parts + "[" + std::to_string(k) + "]");
    }
  } else {
    if (out.size() != 1) {
      refuse(n, "the graph declares " + std::to_string(out.size()) + " outputs, " +
                    std::string(schema.name()) + " has 1");
    }
    const auto module = submodules_.find(n);
    const std::string value = module != submodules_.end()
                                  ? "self." + module->second + "(" + in[0] + ")"
                                  : expression(n, node, a, in);
    lines_.push_back(out[0] + " = " + value + tag(n));
  }
  for (std::size_t k = 0; k < node.outputs.size(); ++k) {
    names_[static_cast<std::size_t>(node.outputs[k])] = out[k];
  }
}

void Emitter::emit_write(std::size_t n, const ir::Node& node, const Attributes& a,
                         const std::vector<std::string>& in) {
  const std::string& x = in[0];
  const std::string op(ir::op_name(node.op));
  if (ir::is_writeback(node)) {
    if (!ir::writes_into_slot(graph_, node)) {
      lines_.push_back("# " + x + " holds the write through its " +
                       (node.op == OpKind::SliceScatter ? "slice" : "select") + tag(n));
      return;
    }
    const auto rank = static_cast<std::int64_t>(shape_of(node.inputs[0]).size());
    std::string slot;
    if (node.op == OpKind::SliceScatter) {
      slot = slice(x, a, rank);
    } else {
      const std::int64_t dim = a.get_int("dim"), d = dim < 0 ? dim + rank : dim;
      slot = call("torch.select", {x, int_literal(dim), int_literal(a.get_int("index"))});
      if (!script() && d >= 0 && d < rank) {
        slot = x + "[";
        for (std::int64_t i = 0; i < d; ++i) slot += ":, ";
        slot += int_literal(a.get_int("index")) + "]";
      }
    }
    lines_.push_back((slot.back() == ']' ? slot + " = " + in[1] : slot + ".copy_(" + in[1] + ")") +
                     tag(n));
    return;
  }
  const bool operator_form = n % 2 == 1;
  std::string statement;
  switch (node.op) {
    case OpKind::Clamp:
      statement =
          x + ".clamp_(min=" + optional_float(a, "min") + ", max=" + optional_float(a, "max") + ")";
      break;
    case OpKind::Add:
    case OpKind::Sub: {
      const double alpha = a.get_float("alpha");
      if (alpha == 1.0 && operator_form) {
        statement = x + (node.op == OpKind::Add ? " += " : " -= ") + in[1];
      } else {
        statement = x + "." + op + "_(" + in[1] + ", alpha=" + multiplier_literal(alpha) + ")";
      }
      break;
    }
    case OpKind::Mul:
    case OpKind::Div:
      statement = operator_form ? x + (node.op == OpKind::Mul ? " *= " : " /= ") + in[1]
                                : x + "." + op + "_(" + in[1] + ")";
      break;
    case OpKind::IndexPut:
      // x[index] = values, as users write it; or the method (the only spelling of accumulate).
      if (operator_form && !a.get_bool("accumulate")) {
        statement = x + "[" + in[1] + "] = " + in[2];
        break;
      }
      statement = x + ".index_put_(" + index_list(in[1]) + ", " + in[2] + ", " +
                  accumulate_argument(a.get_bool("accumulate")) + ")";
      break;
    case OpKind::MaskedFill:
      statement = x + ".masked_fill_(" + in[1] + ", " + float_literal(a.get_float("value")) + ")";
      break;
    case OpKind::Copy:
      statement = x + ".copy_(" + in[1] + ")";
      break;
    case OpKind::Relu:
      // The functional spelling too (torch.relu_ in TorchScript): Dynamo and TorchScript
      // reach it through another entry point than the method's.
      if (operator_form) {
        statement = script() ? "torch.relu_(" + x + ")" : "F.relu(" + x + ", inplace=True)";
        break;
      }
      statement = x + ".relu_()";
      break;
    default:
      statement = x + "." + op + "_()";
      break;
  }
  lines_.push_back(statement + tag(n));
}

}  // namespace source_detail

using ir::OpKind;
using source_detail::Emitter;

std::string EmittedForward::method(int indent) const {
  const std::string pad(static_cast<std::size_t>(std::max(indent, 0)), ' ');
  std::string text = pad + "def forward(self";
  for (const std::string& input : inputs) text += ", " + input;
  text += "):\n";
  for (const std::string& line : lines) text += pad + "    " + line + "\n";
  return text;
}

std::string python_compat_definitions(const ir::Graph& graph) {
  const bool calls_rms_norm =
      std::any_of(graph.nodes().begin(), graph.nodes().end(),
                  [](const ir::Node& node) { return node.op == OpKind::RmsNorm; });
  if (!calls_rms_norm) return {};
  return R"(if not hasattr(F, "rms_norm"):  # PyTorch < 2.4: ATen's composite steps
    def _rms_norm(input, normalized_shape, weight=None, eps=None):
        wide = input.float() if input.dtype in (torch.float16, torch.bfloat16) else input
        if eps is None:
            eps = torch.finfo(wide.dtype).eps
        dims = [-(i + 1) for i in range(len(normalized_shape))]
        out = wide.mul(torch.rsqrt(wide.pow(2).mean(dims, keepdim=True).add(eps)))
        out = out.type_as(input)
        return out if weight is None else out.mul(weight)
    F.rms_norm = _rms_norm
)";
}

EmittedForward emit_forward(const ir::Graph& graph, SourceDialect dialect) {
  return Emitter(graph, dialect).run();
}

}  // namespace weft::oracle
