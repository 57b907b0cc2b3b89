// In-place ops through views against LibTorch: the same program, written with in-place calls on
// slices, selects, transposes and views of views of a non-leaf, gives the same values and the
// same gradients in the engine and in LibTorch (float64, so the two agree to rounding), and
// both refuse the same programs (a view of a leaf that requires grad; a saved value
// overwritten, at backward).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {
namespace {

std::vector<double> pattern(std::int64_t n, double seed) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < n; ++i) {
    out.push_back(
        std::sin(seed + 1.7 * static_cast<double>(i) + 0.13 * static_cast<double>(i * i)));
  }
  return out;
}

std::vector<double> from_torch(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kDouble).contiguous().reshape(-1);
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

void expect_close(const std::vector<double>& engine, const std::vector<double>& torch_values,
                  const std::string& what) {
  ASSERT_EQ(engine.size(), torch_values.size()) << what;
  for (std::size_t i = 0; i < engine.size(); ++i) {
    EXPECT_NEAR(engine[i], torch_values[i], 1e-12 * (1 + std::abs(torch_values[i])))
        << what << " element " << i;
  }
}

// One program, written once per library: x [4, 5] and y [5] require grad; `body` mutates the
// non-leaf b through views and returns the loss.
struct Program {
  std::string name;
  std::function<Tensor(Tensor& b, const Tensor& y)> engine;
  std::function<torch::Tensor(torch::Tensor& b, const torch::Tensor& y)> torch;
};

void expect_same_program(const Program& p) {
  SCOPED_TRACE(p.name);
  const std::vector<double> xs = pattern(20, 0.3);
  const std::vector<double> ys = pattern(5, 1.9);
  Tensor x = tensor(xs, {4, 5});
  x.requires_grad_();
  Tensor y = tensor(ys, {5});
  y.requires_grad_();
  Tensor b = mul(x, wrapped_scalar(1.5));
  const Tensor loss = p.engine(b, y);
  loss.backward();

  torch::Tensor tx = torch::tensor(xs, torch::kDouble).reshape({4, 5}).requires_grad_();
  torch::Tensor ty = torch::tensor(ys, torch::kDouble).requires_grad_();
  torch::Tensor tb = tx * 1.5;
  const torch::Tensor tloss = p.torch(tb, ty);
  tloss.backward();

  expect_close(b.to_vector<double>(), from_torch(tb), "b after the writes");
  expect_close({loss.item()}, {tloss.item<double>()}, "loss");
  expect_close(x.grad().to_vector<double>(), from_torch(tx.grad()), "x.grad");
  if (ty.grad().defined()) {
    ASSERT_TRUE(y.grad().defined());
    expect_close(y.grad().to_vector<double>(), from_torch(ty.grad()), "y.grad");
  }
}

const Tensor& weights() {
  static const Tensor w = tensor(pattern(20, 4.1), {4, 5});
  return w;
}
torch::Tensor torch_weights() {
  return torch::tensor(pattern(20, 4.1), torch::kDouble).reshape({4, 5});
}

TEST(InplaceVsTorch, ProgramsWithWritesThroughViewsAgree) {
  const std::vector<Program> programs{
      {"relu_ on a row slice",
       [](Tensor& b, const Tensor&) {
         slice(b, 0, 1, 3).relu_();
         return sum(mul(b, weights()));
       },
       [](torch::Tensor& b, const torch::Tensor&) {
         b.slice(0, 1, 3).relu_();
         return (b * torch_weights()).sum();
       }},
      {"mul_ by y on a column select, then sigmoid_ on a stepped slice",
       [](Tensor& b, const Tensor& y) {
         select(b, 1, 2).mul_(slice(y, 0, 0, 4));
         slice(b, 1, 0, 5, 2).sigmoid_();
         return sum(mul(b, weights()));
       },
       [](torch::Tensor& b, const torch::Tensor& y) {
         b.select(1, 2).mul_(y.slice(0, 0, 4));
         b.slice(1, 0, 5, 2).sigmoid_();
         return (b * torch_weights()).sum();
       }},
      {"copy_ of y into a row of the transpose, read through an earlier view",
       [](Tensor& b, const Tensor& y) {
         const Tensor first_row = select(b, 0, 0);  // taken before the write
         Tensor t = b.transpose(0, 1);
         select(t, 1, 0).copy_(mul(y, y));  // b[0, :] = y * y
         return add(sum(mul(first_row, first_row)), sum(mul(b, weights())));
       },
       [](torch::Tensor& b, const torch::Tensor& y) {
         const torch::Tensor first_row = b.select(0, 0);
         torch::Tensor t = b.transpose(0, 1);
         t.select(1, 0).copy_(y * y);
         return (first_row * first_row).sum() + (b * torch_weights()).sum();
       }},
      {"add_, masked_fill_ and tanh_ on a view of a view",
       [](Tensor& b, const Tensor& y) {
         Tensor inner = slice(slice(b, 0, 1, 4), 1, 1, 4);  // b[1:4, 1:4]
         inner.add_(slice(y, 0, 0, 3), 0.5);
         inner.masked_fill_(gt(inner, wrapped_scalar(0.8)), -1.0);
         select(inner, 0, 1).tanh_();
         return sum(mul(b, weights()));
       },
       [](torch::Tensor& b, const torch::Tensor& y) {
         torch::Tensor inner = b.slice(0, 1, 4).slice(1, 1, 4);
         inner.add_(y.slice(0, 0, 3), 0.5);
         inner.masked_fill_(inner > 0.8, -1.0);
         inner.select(0, 1).tanh_();
         return (b * torch_weights()).sum();
       }},
  };
  for (const Program& p : programs) expect_same_program(p);
}

TEST(InplaceVsTorch, BothRefuseTheSamePrograms) {
  // A view of a leaf that requires grad.
  Tensor x = tensor(pattern(6, 0.1), {2, 3});
  x.requires_grad_();
  torch::Tensor tx = torch::tensor(pattern(6, 0.1), torch::kDouble).reshape({2, 3});
  tx.requires_grad_();
  EXPECT_THROW(select(x, 0, 1).relu_(), Error);
  EXPECT_THROW(tx.select(0, 1).relu_(), c10::Error);
  // exp saves its output: overwriting part of it fails when the backward needs it.
  Tensor e = exp(x);
  slice(e, 1, 0, 2).mul_(2.0);
  EXPECT_THROW(sum(e).backward(), Error);
  torch::Tensor te = tx.exp();
  te.slice(1, 0, 2).mul_(2.0);
  EXPECT_THROW(te.sum().backward(), c10::Error);
}

}  // namespace
}  // namespace weft
