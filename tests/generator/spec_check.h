#pragma once
// Checks an op's spec against the engine: random bindings of its inputs, the rule run by the
// sampler or by Z3, then the op executed on tensors of the predicted input shapes; the engine's
// output shapes and dtypes must be the ones the spec predicted, and it must not refuse the case.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "spec/solve.h"
#include "weft/gen/spec.h"
#include "weft/gen/value_search.h"
#include "weft/ir/execute.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::gen::testing {

struct SpecCheck {
  int attempts = 0;
  int accepted = 0;
  int by_z3 = 0;
  int mismatches = 0;
  std::int64_t disagreements = 0;     // Z3 models the sampler rejected
  std::vector<std::string> messages;  // the first few mismatches
};

inline Dtype draw_dtype(unsigned classes, std::mt19937_64& rng) {
  std::vector<Dtype> options;
  if (classes & kFloat)
    options.insert(options.end(), {Dtype::Float32, Dtype::Float32, Dtype::Float64});
  if (classes & kInt) options.insert(options.end(), {Dtype::Int64, Dtype::Int32});
  if (classes & kBool) options.push_back(Dtype::Bool);
  return options[std::uniform_int_distribution<std::size_t>(0, options.size() - 1)(rng)];
}

// `samples` = 0 forces the Z3 path for every attempt.
inline SpecCheck check_spec(ir::OpKind op, int attempts, std::uint64_t seed, int samples = 8) {
  const OpSpec& s = spec(op);
  std::mt19937_64 rng(seed);
  RuleSolver solver;
  Bounds bounds;
  bounds.max_elements = 4096;  // keeps the engine runs cheap
  SpecCheck check;
  for (int a = 0; a < attempts; ++a) {
    ++check.attempts;
    const int copies = s.variadic ? std::uniform_int_distribution<int>(1, s.max_variadic)(rng) : 1;
    std::vector<InputBinding> bindings;
    std::vector<const InputDecl*> decls;
    for (const InputDecl& d : s.inputs) {
      for (int c = 0; c < (s.variadic ? copies : 1); ++c) {
        InputBinding b;
        b.present = !d.optional || std::bernoulli_distribution(0.5)(rng);
        b.rank = std::uniform_int_distribution<int>(d.min_rank, d.max_rank)(rng);
        bindings.push_back(b);
        decls.push_back(&d);
      }
    }
    const auto result = solver.run(s, bindings, rng, bounds, samples, true);
    if (!result) continue;
    ++check.accepted;
    if (result->solved_by_z3) ++check.by_z3;
    const Dtype data_dtype = draw_dtype(s.dtypes, rng);
    std::vector<Tensor> tensors;
    std::vector<Dtype> dtypes_in;
    for (std::size_t i = 0; i < bindings.size(); ++i) {
      if (!bindings[i].present) {
        tensors.emplace_back();
        continue;
      }
      const auto& shape = result->input_shapes.at(i);
      const InputRole role = decls[i]->role;
      Tensor t;
      if (role == InputRole::Index) {
        t = zeros(shape, dtype(Dtype::Int64));
      } else if (role == InputRole::Mask) {
        t = lt(rand(shape), scalar_tensor(0.5));
      } else {
        const Dtype dt =
            role == InputRole::Weight && !is_floating(data_dtype) ? Dtype::Float32 : data_dtype;
        t = (rand(shape) * 4.0 - 2.0).to(dt);
        // Values that the op refuses outside a domain (bernoulli's probabilities) go inside it.
        for (const DomainHint& hint : domain_hints(op, false)) {
          if (hint.input == i && hint.kind == DomainKind::InsideUnit) t = rand(shape).to(dt);
        }
      }
      tensors.push_back(t);
      dtypes_in.push_back(t.dtype());
    }
    // Trailing absent optional inputs are left out, as graphs do.
    while (!tensors.empty() && !tensors.back().defined()) tensors.pop_back();
    ir::Node node{op, {}, {}, result->attrs, ""};
    std::vector<Tensor> outputs;
    try {
      outputs = ir::run_node(node, tensors);
    } catch (const std::exception& e) {
      ++check.mismatches;
      if (check.messages.size() < 5)
        check.messages.push_back(std::string("engine refused: ") + e.what());
      continue;
    }
    const auto want_dtypes = s.output_dtypes(dtypes_in, result->attrs);
    bool ok = outputs.size() == result->output_shapes.size();
    std::string what = "output count " + std::to_string(outputs.size()) + " vs predicted " +
                       std::to_string(result->output_shapes.size());
    for (std::size_t i = 0; ok && i < outputs.size(); ++i) {
      if (outputs[i].sizes() != result->output_shapes[i]) {
        ok = false;
        what = "output " + std::to_string(i) + " shape " + shape_str(outputs[i].sizes()) +
               " vs predicted " + shape_str(result->output_shapes[i]);
      } else if (outputs[i].dtype() != want_dtypes.at(std::min(i, want_dtypes.size() - 1))) {
        ok = false;
        what = "output " + std::to_string(i) + " dtype " + dtype_name(outputs[i].dtype()) +
               " vs predicted " + dtype_name(want_dtypes[std::min(i, want_dtypes.size() - 1)]);
      }
    }
    if (!ok) {
      ++check.mismatches;
      if (check.messages.size() < 5) check.messages.push_back(what);
    }
  }
  check.disagreements = solver.stats().disagreements;
  return check;
}

}  // namespace weft::gen::testing
