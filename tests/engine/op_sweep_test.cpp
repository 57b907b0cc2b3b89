// The op sweep on the engine (like ggml's test-backend-ops): every op of the IR, on the cases
// of support/op_cases.h, must validate, produce its declared types, have gradients that match
// central finite differences in float64, and agree between float32 and float64.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "support/op_cases.h"
#include "weft/autograd.h"
#include "weft/ir/execute.h"
#include "weft/ir/op_kind.h"
#include "weft/ir/validate.h"

namespace weft::testing {
namespace {

using ir::OpKind;

// <outputs, cotangents> over the floating outputs, in double.
double objective(const ir::Graph& graph, const ir::TensorMap& leaves,
                 const std::vector<Tensor>& cotangents) {
  const ir::Execution run = ir::execute(graph, leaves);
  double total = 0.0;
  for (std::size_t i = 0; i < run.outputs.size(); ++i) {
    if (!run.outputs[i].is_floating_point()) continue;
    const std::vector<double> out = run.outputs[i].to_vector<double>();
    const std::vector<double> cot = cotangents[i].to_vector<double>();
    for (std::size_t k = 0; k < out.size(); ++k) total += out[k] * cot[k];
  }
  return total;
}

void check_types(const OpCase& c, const std::vector<Tensor>& outputs) {
  const auto& ids = c.graph.outputs();
  ASSERT_EQ(outputs.size(), ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const ir::TensorType& declared = c.graph.type(ids[i]);
    EXPECT_EQ(outputs[i].dtype(), declared.dtype) << "output " << i;
    EXPECT_EQ(outputs[i].sizes(), declared.shape) << "output " << i;
  }
}

// Gradients of the engine vs central differences of the objective, every floating leaf element.
void check_finite_differences(const OpCase& c) {
  const std::vector<Tensor> cotangents = ir::random_cotangents(c.graph, label_seed(c.label));
  const ir::GradientExecution run = ir::execute_with_gradients(c.graph, c.values, cotangents);
  check_types(c, run.forward.outputs);
  for (const auto& [name, value] : c.values) {
    if (!value.is_floating_point()) continue;
    SCOPED_TRACE("leaf '" + name + "'");
    auto it = run.gradients.find(name);
    ASSERT_NE(it, run.gradients.end()) << "no gradient";
    ASSERT_EQ(it->second.sizes(), value.sizes()) << "gradient shape";
    EXPECT_EQ(it->second.dtype(), value.dtype()) << "gradient dtype";
    const std::vector<double> analytic = it->second.to_vector<double>();
    if (!c.differentiable) {
      for (std::size_t i = 0; i < analytic.size(); ++i) {
        EXPECT_EQ(analytic[i], 0.0) << "piecewise-constant op: element " << i;
      }
      continue;
    }
    if (!c.fd_check) continue;
    std::vector<double> mask(analytic.size(), 1.0);
    if (auto m = c.gradient_mask.find(name); m != c.gradient_mask.end()) {
      mask = m->second.to_vector<double>();
    }
    int reported = 0;
    double max_error = 0.0;
    for (std::size_t i = 0; i < analytic.size(); ++i) {
      ir::TensorMap perturbed = c.values;
      Tensor leaf = value.clone();
      perturbed[name] = leaf;
      double* data = leaf.data<double>();
      const double saved = data[i];
      data[i] = saved + c.fd_eps;
      const double plus = objective(c.graph, perturbed, cotangents);
      data[i] = saved - c.fd_eps;
      const double minus = objective(c.graph, perturbed, cotangents);
      const double numeric = mask[i] * (plus - minus) / (2 * c.fd_eps);
      const double error = std::fabs(analytic[i] - numeric);
      const bool bad = !(error <= c.fd_atol + c.fd_rtol * std::fabs(numeric));
      if (bad) {
        max_error = std::max(max_error, std::isnan(error) ? INFINITY : error);
        if (++reported <= 4) {
          ADD_FAILURE() << "element " << i << ": engine gradient " << analytic[i]
                        << ", finite differences " << numeric;
        }
      }
    }
    if (reported > 4) {
      ADD_FAILURE() << reported << " elements differ in all, max error " << max_error;
    }
  }
}

std::string op_param_name(const ::testing::TestParamInfo<OpKind>& info) {
  return std::string(ir::op_name(info.param));
}

TEST(OpSweep, EveryOpHasCases) {
  std::string missing;
  for (OpKind op : ops_without_cases()) missing += " " + std::string(ir::op_name(op));
  EXPECT_TRUE(missing.empty()) << "ops without cases:" << missing;
  for (OpKind op : ir::kAllOps) {
    EXPECT_FALSE(op_cases(op, Dtype::Float64).empty()) << ir::op_name(op);
  }
}

TEST(OpSweep, CasesAreReproducibleAcrossFloatTypes) {
  for (OpKind op : ir::kAllOps) {
    const std::vector<OpCase> a = op_cases(op, Dtype::Float64);
    const std::vector<OpCase> b = op_cases(op, Dtype::Float32);
    ASSERT_EQ(a.size(), b.size()) << ir::op_name(op);
    for (std::size_t i = 0; i < a.size(); ++i) {
      SCOPED_TRACE(a[i].label);
      EXPECT_EQ(a[i].label, b[i].label);
      for (const auto& [name, value] : a[i].values) {
        const Mismatch m = compare_tensors(b[i].values.at(name), value, 0.0, 0.0, false);
        EXPECT_TRUE(m.ok) << name << ": " << m.message;
      }
    }
  }
}

class OpSweepTest : public ::testing::TestWithParam<OpKind> {};

TEST_P(OpSweepTest, Float64GradientsMatchFiniteDifferences) {
  for (const OpCase& c : op_cases(GetParam(), Dtype::Float64)) {
    SCOPED_TRACE(c.label);
    if (!c.engine_error.empty()) {
      ADD_FAILURE() << c.label << ": the engine refused a case PyTorch accepts: " << c.engine_error;
      continue;
    }
    EXPECT_NO_THROW(ir::validate(c.graph));
    try {
      check_finite_differences(c);
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.label << ": threw " << e.what();
    }
  }
}

TEST_P(OpSweepTest, Float32AgreesWithFloat64) {
  const std::vector<OpCase> cases64 = op_cases(GetParam(), Dtype::Float64);
  const std::vector<OpCase> cases32 = op_cases(GetParam(), Dtype::Float32);
  ASSERT_EQ(cases64.size(), cases32.size());
  for (std::size_t k = 0; k < cases64.size(); ++k) {
    const OpCase& c64 = cases64[k];
    const OpCase& c32 = cases32[k];
    SCOPED_TRACE(c32.label);
    if (!c64.engine_error.empty() || !c32.engine_error.empty()) {
      ADD_FAILURE() << c32.label << ": the engine refused: " << c32.engine_error;
      continue;
    }
    if (!c32.same_across_float_types) continue;
    try {
      EXPECT_NO_THROW(ir::validate(c32.graph));
      const std::uint64_t seed = label_seed(c32.label);
      const ir::GradientExecution r32 =
          ir::execute_with_gradients(c32.graph, c32.values, ir::random_cotangents(c32.graph, seed));
      const ir::GradientExecution r64 =
          ir::execute_with_gradients(c64.graph, c64.values, ir::random_cotangents(c64.graph, seed));
      check_types(c32, r32.forward.outputs);
      ASSERT_EQ(r32.forward.outputs.size(), r64.forward.outputs.size());
      for (std::size_t i = 0; i < r32.forward.outputs.size(); ++i) {
        const Tensor& a = r32.forward.outputs[i];
        const Tensor& b = r64.forward.outputs[i];
        EXPECT_EQ(a.is_floating_point(), b.is_floating_point()) << "output " << i;
        const Mismatch m = compare_tensors(a, b, 1e-4, 1e-5, false);
        EXPECT_TRUE(m.ok) << "output " << i << ": " << m.message;
      }
      for (const auto& [name, grad64] : r64.gradients) {
        auto it = r32.gradients.find(name);
        ASSERT_NE(it, r32.gradients.end()) << "no float32 gradient for " << name;
        EXPECT_EQ(it->second.dtype(), c32.values.at(name).dtype()) << name;
        const Mismatch m = compare_tensors(it->second, grad64, 1e-4, 1e-5, false);
        EXPECT_TRUE(m.ok) << "gradient of " << name << ": " << m.message;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << c32.label << ": threw " << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OpSweep, OpSweepTest, ::testing::ValuesIn(ir::kAllOps), op_param_name);

}  // namespace
}  // namespace weft::testing
