#pragma once
// The emitter behind emit_forward (weft/oracle/source.h), shared by its two files: source.cpp
// writes the statements (the module form, each node's assignment, in-place writes) and
// source_expressions.cpp each op's expression. No torch headers.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "source_literals.h"
#include "weft/error.h"
#include "weft/ir/graph.h"
#include "weft/ir/op_schema.h"
#include "weft/oracle/source.h"

namespace weft::oracle::source_detail {

using ir::Attributes;
using ir::OpKind;

// sort's and argsort's stable flag, written only when set: without it the call is sort.default
// (a Core ATen op), with it sort.stable (not one).
inline std::string stable_argument(const ir::Attributes& a) {
  return a.get_bool("stable") ? ", stable=True" : "";
}

class Emitter {
 public:
  Emitter(const ir::Graph& graph, SourceDialect dialect)
      : graph_(graph), dialect_(dialect), names_(graph.values().size()) {}

  EmittedForward run();

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
  void plan_submodules(Unique& unique, EmittedForward& out);

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

  void emit_node(std::size_t n);

  // An in-place op as a method (x.relu_(), x.add_(y, alpha=2)) or, on every other node, an
  // augmented assignment (x += y); a copy into a slot as x[1:3] = y (torch.slice(...).copy_(y)
  // in TorchScript, whose slices are calls); a write through a view needs no statement.
  void emit_write(std::size_t n, const ir::Node& node, const Attributes& a,
                  const std::vector<std::string>& in);

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
                            const std::vector<std::string>& in) const;
  // The regression losses: F.<op>(self, target, reduction=..., beta/delta=...) in Python; the
  // ATen builtins in TorchScript, which take the reduction as at::Reduction's number.
  std::string loss_call(OpKind kind, const std::string& op, const std::vector<std::string>& in,
                        const Attributes& a) const;
  // at::Reduction's number of a loss's reduction, as the ATen builtins take it in TorchScript.
  static std::string reduction_number(const Attributes& a) {
    const std::string reduction = a.get_string("reduction");
    return reduction == "none" ? "0" : reduction == "sum" ? "2" : "1";
  }
  // F.kl_div; in TorchScript the ATen op, whose reductions lack F's "batchmean" (the sum over
  // the batch size, as F computes it).
  std::string kl_div_call(const ir::Node& node, const std::vector<std::string>& in,
                          const Attributes& a) const;
  // TorchScript has no F: the ATen ops F.nll_loss and F.cross_entropy call (nll_loss_nd takes any
  // trailing dims), with the reduction as at::Reduction's number.
  std::string classification_loss_call(OpKind kind, const std::vector<std::string>& in,
                                       const Attributes& a) const;
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
                         const std::vector<std::string>& in) const;

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
  std::string script_bool_operation(OpKind op, const std::string& x, bool value, Dtype input) const;

  // `x * 2.5`, `torch.mul(x, 2.5)` or `x.mul(2.5)` as the node's spelling says; the reversed
  // ops are operators (`2 - x`, `2 ** x`) or functions (`torch.rsub(x, 2)`, `torch.pow(2, x)`).
  std::string scalar_operation(OpKind op, const std::string& x, const Attributes& a,
                               Dtype input) const;

  // torch.squeeze with several dims (PyTorch 1.13 takes one): wrapped against the input's rank
  // here, then squeezed one at a time from the highest so the lower ones keep their positions.
  // A dim out of range is passed through unwrapped, for torch to refuse with its own message.
  std::string squeeze(std::size_t n, const std::string& x, const std::vector<std::int64_t>& dims,
                      std::size_t rank) const;

  // at::slice(x, dim, start, end, step). Python: the indexing expression that makes the same
  // call (x[:, 1:5:2]) where it can say it; torch.ops.aten.slice otherwise.
  std::string slice(const std::string& x, const Attributes& a, std::int64_t rank) const;

  // torch.nn.functional.interpolate with `size`: its Python-side checks in their order (the
  // shapes are static), then the upsample op it dispatches to.
  std::string interpolate(std::size_t n, const std::string& x, const Attributes& a,
                          const ir::Shape& shape) const;

  const ir::Graph& graph_;
  SourceDialect dialect_;
  std::vector<std::string> names_;  // by ValueId: the expression that holds the value
  std::vector<std::string> lines_;
  std::map<std::size_t, std::string> submodules_;  // node index -> its submodule (module form)
};

}  // namespace weft::oracle::source_detail
