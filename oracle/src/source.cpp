// The source-text row of the op table (weft/oracle/source.h): every OpKind written as the
// TorchScript or PyTorch call that torch_eager.cpp's lower_node makes, with its attributes
// spelled out (defaults filled in) so that the text does not depend on PyTorch's defaults.
// The switch has no default, so a new op without a row does not compile. No torch headers.
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
#include "weft/ops.h"  // rms_norm_default_eps

#include "source_literals.h"

namespace weft::oracle {

namespace {

using ir::Attributes;
using ir::OpKind;

// sort's and argsort's stable flag, written only when set: without it the call is sort.default
// (a Core ATen op), with it sort.stable (not one).
std::string stable_argument(const ir::Attributes& a) {
  return a.get_bool("stable") ? ", stable=True" : "";
}

class Emitter {
 public:
  Emitter(const ir::Graph& graph, SourceDialect dialect)
      : graph_(graph), dialect_(dialect), names_(graph.values().size()) {}

  EmittedForward run() {
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

  // nn.Conv*d's kernel_size as a program writes it: 3 for a square kernel, else (2, 3).
  static std::string kernel_literal(const std::vector<std::int64_t>& kernel) {
    if (std::adjacent_find(kernel.begin(), kernel.end(), std::not_equal_to<>()) == kernel.end()) {
      return int_literal(kernel.front());
    }
    std::string text = "(";
    for (std::int64_t k : kernel) text += int_literal(k) + ", ";
    text.resize(text.size() - 2);
    return text + ")";
  }

  // The module form: every linear, conv, layer/group/instance norm and embedding node whose
  // weight (and bias) are floating parameters that no other node reads becomes an nn submodule
  // holding them.
  template <typename Unique>
  void plan_submodules(Unique& unique, EmittedForward& out) {
    std::vector<int> reads(graph_.values().size(), 0);
    for (const ir::Node& node : graph_.nodes()) {
      for (ir::ValueId id : node.inputs) ++reads[static_cast<std::size_t>(id)];
    }
    for (ir::ValueId id : graph_.outputs()) ++reads[static_cast<std::size_t>(id)];
    auto owned = [&](ir::ValueId id) {
      return graph_.leaf_kind(id) == ir::LeafKind::Parameter &&
             is_floating(graph_.type(id).dtype) && reads[static_cast<std::size_t>(id)] == 1;
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
              int_literal(w[1] * groups) + ", " + int_literal(w[0]) + ", " +
              kernel_literal(kernel) + ", stride=" + spatial(a.get_ints("stride")) +
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
          constructor =
              std::string("torch.nn.") + (one_d ? "ConvTranspose1d(" : "ConvTranspose2d(") +
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
      const std::string module =
          unique(std::string(ir::op_name(node.op)) + "_" + std::to_string(n));
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

 private:
  bool script() const { return dialect_ == SourceDialect::TorchScript; }

  const std::string& name_of(ir::ValueId id, const std::string& what) const {
    if (!graph_.has_value(id) || names_[static_cast<std::size_t>(id)].empty()) {
      throw Error(what + " value " + std::to_string(id) + " is not computed before it is used");
    }
    return names_[static_cast<std::size_t>(id)];
  }

  const ir::Shape& shape_of(ir::ValueId id) const { return graph_.type(id).shape; }

  [[noreturn]] void refuse(std::size_t n, const std::string& message) const {
    throw Error(ir::node_label(graph_, n) + ": " + message);
  }

  // The statement comment that lets a TorchScript traceback be mapped back to the node.
  std::string tag(std::size_t n) const {
    return "  # node " + std::to_string(n) + ": " + std::string(ir::op_name(graph_.nodes()[n].op));
  }

  void emit_node(std::size_t n) {
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
      two_outputs(int_literal(a.get_int("dim")) +
                  ", keepdim=" + bool_literal(a.get_bool("keepdim")));
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
        const std::string size_text =
            sizes.size() == 1 ? int_literal(sizes[0]) : ints_literal(sizes);
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

  // An in-place op as a method (x.relu_(), x.add_(y, alpha=2)) or, on every other node, an
  // augmented assignment (x += y); a copy into a slot as x[1:3] = y (torch.slice(...).copy_(y)
  // in TorchScript, whose slices are calls); a write through a view needs no statement.
  void emit_write(std::size_t n, const ir::Node& node, const Attributes& a,
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
      lines_.push_back(
          (slot.back() == ']' ? slot + " = " + in[1] : slot + ".copy_(" + in[1] + ")") + tag(n));
      return;
    }
    const bool operator_form = n % 2 == 1;
    std::string statement;
    switch (node.op) {
      case OpKind::Clamp:
        statement = x + ".clamp_(min=" + optional_float(a, "min") +
                    ", max=" + optional_float(a, "max") + ")";
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

  // torch.<op>(args) in both dialects.
  static std::string call(const std::string& fn, const std::vector<std::string>& args) {
    std::string text = fn + "(";
    for (std::size_t i = 0; i < args.size(); ++i) text += (i > 0 ? ", " : "") + args[i];
    return text + ")";
  }
  // Script: torch.<script_fn>; Python: <python_fn> (F.* where the functional is clearer).
  std::string call2(const std::string& script_fn, const std::string& python_fn,
                    const std::vector<std::string>& args) const {
    return call(script() ? script_fn : python_fn, args);
  }
  // F.rms_norm in Python (python_compat_definitions gives PyTorch 1.13 one). TorchScript runs on
  // LibTorch 1.13, which has no rms_norm: ATen's composite steps, with the default eps written out
  // for the input's declared type.
  std::string rms_norm_call(const ir::Node& node, const Attributes& a,
                            const std::vector<std::string>& in) const {
    const std::vector<std::int64_t> shape = a.get_ints("normalized_shape");
    if (!script()) {
      std::vector<std::string> args{in[0], ints_literal(shape), optional_input(in, 1)};
      if (a.has("eps")) args.push_back("eps=" + float_literal(a.get_float("eps")));
      return call("F.rms_norm", args);
    }
    const Dtype dtype = graph_.type(node.inputs[0]).dtype;
    const bool reduced = dtype == Dtype::Float16 || dtype == Dtype::BFloat16;
    const std::string wide = reduced ? in[0] + ".float()" : in[0];
    const double eps = a.has("eps") ? a.get_float("eps") : rms_norm_default_eps(dtype);
    std::vector<std::int64_t> dims;
    for (std::size_t i = 0; i < shape.size(); ++i)
      dims.push_back(-1 - static_cast<std::int64_t>(i));
    std::string out = call(
        "torch.mul",
        {wide,
         call("torch.rsqrt", {call("torch.add", {call("torch.mean", {call("torch.pow", {wide, "2"}),
                                                                     ints_literal(dims), "True"}),
                                                 float_literal(eps)})})});
    if (reduced) out += ".type_as(" + in[0] + ")";
    return in.size() > 1 ? call("torch.mul", {out, in[1]}) : out;
  }
  // The regression losses: F.<op>(self, target, reduction=..., beta/delta=...) in Python; the
  // ATen builtins in TorchScript, which take the reduction as at::Reduction's number.
  std::string loss_call(OpKind kind, const std::string& op, const std::vector<std::string>& in,
                        const Attributes& a) const {
    const std::string reduction = a.get_string("reduction");
    std::vector<std::string> args = {in[0], in[1]};
    std::string extra;
    if (kind == OpKind::SmoothL1Loss) extra = "beta";
    if (kind == OpKind::HuberLoss) extra = "delta";
    if (script()) {
      args.push_back(reduction_number(a));
      if (!extra.empty()) args.push_back(float_literal(a.get_float(extra)));
      return call("torch." + op, args);
    }
    args.push_back("reduction=" + string_literal(reduction));
    if (!extra.empty()) args.push_back(extra + "=" + float_literal(a.get_float(extra)));
    return call("F." + op, args);
  }
  // at::Reduction's number of a loss's reduction, as the ATen builtins take it in TorchScript.
  static std::string reduction_number(const Attributes& a) {
    const std::string reduction = a.get_string("reduction");
    return reduction == "none" ? "0" : reduction == "sum" ? "2" : "1";
  }
  // F.kl_div; in TorchScript the ATen op, whose reductions lack F's "batchmean" (the sum over
  // the batch size, as F computes it).
  std::string kl_div_call(const ir::Node& node, const std::vector<std::string>& in,
                          const Attributes& a) const {
    const std::string reduction = a.get_string("reduction");
    const std::string log_target = "log_target=" + bool_literal(a.get_bool("log_target"));
    if (!script()) {
      return call("F.kl_div", {in[0], in[1], "reduction=" + string_literal(reduction), log_target});
    }
    if (reduction != "batchmean") {
      return call("torch.kl_div", {in[0], in[1], reduction_number(a), log_target});
    }
    const std::string total = call("torch.kl_div", {in[0], in[1], "2", log_target});
    if (shape_of(node.inputs.at(0)).empty()) return total;
    return "(" + total + " / " + in[0] + ".size(0))";
  }
  // TorchScript has no F: the ATen ops F.nll_loss and F.cross_entropy call (nll_loss_nd takes any
  // trailing dims), with the reduction as at::Reduction's number.
  std::string classification_loss_call(OpKind kind, const std::vector<std::string>& in,
                                       const Attributes& a) const {
    const std::string reduction = a.get_string("reduction");
    const std::string ignore_index = int_literal(a.get_int("ignore_index", -100));
    const bool cross_entropy = kind == OpKind::CrossEntropyLoss;
    const std::string smoothing = float_literal(a.get_float("label_smoothing", 0.0));
    if (script()) {
      std::vector<std::string> args = {in[0], in[1], optional_input(in, 2), reduction_number(a),
                                       ignore_index};
      if (cross_entropy) args.push_back(smoothing);
      return call(cross_entropy ? "torch.cross_entropy_loss" : "torch.nll_loss_nd", args);
    }
    std::vector<std::string> args = {in[0], in[1], "weight=" + optional_input(in, 2),
                                     "ignore_index=" + ignore_index,
                                     "reduction=" + string_literal(reduction)};
    if (cross_entropy) args.push_back("label_smoothing=" + smoothing);
    return call(cross_entropy ? "F.cross_entropy" : "F.nll_loss", args);
  }
  // index_put's one index: a tuple in Python, a list (of optional tensors) in TorchScript.
  std::string index_list(const std::string& index) const {
    return script() ? "[" + index + "]" : "(" + index + ",)";
  }
  std::string accumulate_argument(bool accumulate) const {
    return (script() ? "" : "accumulate=") + bool_literal(accumulate);
  }
  static std::string optional_input(const std::vector<std::string>& in, std::size_t i) {
    return i < in.size() ? in[i] : std::string("None");
  }
  static std::string optional_int(const Attributes& a, std::string_view name) {
    return a.has(name) ? int_literal(a.get_int(name)) : std::string("None");
  }
  static std::string optional_float(const Attributes& a, std::string_view name) {
    return a.has(name) ? float_literal(a.get_float(name)) : std::string("None");
  }
  // A convolution or pooling size list. ATen applies a one-element list to every spatial dim;
  // it is written as one int (stride=1), as PyTorch programs and nn.Conv2d's scripted forward
  // spell it, and TorchScript expands it to the full list at compile time. (Spelled as a list,
  // LibTorch 1.13's optimize_for_inference hands the one-element list to oneDNN unexpanded:
  // SIGFPE in mkldnn_reorder_conv2d_weight for a stride, "dimensions are invalid" for a
  // padding or dilation; see TorchScriptFindings in tests/oracle/torchscript_test.cpp.)
  static std::string spatial(const std::vector<std::int64_t>& values) {
    return values.size() == 1 ? int_literal(values[0]) : ints_literal(values);
  }
  // An empty dim list means every dim (the IR's convention): None.
  static std::string optional_dims(const std::vector<std::int64_t>& dims) {
    return dims.empty() ? std::string("None") : ints_literal(dims);
  }

  std::string expression(std::size_t n, const ir::Node& node, const Attributes& a,
                         const std::vector<std::string>& in) const {
    const std::string op(ir::op_name(node.op));
    const std::string x = in.empty() ? std::string() : in[0];
    switch (node.op) {
      case OpKind::Neg:
      case OpKind::Abs:
      case OpKind::Exp:
      case OpKind::Log:
      case OpKind::Log2:
      case OpKind::Sqrt:
      case OpKind::Rsqrt:
      case OpKind::Reciprocal:
      case OpKind::Sin:
      case OpKind::Cos:
      case OpKind::Tan:
      case OpKind::Asin:
      case OpKind::Acos:
      case OpKind::Atan:
      case OpKind::Sinh:
      case OpKind::Cosh:
      case OpKind::Tanh:
      case OpKind::Erf:
      case OpKind::Floor:
      case OpKind::Ceil:
      case OpKind::Round:
      case OpKind::Sign:
      case OpKind::Trunc:
      case OpKind::Frac:
      case OpKind::Log1p:
      case OpKind::Expm1:
      case OpKind::Log10:
      case OpKind::Exp2:
      case OpKind::Asinh:
      case OpKind::Acosh:
      case OpKind::Atanh:
      case OpKind::Erfinv:
      case OpKind::Lgamma:
      case OpKind::Digamma:
      case OpKind::Isnan:
      case OpKind::Isinf:
      case OpKind::Square:
      case OpKind::Erfc:
      case OpKind::Sinc:
      case OpKind::Deg2rad:
      case OpKind::Rad2deg:
      case OpKind::Isfinite:
      case OpKind::Signbit:
      case OpKind::Atan2:
      case OpKind::Hypot:
      case OpKind::Logaddexp:
      case OpKind::Fmod:
      case OpKind::Remainder:
      case OpKind::Logaddexp2:
      case OpKind::Xlogy:
      case OpKind::Copysign:
      case OpKind::Fmax:
      case OpKind::Fmin:
      case OpKind::Lerp:
      case OpKind::Dot:
      case OpKind::Mv:
      case OpKind::Outer:
      case OpKind::Trace:
      case OpKind::Sigmoid:
      case OpKind::Relu:
      case OpKind::Eq:
      case OpKind::Ne:
      case OpKind::Lt:
      case OpKind::Le:
      case OpKind::Gt:
      case OpKind::Ge:
      case OpKind::LogicalAnd:
      case OpKind::LogicalOr:
      case OpKind::LogicalXor:
      case OpKind::LogicalNot:
      case OpKind::Where:
      case OpKind::Mul:
      case OpKind::Pow:
      case OpKind::Maximum:
      case OpKind::Minimum:
      case OpKind::Matmul:
      case OpKind::Mm:
      case OpKind::Bmm:
        return call("torch." + op, in);
      // Python writes the operators users write; TorchScript the functions.
      case OpKind::BitwiseAnd:
      case OpKind::BitwiseOr:
      case OpKind::BitwiseXor: {
        if (script()) return call("torch." + op, in);
        const char* symbol = node.op == OpKind::BitwiseAnd  ? " & "
                             : node.op == OpKind::BitwiseOr ? " | "
                                                            : " ^ ";
        return "(" + in[0] + symbol + in[1] + ")";
      }
      case OpKind::BitwiseNot:
        return script() ? call("torch.bitwise_not", {x}) : "(~" + x + ")";
      case OpKind::LeakyRelu:
        return call2("torch.leaky_relu", "F.leaky_relu",
                     {x, float_literal(a.get_float("negative_slope"))});
      case OpKind::Elu:
        return call2("torch.elu", "F.elu", {x, float_literal(a.get_float("alpha"))});
      case OpKind::Gelu:
        return call2("torch.gelu", "F.gelu",
                     {x, "approximate=" + string_literal(a.get_string("approximate"))});
      case OpKind::Silu:
        return call2("torch.silu", "F.silu", {x});
      case OpKind::Hardswish:
      case OpKind::Hardsigmoid:
      case OpKind::Relu6:
      case OpKind::Mish:
      case OpKind::Selu:
        return call2("torch." + op, "F." + op, {x});
      case OpKind::Logsigmoid:
        return call2("torch.log_sigmoid", "F.logsigmoid", {x});
      case OpKind::Celu:
        return call2("torch.celu", "F.celu", {x, float_literal(a.get_float("alpha"))});
      // F.softsign and F.tanhshrink are Python functions of other ops (no ATen op of their own):
      // TorchScript defined from C++ has no F, so the script spells out their bodies.
      case OpKind::Softsign:
        if (script()) return "(" + x + " / (torch.abs(" + x + ") + 1))";
        return call("F.softsign", {x});
      case OpKind::Tanhshrink:
        if (script()) return "(" + x + " - torch.tanh(" + x + "))";
        return call("F.tanhshrink", {x});
      case OpKind::Threshold:
        return call2(
            "torch.threshold", "F.threshold",
            {x, float_literal(a.get_float("threshold")), float_literal(a.get_float("value"))});
      case OpKind::Hardshrink:
      case OpKind::Softshrink:
        return call2("torch." + op, "F." + op, {x, float_literal(a.get_float("lambd"))});
      case OpKind::Softplus:
        return call2(
            "torch.softplus", "F.softplus",
            {x, float_literal(a.get_float("beta")), float_literal(a.get_float("threshold"))});
      case OpKind::Hardtanh:
        return call2(
            "torch.hardtanh", "F.hardtanh",
            {x, float_literal(a.get_float("min_val")), float_literal(a.get_float("max_val"))});
      case OpKind::Clamp:
        // Floating bounds, as the engine's: an integral input is promoted like torch.clamp's.
        return call("torch.clamp",
                    {x, "min=" + optional_float(a, "min"), "max=" + optional_float(a, "max")});
      case OpKind::Add:
      case OpKind::Sub:
        return call("torch." + op,
                    {in[0], in[1], "alpha=" + multiplier_literal(a.get_float("alpha"))});
      case OpKind::Div:
        if (!a.has("rounding_mode")) return call("torch.div", in);
        return call(
            "torch.div",
            {in[0], in[1], "rounding_mode=" + string_literal(a.get_string("rounding_mode"))});
      case OpKind::Sum:
      case OpKind::Mean:
        return call("torch." + op, {x, "dim=" + optional_dims(a.get_ints("dim")),
                                    "keepdim=" + bool_literal(a.get_bool("keepdim"))});
      case OpKind::Prod: {
        if (a.has("dim")) {
          return call("torch.prod", {x, int_literal(a.get_int("dim")),
                                     "keepdim=" + bool_literal(a.get_bool("keepdim"))});
        }
        // prod without a dim ignores keepdim in PyTorch; the IR keeps every dim as size 1.
        const std::size_t rank = shape_of(node.inputs[0]).size();
        if (!a.get_bool("keepdim") || rank == 0) return call("torch.prod", {x});
        return call("torch.prod", {x}) + ".reshape(" +
               ints_literal(std::vector<std::int64_t>(rank, 1)) + ")";
      }
      case OpKind::Max:
      case OpKind::Min:
      case OpKind::Sort:
      case OpKind::Topk:
      case OpKind::Cummax:
      case OpKind::Cummin:
      case OpKind::VarMean:
      case OpKind::StdMean:
      case OpKind::Split:
      case OpKind::Chunk:
        break;  // written by emit_node
      case OpKind::Argmax:
      case OpKind::Argmin:
        return call("torch." + op, {x, "dim=" + optional_int(a, "dim"),
                                    "keepdim=" + bool_literal(a.get_bool("keepdim"))});
      case OpKind::Var:
      case OpKind::Std:
        return call("torch." + op, {x, optional_dims(a.get_ints("dim")),
                                    "correction=" + int_literal(a.get_int("correction")),
                                    "keepdim=" + bool_literal(a.get_bool("keepdim"))});
      case OpKind::Logsumexp:
        return call("torch.logsumexp", {x, ints_literal(a.get_ints("dim")),
                                        "keepdim=" + bool_literal(a.get_bool("keepdim"))});
      case OpKind::Amax:
      case OpKind::Amin: {
        // The IR's empty list is every dim: written out, so the program says what it reduces
        // ([0] for a rank-0 input).
        std::vector<std::int64_t> dims = a.get_ints("dim");
        const std::size_t rank = shape_of(node.inputs[0]).size();
        if (dims.empty()) {
          for (std::size_t d = 0; d < std::max<std::size_t>(rank, 1); ++d)
            dims.push_back(static_cast<std::int64_t>(d));
        }
        return call("torch." + op,
                    {x, ints_literal(dims), "keepdim=" + bool_literal(a.get_bool("keepdim"))});
      }
      case OpKind::Any:
      case OpKind::All: {
        if (a.has("dim")) {
          return call("torch." + op, {x, int_literal(a.get_int("dim")),
                                      "keepdim=" + bool_literal(a.get_bool("keepdim"))});
        }
        // torch.any(x) has no keepdim; the IR keeps every dim as size 1 (as prod).
        const std::size_t rank = shape_of(node.inputs[0]).size();
        if (!a.get_bool("keepdim") || rank == 0) return call("torch." + op, {x});
        return call("torch." + op, {x}) + ".reshape(" +
               ints_literal(std::vector<std::int64_t>(rank, 1)) + ")";
      }
      case OpKind::Cumsum:
      case OpKind::Cumprod:
      case OpKind::Logcumsumexp:
        return call("torch." + op, {x, int_literal(a.get_int("dim"))});
      case OpKind::Argsort:
        return call("torch.argsort",
                    {x, "dim=" + int_literal(a.get_int("dim")),
                     "descending=" + bool_literal(a.get_bool("descending")) + stable_argument(a)});
      case OpKind::Softmax:
      case OpKind::LogSoftmax:
        return call("torch." + op, {x, int_literal(a.get_int("dim"))});
      case OpKind::Linear:
        return call2("torch.linear", "F.linear", {in[0], in[1], optional_input(in, 2)});
      case OpKind::Cdist:
        return call("torch.cdist", {in[0], in[1], float_literal(a.get_float("p"))});
      case OpKind::Pdist:
        return call2("torch.pdist", "F.pdist", {x, float_literal(a.get_float("p"))});
      case OpKind::MseLoss:
      case OpKind::L1Loss:
      case OpKind::SmoothL1Loss:
      case OpKind::HuberLoss:
        return loss_call(node.op, op, in, a);
      case OpKind::NllLoss:
      case OpKind::CrossEntropyLoss:
        return classification_loss_call(node.op, in, a);
      case OpKind::BinaryCrossEntropyWithLogits:
        if (script()) {
          return call(
              "torch.binary_cross_entropy_with_logits",
              {in[0], in[1], optional_input(in, 2), optional_input(in, 3), reduction_number(a)});
        }
        return call("F.binary_cross_entropy_with_logits",
                    {in[0], in[1], "weight=" + optional_input(in, 2),
                     "reduction=" + string_literal(a.get_string("reduction")),
                     "pos_weight=" + optional_input(in, 3)});
      case OpKind::KlDiv:
        return kl_div_call(node, in, a);
      case OpKind::Addcmul:
      case OpKind::Addcdiv:
        return call("torch." + op, {in[0], in[1], in[2],
                                    "value=" + multiplier_literal(a.get_float("value", 1.0))});
      case OpKind::Baddbmm:
        return call("torch.baddbmm",
                    {in[0], in[1], in[2], "beta=" + multiplier_literal(a.get_float("beta", 1.0)),
                     "alpha=" + multiplier_literal(a.get_float("alpha", 1.0))});
      case OpKind::Logit:
        if (!a.has("eps")) return call("torch.logit", {x});
        return call("torch.logit", {x, "eps=" + float_literal(a.get_float("eps"))});
      case OpKind::NanToNum:
        return call("torch.nan_to_num",
                    {x, "nan=" + optional_float(a, "nan"), "posinf=" + optional_float(a, "posinf"),
                     "neginf=" + optional_float(a, "neginf")});
      // TorchScript defined from C++ has no F: torch.glu / torch.prelu reach the same ATen ops.
      case OpKind::Glu:
        if (script()) return call("torch.glu", {x, int_literal(a.get_int("dim", -1))});
        return call("F.glu", {x, "dim=" + int_literal(a.get_int("dim", -1))});
      case OpKind::Prelu:
        return call2("torch.prelu", "F.prelu", {in[0], in[1]});
      case OpKind::Addmm:
        return call("torch.addmm",
                    {in[0], in[1], in[2], "beta=" + multiplier_literal(a.get_float("beta")),
                     "alpha=" + multiplier_literal(a.get_float("alpha"))});
      case OpKind::Conv1d:
      case OpKind::Conv2d:
        return call("torch." + op,
                    {in[0], in[1], optional_input(in, 2), spatial(a.get_ints("stride")),
                     spatial(a.get_ints("padding")), spatial(a.get_ints("dilation")),
                     int_literal(a.get_int("groups"))});
      case OpKind::ConvTranspose1d:
      case OpKind::ConvTranspose2d:
        return call("torch." + op,
                    {in[0], in[1], optional_input(in, 2), spatial(a.get_ints("stride")),
                     spatial(a.get_ints("padding")), spatial(a.get_ints("output_padding")),
                     int_literal(a.get_int("groups")), spatial(a.get_ints("dilation"))});
      case OpKind::MaxPool1d:
      case OpKind::MaxPool2d:
      case OpKind::MaxPool3d:
        // An empty stride means stride = kernel_size.
        return call("torch." + op,
                    {x, spatial(a.get_ints("kernel_size")), spatial(a.get_ints("stride")),
                     spatial(a.get_ints("padding")), spatial(a.get_ints("dilation")),
                     bool_literal(a.get_bool("ceil_mode"))});
      case OpKind::AvgPool1d:
      case OpKind::AvgPool2d:
      case OpKind::AvgPool3d:
        return call2("torch." + op, node.op == OpKind::AvgPool1d ? "torch.avg_pool1d" : "F." + op,
                     {x, spatial(a.get_ints("kernel_size")), spatial(a.get_ints("stride")),
                      spatial(a.get_ints("padding")), bool_literal(a.get_bool("ceil_mode")),
                      bool_literal(a.get_bool("count_include_pad"))});
      case OpKind::AdaptiveAvgPool2d:
      case OpKind::AdaptiveAvgPool3d:
        return call2("torch." + op, "F." + op, {x, ints_literal(a.get_ints("output_size"))});
      // ATen's adaptive max pools return (values, indices); F's return the values alone.
      case OpKind::AdaptiveMaxPool1d:
      case OpKind::AdaptiveMaxPool2d:
        if (script())
          return call("torch." + op, {x, ints_literal(a.get_ints("output_size"))}) + "[0]";
        return call("F." + op, {x, ints_literal(a.get_ints("output_size"))});
      case OpKind::BatchNorm: {
        // IR order: input, weight, bias[, running_mean, running_var]. Running stats are
        // detached copies: ATen updates them in place in training mode and gives them no
        // gradient.
        auto stat = [&](std::size_t i) {
          return i < in.size() ? in[i] + ".detach().clone()" : std::string("None");
        };
        return call(
            "torch.batch_norm",
            {in[0], in[1], in[2], stat(3), stat(4), bool_literal(a.get_bool("training")),
             float_literal(a.get_float("momentum")), float_literal(a.get_float("eps")), "True"});
      }
      case OpKind::LayerNorm:
        return call("torch.layer_norm",
                    {x, ints_literal(a.get_ints("normalized_shape")), optional_input(in, 1),
                     optional_input(in, 2), float_literal(a.get_float("eps"))});
      case OpKind::RmsNorm:
        return rms_norm_call(node, a, in);
      case OpKind::GroupNorm:
        return script() ? call("torch.group_norm",
                               {x, int_literal(a.get_int("num_groups")), optional_input(in, 1),
                                optional_input(in, 2), float_literal(a.get_float("eps")), "True"})
                        : call("F.group_norm",
                               {x, int_literal(a.get_int("num_groups")), optional_input(in, 1),
                                optional_input(in, 2), float_literal(a.get_float("eps"))});
      case OpKind::InstanceNorm:
        // The input's statistics, no running statistics (F.instance_norm's defaults).
        return script() ? call("torch.instance_norm",
                               {x, optional_input(in, 1), optional_input(in, 2), "None", "None",
                                "True", "0.1", float_literal(a.get_float("eps")), "True"})
                        : call("F.instance_norm",
                               {x, "None", "None", optional_input(in, 1), optional_input(in, 2),
                                "True", "0.1", float_literal(a.get_float("eps"))});
      case OpKind::Dropout: {
        // Identity (eval, p == 0, empty input) and p == 1 are deterministic; any other
        // training-mode mask comes from the framework's RNG (torch_eager.cpp refuses it too).
        const double p = a.get_float("p");
        const bool training = a.get_bool("training");
        std::size_t numel = 1;
        for (std::int64_t d : shape_of(node.inputs[0])) numel *= static_cast<std::size_t>(d);
        if (training && p > 0.0 && p < 1.0 && numel > 0) {
          refuse(n, "dropout in training mode is not comparable across frameworks");
        }
        return call("torch.dropout", {x, float_literal(p), bool_literal(training)});
      }
      case OpKind::Embedding: {
        // torch.nn.functional.embedding: padding_idx checked and wrapped in Python, -1 = none.
        const ir::Shape& weight = shape_of(node.inputs[1]);
        std::int64_t pad = -1;
        if (a.has("padding_idx")) {
          const std::int64_t rows = weight.empty() ? 0 : weight[0];
          const std::int64_t idx = a.get_int("padding_idx");
          if (idx >= rows || idx < -rows) refuse(n, "Padding_idx must be within num_embeddings");
          pad = idx < 0 ? idx + rows : idx;
        }
        if (script()) return call("torch.embedding", {in[1], in[0], int_literal(pad)});
        if (!a.has("padding_idx")) return call("F.embedding", {in[0], in[1]});
        return call("F.embedding", {in[0], in[1], "padding_idx=" + int_literal(pad)});
      }
      case OpKind::Reshape:
        return call("torch.reshape", {x, ints_literal(a.get_ints("shape"))});
      case OpKind::Flatten:
        return call("torch.flatten",
                    {x, int_literal(a.get_int("start_dim")), int_literal(a.get_int("end_dim"))});
      case OpKind::Squeeze:
        return squeeze(n, x, a.get_ints("dim"), shape_of(node.inputs[0]).size());
      case OpKind::Unsqueeze:
        return call("torch.unsqueeze", {x, int_literal(a.get_int("dim"))});
      case OpKind::Transpose:
        return call("torch.transpose",
                    {x, int_literal(a.get_int("dim0")), int_literal(a.get_int("dim1"))});
      case OpKind::Permute:
        return x + ".permute(" + ints_literal(a.get_ints("dims")) + ")";
      case OpKind::Expand:
        return x + ".expand(" + ints_literal(a.get_ints("size")) + ")";
      case OpKind::Slice:
        return slice(x, a, static_cast<std::int64_t>(shape_of(node.inputs[0]).size()));
      case OpKind::Select:
        return call("torch.select",
                    {x, int_literal(a.get_int("dim")), int_literal(a.get_int("index"))});
      case OpKind::SliceScatter:
        return call("torch.slice_scatter",
                    {x, in[1], int_literal(a.get_int("dim")), int_literal(a.get_int("start")),
                     int_literal(a.get_int("end")), int_literal(a.get_int("step"))});
      case OpKind::SelectScatter:
        return call("torch.select_scatter",
                    {x, in[1], int_literal(a.get_int("dim")), int_literal(a.get_int("index"))});
      // copy_ has no out-of-place function: a fresh copy of self is written.
      case OpKind::Copy:
        return x + ".clone().copy_(" + in[1] + ")";
      case OpKind::MaskedScatter:
        return call("torch.masked_scatter", in);
      case OpKind::Cat:
      case OpKind::Stack: {
        std::string list = "[";
        for (std::size_t i = 0; i < in.size(); ++i) list += (i > 0 ? ", " : "") + in[i];
        return call("torch." + op, {list + "]", int_literal(a.get_int("dim"))});
      }
      case OpKind::Pad: {
        // The non-constant modes take no value: the IR's default 0.0 is passed as None there
        // (a non-zero value stays, and ATen refuses it), as torch_eager.cpp does.
        const std::string mode = a.get_string("mode");
        const double value = a.get_float("value");
        const std::string fill =
            mode != "constant" && value == 0.0 ? std::string("None") : float_literal(value);
        if (script()) {
          return call("torch.pad",
                      {x, ints_literal(a.get_ints("pad")), string_literal(mode), fill});
        }
        return call("F.pad", {x, ints_literal(a.get_ints("pad")), "mode=" + string_literal(mode),
                              "value=" + fill});
      }
      case OpKind::Flip:
        return call("torch.flip", {x, ints_literal(a.get_ints("dims"))});
      case OpKind::PixelShuffle:
        return call2("torch.pixel_shuffle", "F.pixel_shuffle",
                     {x, int_literal(a.get_int("upscale_factor"))});
      case OpKind::PixelUnshuffle:
        return call2("torch.pixel_unshuffle", "F.pixel_unshuffle",
                     {x, int_literal(a.get_int("downscale_factor"))});
      case OpKind::Roll: {
        // No dims: the argument left at its default (the flattened tensor rolls).
        const std::vector<std::int64_t> dims = a.get_ints("dims");
        if (dims.empty()) return call("torch.roll", {x, ints_literal(a.get_ints("shifts"))});
        return call("torch.roll", {x, ints_literal(a.get_ints("shifts")), ints_literal(dims)});
      }
      case OpKind::Repeat:
        return x + ".repeat(" + ints_literal(a.get_ints("repeats")) + ")";
      case OpKind::Diagonal:
        return call("torch.diagonal",
                    {x, int_literal(a.get_int("offset")), int_literal(a.get_int("dim1")),
                     int_literal(a.get_int("dim2"))});
      case OpKind::Tril:
      case OpKind::Triu:
        return call("torch." + op, {x, int_literal(a.get_int("diagonal"))});
      case OpKind::Gather:
      case OpKind::IndexSelect:
        return call("torch." + op, {in[0], int_literal(a.get_int("dim")), in[1]});
      case OpKind::ScatterAdd:
        return call("torch.scatter_add", {in[0], int_literal(a.get_int("dim")), in[1], in[2]});
      case OpKind::Scatter:
        return call("torch.scatter", {in[0], int_literal(a.get_int("dim")), in[1], in[2]});
      case OpKind::ScatterReduce:
        return call("torch.scatter_reduce",
                    {in[0], int_literal(a.get_int("dim")), in[1], in[2],
                     string_literal(a.get_string("reduce")),
                     "include_self=" + bool_literal(a.get_bool("include_self"))});
      case OpKind::IndexAdd:
        return call("torch.index_add", {in[0], int_literal(a.get_int("dim")), in[1], in[2],
                                        "alpha=" + float_literal(a.get_float("alpha"))});
      case OpKind::IndexPut:
        return call("torch.index_put", {in[0], index_list(in[1]), in[2],
                                        accumulate_argument(a.get_bool("accumulate"))});
      case OpKind::MaskedFill:
        return call("torch.masked_fill", {in[0], in[1], float_literal(a.get_float("value"))});
      case OpKind::Interpolate:
        return interpolate(n, x, a, shape_of(node.inputs[0]));
      // F.unfold / F.fold; TorchScript defined from C++ has no F (nor torch._C._nn): its torch.*
      // names every ATen op, so it calls aten::im2col / aten::col2im (same argument order).
      case OpKind::Im2col:
      case OpKind::Col2im: {
        const bool fold = node.op == OpKind::Col2im;
        std::vector<std::string> args{x};
        for (const char* name : {"output_size", "kernel_size", "dilation", "padding", "stride"}) {
          if (!fold && std::string_view(name) == "output_size") continue;
          const std::string list = ints_literal(a.get_ints(name));
          args.push_back(script() ? list : std::string(name) + "=" + list);
        }
        if (script()) return call(fold ? "torch.col2im" : "torch.im2col", args);
        return call(fold ? "F.fold" : "F.unfold", args);
      }
      case OpKind::Cast:
        return x + ".to(" + dtype_expression(a.get_dtype("dtype"), dialect_) + ")";
      case OpKind::Contiguous:
        if (a.get_string("memory_format") == "contiguous_format") return x + ".contiguous()";
        // TorchScript defined from C++ has no torch.channels_last: memory formats are the
        // c10::MemoryFormat codes there (ChannelsLast = 2), as dtypes are ScalarType codes.
        return x + ".contiguous(memory_format=" + (script() ? "2" : "torch.channels_last") + ")";
      case OpKind::AddScalar:
      case OpKind::SubScalar:
      case OpKind::RsubScalar:
      case OpKind::MulScalar:
      case OpKind::DivScalar:
      case OpKind::PowScalar:
      case OpKind::RpowScalar:
        return scalar_operation(node.op, x, a, graph_.type(node.inputs[0]).dtype);
    }
    refuse(n, "no source row for op #" + std::to_string(static_cast<int>(node.op)));
  }

  // A Python number as it is written: True, 3, 2.5.
  static std::string scalar_literal(const ir::AttrValue& value) {
    if (const auto* b = std::get_if<bool>(&value)) return bool_literal(*b);
    if (const auto* i = std::get_if<std::int64_t>(&value)) return int_literal(*i);
    return float_literal(std::get<double>(value));
  }

  // TorchScript 1.13 has no bool Scalar (add.Scalar wants a "number"), and a bool 0-dim tensor
  // in its place is folded into an INTERNAL ASSERT (alias_analysis.cpp:608, "no op for
  // aten::mul ... Tensor, bool"). A bool next to a non-bool tensor acts as the int 0 or 1; next
  // to a bool tensor, `+` is a logical or and `*` a logical and. Empty when a plain literal
  // will do.
  std::string script_bool_operation(OpKind op, const std::string& x, bool value,
                                    Dtype input) const {
    if (input != Dtype::Bool) return "";
    if (op == OpKind::AddScalar) return value ? "torch.ones_like(" + x + ")" : x + ".clone()";
    if (op == OpKind::MulScalar) return value ? x + ".clone()" : "torch.zeros_like(" + x + ")";
    return "";
  }

  // `x * 2.5`, `torch.mul(x, 2.5)` or `x.mul(2.5)` as the node's spelling says; the reversed
  // ops are operators (`2 - x`, `2 ** x`) or functions (`torch.rsub(x, 2)`, `torch.pow(2, x)`).
  std::string scalar_operation(OpKind op, const std::string& x, const Attributes& a,
                               Dtype input) const {
    const ir::AttrValue& other = a.get_scalar("other");
    std::string s = scalar_literal(other);
    if (const auto* b = std::get_if<bool>(&other); b != nullptr && script()) {
      const std::string replaced = script_bool_operation(op, x, *b, input);
      if (!replaced.empty()) return replaced;
      s = *b ? "1" : "0";
    }
    const std::string spelling = a.get_string("spelling");
    struct Names {
      OpKind op;
      const char* symbol;
      const char* function;
    };
    static const Names kNames[] = {
        {OpKind::AddScalar, "+", "add"},   {OpKind::SubScalar, "-", "sub"},
        {OpKind::RsubScalar, "-", "rsub"}, {OpKind::MulScalar, "*", "mul"},
        {OpKind::DivScalar, "/", "div"},   {OpKind::PowScalar, "**", "pow"},
        {OpKind::RpowScalar, "**", "pow"}};
    const Names* names = nullptr;
    for (const Names& entry : kNames) {
      if (entry.op == op) names = &entry;
    }
    const bool reversed = op == OpKind::RsubScalar || op == OpKind::RpowScalar;
    if (spelling == "function") {
      const std::string fn = std::string("torch.") + names->function;
      return op == OpKind::RpowScalar ? call(fn, {s, x}) : call(fn, {x, s});
    }
    if (spelling == "method" && !reversed) return call(x + "." + names->function, {s});
    // `-2 ** x` is -(2 ** x): a negative left operand is parenthesized.
    if (reversed && !s.empty() && s[0] == '-') s = "(" + s + ")";
    return reversed ? s + " " + names->symbol + " " + x : x + " " + names->symbol + " " + s;
  }

  // torch.squeeze with several dims (PyTorch 1.13 takes one): wrapped against the input's rank
  // here, then squeezed one at a time from the highest so the lower ones keep their positions.
  // A dim out of range is passed through unwrapped, for torch to refuse with its own message.
  std::string squeeze(std::size_t n, const std::string& x, const std::vector<std::int64_t>& dims,
                      std::size_t rank) const {
    if (dims.empty()) return call("torch.squeeze", {x});
    const auto r = static_cast<std::int64_t>(std::max<std::size_t>(rank, 1));
    std::vector<std::int64_t> wrapped;
    for (std::int64_t d : dims) wrapped.push_back(d >= -r && d < 0 ? d + r : d);
    std::sort(wrapped.begin(), wrapped.end(), std::greater<>());
    const auto repeat = std::adjacent_find(wrapped.begin(), wrapped.end());
    if (repeat != wrapped.end()) {
      refuse(n, "dim " + std::to_string(*repeat) + " appears multiple times in the list of dims");
    }
    std::string text = x;
    for (std::int64_t d : wrapped) text = call("torch.squeeze", {text, int_literal(d)});
    return text;
  }

  // at::slice(x, dim, start, end, step). Python: the indexing expression that makes the same
  // call (x[:, 1:5:2]) where it can say it; torch.ops.aten.slice otherwise.
  std::string slice(const std::string& x, const Attributes& a, std::int64_t rank) const {
    const std::int64_t dim = a.get_int("dim"), start = a.get_int("start"), end = a.get_int("end"),
                       step = a.get_int("step");
    const std::vector<std::string> args{x, int_literal(dim), int_literal(start), int_literal(end),
                                        int_literal(step)};
    if (script()) return call("torch.slice", args);
    const std::int64_t d = dim < 0 ? dim + rank : dim;
    if (d < 0 || d >= rank || step <= 0) return call("torch.ops.aten.slice.Tensor", args);
    std::string text = x + "[";
    for (std::int64_t i = 0; i < d; ++i) text += ":, ";
    if (start != 0) text += int_literal(start);
    text += ":";
    if (end != std::numeric_limits<std::int64_t>::max()) text += int_literal(end);
    if (step != 1) text += ":" + int_literal(step);
    return text + "]";
  }

  // torch.nn.functional.interpolate with `size`: its Python-side checks in their order (the
  // shapes are static), then the upsample op it dispatches to.
  std::string interpolate(std::size_t n, const std::string& x, const Attributes& a,
                          const ir::Shape& shape) const {
    const auto& size = a.get_ints("size");
    const std::string mode = a.get_string("mode");
    const bool align_corners = a.get_bool("align_corners");
    const auto rank = static_cast<std::int64_t>(shape.size());
    if (mode == "nearest" && align_corners) {
      refuse(n,
             "align_corners option can only be set with the interpolating modes: linear | "
             "bilinear | bicubic | trilinear");
    }
    if (static_cast<std::int64_t>(size.size()) != rank - 2) {
      std::vector<std::int64_t> spatial;
      for (std::int64_t d = 2; d < rank; ++d) spatial.push_back(shape[static_cast<std::size_t>(d)]);
      refuse(n,
             "Input and output must have the same number of spatial dimensions, but got input "
             "with spatial dimensions of " +
                 ints_literal(spatial) + " and output size of " + ints_literal(size) +
                 ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size "
                 "in (o1, o2, ...,oK) format.");
    }
    const bool supported = (mode == "nearest" && rank >= 3 && rank <= 5) ||
                           (mode == "linear" && rank == 3) || (mode == "bilinear" && rank == 4);
    if (!supported) {
      if ((mode == "linear" || mode == "bilinear") && rank >= 3 && rank <= 5) {
        refuse(n, "Got " + std::to_string(rank) + "D input, but " + mode + " mode needs " +
                      (mode == "linear" ? "3D" : "4D") + " input");
      }
      refuse(n, "Input Error: Only 3D, 4D and 5D input Tensors supported (got " +
                    std::to_string(rank) +
                    "D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                    "nearest-exact (got " +
                    mode + ")");
    }
    const std::string sizes = ints_literal(size);
    if (!script()) {
      std::vector<std::string> args{x, "size=" + sizes, "mode=" + string_literal(mode)};
      if (mode != "nearest") args.push_back("align_corners=" + bool_literal(align_corners));
      return call("F.interpolate", args);
    }
    if (mode == "nearest") {
      return call("torch.upsample_nearest" + std::to_string(rank - 2) + "d", {x, sizes, "None"});
    }
    const char* fn = mode == "linear" ? "torch.upsample_linear1d" : "torch.upsample_bilinear2d";
    return call(fn, {x, sizes, bool_literal(align_corners), "None"});
  }

  const ir::Graph& graph_;
  SourceDialect dialect_;
  std::vector<std::string> names_;  // by ValueId: the expression that holds the value
  std::vector<std::string> lines_;
  std::map<std::size_t, std::string> submodules_;  // node index -> its submodule (module form)
};

}  // namespace

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
