// The op sweep against LibTorch eager: every op of the IR, on the cases of support/op_cases.h,
// in float32, float64, float16 and bfloat16, must give the engine's outputs (shapes and dtypes
// exactly, integer and bool values exactly, floating values within tolerance) and the engine's
// gradients for the same cotangents.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/op_cases.h"
#include "weft/ir/execute.h"
#include "weft/ir/op_kind.h"
#include "weft/ir/random.h"
#include "weft/oracle/random_judging.h"
#include "weft/oracle/torch_eager.h"
#include "weft/oracle/torch_info.h"

namespace weft::testing {
namespace {

using ir::OpKind;

// Cases where the engine deviates from PyTorch on purpose, by label, with the reason (empty:
// none known).
const std::map<std::string, std::string>& intended_deviations() {
  static const std::map<std::string, std::string> deviations;
  return deviations;
}

// Conventions that a LibTorch version changed, by label: the engine keeps LibTorch 1.13's, and
// the judge leaves derivatives on a kink undecided (rounding_ops.cpp). For that LibTorch the case
// must still differ, so that a return to the old convention is noticed.
struct ConventionChange {
  int libtorch;
  const char* what;
};
const std::map<std::string, ConventionChange>& convention_changes() {
  static const std::map<std::string, ConventionChange> changes{
      {"clamp/at_bounds",
       {2,
        "LibTorch 2.x's clamp gradient at a scalar bound is 0 (1.13's, and the engine's: 1; "
        "with tensor bounds 2.x gives 0.5)"}},
      {"hardswish/at_kinks",
       {2,
        "LibTorch 2.x's hardswish gradient is 0 at -3 and 1 at 3 (1.13's, and the engine's: "
        "-1/2 and 3/2, the middle piece's)"}},
  };
  return changes;
}

// Bugs of one LibTorch that the sweep shows in a gradient, by label: for that LibTorch the case
// must still differ (a fix, or a changed case, is noticed).
const std::map<std::string, ConventionChange>& torch_gradient_bugs() {
  static const std::map<std::string, ConventionChange> bugs{
      {"trace/tall_4x2",
       {1,
        "LibTorch 1.13's trace backward fills arange(0, rows * cols, cols + 1), which runs past "
        "the diagonal of a matrix with more rows than columns: [3, 0] of a 4x2 gets the "
        "gradient too (2.x fills only the diagonal, as the engine)"}},
  };
  return bugs;
}

// Cases that LibTorch gets wrong in a way that makes its run fail, by label (libtorch 0: 1.13 and
// 2.x alike): the engine gives the documented result, and the case must still fail on LibTorch,
// so that a fix is noticed.
const std::map<std::string, ConventionChange>& torch_refusal_bugs() {
  static const std::map<std::string, ConventionChange> bugs{
      {"pixel_unshuffle/size0_batch",
       {0,
        "LibTorch's pixel_unshuffle_cpu returns a clone of a zero-element input, with the input's "
        "shape ([0, 1, 2, 2] for [0, 4, 1, 1]); its backward (pixel_shuffle of that gradient) "
        "then refuses the channel count (pytorch/pytorch#192816, open)"}},
      {"pixel_shuffle/size0_batch",
       {0,
        "pixel_shuffle's backward is pixel_unshuffle, which returns the zero-element gradient in "
        "its own shape: 'PixelShuffleBackward0 returned an invalid gradient' "
        "(pytorch/pytorch#192816)"}},
      {"bernoulli/number_p",
       {2,
        "PyTorch 2.x gives torch.bernoulli(x, p) of an x that requires grad a NotImplemented "
        "backward ('derivative for aten::bernoulli is not implemented'); 1.13 returns a "
        "constant, as the engine does (the draw does not depend on x's values)"}},
  };
  return bugs;
}

// Cases that one LibTorch refuses for want of a kernel while the other, and the engine (which
// follows the current PyTorch), run them: the refusal is checked to stay a refusal there.
const std::map<std::string, ConventionChange>& capability_gaps() {
  static const std::map<std::string, ConventionChange> gaps{
      {"max_pool3d/int64",
       {1, "LibTorch 1.13 has no integer max_pool3d kernel (2.x runs it, as the engine)"}},
  };
  return gaps;
}

struct Tolerance {
  double rtol;
  double atol;
};

// By the compared tensors' dtype: float32 when either is float32 (int64 inputs of float ops
// promote to float32 in a float64 case).
Tolerance tolerance(const Tensor& a, const Tensor& b) {
  // 16-bit floats: a few roundings apart (an op that PyTorch composes from several kernels
  // rounds between them, where the engine rounds once).
  if (a.dtype() == Dtype::BFloat16 || b.dtype() == Dtype::BFloat16) return {4e-2, 2e-2};
  if (a.dtype() == Dtype::Float16 || b.dtype() == Dtype::Float16) return {8e-3, 4e-3};
  if (a.dtype() == Dtype::Float32 || b.dtype() == Dtype::Float32) return {1e-4, 1e-5};
  return {1e-10, 1e-10};
}

// Cases where LibTorch itself is less accurate than the engine, by label, with the reason:
// compared at float32 tolerance.
const std::map<std::string, std::string>& torch_imprecisions() {
  static const std::map<std::string, std::string> cases{
      {"pow/int64_base_float_exponent",
       "LibTorch 1.13 computes the exponent's gradient with log() of the int64 base in float32 "
       "(engine: -0.245783493, exact -0.245783492985, torch -0.245783549)"},
      // "op/*": every case of the op.
      {"digamma/*",
       "PyTorch's trigamma (digamma's gradient) ends its asymptotic series at x^-7 after six "
       "recurrence steps: about 1e-9 relative in float64 (trigamma(1): 1.6449340666, exact "
       "1.6449340668); the engine's is within a few ulps"},
  };
  return cases;
}

bool torch_imprecise(const std::string& label) {
  const std::string op = label.substr(0, label.find('/'));
  return torch_imprecisions().count(label) > 0 || torch_imprecisions().count(op + "/*") > 0;
}

// Cotangents with inf, -inf and NaN among their elements: gradients must carry non-finite
// values exactly where PyTorch's do (a select, not a multiplication by a 0/1 mask, keeps an
// infinite incoming gradient out of the elements an op cut off).
std::vector<Tensor> non_finite(std::vector<Tensor> cotangents) {
  const double specials[] = {std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN()};
  for (Tensor& t : cotangents) {
    if (!t.is_floating_point() || t.numel() == 0) continue;
    std::vector<double> v = t.to_vector<double>();
    for (std::size_t i = 0; i < v.size(); i += 3) v[i] = specials[(i / 3) % 3];
    t = from_blob(v.data(), t.sizes(), Dtype::Float64).to(t.dtype());
  }
  return cotangents;
}

// Both tensors with NaN wherever both are non-finite.
std::pair<Tensor, Tensor> same_non_finite(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || !a.is_floating_point() || !b.is_floating_point()) return {a, b};
  std::vector<double> x = a.to_vector<double>();
  std::vector<double> y = b.to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) && !std::isfinite(y[i])) {
      x[i] = y[i] = std::numeric_limits<double>::quiet_NaN();
    }
  }
  return {from_blob(x.data(), a.sizes(), Dtype::Float64).to(a.dtype()),
          from_blob(y.data(), b.sizes(), Dtype::Float64).to(b.dtype())};
}

// LibTorch refusing a 16-bit float for want of a CPU kernel (1.13 lacks most of float16's):
// a capability gap of that LibTorch, which campaigns record apart, not a difference.
bool lacks_kernel(const std::string& torch_error, Dtype float_dtype) {
  return is_reduced_floating(float_dtype) &&
         torch_error.find("not implemented for '") != std::string::npos;
}

// What a drawing case's result may hold given its input, for the draws that the sampler rule of
// the judge cannot see (it has no input values): dropout's x / (1 - p) or 0 per element (per
// (N, C) slice for the feature dropouts), alpha dropout's two affine images, rrelu's slope in
// [lower, upper] below zero; "" when every element is possible.
std::string impossible_given_input(const ir::Node& node, const Tensor& x, const Tensor& out) {
  if (out.sizes() != x.sizes() || x.numel() == 0) return "";
  const std::vector<double> in = x.to_vector<double>();
  const std::vector<double> got = out.to_vector<double>();
  const double rtol = x.dtype() == Dtype::Float64   ? 1e-12
                      : x.dtype() == Dtype::Float32 ? 1e-6
                                                    : 2e-2;
  // Within the rounding of the terms (alpha dropout's x * a + shift cancels near zero).
  const auto near = [&](double a, double b, double terms) {
    return std::abs(a - b) <= rtol * (terms + 1e-3);
  };
  const double p = node.attrs.get_float("p", 0.5);
  const bool feature = node.op == OpKind::FeatureDropout || node.op == OpKind::FeatureAlphaDropout;
  const std::size_t slice =
      feature && x.dim() >= 2 ? static_cast<std::size_t>(x.numel() / (x.size(0) * x.size(1))) : 1;
  constexpr double kSaturation = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((kSaturation * kSaturation * p + 1.0) * (1.0 - p));
  for (std::size_t start = 0; start < got.size(); start += slice) {
    int kept = 0, dropped = 0;
    for (std::size_t i = start; i < start + slice; ++i) {
      switch (node.op) {
        case OpKind::Dropout:
        case OpKind::FeatureDropout:
          kept += near(got[i], in[i] / (1.0 - p), std::abs(in[i] / (1.0 - p))) ? 1 : 0;
          dropped += got[i] == 0.0 ? 1 : 0;
          break;
        case OpKind::AlphaDropout:
        case OpKind::FeatureAlphaDropout:
          kept += near(got[i], in[i] * a + kSaturation * a * p,
                       std::abs(in[i] * a) + kSaturation * a * p)
                      ? 1
                      : 0;
          dropped += near(got[i], kSaturation * a * (p - 1.0), kSaturation * a) ? 1 : 0;
          break;
        case OpKind::Rrelu: {
          const double lower = node.attrs.get_float("lower", 1.0 / 8);
          const double upper = node.attrs.get_float("upper", 1.0 / 3);
          const bool ok = in[i] > 0 ? got[i] == in[i]
                                    : (in[i] == 0 ? got[i] == 0
                                                  : got[i] / in[i] >= lower * (1 - rtol) &&
                                                        got[i] / in[i] <= upper * (1 + rtol));
          if (!ok) return "element " + std::to_string(i) + ": " + std::to_string(got[i]);
          ++kept;
          break;
        }
        default:
          return "";
      }
    }
    const int n = static_cast<int>(slice);
    const bool whole = feature ? (kept == n || dropped == n) : kept + dropped >= n;
    if (!whole) {
      return "elements from " + std::to_string(start) + ": neither kept nor dropped (" +
             std::to_string(got[start]) + " for input " + std::to_string(in[start]) + ")";
    }
  }
  return "";
}

// A case that draws (weft/ir/random.h): LibTorch's numbers are not the engine's, so as the judge:
// the same shapes and dtypes, values its distribution allows, the same numbers when LibTorch runs
// it again under the same seed, and the gradients that do not flow through the draw by value.
void compare_drawn_with_torch(const OpCase& c, Dtype float_dtype,
                              const ir::GradientExecution& engine,
                              const oracle::TorchExecution& torch,
                              const std::vector<Tensor>& cotangents) {
  const std::string where = c.label + " (" + std::string(dtype_name(float_dtype)) + ")";
  ASSERT_EQ(engine.forward.outputs.size(), torch.outputs.size()) << where << ": output count";
  const oracle::TorchExecution again = oracle::run_torch_eager(c.graph, c.values, cotangents);
  const ir::Node& node = c.graph.nodes().front();
  const Tensor& x = c.values.at(c.graph.value(node.inputs[0]).name);
  for (std::size_t i = 0; i < torch.outputs.size(); ++i) {
    const Tensor& e = engine.forward.outputs[i];
    const Tensor& t = torch.outputs[i];
    EXPECT_EQ(t.sizes(), e.sizes()) << where << " output " << i;
    EXPECT_EQ(t.dtype(), e.dtype()) << where << " output " << i;
    const Mismatch same = compare_tensors(again.outputs[i], t, 0.0, 0.0);
    EXPECT_TRUE(same.ok) << where << " output " << i
                         << ": another run under the same seed: " << same.message;
    for (const auto& [who, value] : {std::pair<const char*, const Tensor*>{"engine", &e},
                                     std::pair<const char*, const Tensor*>{"torch", &t}}) {
      if (const auto bad = oracle::random_judging::impossible_draw(node, *value)) {
        ADD_FAILURE() << where << " output " << i << " of " << who << ": " << *bad;
      }
      const std::string given = impossible_given_input(node, x, *value);
      EXPECT_TRUE(given.empty()) << where << " output " << i << " of " << who << ": " << given;
    }
  }
  const oracle::random_judging::DrawnResults drawn = oracle::random_judging::drawn_results(c.graph);
  for (const auto& [name, value] : c.values) {
    if (!value.is_floating_point()) continue;
    const auto e = engine.gradients.find(name);
    const auto t = torch.gradients.find(name);
    ASSERT_TRUE(e != engine.gradients.end() && t != torch.gradients.end())
        << where << ": gradient of '" << name << "' missing";
    EXPECT_EQ(t->second.sizes(), e->second.sizes()) << where << " gradient of " << name;
    if (drawn.gradients.count(name) > 0) continue;
    const Tolerance tol = tolerance(e->second, t->second);
    const Mismatch m = compare_tensors(e->second, t->second, tol.rtol, tol.atol);
    EXPECT_TRUE(m.ok) << where << " gradient of '" << name << "': engine vs torch: " << m.message;
  }
}

void compare_with_torch(const OpCase& c, Dtype float_dtype, bool non_finite_cotangents = false) {
  std::vector<Tensor> cotangents = ir::random_cotangents(c.graph, label_seed(c.label));
  if (non_finite_cotangents) cotangents = non_finite(std::move(cotangents));
  ir::GradientExecution engine;
  oracle::TorchExecution torch;
  std::string engine_error;
  std::string torch_error;
  try {
    engine = ir::execute_with_gradients(c.graph, c.values, cotangents);
  } catch (const std::exception& e) {
    engine_error = e.what();
  }
  try {
    torch = oracle::run_torch_eager(c.graph, c.values, cotangents);
  } catch (const std::exception& e) {
    torch_error = e.what();
  }
  const auto gap = capability_gaps().find(c.label);
  if (gap != capability_gaps().end() && gap->second.libtorch == oracle::torch_major()) {
    EXPECT_NE(torch_error.find("not implemented for '"), std::string::npos)
        << c.label << ": LibTorch " << oracle::torch_version()
        << " no longer shows the capability gap: " << gap->second.what << " (" << torch_error
        << ")";
    return;
  }
  const auto refusal = torch_refusal_bugs().find(c.label);
  if (refusal != torch_refusal_bugs().end() &&
      (refusal->second.libtorch == 0 || refusal->second.libtorch == oracle::torch_major())) {
    EXPECT_TRUE(engine_error.empty()) << c.label << ": " << engine_error;
    EXPECT_FALSE(torch_error.empty()) << c.label << ": LibTorch " << oracle::torch_version()
                                      << " no longer shows the bug: " << refusal->second.what;
    return;
  }
  if (engine_error.empty() && lacks_kernel(torch_error, float_dtype)) {
    std::cout << "[ SKIPPED  ] " << c.label << " (" << dtype_name(float_dtype)
              << "): LibTorch has no kernel: " << torch_error.substr(0, 120) << "\n";
    return;
  }
  if (!engine_error.empty() || !torch_error.empty()) {
    if (engine_error.empty()) {
      ADD_FAILURE() << c.label << ": torch refuses what the engine accepts: " << torch_error;
    } else if (torch_error.empty()) {
      ADD_FAILURE() << c.label << ": the engine refuses what torch accepts: " << engine_error;
    } else {
      ADD_FAILURE() << c.label << ": both refuse; engine: " << engine_error
                    << "; torch: " << torch_error;
    }
    return;
  }
  if (ir::has_random_draws(c.graph)) {
    compare_drawn_with_torch(c, float_dtype, engine, torch, cotangents);
    return;
  }
  const bool imprecise = torch_imprecise(c.label);
  auto tol_of = [&](const Tensor& a, const Tensor& b) {
    const Tolerance own = tolerance(a, b);
    return imprecise ? Tolerance{std::max(own.rtol, 1e-4), std::max(own.atol, 1e-5)} : own;
  };
  ASSERT_EQ(engine.forward.outputs.size(), torch.outputs.size()) << c.label << ": output count";
  for (std::size_t i = 0; i < torch.outputs.size(); ++i) {
    const Tolerance tol = tol_of(engine.forward.outputs[i], torch.outputs[i]);
    const Mismatch m =
        compare_tensors(engine.forward.outputs[i], torch.outputs[i], tol.rtol, tol.atol);
    EXPECT_TRUE(m.ok) << c.label << " (" << dtype_name(float_dtype) << ") output " << i
                      << ": engine vs torch: " << m.message;
  }
  for (const auto& [name, value] : c.values) {
    if (!value.is_floating_point()) continue;
    auto e = engine.gradients.find(name);
    auto t = torch.gradients.find(name);
    if (e == engine.gradients.end() || t == torch.gradients.end()) {
      ADD_FAILURE() << c.label << ": gradient of '" << name << "' missing from "
                    << (e == engine.gradients.end() ? "the engine" : "torch");
      continue;
    }
    const Tolerance tol = tol_of(e->second, t->second);
    Tensor engine_gradient = e->second;
    Tensor torch_gradient = t->second;
    // Which non-finite value a sum of infinities of both signs gives depends on the order of
    // the terms (layer_norm's fused backward gives -inf where its composition gives NaN). The
    // judge skips every element where the reference is not finite, so only finite against
    // non-finite matters here.
    if (non_finite_cotangents)
      std::tie(engine_gradient, torch_gradient) = same_non_finite(engine_gradient, torch_gradient);
    const Mismatch m = compare_tensors(engine_gradient, torch_gradient, tol.rtol, tol.atol);
    const auto change = convention_changes().find(c.label);
    if (change != convention_changes().end() && change->second.libtorch == oracle::torch_major()) {
      EXPECT_FALSE(m.ok) << c.label << ": LibTorch " << oracle::torch_version()
                         << " no longer shows the convention change: " << change->second.what;
      continue;
    }
    const auto bug = torch_gradient_bugs().find(c.label);
    if (bug != torch_gradient_bugs().end() && bug->second.libtorch == oracle::torch_major()) {
      EXPECT_FALSE(m.ok) << c.label << ": LibTorch " << oracle::torch_version()
                         << " no longer shows the bug: " << bug->second.what;
      continue;
    }
    EXPECT_TRUE(m.ok) << c.label << " (" << dtype_name(float_dtype) << ") gradient of '" << name
                      << "': engine vs torch: " << m.message;
  }
}

std::string op_param_name(const ::testing::TestParamInfo<OpKind>& info) {
  return std::string(ir::op_name(info.param));
}

class TorchSweepTest : public ::testing::TestWithParam<OpKind> {
 protected:
  void sweep(Dtype float_dtype, bool non_finite_cotangents = false) {
    for (const OpCase& c : op_cases(GetParam(), float_dtype)) {
      SCOPED_TRACE(c.label);
      if (!c.engine_error.empty()) {
        ADD_FAILURE() << c.label << ": the engine refused the case: " << c.engine_error;
        continue;
      }
      if (!c.torch_crash.empty()) {
        std::cout << "[ SKIPPED  ] " << c.label << ": LibTorch crashes: " << c.torch_crash << "\n";
        continue;
      }
      auto deviation = intended_deviations().find(c.label);
      if (deviation != intended_deviations().end()) {
        std::cout << "[ SKIPPED  ] " << c.label << ": " << deviation->second << "\n";
        continue;
      }
      compare_with_torch(c, float_dtype, non_finite_cotangents);
    }
  }
};

TEST_P(TorchSweepTest, Float32MatchesTorch) {
  sweep(Dtype::Float32);
}
TEST_P(TorchSweepTest, Float64MatchesTorch) {
  sweep(Dtype::Float64);
}
TEST_P(TorchSweepTest, Float16MatchesTorch) {
  sweep(Dtype::Float16);
}
TEST_P(TorchSweepTest, BFloat16MatchesTorch) {
  sweep(Dtype::BFloat16);
}
TEST_P(TorchSweepTest, Float64NonFiniteIncomingGradientsFlowAsInTorch) {
  sweep(Dtype::Float64, /*non_finite_cotangents=*/true);
}

INSTANTIATE_TEST_SUITE_P(TorchSweep, TorchSweepTest, ::testing::ValuesIn(ir::kAllOps),
                         op_param_name);

}  // namespace
}  // namespace weft::testing
