// float16 and bfloat16 in the engine: stored in 16 bits and rounded to nearest even as c10
// rounds, promoted as torch.promote_types / result_type do, computed in float32 with one
// rounding per op (sums accumulate in float32), differentiated with 16-bit gradients, saved
// as safetensors F16 / BF16, and carried through graph.json and the IR interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "expect_error.h"
#include "weft/error.h"
#include "weft/io/safetensors.h"
#include "weft/io/tensor_bytes.h"
#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/ir/graph_json.h"
#include "weft/ir/validate.h"
#include "weft/ops.h"

namespace weft {
namespace {

// The value `v` takes when stored in `dtype`, read back as a double.
double stored(double v, Dtype dtype) {
  return tensor(std::vector<double>{v}).to(dtype).item();
}

TEST(HalfPrecision, Float16RoundsToNearestEvenAndOverflowsAsC10) {
  const double ulp = std::ldexp(1.0, -10);                          // spacing of float16 at 1
  EXPECT_EQ(stored(1 + ulp / 2, Dtype::Float16), 1.0);              // tie: to even
  EXPECT_EQ(stored(1 + 3 * ulp / 2, Dtype::Float16), 1 + 2 * ulp);  // tie: to even
  EXPECT_EQ(stored(1 + ulp / 2 + 1e-6, Dtype::Float16), 1 + ulp);   // above the tie
  EXPECT_EQ(stored(65504, Dtype::Float16), 65504.0);                // finfo.max
  EXPECT_EQ(stored(65519, Dtype::Float16), 65504.0);                // below the halfway point
  EXPECT_TRUE(std::isinf(stored(65520, Dtype::Float16)));           // halfway to 2^16: inf
  EXPECT_EQ(stored(std::ldexp(1.0, -24), Dtype::Float16), std::ldexp(1.0, -24));  // subnormal
  EXPECT_EQ(stored(std::ldexp(1.0, -25), Dtype::Float16), 0.0);  // tie with 0: to even
  EXPECT_TRUE(std::isnan(stored(std::nan(""), Dtype::Float16)));
  // c10 converts a double through float32: 1 + ulp/2 + 2^-40 becomes the tie 1 + ulp/2 first.
  EXPECT_EQ(stored(1 + ulp / 2 + std::ldexp(1.0, -40), Dtype::Float16), 1.0);
}

TEST(HalfPrecision, BFloat16RoundsToNearestEven) {
  const double ulp = std::ldexp(1.0, -7);  // spacing of bfloat16 at 1
  EXPECT_EQ(stored(1 + ulp / 2, Dtype::BFloat16), 1.0);
  EXPECT_EQ(stored(1 + 3 * ulp / 2, Dtype::BFloat16), 1 + 2 * ulp);
  EXPECT_EQ(stored(3.0e38, Dtype::BFloat16), 3.00405527047391e38);  // its own range: float32's
  EXPECT_TRUE(std::isnan(stored(std::nan(""), Dtype::BFloat16)));
  // To an integer through float32, as c10 does.
  EXPECT_EQ(tensor(std::vector<double>{-2.75}).to(Dtype::BFloat16).to(Dtype::Int64).item(), -2.0);
}

TEST(HalfPrecision, DtypeNamesEpsilonsAndPromotion) {
  EXPECT_STREQ(dtype_name(Dtype::Float16), "float16");
  EXPECT_STREQ(dtype_name(Dtype::BFloat16), "bfloat16");
  EXPECT_EQ(dtype_from_name("half"), Dtype::Float16);
  EXPECT_EQ(dtype_from_safetensors_name("BF16"), Dtype::BFloat16);
  EXPECT_EQ(itemsize(Dtype::Float16), 2u);
  EXPECT_DOUBLE_EQ(dtype_epsilon(Dtype::Float16), 0.0009765625);  // torch.finfo(float16).eps
  EXPECT_DOUBLE_EQ(dtype_epsilon(Dtype::BFloat16), 0.0078125);    // torch.finfo(bfloat16).eps
  EXPECT_TRUE(is_floating(Dtype::BFloat16));
  EXPECT_EQ(promote_types(Dtype::Float16, Dtype::BFloat16), Dtype::Float32);
  EXPECT_EQ(promote_types(Dtype::Int64, Dtype::Float16), Dtype::Float16);
  EXPECT_EQ(promote_types(Dtype::BFloat16, Dtype::Float64), Dtype::Float64);
  const Tensor h = ones({2}, dtype(Dtype::Float16));
  const Tensor b = ones({2}, dtype(Dtype::BFloat16));
  EXPECT_EQ(mul(h, wrapped_scalar(2.5)).dtype(), Dtype::Float16);  // x * 2.5
  EXPECT_EQ(add(h, b).dtype(), Dtype::Float32);
  EXPECT_EQ(add(h, ones({2}, dtype(Dtype::Float32))).dtype(), Dtype::Float32);
  EXPECT_EQ(add(h, ones({}, dtype(Dtype::Float64))).dtype(), Dtype::Float16);  // zero-dim
  EXPECT_EQ(add(ones({2}, dtype(Dtype::Int64)), b).dtype(), Dtype::BFloat16);
  EXPECT_EQ(gt(h, wrapped_scalar(0.5)).dtype(), Dtype::Bool);
  EXPECT_EQ(argmax(h).dtype(), Dtype::Int64);
}

TEST(HalfPrecision, EachOpComputesInFloat32AndRoundsOnce) {
  const Tensor x = tensor(std::vector<double>{0.1, -1.7, 3.3, 9.9, -0.01}).to(Dtype::Float16);
  const Tensor y = tensor(std::vector<double>{2.2, 0.3, -4.1, 1e-3, 7.5}).to(Dtype::Float16);
  const Tensor xf = x.to(Dtype::Float32);
  const Tensor yf = y.to(Dtype::Float32);
  auto expect_same = [](const Tensor& got, const Tensor& want) {
    ASSERT_EQ(got.dtype(), want.dtype());
    EXPECT_EQ(got.to_vector<double>(), want.to_vector<double>());
  };
  expect_same(exp(x), exp(xf).to(Dtype::Float16));
  expect_same(sigmoid(x), sigmoid(xf).to(Dtype::Float16));
  expect_same(div(x, y), div(xf, yf).to(Dtype::Float16));
  // x * y + 1 as one op each: two roundings, one per op.
  expect_same(add(mul(x, y), wrapped_scalar(1.0)),
              add(mul(xf, yf).to(Dtype::Float16).to(Dtype::Float32), wrapped_scalar(1.0))
                  .to(Dtype::Float16));
  expect_same(softmax(x, 0), softmax(xf, 0).to(Dtype::Float16));
  const Tensor xb = x.to(Dtype::BFloat16);
  expect_same(tanh(xb), tanh(xb.to(Dtype::Float32)).to(Dtype::BFloat16));
}

TEST(HalfPrecision, SumsAccumulateInFloat32) {
  // 3000 ones: a float16 accumulator would stop at 2048 (2048 + 1 rounds back to 2048).
  EXPECT_EQ(sum(ones({3000}, dtype(Dtype::Float16))).item(), 3000.0);
  EXPECT_EQ(sum(ones({3000}, dtype(Dtype::Float16))).dtype(), Dtype::Float16);
  const Tensor a = ones({4, 3000}, dtype(Dtype::BFloat16));
  const Tensor b = ones({3000, 2}, dtype(Dtype::BFloat16));
  const Tensor product = matmul(a, b);
  EXPECT_EQ(product.dtype(), Dtype::BFloat16);
  EXPECT_EQ(product.to_vector<double>(),
            std::vector<double>(8, 3008.0));  // 3000 in bfloat16 (tie: to even)
}

TEST(HalfPrecision, MixedOperandsOfMatmulAreRefusedAsPyTorchRefusesThem) {
  const Tensor h = ones({2, 2}, dtype(Dtype::Float16));
  const Tensor f = ones({2, 2}, dtype(Dtype::Float32));
  testing::expect_error([&] { mm(h, f); },
                        "expected m1 and m2 to have the same dtype, but got: c10::Half != float");
}

TEST(HalfPrecision, GradientsAreStoredInTheLeafsType) {
  Tensor x = tensor(std::vector<double>{0.3, -1.25, 2.0}).to(Dtype::Float16);
  x.requires_grad_();
  Tensor loss = sum(mul(x, x));
  EXPECT_EQ(loss.dtype(), Dtype::Float16);
  loss.backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().dtype(), Dtype::Float16);
  const std::vector<double> values = x.to_vector<double>();
  const std::vector<double> grad = x.grad().to_vector<double>();
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(grad[i], stored(2 * values[i], Dtype::Float16));
  // A bfloat16 weight of a linear layer, float32 inside.
  Tensor w = full({2, 3}, 0.5, dtype(Dtype::BFloat16));
  w.requires_grad_();
  sum(linear(ones({4, 3}, dtype(Dtype::BFloat16)), w)).backward();
  EXPECT_EQ(w.grad().dtype(), Dtype::BFloat16);
  EXPECT_EQ(w.grad().to_vector<double>(), std::vector<double>(6, 4.0));
}

TEST(HalfPrecision, ViewsOfHalfTensorsShareStorage) {
  const Tensor x = arange(6.0, Dtype::Float16).reshape({2, 3});
  EXPECT_EQ(x.dtype(), Dtype::Float16);
  const Tensor t = x.transpose(0, 1);
  EXPECT_EQ(t.storage(), x.storage());
  EXPECT_EQ(t.dtype(), Dtype::Float16);
  EXPECT_EQ(t.contiguous().to_vector<double>(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(cat({x, x}, 0).dtype(), Dtype::Float16);
}

TEST(HalfPrecision, BatchNormUpdatesHalfRunningStatistics) {
  const Tensor x = tensor(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}).to(Dtype::Float16);
  Tensor running_mean = zeros({2}, dtype(Dtype::Float16));
  Tensor running_var = ones({2}, dtype(Dtype::Float16));
  const Tensor y = batch_norm(x, running_mean, running_var, Tensor(), Tensor(), true, 0.5);
  EXPECT_EQ(y.dtype(), Dtype::Float16);
  EXPECT_EQ(running_mean.to_vector<double>(), (std::vector<double>{2.0, 2.5}));  // 0.5 * mean
}

TEST(HalfPrecision, SafetensorsStoresF16AndBF16Bytes) {
  const Tensor h = tensor(std::vector<double>{1.0, -2.5, 65504}).to(Dtype::Float16);
  const Tensor b = tensor(std::vector<double>{1.0, -2.5, 1e30}).to(Dtype::BFloat16);
  io::SafetensorsFile file;
  file.tensors.emplace_back("h", io::to_bytes(h));
  file.tensors.emplace_back("b", io::to_bytes(b));
  const std::string bytes = io::serialize_safetensors(file);
  EXPECT_NE(bytes.find("\"dtype\":\"F16\""), std::string::npos);
  EXPECT_NE(bytes.find("\"dtype\":\"BF16\""), std::string::npos);
  // The bit patterns themselves: 1.0 is 0x3C00 in float16 and 0x3F80 in bfloat16.
  EXPECT_EQ(static_cast<unsigned char>(file.tensors[0].second.data[1]), 0x3C);
  EXPECT_EQ(static_cast<unsigned char>(file.tensors[1].second.data[1]), 0x3F);
  EXPECT_EQ(static_cast<unsigned char>(file.tensors[1].second.data[0]), 0x80);
  const io::SafetensorsFile back = io::parse_safetensors(bytes, "half.safetensors");
  ASSERT_EQ(back.tensors.size(), 2u);
  const Tensor h2 = io::from_bytes(back.tensors[0].second);
  const Tensor b2 = io::from_bytes(back.tensors[1].second);
  EXPECT_EQ(h2.dtype(), Dtype::Float16);
  EXPECT_EQ(b2.dtype(), Dtype::BFloat16);
  EXPECT_EQ(h2.to_vector<double>(), h.to_vector<double>());
  EXPECT_EQ(b2.to_vector<double>(), b.to_vector<double>());
}

TEST(HalfPrecision, GraphsCarryHalfValuesAndTheReferenceWidensThem) {
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", {Dtype::Float16, {3}});
  const ir::ValueId w = g.add_input("w", {Dtype::BFloat16, {3}});
  const ir::ValueId e = g.add_node(ir::OpKind::Exp, {x}, {}, {{Dtype::Float16, {3}}})[0];
  const ir::ValueId s = g.add_node(ir::OpKind::Add, {e, w}, {}, {{Dtype::Float32, {3}}})[0];
  const ir::ValueId c =
      g.add_node(ir::OpKind::Cast, {s}, ir::Attributes().set("dtype", Dtype::BFloat16),
                 {{Dtype::BFloat16, {3}}})[0];
  g.mark_output(c);
  ir::validate(g);
  const ir::Graph back = ir::graph_from_json(ir::graph_to_json(g), "half.json");
  EXPECT_EQ(back.type(x).dtype, Dtype::Float16);
  EXPECT_EQ(back.type(c).dtype, Dtype::BFloat16);
  ir::TensorMap values;
  values["x"] = tensor(std::vector<double>{0.5, 1.5, 2.5}).to(Dtype::Float16);
  values["w"] = tensor(std::vector<double>{-1, 0.25, 3}).to(Dtype::BFloat16);
  const Tensor declared = ir::execute(g, values).outputs.at(0);
  EXPECT_EQ(declared.dtype(), Dtype::BFloat16);
  ir::ExecutionOptions reference;
  reference.floating_dtype = Dtype::Float64;
  const Tensor wide = ir::execute(g, values, reference).outputs.at(0);
  EXPECT_EQ(wide.dtype(), Dtype::Float64);
  const std::vector<double> a = declared.to_vector<double>();
  const std::vector<double> r = wide.to_vector<double>();
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], r[i], 2 * dtype_epsilon(Dtype::BFloat16) * std::abs(r[i])) << i;
  }
}

}  // namespace
}  // namespace weft
