// The LibTorch eager backend: tensor conversions both ways, graphs whose outputs and gradients
// match the engine's, LibTorch errors that name the node, and a lowering row for every op.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "weft/error.h"
#include "weft/ir/execute.h"
#include "weft/ir/op_schema.h"
#include "weft/ir/random.h"
#include "weft/ops.h"
#include "weft/oracle/torch_eager.h"
#include "weft/oracle/torch_info.h"

namespace weft::oracle {

// Defined in oracle/src/torch_eager.cpp; kept out of the public header, which has no torch types.
at::ScalarType to_torch_dtype(Dtype dtype);
at::Tensor to_torch(const Tensor& tensor);
Tensor from_torch(const at::Tensor& tensor);
std::vector<at::Tensor> lower_node(const ir::Node& node, const std::vector<at::Tensor>& in);

namespace {

using ir::Attributes;
using ir::Graph;
using ir::OpKind;
using ir::ValueId;
using Ints = std::vector<std::int64_t>;

constexpr Dtype kDtypes[] = {Dtype::Bool, Dtype::Int32, Dtype::Int64, Dtype::Float32,
                             Dtype::Float64};
constexpr double kRtol = 1e-4;
constexpr double kAtol = 1e-5;

// Uniform values in [lo, hi), reproducible from `seed`, converted to `dtype`.
Tensor random(const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0,
              Dtype dtype = Dtype::Float32) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(static_cast<std::size_t>(numel_of(shape)));
  for (double& v : values) v = dist(rng);
  return tensor(values, shape.empty() ? IntList{} : IntList(shape)).reshape(shape).to(dtype);
}

// Integers in [lo, hi).
Tensor random_ints(const Shape& shape, std::uint64_t seed, std::int64_t lo, std::int64_t hi,
                   Dtype dtype = Dtype::Int64) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(lo, hi - 1);
  std::vector<std::int64_t> values(static_cast<std::size_t>(numel_of(shape)));
  for (std::int64_t& v : values) v = dist(rng);
  return tensor(values, shape.empty() ? IntList{} : IntList(shape)).reshape(shape).to(dtype);
}

std::vector<double> at_values(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kDouble).contiguous();
  const double* data = c.data_ptr<double>();
  return std::vector<double>(data, data + c.numel());
}

void expect_close(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_TRUE(actual.defined()) << what;
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  const std::vector<double> a = actual.to_vector<double>();
  const std::vector<double> e = expected.to_vector<double>();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(e[i])) {
      EXPECT_TRUE(std::isnan(a[i])) << what << " [" << i << "]";
    } else if (is_floating(expected.dtype())) {
      EXPECT_LE(std::abs(a[i] - e[i]), kAtol + kRtol * std::abs(e[i]))
          << what << " [" << i << "]: torch " << a[i] << ", engine " << e[i];
    } else {
      EXPECT_EQ(a[i], e[i]) << what << " [" << i << "]";
    }
  }
}

// Builds a graph whose value types come from running each node on the engine.
class Builder {
 public:
  ValueId input(const std::string& name, const Tensor& value) {
    return leaf(ir::LeafKind::Input, name, value);
  }
  ValueId param(const std::string& name, const Tensor& value) {
    return leaf(ir::LeafKind::Parameter, name, value);
  }
  std::vector<ValueId> node(OpKind op, const std::vector<ValueId>& inputs, Attributes attrs = {},
                            const std::string& name = "") {
    std::vector<Tensor> in;
    for (ValueId id : inputs) in.push_back(engine_[static_cast<std::size_t>(id)]);
    const std::vector<Tensor> outs = ir::run_node(ir::Node{op, inputs, {}, attrs, name}, in);
    std::vector<ir::TensorType> types;
    for (const Tensor& t : outs) types.push_back({t.dtype(), t.sizes()});
    const std::vector<ValueId> ids = graph_.add_node(op, inputs, std::move(attrs), types, name);
    for (const Tensor& t : outs) engine_.push_back(t);
    return ids;
  }
  ValueId op(OpKind op, const std::vector<ValueId>& inputs, Attributes attrs = {},
             const std::string& name = "") {
    return node(op, inputs, std::move(attrs), name).at(0);
  }
  void output(ValueId id) { graph_.mark_output(id); }
  void outputs(const std::vector<ValueId>& ids) {
    for (ValueId id : ids) graph_.mark_output(id);
  }

  // One random cotangent per output (zeros for non-floating outputs, which have no gradient).
  std::vector<Tensor> cotangents(std::uint64_t seed) const {
    std::vector<Tensor> result;
    for (ValueId id : graph_.outputs()) {
      const ir::TensorType& type = graph_.type(id);
      result.push_back(is_floating(type.dtype) ? random(type.shape, ++seed, -1.0, 1.0, type.dtype)
                                               : zeros(type.shape));
    }
    return result;
  }

  const Graph& graph() const { return graph_; }
  const ir::TensorMap& values() const { return values_; }

 private:
  ValueId leaf(ir::LeafKind kind, const std::string& name, const Tensor& value) {
    const ValueId id = graph_.add_leaf(kind, name, {value.dtype(), value.sizes()});
    values_[name] = value;
    engine_.push_back(value);
    return id;
  }

  Graph graph_;
  ir::TensorMap values_;
  std::vector<Tensor> engine_;  // by ValueId
};

// Runs the graph on LibTorch and on the engine, with the same cotangents, and compares.
void expect_matches_engine(const Builder& b, const std::string& what, std::uint64_t seed = 7) {
  const std::vector<Tensor> cotangents = b.cotangents(seed);
  const ir::GradientExecution engine =
      ir::execute_with_gradients(b.graph(), b.values(), cotangents);
  const TorchExecution torch = run_torch_eager(b.graph(), b.values(), cotangents);
  ASSERT_EQ(torch.outputs.size(), engine.forward.outputs.size()) << what;
  if (ir::has_random_draws(b.graph())) {
    // LibTorch draws its own numbers (the op sweep checks what they may be): the same shapes and
    // dtypes, and the same numbers on a second run, which sets the same seed.
    const TorchExecution again = run_torch_eager(b.graph(), b.values(), cotangents);
    for (std::size_t i = 0; i < torch.outputs.size(); ++i) {
      EXPECT_EQ(torch.outputs[i].sizes(), engine.forward.outputs[i].sizes()) << what;
      EXPECT_EQ(torch.outputs[i].dtype(), engine.forward.outputs[i].dtype()) << what;
      expect_close(again.outputs[i], torch.outputs[i],
                   what + ": output " + std::to_string(i) + " drawn again under the same seed");
    }
    return;
  }
  for (std::size_t i = 0; i < torch.outputs.size(); ++i) {
    expect_close(torch.outputs[i], engine.forward.outputs[i],
                 what + ": output " + std::to_string(i));
  }
  ASSERT_EQ(torch.gradients.size(), engine.gradients.size()) << what;
  for (const auto& [name, grad] : engine.gradients) {
    const auto it = torch.gradients.find(name);
    ASSERT_NE(it, torch.gradients.end()) << what << ": no gradient for " << name;
    expect_close(it->second, grad, what + ": gradient of " + name);
  }
}

std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no weft::Error)";
}

// ---- conversions ----

TEST(TorchEager, ConversionRoundTripsEveryDtypeAndLayout) {
  for (Dtype d : kDtypes) {
    const Tensor base = random({3, 4}, 11, -3.0, 3.0, d);
    const std::vector<std::pair<std::string, Tensor>> cases = {
        {"rank-0", random({}, 12, -3.0, 3.0, d)},
        {"size-0", zeros({0, 3}, dtype(d))},
        {"contiguous", base},
        {"transposed", base.t()},
        {"strided slice", base.slice(1, 0, 4, 2)},
        {"expanded", random({3, 1}, 13, -3.0, 3.0, d).expand({3, 5})},
    };
    for (const auto& [label, t] : cases) {
      const std::string what = std::string(dtype_name(d)) + " " + label;
      const at::Tensor a = to_torch(t);
      EXPECT_EQ(a.scalar_type(), to_torch_dtype(d)) << what;
      EXPECT_EQ(a.sizes().vec(), t.sizes()) << what;
      EXPECT_EQ(at_values(a), t.to_vector<double>()) << what;
      const Tensor back = from_torch(a);
      EXPECT_EQ(back.dtype(), d) << what;
      EXPECT_EQ(back.sizes(), t.sizes()) << what;
      EXPECT_EQ(back.to_vector<double>(), t.to_vector<double>()) << what;
    }
  }
}

TEST(TorchEager, NonContiguousTorchTensorsConvert) {
  const at::Tensor base = at::arange(12, at::kLong).reshape({3, 4});
  for (const at::Tensor& a : {base.t(), base.slice(1, 1, 4, 2), base.select(1, 2),
                              base.unsqueeze(0).expand({2, 3, 4}), base.to(at::kFloat).t()}) {
    const Tensor t = from_torch(a);
    EXPECT_EQ(t.sizes(), a.sizes().vec());
    EXPECT_EQ(t.to_vector<double>(), at_values(a));
  }
  // 16-bit floats convert (their bits copied); a type weft has no dtype for is named.
  const at::Tensor half = at::arange(6, at::kHalf).reshape({2, 3}).t();
  const at::Tensor brain = at::arange(6, at::kBFloat16).reshape({2, 3}).t();
  EXPECT_EQ(from_torch(half).dtype(), Dtype::Float16);
  EXPECT_EQ(from_torch(brain).dtype(), Dtype::BFloat16);
  EXPECT_EQ(from_torch(half).to_vector<double>(), at_values(half));
  EXPECT_EQ(from_torch(brain).to_vector<double>(), at_values(brain));
  EXPECT_NE(error_of([] { from_torch(at::ones({2}, at::kByte)); }).find("Byte"), std::string::npos);
}

TEST(TorchEager, LeafPassedThroughToAnOutputIsACopy) {
  for (Dtype d : kDtypes) {
    Builder b;
    const Tensor x = random({4, 3}, 21, -3.0, 3.0, d).t();  // non-contiguous
    b.output(b.input("x", x));
    b.output(b.input("scalar", random({}, 22, -3.0, 3.0, d)));
    b.output(b.input("empty", zeros({2, 0}, dtype(d))));
    const TorchExecution run = run_torch_eager(b.graph(), b.values());
    ASSERT_EQ(run.outputs.size(), 3u);
    expect_close(run.outputs[0], x, "x");
    expect_close(run.outputs[1], b.values().at("scalar"), "scalar");
    expect_close(run.outputs[2], b.values().at("empty"), "empty");
    EXPECT_NE(run.outputs[0].storage(), x.storage());
    EXPECT_TRUE(run.gradients.empty());
    expect_matches_engine(b, dtype_name(d));  // a passthrough's gradient is its cotangent
  }
}

// ---- graphs against the engine ----

TEST(TorchEager, Conv2dReluMaxPoolSumMatchesEngine) {
  Builder b;
  const ValueId x = b.input("x", random({2, 3, 8, 8}, 1));
  const ValueId w = b.param("conv.weight", random({4, 3, 3, 3}, 2));
  const ValueId bias = b.param("conv.bias", random({4}, 3));
  const ValueId c = b.op(OpKind::Conv2d, {x, w, bias}, Attributes().set("padding", Ints{1}));
  const ValueId r = b.op(OpKind::Relu, {c});
  const ValueId p = b.op(OpKind::MaxPool2d, {r}, Attributes().set("kernel_size", Ints{2}));
  b.output(b.op(OpKind::Sum, {p}, Attributes().set("dim", Ints{2, 3})));
  b.output(p);
  expect_matches_engine(b, "conv2d+relu+max_pool2d+sum");
}

TEST(TorchEager, MatmulSoftmaxMatchesEngine) {
  Builder b;
  const ValueId x = b.input("x", random({2, 5, 4}, 4));
  const ValueId w = b.param("w", random({4, 6}, 5));
  const ValueId m = b.op(OpKind::Matmul, {x, w});
  b.output(b.op(OpKind::Softmax, {m}, Attributes().set("dim", -1)));
  expect_matches_engine(b, "matmul+softmax");
}

TEST(TorchEager, SplitWithThreeOutputsMatchesEngine) {
  for (const Ints& sizes : {Ints{2}, Ints{1, 3, 1}}) {
    Builder b;
    const ValueId x = b.input("x", random({3, 5}, 6));
    const std::vector<ValueId> parts =
        b.node(OpKind::Split, {x}, Attributes().set("split_size", sizes).set("dim", 1));
    ASSERT_EQ(parts.size(), 3u);
    b.outputs(parts);
    b.output(b.op(OpKind::Exp, {parts[1]}));
    expect_matches_engine(b, "split");
  }
}

TEST(TorchEager, BatchNormMatchesEngineAndLeavesRunningStatsUntouched) {
  for (bool training : {false, true}) {
    Builder b;
    const ValueId x = b.input("x", random({4, 3, 5}, 7));
    const ValueId w = b.param("bn.weight", random({3}, 8, 0.5, 1.5));
    const ValueId bias = b.param("bn.bias", random({3}, 9));
    const ValueId mean = b.param("bn.running_mean", random({3}, 10));
    const ValueId var = b.param("bn.running_var", random({3}, 11, 0.5, 1.5));
    b.output(b.op(OpKind::BatchNorm, {x, w, bias, mean, var},
                  Attributes().set("training", training).set("momentum", 0.2)));
    const std::vector<double> mean_before = b.values().at("bn.running_mean").to_vector<double>();
    const std::vector<double> var_before = b.values().at("bn.running_var").to_vector<double>();
    expect_matches_engine(b, training ? "batch_norm train" : "batch_norm eval");
    EXPECT_EQ(b.values().at("bn.running_mean").to_vector<double>(), mean_before);
    EXPECT_EQ(b.values().at("bn.running_var").to_vector<double>(), var_before);
  }
}

TEST(TorchEager, CastMatchesEngine) {
  Builder b;
  const ValueId x = b.input("x", random({2, 3}, 12, -3.0, 3.0));
  const ValueId i = b.input("i", random_ints({2, 3}, 13, -5, 5));
  const ValueId wide = b.op(OpKind::Cast, {x}, Attributes().set("dtype", Dtype::Float64));
  b.output(b.op(OpKind::Mul, {wide, wide}));
  b.output(b.op(OpKind::Cast, {x}, Attributes().set("dtype", Dtype::Int32)));
  b.output(b.op(OpKind::Cast, {i}, Attributes().set("dtype", Dtype::Float32)));
  b.output(b.op(OpKind::Cast, {x}, Attributes().set("dtype", Dtype::Bool)));
  expect_matches_engine(b, "cast");
}

// clamp's bounds are float attributes: like torch.clamp(x, max=2.0) in Python, a whole-valued
// bound still promotes an integral input to float32.
TEST(TorchEager, ClampBoundsAreFloatsEvenWhenWholeValued) {
  Builder b;
  const ValueId x = b.input("x", random_ints({2, 3}, 2, -4, 4));
  b.output(b.op(OpKind::Clamp, {x}, Attributes().set("max", 2.5)));
  Graph g = b.graph();
  g.mutable_nodes()[0].attrs.set("max", 2.0);
  g.mutable_values()[static_cast<std::size_t>(g.outputs()[0])].type.dtype = Dtype::Float32;
  const TorchExecution run = run_torch_eager(g, b.values());
  expect_close(run.outputs[0], clamp(b.values().at("x").to(Dtype::Float32), std::nullopt, 2.0),
               "clamp(int, max=2.0)");
}

TEST(TorchEager, ForwardOnlyRunsReportNoGradients) {
  Builder b;
  const ValueId x = b.input("x", random({2, 3}, 14));
  b.output(b.op(OpKind::Tanh, {x}));
  const TorchExecution run = run_torch_eager(b.graph(), b.values());
  ASSERT_EQ(run.outputs.size(), 1u);
  expect_close(run.outputs[0], tanh(b.values().at("x")), "tanh");
  EXPECT_TRUE(run.gradients.empty());
}

TEST(TorchEager, UnreachedLeavesGetZeroGradients) {
  Builder b;
  const ValueId x = b.input("x", random({2, 3}, 15));
  b.param("unused", random({4}, 16));
  b.output(b.op(OpKind::Sin, {x}));
  const ir::TensorMap extra = [&] {
    ir::TensorMap values = b.values();
    values["not_in_graph"] = random({2}, 17, -1.0, 1.0, Dtype::Float64);
    return values;
  }();
  const TorchExecution run = run_torch_eager(b.graph(), extra, b.cotangents(1));
  expect_close(run.gradients.at("unused"), zeros({4}), "unused");
  expect_close(run.gradients.at("not_in_graph"), zeros({2}, dtype(Dtype::Float64)), "extra");
  expect_matches_engine(b, "unused parameter");
}

// ---- errors ----

TEST(TorchEager, TorchErrorsNameTheNode) {
  Builder b;
  const ValueId x = b.input("x", random({1, 3, 5, 5}, 18));
  const ValueId y = b.op(OpKind::Relu, {x});
  const ValueId w = b.param("w", random({4, 2, 3, 3}, 19));
  // Declared by hand: the engine refuses the node too, so the builder cannot infer its type.
  Graph g = b.graph();
  g.mark_output(
      g.add_node(OpKind::Conv2d, {y, w}, {}, {{Dtype::Float32, {1, 4, 3, 3}}}, "bad_conv")[0]);
  const std::string message = error_of([&] { run_torch_eager(g, b.values()); });
  EXPECT_EQ(message.rfind("node 1 'bad_conv' (conv2d): ", 0), 0u) << message;
  EXPECT_NE(message.find("channels"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.find("Exception raised from"), std::string::npos) << message;
}

TEST(TorchEager, PythonSideChecksAreReproducedWithTheNodeLabel) {
  Graph g;
  const ValueId x = g.add_input("x", {Dtype::Float32, {1, 2, 4}});
  g.mark_output(g.add_node(OpKind::Interpolate, {x}, Attributes().set("size", Ints{3, 3}),
                           {{Dtype::Float32, {1, 2, 3, 3}}}, "up")[0]);
  const ir::TensorMap values{{"x", random({1, 2, 4}, 20)}};
  std::string message = error_of([&] { run_torch_eager(g, values); });
  EXPECT_EQ(message.rfind("node 0 'up' (interpolate): Input and output must have the same", 0), 0u)
      << message;

  Graph s;
  const ValueId y = s.add_input("x", {Dtype::Float32, {1, 2, 4}});
  s.mark_output(s.add_node(OpKind::Squeeze, {y}, Attributes().set("dim", Ints{0, -3}),
                           {{Dtype::Float32, {2, 4}}})[0]);
  message = error_of([&] { run_torch_eager(s, values); });
  EXPECT_EQ(message, "node 0 (squeeze): dim 0 appears multiple times in the list of dims");
}

TEST(TorchEager, RandomOpsDrawTheSameNumbersOnEveryRun) {
  // Every run seeds LibTorch's generator (kTorchSeed): the draws repeat exactly, run after run,
  // and differ from one op to the next.
  Builder b;
  const ValueId x = b.input("x", random({3, 4}, 21));
  b.output(b.op(OpKind::Dropout, {x}, Attributes().set("p", 0.3), "drop"));
  b.output(b.op(OpKind::RandLike, {x}, Attributes(), "noise"));
  const TorchExecution first = run_torch_eager(b.graph(), b.values());
  const TorchExecution second = run_torch_eager(b.graph(), b.values());
  ASSERT_EQ(first.outputs.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(first.outputs[i].to_vector<double>(), second.outputs[i].to_vector<double>()) << i;
  }
  const std::vector<double> noise = first.outputs[1].to_vector<double>();
  EXPECT_TRUE(std::all_of(noise.begin(), noise.end(), [](double v) { return v >= 0 && v < 1; }));
  EXPECT_NE(noise, first.outputs[0].to_vector<double>());
}

TEST(TorchEager, MissingOrMistypedLeafIsNamed) {
  Builder b;
  const ValueId x = b.input("x", random({2, 3}, 22));
  b.output(b.op(OpKind::Exp, {x}));
  EXPECT_EQ(error_of([&] { run_torch_eager(b.graph(), {}); }), "input 'x' has no value");
  const std::string message = error_of([&] { run_torch_eager(b.graph(), {{"x", zeros({3, 2})}}); });
  EXPECT_NE(message.find("value of 'x'"), std::string::npos) << message;
  EXPECT_NE(error_of([&] {
              run_torch_eager(b.graph(), b.values(), {zeros({2}), zeros({2})});
            }).find("2 cotangents for 1 outputs"),
            std::string::npos);
}

TEST(TorchEager, LowerNodeCallsATenDirectly) {
  const at::Tensor x = at::arange(12, at::kFloat).reshape({3, 4}) - 5;
  const ir::Node relu{OpKind::Relu, {0}, {1}, {}, ""};
  EXPECT_EQ(at_values(lower_node(relu, {x}).at(0)), at_values(at::relu(x)));
  const ir::Node max{OpKind::Max, {0}, {1, 2}, Attributes().set("dim", 1), ""};
  const std::vector<at::Tensor> values_indices = lower_node(max, {x});
  ASSERT_EQ(values_indices.size(), 2u);
  EXPECT_EQ(values_indices[1].scalar_type(), at::kLong);
  const ir::Node chunk{OpKind::Chunk, {0}, {1, 2}, Attributes().set("chunks", 2), ""};
  EXPECT_EQ(lower_node(chunk, {x}).size(), 2u);
  EXPECT_NE(error_of([&] {
              lower_node(relu, {x, x});
            }).find("relu expects 1 inputs, got 2"),
            std::string::npos);
}

// ---- every op ----

struct OpCase {
  std::string label;
  std::function<void(Builder&)> build;
};

std::vector<OpCase> every_op_cases() {
  std::vector<OpCase> cases;
  auto add = [&](std::string label, std::function<void(Builder&)> build) {
    cases.push_back({std::move(label), std::move(build)});
  };
  auto unary = [&](OpKind op, double lo, double hi, Attributes attrs = {}) {
    add(std::string(ir::op_name(op)), [=](Builder& b) {
      b.output(b.op(op, {b.input("x", random({2, 3}, 1, lo, hi))}, attrs));
    });
  };
  auto binary = [&](OpKind op, Tensor x, Tensor y, Attributes attrs = {}) {
    add(std::string(ir::op_name(op)), [=](Builder& b) {
      b.output(b.op(op, {b.input("x", x), b.input("y", y)}, attrs));
    });
  };
  auto on = [&](OpKind op, Tensor x, Attributes attrs) {
    add(std::string(ir::op_name(op)) + " " + std::to_string(cases.size()),
        [=](Builder& b) { b.outputs(b.node(op, {b.input("x", x)}, attrs)); });
  };

  // unary math and activations
  for (OpKind op : {OpKind::Log, OpKind::Log2, OpKind::Sqrt, OpKind::Rsqrt, OpKind::Reciprocal}) {
    unary(op, 0.1, 0.9);
  }
  for (OpKind op :
       {OpKind::Neg, OpKind::Abs, OpKind::Exp, OpKind::Sin, OpKind::Cos, OpKind::Tan, OpKind::Asin,
        OpKind::Acos, OpKind::Atan, OpKind::Sinh, OpKind::Cosh, OpKind::Tanh, OpKind::Erf,
        OpKind::Sign, OpKind::Sigmoid, OpKind::Relu, OpKind::Silu}) {
    unary(op, -0.9, 0.9);
  }
  for (OpKind op : {OpKind::Floor, OpKind::Ceil, OpKind::Round}) unary(op, -3.0, 3.0);
  unary(OpKind::LeakyRelu, -1, 1, Attributes().set("negative_slope", 0.2));
  unary(OpKind::Elu, -1, 1, Attributes().set("alpha", 0.7));
  unary(OpKind::Gelu, -2, 2);
  unary(OpKind::Gelu, -2, 2, Attributes().set("approximate", "tanh"));
  unary(OpKind::Softplus, -2, 2, Attributes().set("beta", 2.0).set("threshold", 1.0));
  unary(OpKind::Hardtanh, -1, 1, Attributes().set("min_val", -0.5).set("max_val", 0.5));
  unary(OpKind::Clamp, -1, 1, Attributes().set("min", -0.3));
  unary(OpKind::Clamp, -1, 1, Attributes().set("min", -0.5).set("max", 0.4));
  on(OpKind::Clamp, random_ints({2, 3}, 2, -4, 4), Attributes().set("max", 2.5));
  // the Core ATen elementwise math
  for (OpKind op :
       {OpKind::Log1p,      OpKind::Expm1,   OpKind::Exp2,    OpKind::Asinh,    OpKind::Atanh,
        OpKind::Erfinv,     OpKind::Mish,    OpKind::Selu,    OpKind::Softsign, OpKind::Logsigmoid,
        OpKind::Tanhshrink, OpKind::Isnan,   OpKind::Isinf,   OpKind::Square,   OpKind::Erfc,
        OpKind::Sinc,       OpKind::Deg2rad, OpKind::Rad2deg, OpKind::Isfinite, OpKind::Signbit}) {
    unary(op, -0.9, 0.9);
  }
  unary(OpKind::Log10, 0.1, 0.9);
  unary(OpKind::Acosh, 1.1, 3.0);
  for (OpKind op : {OpKind::Trunc, OpKind::Frac, OpKind::Hardswish, OpKind::Hardsigmoid}) {
    unary(op, -4.0, 4.0);
  }
  unary(OpKind::Relu6, -2.0, 8.0);
  unary(OpKind::Celu, -2, 2, Attributes().set("alpha", 0.7));
  unary(OpKind::Threshold, -2, 2, Attributes().set("threshold", 0.3).set("value", -1.0));
  unary(OpKind::Hardshrink, -2, 2, Attributes().set("lambd", 0.6));
  unary(OpKind::Softshrink, -2, 2, Attributes().set("lambd", 0.6));

  // binary arithmetic, comparison, logic
  const Tensor x23 = random({2, 3}, 3), y3 = random({3}, 4, 0.5, 1.5);
  binary(OpKind::Add, x23, y3, Attributes().set("alpha", 2.0));
  binary(OpKind::Add, random_ints({2, 3}, 5, -9, 9), random_ints({3}, 6, -9, 9),
         Attributes().set("alpha", 3.0));
  binary(OpKind::Sub, x23, y3, Attributes().set("alpha", 0.5));
  binary(OpKind::Mul, x23, y3);
  for (OpKind op :
       {OpKind::Atan2, OpKind::Hypot, OpKind::Logaddexp, OpKind::Fmod, OpKind::Remainder}) {
    binary(op, x23, y3);
  }
  binary(OpKind::Div, x23, y3);
  binary(OpKind::Div, random({2, 3}, 7, -5, 5), y3, Attributes().set("rounding_mode", "floor"));
  binary(OpKind::Div, random({2, 3}, 8, -5, 5), y3, Attributes().set("rounding_mode", "trunc"));
  binary(OpKind::Pow, random({2, 3}, 9, 0.5, 1.5), random({3}, 10, -1, 2));
  binary(OpKind::Maximum, x23, random({3}, 11));
  binary(OpKind::Minimum, x23, random({3}, 12));
  const Tensor small = random_ints({2, 3}, 13, 0, 3, Dtype::Float32);
  const Tensor small_row = random_ints({3}, 14, 0, 3, Dtype::Float32);
  for (OpKind op : {OpKind::Eq, OpKind::Ne, OpKind::Lt, OpKind::Le, OpKind::Gt, OpKind::Ge}) {
    binary(op, small, small_row);
  }
  const Tensor p = random_ints({2, 3}, 15, 0, 2, Dtype::Bool);
  const Tensor q = random_ints({2, 3}, 16, 0, 2, Dtype::Bool);
  for (OpKind op : {OpKind::LogicalAnd, OpKind::LogicalOr, OpKind::LogicalXor}) binary(op, p, q);
  on(OpKind::LogicalNot, p, {});
  const Tensor ints = random_ints({2, 3}, 104, -9, 9), row = random_ints({3}, 105, -9, 9);
  for (OpKind op : {OpKind::BitwiseAnd, OpKind::BitwiseOr, OpKind::BitwiseXor}) {
    binary(op, ints, row);
    binary(op, p, q);
  }
  on(OpKind::BitwiseNot, ints, {});
  on(OpKind::BitwiseNot, p, {});
  add("where", [=](Builder& b) {
    b.output(b.op(OpKind::Where, {b.input("c", p), b.input("x", x23), b.input("y", y3)}));
  });

  // reductions and softmax
  const Tensor x34 = random({3, 4}, 17, 0.5, 1.5);
  on(OpKind::Sum, x34, Attributes().set("dim", Ints{1}).set("keepdim", true));
  on(OpKind::Sum, x34, {});
  on(OpKind::Sum, random_ints({3, 4}, 18, -5, 5, Dtype::Int32), Attributes().set("dim", Ints{0}));
  on(OpKind::Mean, x34, Attributes().set("dim", Ints{0, 1}));
  on(OpKind::Mean, x34, {});
  on(OpKind::Prod, x34, Attributes().set("dim", 1));
  on(OpKind::Prod, x34, Attributes().set("keepdim", true));
  on(OpKind::Max, x34, Attributes().set("dim", 1));
  on(OpKind::Min, x34, Attributes().set("dim", 0).set("keepdim", true));
  on(OpKind::Argmax, x34, Attributes().set("dim", 0));
  on(OpKind::Argmax, x34, {});
  on(OpKind::Argmin, x34, Attributes().set("dim", 1).set("keepdim", true));
  on(OpKind::Var, x34, Attributes().set("dim", Ints{1}).set("correction", 0));
  on(OpKind::Var, x34, {});
  on(OpKind::Std, x34, Attributes().set("dim", Ints{0}).set("keepdim", true));
  on(OpKind::Logsumexp, x34, Attributes().set("dim", Ints{0, 1}));
  on(OpKind::Logsumexp, x34, Attributes().set("dim", Ints{1}).set("keepdim", true));
  on(OpKind::Softmax, x34, Attributes().set("dim", 1));
  on(OpKind::LogSoftmax, x34, Attributes().set("dim", 0));
  on(OpKind::Amax, x34, Attributes().set("dim", Ints{1}));
  on(OpKind::Amin, x34, Attributes().set("keepdim", true));
  on(OpKind::Any, x34, Attributes().set("dim", 1));
  on(OpKind::All, x34, Attributes().set("keepdim", true));
  on(OpKind::Cumsum, x34, Attributes().set("dim", 1));
  on(OpKind::Cumprod, x34, Attributes().set("dim", -2));
  on(OpKind::Sort, x34, Attributes().set("dim", 0).set("descending", true));
  on(OpKind::Sort, random_ints({3, 4}, 106, -50, 50), Attributes().set("stable", true));
  on(OpKind::Argsort, x34, Attributes().set("dim", 1));
  on(OpKind::Topk, x34, Attributes().set("k", 2).set("dim", 1));
  on(OpKind::Topk, x34, Attributes().set("k", 3).set("dim", 0).set("largest", false));

  // reordering
  on(OpKind::Flip, x34, Attributes().set("dims", Ints{0, 1}));
  on(OpKind::Roll, x34, Attributes().set("shifts", Ints{2, -1}).set("dims", Ints{1, 0}));
  on(OpKind::Roll, x34, Attributes().set("shifts", Ints{5}));
  on(OpKind::Repeat, x34, Attributes().set("repeats", Ints{2, 1, 2}));
  on(OpKind::Diagonal, x34, Attributes().set("offset", 1));

  // linear algebra
  binary(OpKind::Matmul, random({2, 3, 4}, 19), random({4, 5}, 20));
  binary(OpKind::Matmul, random({4}, 21), random({4, 5}, 22));
  binary(OpKind::Mm, random({3, 4}, 23), random({4, 2}, 24));
  binary(OpKind::Bmm, random({2, 3, 4}, 25), random({2, 4, 5}, 26));
  binary(OpKind::Linear, random({2, 3}, 27), random({4, 3}, 28));
  add("linear with bias", [](Builder& b) {
    b.output(
        b.op(OpKind::Linear, {b.input("x", random({2, 3}, 29)), b.param("w", random({4, 3}, 30)),
                              b.param("b", random({4}, 31))}));
  });
  binary(OpKind::Cdist, random({2, 3, 4}, 143), random({5, 4}, 144), Attributes().set("p", 1.5));
  on(OpKind::Pdist, random({4, 3}, 145), Attributes().set("p", 3.0));
  add("addmm", [](Builder& b) {
    b.output(b.op(OpKind::Addmm,
                  {b.input("s", random({4}, 32)), b.input("m1", random({2, 3}, 33)),
                   b.param("m2", random({3, 4}, 34))},
                  Attributes().set("beta", 0.5).set("alpha", 2.0)));
  });

  // convolution and pooling
  add("conv1d", [](Builder& b) {
    b.output(b.op(OpKind::Conv1d,
                  {b.input("x", random({2, 4, 9}, 35)), b.param("w", random({6, 2, 3}, 36)),
                   b.param("b", random({6}, 37))},
                  Attributes().set("stride", Ints{2}).set("padding", Ints{1}).set("groups", 2)));
  });
  add("conv2d", [](Builder& b) {
    b.output(b.op(
        OpKind::Conv2d,
        {b.input("x", random({1, 3, 6, 6}, 38)), b.param("w", random({4, 3, 3, 3}, 39))},
        Attributes().set("stride", Ints{1, 2}).set("padding", Ints{1}).set("dilation", Ints{2})));
  });
  const Tensor x238 = random({2, 3, 8}, 40), x1265 = random({1, 2, 6, 5}, 41);
  on(OpKind::MaxPool1d, x238,
     Attributes().set("kernel_size", Ints{3}).set("stride", Ints{2}).set("padding", Ints{1}));
  on(OpKind::MaxPool2d, x1265, Attributes().set("kernel_size", Ints{2}).set("ceil_mode", true));
  on(OpKind::MaxPool2d, x1265,
     Attributes().set("kernel_size", Ints{2, 2}).set("dilation", Ints{2}).set("stride", Ints{1}));
  on(OpKind::AvgPool1d, x238,
     Attributes()
         .set("kernel_size", Ints{3})
         .set("stride", Ints{2})
         .set("padding", Ints{1})
         .set("count_include_pad", false));
  on(OpKind::AvgPool2d, x1265, Attributes().set("kernel_size", Ints{2, 3}).set("ceil_mode", true));
  on(OpKind::AdaptiveAvgPool2d, random({1, 2, 5, 7}, 42),
     Attributes().set("output_size", Ints{2, 3}));
  const Tensor x13456 = random({1, 3, 4, 5, 6}, 142);
  on(OpKind::MaxPool3d, x13456,
     Attributes().set("kernel_size", Ints{2, 3, 2}).set("padding", Ints{1}).set("ceil_mode", true));
  on(OpKind::AvgPool3d, x13456,
     Attributes()
         .set("kernel_size", Ints{3})
         .set("stride", Ints{2})
         .set("padding", Ints{1})
         .set("count_include_pad", false));
  on(OpKind::AdaptiveAvgPool3d, x13456, Attributes().set("output_size", Ints{3, 2, 4}));

  // normalization, dropout, embedding
  for (int inputs : {3, 5}) {
    for (bool training : {false, true}) {
      if (inputs == 3 && !training) continue;  // eval mode needs running statistics
      add("batch_norm " + std::to_string(inputs) + (training ? " train" : " eval"),
          [=](Builder& b) {
            std::vector<ValueId> in{b.input("x", random({2, 3, 2, 2}, 43)),
                                    b.param("w", random({3}, 44)), b.param("b", random({3}, 45))};
            if (inputs == 5) {
              in.push_back(b.param("rm", random({3}, 46)));
              in.push_back(b.param("rv", random({3}, 47, 0.5, 1.5)));
            }
            b.output(b.op(OpKind::BatchNorm, in, Attributes().set("training", training)));
          });
    }
  }
  add("layer_norm", [](Builder& b) {
    b.output(b.op(OpKind::LayerNorm,
                  {b.input("x", random({2, 3, 4}, 48)), b.param("w", random({3, 4}, 49)),
                   b.param("b", random({3, 4}, 50))},
                  Attributes().set("normalized_shape", Ints{3, 4})));
  });
  on(OpKind::LayerNorm, random({2, 3, 4}, 51),
     Attributes().set("normalized_shape", Ints{4}).set("eps", 1e-3));
  add("group_norm", [](Builder& b) {
    b.output(b.op(OpKind::GroupNorm,
                  {b.input("x", random({2, 4, 3}, 99)), b.param("w", random({4}, 100)),
                   b.param("b", random({4}, 101))},
                  Attributes().set("num_groups", 2)));
  });
  on(OpKind::GroupNorm, random({2, 3, 2, 2}, 102), Attributes().set("num_groups", 3));
  on(OpKind::InstanceNorm, random({2, 3, 4}, 103), Attributes().set("eps", 1e-3));
  on(OpKind::Dropout, x34, Attributes().set("training", false));
  on(OpKind::Dropout, x34, Attributes().set("p", 0.4).set("seed", 3));
  const Tensor x2x3x4 = random({2, 3, 4}, 145);
  for (OpKind op : {OpKind::FeatureDropout, OpKind::AlphaDropout, OpKind::FeatureAlphaDropout}) {
    on(op, x2x3x4, Attributes().set("training", false));
    on(op, x2x3x4, Attributes().set("p", 0.0));
    on(op, x2x3x4, Attributes().set("p", 1.0));
    on(op, x2x3x4, Attributes().set("p", 0.25).set("seed", 4));
  }
  on(OpKind::Rrelu, x34, Attributes().set("training", false));
  on(OpKind::Rrelu, x34, Attributes().set("lower", 0.2).set("upper", 0.2));
  on(OpKind::Rrelu, x34, Attributes().set("lower", 0.1).set("upper", 0.4).set("seed", 5));
  for (OpKind op : {OpKind::RandLike, OpKind::RandnLike, OpKind::Rand, OpKind::Randn}) {
    on(op, x2x3x4, Attributes().set("seed", 6));
  }
  on(OpKind::RandintLike, x34, Attributes().set("low", 1).set("high", 4));
  on(OpKind::Bernoulli, random({3, 4}, 146, 0.0, 1.0), Attributes());
  // PyTorch 2.x refuses the backward of torch.bernoulli(x, p) (the op sweep's
  // bernoulli/number_p): its forward is checked there.
  if (torch_major() < 2) on(OpKind::Bernoulli, x34, Attributes().set("p", 0.7));
  on(OpKind::Randperm, x2x3x4, Attributes().set("dim", 2));
  on(OpKind::Dropout, x34, Attributes().set("p", 0.0));
  on(OpKind::Dropout, x34, Attributes().set("p", 1.0));
  for (std::int64_t padding_idx : {std::int64_t{-1}, std::int64_t{1}, std::int64_t{-2}}) {
    add("embedding " + std::to_string(padding_idx), [=](Builder& b) {
      Attributes attrs;
      if (padding_idx != -1) attrs.set("padding_idx", padding_idx);
      const Dtype index_type = padding_idx == 1 ? Dtype::Int32 : Dtype::Int64;
      b.output(b.op(OpKind::Embedding,
                    {b.input("i", random_ints({2, 3}, 52, 0, 5, index_type)),
                     b.param("w", random({5, 4}, 53))},
                    attrs));
    });
  }

  // views and shape
  const Tensor x234 = random({2, 3, 4}, 54), x2131 = random({2, 1, 3, 1}, 55);
  on(OpKind::Reshape, x234, Attributes().set("shape", Ints{4, -1}));
  on(OpKind::Flatten, x234, Attributes().set("start_dim", 1));
  on(OpKind::Squeeze, x2131, Attributes().set("dim", Ints{1, -1}));
  on(OpKind::Squeeze, x2131, {});
  on(OpKind::Squeeze, x2131, Attributes().set("dim", Ints{0, 3}));
  on(OpKind::Squeeze, random({}, 56), Attributes().set("dim", Ints{-1}));
  on(OpKind::Unsqueeze, x234, Attributes().set("dim", -1));
  on(OpKind::Transpose, x234, Attributes().set("dim0", 0).set("dim1", 2));
  on(OpKind::Permute, x234, Attributes().set("dims", Ints{2, 0, 1}));
  on(OpKind::Expand, random({2, 1}, 57), Attributes().set("size", Ints{3, 2, 4}));
  on(OpKind::Expand, random({2, 1}, 58), Attributes().set("size", Ints{-1, 4}));
  on(OpKind::Slice, x234, Attributes().set("dim", 2).set("start", 1).set("step", 2));
  on(OpKind::Slice, x234, Attributes().set("dim", 1).set("start", -2).set("end", -1));
  on(OpKind::Select, x234, Attributes().set("dim", 1).set("index", -1));
  add("slice_scatter", [](Builder& b) {
    b.output(b.op(OpKind::SliceScatter,
                  {b.input("x", random({2, 3, 4}, 54)), b.param("src", random({2, 3, 2}, 541))},
                  Attributes().set("dim", 2).set("start", 1).set("step", 2)));
  });
  add("select_scatter", [](Builder& b) {
    b.output(b.op(OpKind::SelectScatter,
                  {b.input("x", random({2, 3, 4}, 54)), b.param("src", random({2, 4}, 542))},
                  Attributes().set("dim", 1).set("index", -1)));
  });

  // joining, splitting, padding, indexing
  add("cat", [](Builder& b) {
    b.output(b.op(OpKind::Cat,
                  {b.input("a", random({2, 3}, 59)), b.input("b", random({2, 1}, 60)),
                   b.param("c", random({2, 2}, 61))},
                  Attributes().set("dim", 1)));
  });
  add("stack", [](Builder& b) {
    b.output(b.op(OpKind::Stack,
                  {b.input("a", random({2, 3}, 62)), b.input("b", random({2, 3}, 63))},
                  Attributes().set("dim", 1)));
  });
  on(OpKind::Split, random({2, 5}, 64), Attributes().set("split_size", Ints{2}).set("dim", 1));
  on(OpKind::Split, random({5, 2}, 65), Attributes().set("split_size", Ints{1, 3, 1}));
  on(OpKind::Chunk, random({2, 7}, 66), Attributes().set("chunks", 3).set("dim", 1));
  on(OpKind::Chunk, random({6, 2}, 67), Attributes().set("chunks", 4));
  on(OpKind::Pad, x23, Attributes().set("pad", Ints{1, 2}).set("value", 0.5));
  on(OpKind::Pad, x234, Attributes().set("pad", Ints{1, 1, 0, 2}));
  on(OpKind::Pad, x234, Attributes().set("pad", Ints{-1, 1}));
  on(OpKind::Pad, random({2, 3, 5}, 68),
     Attributes().set("pad", Ints{2, 1}).set("mode", "reflect"));
  on(OpKind::Pad, random({3, 5}, 69), Attributes().set("pad", Ints{1, 2}).set("mode", "reflect"));
  on(OpKind::Pad, random({1, 2, 4, 5}, 70),
     Attributes().set("pad", Ints{1, 1, 2, 0}).set("mode", "reflect"));
  on(OpKind::Pad, x234, Attributes().set("pad", Ints{2, 1}).set("mode", "replicate"));
  on(OpKind::Pad, random({1, 2, 3, 4}, 71),
     Attributes().set("pad", Ints{1, 0, 0, 2}).set("mode", "replicate"));
  on(OpKind::Tril, x34, Attributes().set("diagonal", -1));
  on(OpKind::Triu, x234, Attributes().set("diagonal", 1));
  add("gather", [](Builder& b) {
    b.output(b.op(OpKind::Gather,
                  {b.input("x", random({3, 4}, 72)), b.input("i", random_ints({3, 2}, 73, 0, 4))},
                  Attributes().set("dim", 1)));
  });
  for (Dtype index_type : {Dtype::Int64, Dtype::Int32}) {
    add("index_select", [=](Builder& b) {
      b.output(b.op(
          OpKind::IndexSelect,
          {b.input("x", random({3, 4}, 74)), b.input("i", random_ints({5}, 75, 0, 3, index_type))},
          Attributes().set("dim", 0)));
    });
  }

  add("scatter_add", [](Builder& b) {
    b.output(b.op(OpKind::ScatterAdd,
                  {b.input("x", random({3, 4}, 90)), b.input("i", random_ints({4, 4}, 91, 0, 3)),
                   b.input("s", random({4, 4}, 92))},
                  Attributes().set("dim", 0)));
  });
  for (const char* how : {"sum", "prod", "mean", "amax", "amin"}) {
    add(std::string("scatter_reduce ") + how, [=](Builder& b) {
      b.output(b.op(OpKind::ScatterReduce,
                    {b.input("x", random({2, 5}, 93)), b.input("i", random_ints({2, 3}, 94, 0, 5)),
                     b.input("s", random({2, 3}, 95))},
                    Attributes()
                        .set("dim", 1)
                        .set("reduce", std::string(how))
                        .set("include_self", std::string(how) != "mean")));
    });
  }
  add("index_add", [](Builder& b) {
    b.output(b.op(OpKind::IndexAdd,
                  {b.input("x", random({3, 4}, 96)), b.input("i", random_ints({5}, 97, 0, 3)),
                   b.input("s", random({5, 4}, 98))},
                  Attributes().set("dim", 0).set("alpha", -1.5)));
  });
  add("index_put", [](Builder& b) {
    b.output(b.op(OpKind::IndexPut,
                  {b.input("x", random({4, 3}, 99)), b.input("i", random_ints({2}, 100, 0, 4)),
                   b.input("s", random({3}, 101))},
                  Attributes().set("accumulate", true)));
  });
  add("masked_fill", [=](Builder& b) {
    b.output(b.op(OpKind::MaskedFill, {b.input("x", y3), b.input("m", p)},
                  Attributes().set("value", 2.5)));
  });
  add("masked_scatter", [=](Builder& b) {
    b.output(b.op(OpKind::MaskedScatter,
                  {b.input("x", y3), b.input("m", p), b.input("s", random({2, 3}, 102))}));
  });
  add("im2col", [](Builder& b) {
    b.output(b.op(OpKind::Im2col, {b.input("x", random({1, 2, 4, 5}, 105))},
                  Attributes()
                      .set("kernel_size", Ints{2, 3})
                      .set("dilation", Ints{1, 1})
                      .set("padding", Ints{1, 0})
                      .set("stride", Ints{2, 1})));
  });
  add("col2im", [](Builder& b) {
    b.output(b.op(OpKind::Col2im, {b.input("x", random({2, 8, 4}, 106))},
                  Attributes()
                      .set("output_size", Ints{3, 3})
                      .set("kernel_size", Ints{2, 2})
                      .set("dilation", Ints{1, 1})
                      .set("padding", Ints{0, 0})
                      .set("stride", Ints{1, 1})));
  });
  add("copy", [](Builder& b) {
    b.output(
        b.op(OpKind::Copy, {b.input("x", random({2, 3}, 103)), b.input("s", random({3}, 104))}));
  });
  // the nn.functional pointwise surface and the products by name
  binary(OpKind::Logaddexp2, random({2, 3}, 200, -2, 2), random({3}, 201, -2, 2));
  binary(OpKind::Xlogy, random({2, 3}, 202, -2, 2), random({3}, 203, 0.5, 2));
  binary(OpKind::Copysign, random({2, 3}, 204, -2, 2), random({3}, 205, 0.5, 1) * -1.0);
  binary(OpKind::Fmax, random({2, 3}, 206, -2, 0), random({3}, 207, 0.1, 2));
  binary(OpKind::Fmin, random({2, 3}, 208, -2, 0), random({3}, 209, 0.1, 2));
  unary(OpKind::Logit, 0.1, 0.9);
  unary(OpKind::Logit, -0.5, 1.5, Attributes().set("eps", 0.2));
  unary(OpKind::NanToNum, -1, 1, Attributes().set("nan", 0.5));
  on(OpKind::Glu, random({2, 4, 3}, 210), Attributes().set("dim", 1));
  for (OpKind op : {OpKind::Lerp, OpKind::Addcmul, OpKind::Addcdiv}) {
    add(std::string(ir::op_name(op)), [op](Builder& b) {
      const Attributes attrs = op == OpKind::Lerp ? Attributes() : Attributes().set("value", -0.5);
      b.output(b.op(op,
                    {b.input("x", random({2, 3}, 211)), b.input("t1", random({3}, 212)),
                     b.input("t2", random({2, 1}, 213, 0.5, 1.5))},
                    attrs));
    });
  }
  add("prelu", [](Builder& b) {
    b.output(b.op(OpKind::Prelu,
                  {b.input("x", random({2, 3, 2}, 214)), b.param("w", random({3}, 215))}));
  });
  binary(OpKind::Dot, random({5}, 216), random({5}, 217));
  binary(OpKind::Mv, random({2, 5}, 218), random({5}, 219));
  binary(OpKind::Outer, random({3}, 220), random({4}, 221));
  unary(OpKind::Trace, -1, 1);
  add("baddbmm", [](Builder& b) {
    b.output(b.op(OpKind::Baddbmm,
                  {b.input("s", random({4}, 222)), b.input("b1", random({2, 3, 5}, 223)),
                   b.param("b2", random({2, 5, 4}, 224))},
                  Attributes().set("beta", 0.5).set("alpha", -2.0)));
  });
  on(OpKind::Logcumsumexp, random({3, 4}, 225), Attributes().set("dim", 1));
  on(OpKind::Cummax, random({3, 4}, 226), Attributes().set("dim", 0));
  on(OpKind::Cummin, random({3, 4}, 227), Attributes().set("dim", -1));
  on(OpKind::PixelShuffle, random({1, 8, 2, 3}, 228), Attributes().set("upscale_factor", 2));
  on(OpKind::PixelUnshuffle, random({1, 2, 4, 6}, 229), Attributes().set("downscale_factor", 2));
  binary(OpKind::MseLoss, random({3, 4}, 230), random({3, 4}, 231));
  binary(OpKind::L1Loss, random({3, 4}, 232), random({3, 4}, 233),
         Attributes().set("reduction", std::string("sum")));
  binary(OpKind::SmoothL1Loss, random({3, 4}, 234, -3, 3), random({3, 4}, 235),
         Attributes().set("reduction", std::string("none")).set("beta", 0.5));
  binary(OpKind::HuberLoss, random({3, 4}, 236, -3, 3), random({3, 4}, 237),
         Attributes().set("delta", 1.5));
  unary(OpKind::Lgamma, 0.2, 4.0);
  unary(OpKind::Digamma, 0.2, 4.0);
  on(OpKind::VarMean, random({3, 4}, 240), Attributes().set("dim", Ints{1}).set("correction", 0));
  on(OpKind::StdMean, random({2, 3, 2}, 241), Attributes().set("keepdim", true));
  add("nll_loss", [](Builder& b) {
    b.output(b.op(OpKind::NllLoss,
                  {b.input("x", random({4, 3}, 242)),
                   b.input("t", tensor(std::vector<std::int64_t>{2, 0, 1, 2}))},
                  Attributes().set("ignore_index", 1)));
  });
  add("cross_entropy_loss", [](Builder& b) {
    b.output(b.op(OpKind::CrossEntropyLoss,
                  {b.input("x", random({2, 3, 2}, 243)),
                   b.input("t", tensor(std::vector<std::int64_t>{2, 0, 1, 1}).reshape({2, 2}))},
                  Attributes().set("reduction", std::string("sum")).set("label_smoothing", 0.2)));
  });
  binary(OpKind::BinaryCrossEntropyWithLogits, random({3, 4}, 244, -3, 3),
         random({3, 4}, 245, 0.1, 0.9));
  binary(OpKind::KlDiv, random({3, 4}, 246, -3, 0), random({3, 4}, 247, 0.1, 0.9),
         Attributes().set("reduction", std::string("batchmean")));
  on(OpKind::AdaptiveMaxPool1d, random({2, 3, 7}, 248), Attributes().set("output_size", Ints{3}));
  on(OpKind::AdaptiveMaxPool2d, random({1, 2, 5, 6}, 249),
     Attributes().set("output_size", Ints{2, 4}));
  add("conv_transpose1d", [](Builder& b) {
    b.output(b.op(OpKind::ConvTranspose1d,
                  {b.input("x", random({2, 4, 5}, 250)), b.param("w", random({4, 3, 3}, 251)),
                   b.param("b", random({6}, 252))},
                  Attributes()
                      .set("stride", Ints{2})
                      .set("padding", Ints{1})
                      .set("output_padding", Ints{1})
                      .set("groups", 2)));
  });
  add("rms_norm", [](Builder& b) {
    b.output(b.op(OpKind::RmsNorm,
                  {b.input("x", random({2, 3, 4}, 255)), b.param("w", random({3, 4}, 256))},
                  Attributes().set("normalized_shape", Ints{3, 4})));
  });
  on(OpKind::RmsNorm, random({3, 5}, 257),
     Attributes().set("normalized_shape", Ints{5}).set("eps", 1e-3));
  add("conv_transpose2d", [](Builder& b) {
    b.output(
        b.op(OpKind::ConvTranspose2d,
             {b.input("x", random({1, 2, 3, 4}, 253)), b.param("w", random({2, 3, 2, 3}, 254))},
             Attributes()
                 .set("stride", Ints{2, 1})
                 .set("output_padding", Ints{1, 0})
                 .set("dilation", Ints{1, 2})));
  });
  add("scatter", [](Builder& b) {
    b.output(b.op(
        OpKind::Scatter,
        {b.input("x", random({3, 4}, 238)),
         b.input("i",
                 tensor(std::vector<std::int64_t>{2, 0, 1, 0, 1, 2, 0, 2}).reshape({2, 4}).clone()),
         b.input("s", random({2, 4}, 239))},
        Attributes().set("dim", 0)));
  });

  // resampling
  const Tensor x124 = random({1, 2, 4}, 76);
  on(OpKind::Interpolate, x124, Attributes().set("size", Ints{7}));
  on(OpKind::Interpolate, random({1, 2, 4, 3}, 77), Attributes().set("size", Ints{3, 5}));
  on(OpKind::Interpolate, random({1, 1, 3, 2, 2}, 78), Attributes().set("size", Ints{2, 3, 4}));
  on(OpKind::Interpolate, x124,
     Attributes().set("size", Ints{7}).set("mode", "linear").set("align_corners", true));
  on(OpKind::Interpolate, x124, Attributes().set("size", Ints{3}).set("mode", "linear"));
  on(OpKind::Interpolate, random({1, 2, 3, 4}, 79),
     Attributes().set("size", Ints{5, 3}).set("mode", "bilinear"));
  on(OpKind::Interpolate, random({1, 2, 3, 4}, 80),
     Attributes().set("size", Ints{4, 7}).set("mode", "bilinear").set("align_corners", true));

  // type conversion
  for (Dtype to : kDtypes) {
    on(OpKind::Cast, random({2, 3}, 81, -3.0, 3.0), Attributes().set("dtype", to));
    on(OpKind::Cast, random_ints({2, 3}, 82, -3, 3), Attributes().set("dtype", to));
  }
  on(OpKind::Contiguous, random({1, 3, 2, 2}, 83),
     Attributes().set("memory_format", "channels_last"));

  // Python scalars of each kind, on float and int tensors
  for (OpKind op : {OpKind::AddScalar, OpKind::SubScalar, OpKind::RsubScalar, OpKind::MulScalar,
                    OpKind::DivScalar}) {
    on(op, random({2, 3}, 84), Attributes().set("other", 0.1));
    on(op, random_ints({2, 3}, 85, -3, 3), Attributes().set("other", std::int64_t{2}));
    on(op, random_ints({2, 3}, 86, -3, 3), Attributes().set("other", 2.5));
  }
  on(OpKind::AddScalar, random({3}, 87), Attributes().set("other", true));
  on(OpKind::PowScalar, random({2, 3}, 88, 0.5, 2.0), Attributes().set("other", -1.5));
  on(OpKind::RpowScalar, random({2, 3}, 89), Attributes().set("other", std::int64_t{2}));
  return cases;
}

TEST(TorchEager, EveryOpLowersAndMatchesEngine) {
  std::set<OpKind> covered;
  for (const OpCase& c : every_op_cases()) {
    SCOPED_TRACE(c.label);
    Builder b;
    try {
      c.build(b);
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.label << ": the engine refused the case: " << e.what();
      continue;
    }
    for (const ir::Node& node : b.graph().nodes()) covered.insert(node.op);
    try {
      expect_matches_engine(b, c.label);
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.label << ": " << e.what();
    }
  }
  std::string missing;
  for (OpKind op : ir::kAllOps) {
    if (covered.count(op) == 0) missing += " " + std::string(ir::op_name(op));
  }
  EXPECT_TRUE(missing.empty()) << "ops without a case:" << missing;
}

}  // namespace
}  // namespace weft::oracle
