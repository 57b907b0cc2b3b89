// nn::Module and the first layers: registration order and names, modes, dtype conversion,
// state dicts with PyTorch's keys and messages, Linear's init, and a small training loop.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/nn/activation.h"
#include "weft/nn/container.h"
#include "weft/nn/linear.h"
#include "weft/nn/module.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft {
namespace {

using nn::Linear;
using nn::Module;
using nn::ReLU;
using nn::Sequential;

// A user model: an own parameter and buffer registered after a child, and a Sequential child.
class Net : public Module {
 public:
  Net() {
    fc = register_module("fc", std::make_shared<Linear>(2, 3));
    scale = register_parameter("scale", ones({1}));
    steps = register_buffer("steps", zeros({1}, dtype(Dtype::Int64)));
    body = register_module("body", std::make_shared<Sequential>(std::make_shared<Linear>(3, 4),
                                                                std::make_shared<ReLU>(),
                                                                std::make_shared<Linear>(4, 1)));
  }
  Tensor forward(const Tensor& x) override { return (*body)((*fc)(x)) * scale; }

  std::shared_ptr<Linear> fc;
  std::shared_ptr<Sequential> body;
  Tensor scale;
  Tensor steps;
};

template <typename T>
std::vector<std::string> names_of(const Module::NamedList<T>& list) {
  std::vector<std::string> out;
  for (const auto& item : list) out.push_back(item.first);
  return out;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(NnModule, NamesFollowPyTorchOrderOwnMembersFirstThenChildren) {
  auto net = std::make_shared<Net>();
  EXPECT_EQ(net->name(), "Net");
  EXPECT_EQ(net->fc->name(), "Linear");
  EXPECT_EQ(names_of(net->named_parameters()),
            (std::vector<std::string>{"scale", "fc.weight", "fc.bias", "body.0.weight",
                                      "body.0.bias", "body.2.weight", "body.2.bias"}));
  EXPECT_EQ(names_of(net->named_parameters(/*recurse=*/false)), std::vector<std::string>{"scale"});
  EXPECT_EQ(net->parameters().size(), 7u);
  EXPECT_TRUE(net->parameters()[1].is_same(net->fc->weight));
  EXPECT_EQ(names_of(net->named_buffers()), std::vector<std::string>{"steps"});
  EXPECT_EQ(names_of(net->named_children()), (std::vector<std::string>{"fc", "body"}));
  EXPECT_EQ(names_of(net->named_modules()),
            (std::vector<std::string>{"", "fc", "body", "body.0", "body.1", "body.2"}));
  EXPECT_EQ(net->modules().front().get(), net.get());
  for (const Tensor& p : net->parameters()) {
    EXPECT_TRUE(p.is_leaf());
    EXPECT_TRUE(p.requires_grad());
  }
}

TEST(NnModule, SharedSubmoduleParametersAreListedOnce) {
  auto lin = std::make_shared<Linear>(2, 2);
  auto seq = std::make_shared<Sequential>(lin, lin);
  EXPECT_EQ(names_of(seq->named_parameters()), (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_EQ(seq->state_dict().size(), 4u);  // state_dict keeps every path, as PyTorch
}

TEST(NnModule, RejectsBadAndDuplicateNames) {
  Module m;
  EXPECT_EQ(error_of([&] { m.register_parameter("a.b", ones({1})); }),
            "parameter name can't contain \".\", got: a.b");
  EXPECT_EQ(error_of([&] { m.register_parameter("", ones({1})); }),
            "parameter name can't be empty string \"\"");
  EXPECT_EQ(error_of([&] { m.register_buffer("x.y", ones({1})); }),
            "buffer name can't contain \".\", got: x.y");
  EXPECT_EQ(error_of([&] { m.register_module("", std::make_shared<ReLU>()); }),
            "module name can't be empty string \"\"");
  m.register_parameter("w", ones({1}));
  EXPECT_EQ(error_of([&] { m.register_buffer("w", ones({1})); }),
            "attribute 'w' already exists in Module");
  EXPECT_EQ(error_of([&] { m.register_module("w", std::make_shared<ReLU>()); }),
            "attribute 'w' already exists in Module");
  const Tensor leaf = ones({1}, TensorOptions{}.with_requires_grad());
  EXPECT_NE(error_of([&] {
              m.register_parameter("v", leaf * 2.0);
            }).find("Cannot assign non-leaf Tensor to parameter 'v'"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { m.forward(ones({1})); }), "Module Module has no single-tensor forward");
  EXPECT_EQ(names_of(m.named_parameters()), std::vector<std::string>{"w"});
}

TEST(NnModule, TrainAndEvalReachEveryDescendant) {
  auto net = std::make_shared<Net>();
  EXPECT_TRUE(net->is_training());
  net->eval();
  for (const auto& m : net->modules()) EXPECT_FALSE(m->is_training());
  net->train();
  for (const auto& m : net->modules()) EXPECT_TRUE(m->is_training());
}

TEST(NnModule, ZeroGradZeroesOrDropsGradients) {
  auto net = std::make_shared<Net>();
  net->forward(ones({5, 2})).sum().backward();
  for (const Tensor& p : net->parameters()) ASSERT_TRUE(p.grad().defined());
  net->zero_grad(/*set_to_none=*/false);
  for (const Tensor& p : net->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(abs(p.grad()).sum().item(), 0.0);
  }
  net->zero_grad();
  for (const Tensor& p : net->parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(NnModule, ApplyVisitsChildrenBeforeParent) {
  auto net = std::make_shared<Net>();
  std::vector<std::string> order;
  net->apply([&](Module& m) { order.push_back(m.name()); });
  EXPECT_EQ(order,
            (std::vector<std::string>{"Linear", "Linear", "ReLU", "Linear", "Sequential", "Net"}));
}

TEST(NnModule, ToFloat64ConvertsParametersInPlaceAndKeepsThemLeaves) {
  auto net = std::make_shared<Net>();
  const std::vector<float> before = net->fc->weight.to_vector<float>();
  Tensor handle = net->fc->weight;  // an outside handle sees the conversion too
  net->register_buffer("running", zeros({2}));
  net->to(Dtype::Float64);
  for (const Tensor& p : net->parameters()) {
    EXPECT_EQ(p.dtype(), Dtype::Float64);
    EXPECT_TRUE(p.is_leaf());
    EXPECT_TRUE(p.requires_grad());
  }
  EXPECT_EQ(handle.dtype(), Dtype::Float64);
  EXPECT_EQ(net->named_buffers()[0].second.dtype(), Dtype::Int64);  // integer buffers stay
  EXPECT_EQ(net->named_buffers()[1].second.dtype(), Dtype::Float64);
  const std::vector<double> after = net->fc->weight.to_vector<double>();
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i)
    EXPECT_EQ(after[i], static_cast<double>(before[i]));
  // Still trainable in the new dtype.
  net->forward(ones({1, 2}, dtype(Dtype::Float64))).sum().backward();
  EXPECT_EQ(net->fc->weight.grad().dtype(), Dtype::Float64);
  EXPECT_NE(error_of([&] { net->to(Dtype::Int64); }).find("only accepts floating point"),
            std::string::npos);
}

TEST(NnModule, StateDictListsParamsThenBuffersPerModuleDetached) {
  auto net = std::make_shared<Net>();
  const nn::StateDict sd = net->state_dict();
  EXPECT_EQ(sd.keys(),
            (std::vector<std::string>{"scale", "steps", "fc.weight", "fc.bias", "body.0.weight",
                                      "body.0.bias", "body.2.weight", "body.2.bias"}));
  EXPECT_TRUE(sd.contains("fc.bias"));
  EXPECT_FALSE(sd.contains("fc"));
  EXPECT_EQ(sd.find("nope"), nullptr);
  const Tensor& w = sd.at("fc.weight");
  EXPECT_FALSE(w.requires_grad());
  EXPECT_EQ(w.storage(), net->fc->weight.storage());  // a view, not a copy
}

TEST(NnModule, NonPersistentBuffersStayOutOfTheStateDict) {
  Module m;
  m.register_buffer("kept", ones({2}));
  Tensor& cache = m.register_buffer("cache", zeros({3}), /*persistent=*/false);
  EXPECT_EQ(m.state_dict().keys(), std::vector<std::string>{"kept"});
  EXPECT_EQ(m.named_buffers().size(), 2u);  // still a buffer: moves with to(), listed
  m.to(Dtype::Float64);
  EXPECT_EQ(cache.dtype(), Dtype::Float64);
  nn::StateDict only_kept;
  only_kept.insert("kept", full({2}, 5.0));
  EXPECT_NO_THROW(m.load_state_dict(only_kept));  // strict: the cache is not expected
  only_kept.insert("cache", ones({3}));
  EXPECT_THROW(m.load_state_dict(only_kept), Error);  // ... nor accepted
}

TEST(NnModule, LoadStateDictReportsMissingUnexpectedAndSizeMismatch) {
  auto lin = std::make_shared<Linear>(2, 4);
  nn::StateDict sd;
  sd.insert("weight", zeros({3, 2}));
  sd.insert("extra", zeros({1}));
  EXPECT_EQ(error_of([&] { lin->load_state_dict(sd); }),
            "Error(s) in loading state_dict for Linear:\n"
            "\tMissing key(s) in state_dict: \"bias\". \n"
            "\tUnexpected key(s) in state_dict: \"extra\". \n"
            "\tsize mismatch for weight: copying a param with shape [3, 2] from checkpoint, the "
            "shape in current model is [4, 2].");
  // Not strict: key problems are returned, but a size mismatch is still an error.
  EXPECT_EQ(error_of([&] { lin->load_state_dict(sd, /*strict=*/false); }),
            "Error(s) in loading state_dict for Linear:\n"
            "\tsize mismatch for weight: copying a param with shape [3, 2] from checkpoint, the "
            "shape in current model is [4, 2].");
  nn::StateDict partial;
  partial.insert("weight", ones({4, 2}));
  partial.insert("extra", zeros({1}));
  const nn::LoadStateDictResult r = lin->load_state_dict(partial, /*strict=*/false);
  EXPECT_EQ(r.missing_keys, std::vector<std::string>{"bias"});
  EXPECT_EQ(r.unexpected_keys, std::vector<std::string>{"extra"});
  EXPECT_EQ(lin->weight.sum().item(), 8.0);
}

TEST(NnModule, StateDictRoundTripReproducesOutputs) {
  manual_seed(1);
  auto a = std::make_shared<Net>();
  auto b = std::make_shared<Net>();
  const Tensor x = randn({3, 2});
  ASSERT_NE(a->forward(x).to_vector<float>(), b->forward(x).to_vector<float>());
  a->steps.fill_(7);
  b->load_state_dict(a->state_dict());
  EXPECT_EQ(a->forward(x).to_vector<float>(), b->forward(x).to_vector<float>());
  EXPECT_EQ(b->steps.item(), 7.0);
  for (const Tensor& p : b->parameters()) {
    EXPECT_TRUE(p.is_leaf());
    EXPECT_TRUE(p.requires_grad());
  }
  // Loading copies values: later changes to `a` do not reach `b`.
  {
    autograd::NoGradGuard no_grad;
    a->fc->weight.fill_(0.0);
  }
  EXPECT_NE(b->fc->weight.abs().sum().item(), 0.0);
}

TEST(NnModule, LinearInitStaysWithinPyTorchBoundsAndComputesXWtPlusB) {
  manual_seed(0);
  Linear lin(16, 8);
  EXPECT_EQ(lin.weight.sizes(), (Shape{8, 16}));
  EXPECT_EQ(lin.bias.sizes(), (Shape{8}));
  const double bound = 0.25;  // 1 / sqrt(16)
  for (const Tensor& p : {lin.weight, lin.bias}) {
    EXPECT_LE(max(p).item(), bound);
    EXPECT_GE(min(p).item(), -bound);
    EXPECT_GT(max(p).item() - min(p).item(), bound / 2);  // actually spread out
  }
  Linear small(2, 3);
  {
    autograd::NoGradGuard no_grad;
    small.weight.copy_(tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2}));
    small.bias.copy_(tensor(std::vector<float>{0.5f, -1, 2}));
  }
  const Tensor x = tensor(std::vector<float>{1, -1, 2, 0.5f}, {2, 2});
  EXPECT_EQ(small(x).to_vector<float>(), (std::vector<float>{1 - 2 + 0.5f, 3 - 4 - 1, 5 - 6 + 2,
                                                             2 + 1 + 0.5f, 6 + 2 - 1, 10 + 3 + 2}));
  Linear no_bias(3, 2, /*bias=*/false);
  EXPECT_FALSE(no_bias.bias.defined());
  EXPECT_EQ(no_bias.state_dict().keys(), std::vector<std::string>{"weight"});
}

TEST(NnModule, SequentialIndexesAndChainsItsChildren) {
  auto seq = std::make_shared<Sequential>();
  EXPECT_EQ(seq->forward(ones({2})).to_vector<float>(), (std::vector<float>{1, 1}));
  seq->push_back(std::make_shared<nn::Tanh>());
  seq->push_back(std::make_shared<nn::Sigmoid>());
  EXPECT_EQ(seq->size(), 2u);
  EXPECT_EQ((*seq)[-1]->name(), "Sigmoid");
  EXPECT_EQ(names_of(seq->named_children()), (std::vector<std::string>{"0", "1"}));
  EXPECT_NE(error_of([&] { (*seq)[2]; }).find("index 2 is out of range"), std::string::npos);
  const Tensor x = tensor(std::vector<float>{-1, 0, 2});
  EXPECT_EQ((*seq)(x).to_vector<float>(), sigmoid(tanh(x)).to_vector<float>());
}

TEST(NnModule, HandWrittenSgdOnSequentialDecreasesMseLoss) {
  manual_seed(0);
  auto model =
      std::make_shared<Sequential>(std::make_shared<Linear>(1, 16), std::make_shared<nn::Tanh>(),
                                   std::make_shared<Linear>(16, 1));
  const Tensor x = linspace(-1, 1, 32).reshape({32, 1});
  const Tensor y = x * x;
  const auto loss_fn = [&] { return ((*model)(x)-y).pow(2.0).mean(); };
  const double initial = loss_fn().item();
  const double lr = 0.2;
  for (int step = 0; step < 300; ++step) {
    model->zero_grad();
    loss_fn().backward();
    autograd::NoGradGuard no_grad;
    for (Tensor& p : model->parameters()) p.add_(p.grad(), -lr);
  }
  const double final_loss = loss_fn().item();
  EXPECT_LT(final_loss, initial * 0.2) << "initial " << initial << ", final " << final_loss;
}

}  // namespace
}  // namespace weft
