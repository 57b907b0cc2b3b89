// The passes that keep the graph's structure and make it plainer: float64 into float32,
// default-like attributes, smaller shapes, simpler values. Edits that change shapes re-derive
// every type with the engine (retype); one a node refuses is never proposed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "passes.h"
#include "weft/gen/shrink.h"
#include "weft/ir/inplace.h"
#include "weft/ir/op_schema.h"
#include "weft/ir/shape_sets.h"
#include "weft/ir/validate.h"

namespace weft::reduce {

namespace {

// The case with `edit` applied to a copy and its types re-derived; nothing when a node refuses.
template <class Edit>
std::optional<Case> edited(const Case& c, Edit edit) {
  Case result = c;
  try {
    edit(result);
    ir::retype(result.graph, result.values);
    // A shape edit can leave a dynamic-shape input's later sets at another rank.
    ir::validate(result.graph);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return result;
}

using Ints = std::vector<std::int64_t>;

// A plainer value for attribute `name` of `node`, or nothing.
std::optional<ir::AttrValue> plainer(const ir::Node& node, const std::string& name,
                                     const ir::AttrValue& value) {
  const auto ints_of = [&](std::int64_t fill) -> std::optional<ir::AttrValue> {
    const Ints* list = std::get_if<Ints>(&value);
    if (!list) return std::nullopt;
    std::size_t size = list->size();
    if (size == 0 && node.attrs.has("kernel_size"))
      size = node.attrs.get_ints("kernel_size").size();
    if (size == 0) return std::nullopt;
    return ir::AttrValue(Ints(size, fill));
  };
  if (name == "stride" || name == "dilation" || name == "kernel_size") return ints_of(1);
  if (name == "padding" || name == "output_padding") return ints_of(0);
  if (name == "groups" || name == "correction") return ir::AttrValue(std::int64_t{1});
  if (name == "ceil_mode" || name == "keepdim" || name == "align_corners" || name == "training") {
    return ir::AttrValue(false);
  }
  if (name == "approximate") return ir::AttrValue(std::string("none"));
  if (name == "mode") {
    if (node.op == ir::OpKind::Pad) return ir::AttrValue(std::string("constant"));
    if (node.op == ir::OpKind::Interpolate) return ir::AttrValue(std::string("nearest"));
  }
  return std::nullopt;
}

// Whether leaving attribute `name` out makes `node` plainer: the op's schema makes it optional
// and it holds something else than the schema's default (none, for one without a default).
bool plainer_absent(const ir::Node& node, const std::string& name) {
  const ir::AttrValue* value = node.attrs.find(name);
  const ir::AttrSpec* spec = ir::schema(node.op).find_attr(name);
  if (value == nullptr || spec == nullptr || spec->required) return false;
  return !spec->default_value || !(*spec->default_value == *value);
}

bool has_writeback(const ir::Graph& graph) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                     [](const ir::Node& node) { return ir::is_writeback(node); });
}

}  // namespace

bool dtypes_pass(State& state, Evaluator& evaluator) {
  return accept_greedily(state, evaluator, [](const State& s) {
    std::vector<Candidate> candidates;
    // float64 and, as a form the finding may not need, float16 / bfloat16: each group made
    // float32 (values, and cast targets).
    const auto widen = [&](bool (*chosen)(Dtype), const char* what) {
      bool any = false;
      for (const ir::Value& value : s.current.graph.values()) {
        any = any || chosen(value.type.dtype);
      }
      if (!any) return;
      auto c = edited(s.current, [chosen](Case& x) {
        for (auto& [name, value] : x.values) {
          if (chosen(value.dtype())) value = value.to(Dtype::Float32);
        }
        for (ir::Node& node : x.graph.mutable_nodes()) {
          for (const auto& [name, attr] : ir::Attributes(node.attrs)) {
            const Dtype* dtype = std::get_if<Dtype>(&attr);
            if (dtype && chosen(*dtype)) node.attrs.set(name, Dtype::Float32);
          }
        }
      });
      if (c) candidates.push_back(Candidate{std::move(*c), "dtypes", what});
    };
    widen([](Dtype d) { return d == Dtype::Float64; }, "float64 made float32");
    widen(&is_reduced_floating, "float16 and bfloat16 made float32");
    return candidates;
  });
}

bool forms_pass(State& state, Evaluator& evaluator) {
  return accept_greedily(state, evaluator, [](const State& s) {
    std::vector<Candidate> candidates;
    const ir::Graph& graph = s.current.graph;
    if (graph.shape_set_count() > 1) {
      Case c = s.current;
      c.graph.clear_shape_sets();
      c.values = ir::case_values(c.graph, c.values);
      candidates.push_back(Candidate{std::move(c), "forms", "one shape set (no dynamic shapes)"});
    }
    if (graph.nn_modules()) {
      Case c = s.current;
      c.graph.set_nn_modules(false);
      candidates.push_back(Candidate{std::move(c), "forms", "nn submodules written as F calls"});
    }
    // In-place writes: all of them written as pure calls, then each one alone (a single
    // clear can leave a write through a view whose base is read stale: edited() drops it).
    if (ir::count_in_place(graph) > 0 || has_writeback(graph)) {
      if (auto c = edited(s.current, [](Case& e) { ir::clear_in_place(e.graph); }))
        candidates.push_back(Candidate{std::move(*c), "forms", "no in-place writes"});
      for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
        const ir::Node& node = graph.nodes()[n];
        if (!ir::is_in_place(node) && !ir::is_writeback(node)) continue;
        auto c =
            edited(s.current, [n](Case& e) { ir::clear_in_place(e.graph.mutable_nodes()[n]); });
        if (c)
          candidates.push_back(Candidate{std::move(*c), "forms",
                                         ir::node_label(graph, n) + " written without mutation"});
      }
    }
    for (ir::ValueId id : graph.inputs()) {
      const ir::Value& leaf = graph.value(id);
      if (!leaf.has_layout()) continue;
      Case c = s.current;
      ir::Value& edited_leaf = c.graph.mutable_values()[static_cast<std::size_t>(id)];
      edited_leaf.strides.clear();
      edited_leaf.storage_offset = 0;
      candidates.push_back(
          Candidate{std::move(c), "forms", "input '" + leaf.name + "' made contiguous"});
    }
    return candidates;
  });
}

bool attributes_pass(State& state, Evaluator& evaluator) {
  return accept_greedily(state, evaluator, [](const State& s) {
    std::vector<Candidate> candidates;
    const ir::Graph& graph = s.current.graph;
    for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
      const ir::Node& node = graph.nodes()[n];
      const ir::Attributes attrs = ir::with_defaults(node.op, node.attrs);
      for (const auto& [name, value] : attrs) {
        // A plainer value where one is known, else the schema's default.
        const std::optional<ir::AttrValue> simpler = plainer(node, name, value);
        const bool erase = !simpler && plainer_absent(node, name);
        if (simpler ? *simpler == value : !erase) continue;
        const std::string attr_name = name;
        auto c = edited(s.current, [&](Case& x) {
          ir::Attributes& target = x.graph.mutable_nodes()[n].attrs;
          if (erase) {
            target.erase(attr_name);
          } else {
            target.set(attr_name, *simpler);
          }
        });
        if (!c) continue;
        candidates.push_back(
            Candidate{std::move(*c), "attributes",
                      fmt::format("{}: {} {}", ir::node_label(graph, n), attr_name,
                                  erase ? std::string("left at its default")
                                        : "= " + ir::attr_value_to_string(*simpler))});
      }
    }
    return candidates;
  });
}

bool shapes_pass(State& state, Evaluator& evaluator) {
  return accept_greedily(state, evaluator, [](const State& s) {
    std::vector<Candidate> candidates;
    const ir::Graph& graph = s.current.graph;
    std::vector<ir::ValueId> leaves = graph.inputs();
    leaves.insert(leaves.end(), graph.parameters().begin(), graph.parameters().end());
    // First the whole graph's shapes solved again with the generator's specs: dims tied by
    // arithmetic (a reshape's target, a convolution's kernel within its input) shrink
    // together, and the attributes that follow from shapes are derived again.
    gen::ShrinkOptions shrink;
    shrink.recovery_attempts = 5000;
    for (const gen::ShrunkGraph& proposal : gen::shrink_shapes(graph, shrink).proposals) {
      std::string what;
      auto c = edited(s.current, [&](Case& x) {
        for (const auto& [id, shape] : proposal.leaf_shapes) {
          const ir::Value& leaf = x.graph.value(id);
          Tensor& value = x.values.at(leaf.name);
          for (std::size_t d = 0; d < shape.size(); ++d) {
            const auto dim = static_cast<std::int64_t>(d);
            if (shape[d] < value.size(dim)) value = value.narrow(dim, 0, shape[d]).clone();
          }
          what += fmt::format("{}'{}' {} -> {}", what.empty() ? "" : ", ", leaf.name,
                              shape_str(leaf.type.shape), shape_str(shape));
        }
        for (std::size_t n = 0; n < x.graph.nodes().size(); ++n) {
          x.graph.mutable_nodes()[n].attrs = proposal.node_attributes.at(n);
        }
      });
      if (c) {
        candidates.push_back(
            Candidate{std::move(*c), "shapes",
                      fmt::format("solved with the specs ({}): {}", proposal.goal, what)});
      }
    }
    // Dims of one size are often tied by the ops' constraints (channels, matmul's inner
    // size, broadcast partners), so every dim of a size shrinks at once first.
    std::set<std::int64_t, std::greater<>> sizes;
    for (ir::ValueId id : leaves) {
      for (std::int64_t d : graph.type(id).shape) {
        if (d > 1) sizes.insert(d);
      }
    }
    for (std::int64_t size : sizes) {
      std::vector<std::int64_t> targets{1};
      if (size / 2 > 1) targets.push_back(size / 2);
      for (std::int64_t target : targets) {
        auto c = edited(s.current, [&](Case& x) {
          for (ir::ValueId id : leaves) {
            const ir::Value& leaf = x.graph.value(id);
            Tensor& value = x.values.at(leaf.name);
            for (std::size_t d = 0; d < leaf.type.shape.size(); ++d) {
              if (value.size(static_cast<std::int64_t>(d)) == size) {
                value = value.narrow(static_cast<std::int64_t>(d), 0, target).clone();
              }
            }
          }
        });
        if (c) {
          candidates.push_back(Candidate{
              std::move(*c), "shapes", fmt::format("every dim of size {} made {}", size, target)});
        }
      }
    }
    for (ir::ValueId id : leaves) {
      const ir::Value& leaf = graph.value(id);
      for (std::size_t d = 0; d < leaf.type.shape.size(); ++d) {
        const std::int64_t size = leaf.type.shape[d];
        if (size <= 1) continue;
        auto c = edited(s.current, [&](Case& x) {
          Tensor& value = x.values.at(leaf.name);
          value = value.narrow(static_cast<std::int64_t>(d), 0, 1).clone();
        });
        if (c) {
          candidates.push_back(
              Candidate{std::move(*c), "shapes",
                        fmt::format("'{}' dim {} made 1 (was {})", leaf.name, d, size)});
        }
      }
    }
    // Fewer dims: size-1 dims of a leaf dropped, all at once, then one at a time.
    for (ir::ValueId id : leaves) {
      const ir::Value& leaf = graph.value(id);
      const ir::Shape& shape = leaf.type.shape;
      std::vector<std::size_t> ones;
      for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 1) ones.push_back(d);
      }
      std::vector<std::vector<std::size_t>> drops;
      if (!ones.empty()) drops.push_back(ones);
      if (ones.size() > 1) {
        for (std::size_t d : ones) drops.push_back({d});
      }
      for (const std::vector<std::size_t>& drop : drops) {
        ir::Shape smaller;
        for (std::size_t d = 0; d < shape.size(); ++d) {
          if (std::find(drop.begin(), drop.end(), d) == drop.end()) smaller.push_back(shape[d]);
        }
        auto c = edited(s.current, [&](Case& x) {
          Tensor& value = x.values.at(leaf.name);
          value = value.contiguous().reshape(smaller).clone();
        });
        if (c) {
          candidates.push_back(Candidate{
              std::move(*c), "shapes",
              fmt::format("'{}' has rank {} (was {})", leaf.name, smaller.size(), shape.size())});
        }
      }
    }
    return candidates;
  });
}

bool values_pass(State& state, Evaluator& evaluator) {
  return accept_greedily(state, evaluator, [](const State& s) {
    std::vector<Candidate> candidates;
    const ir::Graph& graph = s.current.graph;
    std::vector<ir::ValueId> leaves = graph.inputs();
    leaves.insert(leaves.end(), graph.parameters().begin(), graph.parameters().end());
    for (ir::ValueId id : leaves) {
      const std::string& name = graph.value(id).name;
      const Tensor& value = s.current.values.at(name);
      if (value.numel() == 0) continue;
      // From the plainest down; only a plainer value than the current one is proposed, and no
      // option has more different values than the current one, so the pass cannot cycle.
      std::vector<std::pair<std::string, Tensor>> options{{"zeros", zeros_like(value)},
                                                          {"ones", ones_like(value)}};
      if (value.is_floating_point()) {
        std::vector<double> rounded = value.to_vector<double>();
        for (double& v : rounded) v = std::round(std::clamp(v, -3.0, 3.0));
        options.emplace_back("small integers", tensor(rounded, value.sizes()).to(value.dtype()));
      }
      std::size_t plainer_than = options.size();
      for (std::size_t k = 0; k < options.size(); ++k) {
        if (identical(options[k].second, value)) {
          plainer_than = k;
          break;
        }
      }
      options.resize(plainer_than);
      // Fewer different values: one (the first element's), then about half as many.
      const std::vector<double> all = value.to_vector<double>();
      const bool finite =
          std::all_of(all.begin(), all.end(), [](double v) { return std::isfinite(v); });
      const std::size_t distinct = distinct_values(value);
      if (finite && distinct > 1) {
        options.emplace_back(fmt::format("one value ({})", all[0]), full_like(value, all[0]));
      }
      if (finite && distinct > 2) {
        Tensor fewer = with_fewer_distinct_values(value);
        options.emplace_back(
            fmt::format("{} different values (was {})", distinct_values(fewer), distinct),
            std::move(fewer));
      }
      for (auto& [what, simpler] : options) {
        Case c = s.current;
        c.values[name] = simpler;
        candidates.push_back(
            Candidate{std::move(c), "values", fmt::format("'{}' made {}", name, what)});
      }
    }
    return candidates;
  });
}

}  // namespace weft::reduce
