// No false alarms: every default backend agrees with the reference on every op's sample cases
// and on random generated models, as judged by the oracle's judge. Backends run in-process
// here (a crash would stop the test, which is then a finding worth stopping for).
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/op_cases.h"
#include "weft/gen/generator.h"
#include "weft/ir/graph_json.h"
#include "weft/oracle/judge.h"
#include "weft/oracle/oracle.h"
#include "weft/oracle/torch_info.h"

namespace weft::oracle {
namespace {

// Paths that genuinely disagree with PyTorch's own eager semantics on a sample case, by
// "<backend> <case label>", with the reason. Each one is a finding about LibTorch 1.13.
const std::map<std::string, std::string>& known_disagreements() {
  // LibTorch 1.13's trace backward writes past the diagonal of a tall matrix (corpus
  // bug-eager-trace-tall-matrix-backward); its TorchScript paths share eager's formula. Listed
  // pairs may agree (a path that does not reach the bug), never disagree otherwise.
  static const std::map<std::string, std::string> known{
      {"torch trace/tall_4x2", "1.13's trace backward"},
      {"torchscript trace/tall_4x2", "1.13's trace backward"},
      {"torchscript-nnc trace/tall_4x2", "1.13's trace backward"},
      // pixel_unshuffle of a zero-element tensor keeps the input's shape (pytorch/pytorch#192816,
      // 1.13 and 2.x): eager's backward refuses, the forward-only paths return the wrong shape.
      {"torch pixel_shuffle/size0_batch", "pixel_unshuffle of an empty gradient"},
      {"torch pixel_unshuffle/size0_batch", "pixel_unshuffle of an empty tensor"},
      {"torchscript pixel_shuffle/size0_batch", "pixel_unshuffle of an empty gradient"},
      {"torchscript pixel_unshuffle/size0_batch", "pixel_unshuffle of an empty tensor"},
      {"torchscript-nnc pixel_shuffle/size0_batch", "pixel_unshuffle of an empty gradient"},
      {"torchscript-nnc pixel_unshuffle/size0_batch", "pixel_unshuffle of an empty tensor"},
      {"torchscript-frozen pixel_unshuffle/size0_batch", "pixel_unshuffle of an empty tensor"},
      {"torchscript-ofi pixel_unshuffle/size0_batch", "pixel_unshuffle of an empty tensor"},
      {"torch2-libtorch pixel_shuffle/size0_batch", "pixel_unshuffle of an empty gradient"},
      {"torch2-libtorch pixel_unshuffle/size0_batch", "pixel_unshuffle of an empty tensor"},
      // TorchScript's aten::randint_like of an input that requires grad records a NotImplemented
      // backward (Python's eager call gives a constant): the paths with gradients refuse it.
      {"torchscript randint_like/float", "TorchScript's randint_like backward"},
      {"torchscript randint_like/rank0", "TorchScript's randint_like backward"},
      {"torchscript randint_like/size0", "TorchScript's randint_like backward"},
      {"torchscript-nnc randint_like/float", "TorchScript's randint_like backward"},
      {"torchscript-nnc randint_like/rank0", "TorchScript's randint_like backward"},
      {"torchscript-nnc randint_like/size0", "TorchScript's randint_like backward"},
  };
  return known;
}

// Bugs of LibTorch 1.13 that random models hit, by path and a piece of the message: counted
// and printed, not failed on. Each is a real finding of the oracle, reproducible with
// `weft export` (see the README).
struct KnownBug {
  const char* backend;  // a prefix of the path's name
  const char* message;  // a piece of the finding's message
  const char* what;
  // Non-null: only in a graph that has this op (for a generic message, as a warm-up's switch).
  const char* needs_op = nullptr;
};
constexpr KnownBug kKnownBugs[] = {
    {"torchscript", "derivative for aten::randint_like is not implemented",
     "TorchScript's aten::randint_like of an input that requires grad records a NotImplemented "
     "backward; Python's eager torch.randint_like gives a constant (corpus "
     "bug-torchscript-randint-like-backward)",
     "randint_like"},
    {"torchscript-ofi", "-dimensional input for 4-dimensional weight",
     "optimize_for_inference rewrites conv2d to oneDNN, which refuses unbatched (3-D) input that "
     "eager conv2d accepts"},
    {"torchscript-ofi", "weight type (MkldnnCPUFloatType) should be the same",
     "optimize_for_inference fails on a conv2d of frozen constants whose result is written in "
     "place "
     "(corpus bug-ofi-conv-constant-input-inplace-mul)"},
    {"torchscript", "a view of a leaf Variable that requires grad is being used in an in-place",
     "TorchScript's optimized linear of a 3-D input returns a view that autograd takes for a view "
     "of a leaf, so an in-place write into it raises (corpus "
     "bug-torchscript-linear-3d-relu-inplace-leaf-view)"},
    {"torch", "not implemented for 'Long'",
     "LibTorch has no int64 kernel for reflection/replication padding (the engine has one)"},
    {"torchscript", "gradient of",
     "TorchScript's autodiff formula for std has no guard for a zero deviation: NaN gradients "
     "from the optimized graph (call 1 on) where eager's std_backward returns finite values"},
    {"torchscript-nnc", "Invalid integral op_type",
     "NNC's interpreter fails on some fused groups (\"Invalid integral op_type: 23\")"},
    {"torchscript-nnc", "call ",
     "NNC's frac is x - floor(x): a fused frac of a negative input is off by one from the "
     "profiled call on (corpus bug-nnc-frac-negative)",
     "frac"},
    {"torchscript-ofi", "output",
     "LibTorch 1.13's optimize_for_inference fuses conv2d + hardswish into oneDNN with wrong "
     "values (corpus bug-ofi-conv2d-hardswish)",
     "hardswish"},
    {"torchscript", "has dtype bool, expected int64",
     "TorchScript's peephole pass removes x + 0 on a bool tensor, which eager promotes to int64 "
     "(corpus bug-torchscript-add-zero-bool-peephole)",
     "add_scalar"},
    {"torchscript", "modified by an inplace operation",
     "TorchScript's differentiable graph saves leaky_relu's output, which the program then "
     "writes in place; eager saves the input (corpus "
     "bug-torchscript-leaky-relu-output-saved-then-written)",
     "leaky_relu"},
    {"torch", "gradient of",
     "LibTorch 1.13's trace backward writes past the diagonal of a matrix with more rows than "
     "columns (corpus bug-eager-trace-tall-matrix-backward)",
     "trace"},
    {"torch", "nan at element",
     "LibTorch 1.13's baddbmm with beta = 0 reads its uninitialized result, so NaN left in freed "
     "memory comes out now and then (pytorch/pytorch#80588; fixed in 2.x)",
     "baddbmm"},
};

bool has_op(const ir::Graph& graph, const char* op) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                     [&](const ir::Node& node) { return ir::op_name(node.op) == op; });
}

const KnownBug* known_bug(const Finding& finding, const ir::Graph& graph) {
  for (const KnownBug& bug : kKnownBugs) {
    if (finding.backend.rfind(bug.backend, 0) == 0 &&
        finding.message.find(bug.message) != std::string::npos &&
        (bug.needs_op == nullptr || has_op(graph, bug.needs_op))) {
      return &bug;
    }
  }
  return nullptr;
}

class AllBackends {
 public:
  // The default paths this build runs in-process (a sibling's run in their own build's test),
  // and in a LibTorch 2.x build its own eager path.
  AllBackends() {
    for (const std::string& name : default_backends()) {
      const int libtorch = path_traits(name).libtorch;
      if (libtorch == 0 || libtorch == torch_major()) backends_.push_back(make_backend(name));
    }
    if (torch_major() == 2) backends_.push_back(make_backend("torch2-libtorch"));
  }
  std::size_t size() const { return backends_.size(); }

  Verdict check(const ir::Graph& graph, const ir::TensorMap& values, std::uint64_t seed) {
    // Every shape set of a dynamic-shape case, each judged at its own shapes.
    const RunSpec spec = make_run_spec(graph, values, 3, true, seed);
    std::vector<BackendResult> results;
    for (const auto& backend : backends_)
      results.push_back(run_backend(*backend, graph, values, spec));
    return judge_run(graph, values, results, spec, {});
  }

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

std::string findings_text(const Verdict& verdict) {
  std::string text;
  for (const Finding& f : verdict.findings) {
    text += "\n  " + std::string(symptom_name(f.symptom)) + " in " + f.backend + ": " + f.message;
  }
  return text;
}

TEST(OracleAgreement, EveryOpSampleCaseOnEveryDefaultBackend) {
  AllBackends backends;
  int cases = 0;
  int known = 0;
  for (ir::OpKind op : ir::kAllOps) {
    for (const testing::OpCase& c : testing::op_cases(op, Dtype::Float32)) {
      // the engine sweep reports these, the torch sweep names the crashes
      if (!c.engine_error.empty() || !c.torch_crash.empty()) continue;
      ++cases;
      const Verdict verdict = backends.check(c.graph, c.values, testing::label_seed(c.label));
      for (const Finding& f : verdict.findings) {
        if (known_disagreements().count(f.backend + " " + c.label) > 0) {
          ++known;
          continue;
        }
        ADD_FAILURE() << c.label << ": " << symptom_name(f.symptom) << " in " << f.backend << ": "
                      << f.message;
      }
    }
  }
  std::cout << cases << " sample cases on " << backends.size() << " backends, " << known
            << " known disagreements\n";
  EXPECT_GT(cases, 300);
}

TEST(OracleAgreement, RandomModelsOnEveryDefaultBackend) {
  AllBackends backends;
  gen::Generator generator;
  int judged = 0;
  int not_finite = 0;
  for (int nodes : {3, 8, 12}) {
    for (std::uint64_t seed = 0; seed < 100; ++seed) {
      gen::CaseOptions options;
      options.generator.seed = seed;
      options.generator.nodes = nodes;
      const gen::GeneratedCase generated = gen::generate_case(generator, options);
      const Verdict verdict = backends.check(generated.graph, generated.values.values, seed);
      ++judged;
      if (!verdict.reference_finite) ++not_finite;
      Verdict unknown = verdict;
      unknown.findings.clear();
      for (const Finding& f : verdict.findings) {
        if (const KnownBug* bug = known_bug(f, generated.graph)) {
          std::cout << "known LibTorch bug, seed " << seed << ", " << nodes
                    << " nodes: " << f.backend << ": " << bug->what << "\n";
        } else {
          unknown.findings.push_back(f);
        }
      }
      EXPECT_FALSE(unknown.bug()) << "seed " << seed << ", " << nodes
                                  << " nodes:" << findings_text(unknown) << "\n"
                                  << ir::graph_to_json(generated.graph).dump(1);
    }
  }
  std::cout << judged << " random models judged, " << not_finite
            << " with a non-finite reference\n";
}

}  // namespace
}  // namespace weft::oracle
