// weft's losses against torch::nn::functional's (LibTorch 1.13): for each loss and option
// combination, the forward value and the input gradient of a random-weighted sum of the output
// agree within 1e-10 in float64 and 1e-5 in float32.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "weft/autograd.h"
#include "weft/nn/functional.h"
#include "weft/nn/loss.h"
#include "weft/ops.h"

namespace weft {
namespace {

namespace F = nn::functional;
namespace TF = torch::nn::functional;
using nn::Reduction;

// Values in [lo, hi) from a fixed sine pattern: identical on both sides, no RNG involved.
std::vector<double> pattern(std::int64_t n, double seed, double lo, double hi) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < n; ++i) {
    const double u = 0.5 + 0.5 * std::sin(seed + 2.3 * static_cast<double>(i) + 0.1 * i * i);
    out.push_back(lo + (hi - lo) * u);
  }
  return out;
}

// A float tensor given once as values, built on both sides in the dtype under test.
struct Data {
  std::vector<double> values;
  std::vector<std::int64_t> shape;
  Tensor weft(Dtype dt) const { return tensor(values, shape).reshape(shape).to(dt); }
  torch::Tensor torch(Dtype dt) const {
    return torch::tensor(values, torch::kFloat64)
        .reshape(shape)
        .to(dt == Dtype::Float64 ? torch::kFloat64 : torch::kFloat32);
  }
};

Data make(std::vector<std::int64_t> shape, double seed, double lo = -2, double hi = 2) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return {pattern(n, seed, lo, hi), shape};
}

struct Longs {
  std::vector<std::int64_t> values;
  std::vector<std::int64_t> shape;
  Tensor weft() const { return tensor(values, shape).reshape(shape); }
  torch::Tensor torch() const { return torch::tensor(values, torch::kInt64).reshape(shape); }
};

template <typename Options>
Options with_reduction(Options options, Reduction r) {
  switch (r) {
    case Reduction::None:
      options.reduction(torch::kNone);
      break;
    case Reduction::Sum:
      options.reduction(torch::kSum);
      break;
    case Reduction::Mean:
      options.reduction(torch::kMean);
      break;
  }
  return options;
}

using WeftLoss = std::function<Tensor(const Tensor& input, Dtype dt)>;
using TorchLoss = std::function<torch::Tensor(const torch::Tensor& input, Dtype dt)>;

void expect_close(const std::vector<double>& got, const torch::Tensor& want, double tol,
                  const std::string& what) {
  const torch::Tensor w = want.to(torch::kFloat64).contiguous().flatten();
  ASSERT_EQ(static_cast<std::int64_t>(got.size()), w.numel()) << what;
  const double* p = w.data_ptr<double>();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(p[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i;
      continue;
    }
    EXPECT_NEAR(got[i], p[i], tol * (1 + std::fabs(p[i]))) << what << " element " << i;
  }
}

// Runs both losses on `input` in float64 and float32; compares outputs and d(Σ r·out)/d input.
void expect_matches_torch(const std::string& name, const Data& input, const WeftLoss& weft_loss,
                          const TorchLoss& torch_loss) {
  for (Dtype dt : {Dtype::Float64, Dtype::Float32}) {
    SCOPED_TRACE(name + (dt == Dtype::Float64 ? " float64" : " float32"));
    const double tol = dt == Dtype::Float64 ? 1e-10 : 1e-5;
    Tensor x = input.weft(dt).requires_grad_();
    torch::Tensor tx = input.torch(dt).requires_grad_();
    const Tensor out = weft_loss(x, dt);
    const torch::Tensor tout = torch_loss(tx, dt);
    ASSERT_EQ(out.sizes(), Shape(tout.sizes().begin(), tout.sizes().end()));
    expect_close(out.to_vector<double>(), tout.detach(), tol, "value");
    std::vector<std::int64_t> oshape(out.sizes().begin(), out.sizes().end());
    const Data r = make(oshape, 7.7, 0.5, 1.5);
    sum(out * r.weft(dt)).backward();
    (tout * r.torch(dt)).sum().backward();
    expect_close(x.grad().to_vector<double>(), tx.grad(), tol, "grad");
  }
}

const Reduction kReductions[] = {Reduction::None, Reduction::Mean, Reduction::Sum};

TEST(LossVsTorch, RegressionLosses) {
  const Data x = make({3, 5}, 0.4), y = make({3, 5}, 1.9);
  for (Reduction r : kReductions) {
    const std::string tag = " r" + std::to_string(static_cast<int>(r));
    expect_matches_torch(
        "mse" + tag, x, [&](const Tensor& in, Dtype dt) { return F::mse_loss(in, y.weft(dt), r); },
        [&](const torch::Tensor& in, Dtype dt) {
          return TF::mse_loss(in, y.torch(dt), with_reduction(TF::MSELossFuncOptions(), r));
        });
    expect_matches_torch(
        "l1" + tag, x, [&](const Tensor& in, Dtype dt) { return F::l1_loss(in, y.weft(dt), r); },
        [&](const torch::Tensor& in, Dtype dt) {
          return TF::l1_loss(in, y.torch(dt), with_reduction(TF::L1LossFuncOptions(), r));
        });
    for (double beta : {1.0, 0.5}) {
      expect_matches_torch(
          "smooth_l1" + tag + " beta " + std::to_string(beta), x,
          [&](const Tensor& in, Dtype dt) { return F::smooth_l1_loss(in, y.weft(dt), r, beta); },
          [&](const torch::Tensor& in, Dtype dt) {
            return TF::smooth_l1_loss(in, y.torch(dt),
                                      with_reduction(TF::SmoothL1LossFuncOptions(), r), beta);
          });
    }
  }
}

TEST(LossVsTorch, NllLoss) {
  const Data x = make({5, 4}, 0.9);
  const Data w = make({4}, 3.3, 0.3, 2.0);
  const Longs t{{3, 0, -100, 1, 3}, {5}};
  const Longs t_ignore1{{1, 0, 2, 1, 3}, {5}};
  for (Reduction r : kReductions) {
    for (bool weighted : {false, true}) {
      for (std::int64_t ignore : {std::int64_t{-100}, std::int64_t{1}}) {
        const Longs& tt = ignore == 1 ? t_ignore1 : t;
        expect_matches_torch(
            "nll r" + std::to_string(static_cast<int>(r)) + (weighted ? " w" : "") + " ignore " +
                std::to_string(ignore),
            x,
            [&](const Tensor& in, Dtype dt) {
              return F::nll_loss(in, tt.weft(), weighted ? w.weft(dt) : Tensor(), ignore, r);
            },
            [&](const torch::Tensor& in, Dtype dt) {
              auto o = with_reduction(TF::NLLLossFuncOptions().ignore_index(ignore), r);
              if (weighted) o.weight(w.torch(dt));
              return TF::nll_loss(in, tt.torch(), o);
            });
      }
    }
  }
  // No batch dim.
  expect_matches_torch(
      "nll 1-d", make({4}, 2.0),
      [&](const Tensor& in, Dtype dt) {
        return F::nll_loss(in, Longs{{2}, {}}.weft(), w.weft(dt), -100, Reduction::Mean);
      },
      [&](const torch::Tensor& in, Dtype dt) {
        // torch's C++ functional rejects 1-d inputs; ATen's nll_loss_nd is what Python calls.
        return torch::nll_loss_nd(in, Longs{{2}, {}}.torch(), w.torch(dt), at::Reduction::Mean,
                                  -100);
      });
}

void check_cross_entropy_indices(const std::string& name, const Data& x, const Longs& t,
                                 const Data& w) {
  for (Reduction r : kReductions) {
    for (bool weighted : {false, true}) {
      for (double ls : {0.0, 0.1}) {
        expect_matches_torch(
            name + " r" + std::to_string(static_cast<int>(r)) + (weighted ? " w" : "") + " ls " +
                std::to_string(ls),
            x,
            [&](const Tensor& in, Dtype dt) {
              return F::cross_entropy(in, t.weft(), weighted ? w.weft(dt) : Tensor(), -100, r, ls);
            },
            [&](const torch::Tensor& in, Dtype dt) {
              auto o = with_reduction(TF::CrossEntropyFuncOptions().label_smoothing(ls), r);
              if (weighted) o.weight(w.torch(dt));
              return TF::cross_entropy(in, t.torch(), o);
            });
      }
    }
  }
}

TEST(LossVsTorch, CrossEntropyClassIndices) {
  const Data w = make({3}, 3.3, 0.3, 2.0);
  check_cross_entropy_indices("ce 2-d", make({6, 3}, 0.2, -3, 3), {{0, 2, -100, 1, 2, -100}, {6}},
                              w);
  check_cross_entropy_indices("ce 4-d", make({2, 3, 2, 2}, 1.2, -3, 3),
                              {{0, 2, -100, 1, 1, 0, 2, -100}, {2, 2, 2}}, w);
  check_cross_entropy_indices("ce 1-d", make({3}, 5.0), {{1}, {}}, w);
  // Every target ignored: the mean is 0/0, NaN in both.
  check_cross_entropy_indices("ce all ignored", make({2, 3}, 0.2), {{-100, -100}, {2}}, w);
}

TEST(LossVsTorch, CrossEntropyProbabilityTargets) {
  const Data w = make({3}, 3.3, 0.3, 2.0);
  for (const auto& shape : {std::vector<std::int64_t>{4, 3}, std::vector<std::int64_t>{2, 3, 2, 2},
                            std::vector<std::int64_t>{3}}) {
    const Data x = make(shape, 0.6, -3, 3);
    const Data p = make(shape, 2.6, 0, 1);  // not normalized: torch does not require it
    for (Reduction r : kReductions) {
      for (bool weighted : {false, true}) {
        for (double ls : {0.0, 0.1}) {
          expect_matches_torch(
              "ce probs rank " + std::to_string(shape.size()) + " r" +
                  std::to_string(static_cast<int>(r)) + (weighted ? " w" : "") + " ls " +
                  std::to_string(ls),
              x,
              [&](const Tensor& in, Dtype dt) {
                return F::cross_entropy(in, p.weft(dt), weighted ? w.weft(dt) : Tensor(), -100, r,
                                        ls);
              },
              [&](const torch::Tensor& in, Dtype dt) {
                auto o = with_reduction(TF::CrossEntropyFuncOptions().label_smoothing(ls), r);
                if (weighted) o.weight(w.torch(dt));
                return TF::cross_entropy(in, p.torch(dt), o);
              });
        }
      }
    }
  }
}

TEST(LossVsTorch, BinaryCrossEntropy) {
  const Data x = make({4, 3}, 0.3, 0.02, 0.98), t = make({4, 3}, 1.7, 0, 1);
  const Data w = make({3}, 2.2, 0.5, 1.5);
  for (Reduction r : kReductions) {
    for (bool weighted : {false, true}) {
      expect_matches_torch(
          "bce r" + std::to_string(static_cast<int>(r)) + (weighted ? " w" : ""), x,
          [&](const Tensor& in, Dtype dt) {
            return F::binary_cross_entropy(in, t.weft(dt), weighted ? w.weft(dt) : Tensor(), r);
          },
          [&](const torch::Tensor& in, Dtype dt) {
            auto o = with_reduction(TF::BinaryCrossEntropyFuncOptions(), r);
            if (weighted) o.weight(w.torch(dt));
            return TF::binary_cross_entropy(in, t.torch(dt), o);
          });
    }
  }
  // Inputs at exactly 0 and 1: the clamped logs give the same values (gradients differ there).
  const Data edge{{0.0, 1.0, 0.5}, {3}}, et{{1.0, 0.0, 0.3}, {3}};
  const torch::Tensor want =
      TF::binary_cross_entropy(edge.torch(Dtype::Float64), et.torch(Dtype::Float64),
                               TF::BinaryCrossEntropyFuncOptions().reduction(torch::kNone));
  expect_close(F::binary_cross_entropy(edge.weft(Dtype::Float64), et.weft(Dtype::Float64), Tensor(),
                                       Reduction::None)
                   .to_vector<double>(),
               want, 1e-12, "bce at 0 and 1");
}

TEST(LossVsTorch, BinaryCrossEntropyWithLogits) {
  const Data x = make({4, 3}, 0.3, -30, 30), t = make({4, 3}, 1.7, 0, 1);
  const Data w = make({3}, 2.2, 0.5, 1.5), pw = make({3}, 4.1, 0.2, 3.0);
  for (Reduction r : kReductions) {
    for (bool weighted : {false, true}) {
      for (bool positive : {false, true}) {
        expect_matches_torch(
            "bce logits r" + std::to_string(static_cast<int>(r)) + (weighted ? " w" : "") +
                (positive ? " pos_weight" : ""),
            x,
            [&](const Tensor& in, Dtype dt) {
              return F::binary_cross_entropy_with_logits(in, t.weft(dt),
                                                         weighted ? w.weft(dt) : Tensor(),
                                                         positive ? pw.weft(dt) : Tensor(), r);
            },
            [&](const torch::Tensor& in, Dtype dt) {
              auto o = with_reduction(TF::BinaryCrossEntropyWithLogitsFuncOptions(), r);
              if (weighted) o.weight(w.torch(dt));
              if (positive) o.pos_weight(pw.torch(dt));
              return TF::binary_cross_entropy_with_logits(in, t.torch(dt), o);
            });
      }
    }
  }
}

TEST(LossVsTorch, ModulesMatchFunctional) {
  const Data x = make({6, 3}, 0.2, -3, 3), w = make({3}, 3.3, 0.3, 2.0);
  const Longs t{{0, 2, -100, 1, 2, 1}, {6}};
  nn::CrossEntropyLoss module({w.weft(Dtype::Float64), -100, Reduction::Mean, 0.1});
  const torch::Tensor want = TF::cross_entropy(
      x.torch(Dtype::Float64), t.torch(),
      TF::CrossEntropyFuncOptions().weight(w.torch(Dtype::Float64)).label_smoothing(0.1));
  EXPECT_NEAR(module(x.weft(Dtype::Float64), t.weft()).item(), want.item<double>(), 1e-12);
}

}  // namespace
}  // namespace weft
