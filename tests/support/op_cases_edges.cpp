// The op sweep's edge cases of every family: kinks, ties, poles and mixed dtypes, where
// PyTorch's conventions matter (a derivative taken exactly on a kink, the order of tied values,
// integer operands of floating ops), and the extremes of the attributes.
#include <limits>
#include <string>
#include <utility>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

void edge_cases(Sweep& s, OpKind op) {
  auto& v = s.v;
  const Tensor at_zero = doubles({0.0, -1.0, 1.0, 0.0, 2.0, 0.25}, {2, 3});
  switch (op) {
    case OpKind::Abs:
    case OpKind::Sqrt:
    case OpKind::Log:
    case OpKind::Log2:
    case OpKind::Rsqrt:
    case OpKind::Reciprocal:
      add_convention(s, "at_zero",
                     {in("x", op == OpKind::Abs || op == OpKind::Reciprocal
                                  ? at_zero
                                  : doubles({0.0, 1.0, 4.0, 0.0, 2.0, 0.25}, {2, 3}))});
      break;
    case OpKind::Asin:
    case OpKind::Acos:
      add_convention(s, "at_one", {in("x", doubles({1.0, -1.0, 0.5}, {3}))});
      break;
    case OpKind::Relu:
    case OpKind::LeakyRelu:
    case OpKind::Silu:
    case OpKind::Gelu:
      add_convention(s, "at_zero", {in("x", at_zero)});
      break;
    case OpKind::Elu:
      add_convention(s, "at_zero_alpha2", {in("x", at_zero)}, attrs().set("alpha", 2.0));
      break;
    case OpKind::Softplus:
      // torch switches to the identity only where x * beta > threshold (strictly).
      add_convention(s, "at_threshold", {in("x", doubles({1.0, 0.5, 2.0, -1.0}, {4}))},
                     attrs().set("threshold", 1.0));
      break;
    case OpKind::Mm:
      s.add("odd_sizes", {in("x", v.uniform({5, 7})), in("other", v.uniform({7, 6}))});
      break;
    case OpKind::Matmul:
      s.add("batch0", {in("x", v.uniform({0, 2, 3})), in("other", v.uniform({3, 2}))});
      break;
    case OpKind::Conv2d:
      s.add("stride_above_kernel",
            {in("input", v.uniform({1, 1, 7, 7})), param("weight", v.uniform({1, 1, 2, 2}))},
            attrs().set("stride", Ints{3}));
      break;
    case OpKind::Hardtanh:
      add_convention(s, "at_bounds", {in("x", doubles({-1.0, 1.0, 0.5, -2.0, 2.0, 1.0}, {2, 3}))});
      break;
    case OpKind::Clamp:
      add_convention(s, "at_bounds", {in("x", doubles({-0.5, 0.5, 0.0, 1.0, -1.0, 0.5}, {2, 3}))},
                     attrs().set("min", -0.5).set("max", 0.5));
      // Floating bounds promote an integral input (torch.clamp's type promotion).
      s.add_constant("int64", {in("x", v.ints({2, 3}, -3, 3))},
                     attrs().set("min", -1.5).set("max", 2.0));
      break;
    case OpKind::Pow:
      // 0^y: torch defines the exponent's gradient as 0 (not 0 * log 0), and 0^0's base
      // gradient as 0.
      add_convention(s, "zero_base",
                     {in("x", doubles({0.0, 0.0, 0.0, 0.0, 2.0, 0.5}, {2, 3})),
                      in("other", doubles({2.0, 3.0, 1.0, 0.0, 0.0, 2.0}, {2, 3}))});
      break;
    case OpKind::Div:
      add_convention(
          s, "zero_denominator",
          {in("x", doubles({1.0, -1.0, 0.0}, {3})), in("other", doubles({0.0, 0.0, 1.0}, {3}))});
      break;
    case OpKind::Max:
    case OpKind::Min:
      // Ties: the gradient goes to the element the returned index names.
      add_convention(s, "ties", {in("x", v.grid({3, 4}, -1, 1))}, attrs().set("dim", 1));
      break;
    case OpKind::Mean:
      s.add("size0_all", {in("x", v.uniform({0, 3}))});
      break;
    case OpKind::Var:
    case OpKind::Std:
    case OpKind::VarMean:
    case OpKind::StdMean:
      add_convention(s, "no_degrees_of_freedom", {in("x", v.distinct({3, 1}))},
                     attrs().set("dim", Ints{1}));
      break;
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      s.add("size1_dim", {in("x", v.uniform({2, 1}))}, attrs().set("dim", 1));
      break;
    case OpKind::MaxPool1d:
      s.add("ceil_mode_last_window_dropped", {in("x", v.distinct({1, 1, 5}))},
            attrs()
                .set("kernel_size", Ints{2})
                .set("stride", Ints{2})
                .set("padding", Ints{1})
                .set("ceil_mode", true));
      add_convention(s, "ties", {in("x", v.grid({1, 2, 6}, -1, 1))},
                     attrs().set("kernel_size", Ints{3}).set("stride", Ints{1}));
      break;
    case OpKind::MaxPool2d:
      s.add("ceil_mode_last_window_dropped", {in("x", v.distinct({1, 1, 5, 5}))},
            attrs()
                .set("kernel_size", Ints{2})
                .set("stride", Ints{2})
                .set("padding", Ints{1})
                .set("ceil_mode", true));
      s.add("dilation_padding", {in("x", v.distinct({1, 1, 5, 5}))},
            attrs()
                .set("kernel_size", Ints{2})
                .set("stride", Ints{2})
                .set("padding", Ints{1})
                .set("dilation", Ints{2}));
      add_convention(s, "ties", {in("x", v.grid({1, 1, 4, 4}, -1, 1))},
                     attrs().set("kernel_size", Ints{2}).set("stride", Ints{1}));
      break;
    case OpKind::AvgPool1d:
      s.add("ceil_mode_last_window_dropped", {in("x", v.uniform({1, 1, 5}))},
            attrs()
                .set("kernel_size", Ints{2})
                .set("stride", Ints{2})
                .set("padding", Ints{1})
                .set("ceil_mode", true));
      break;
    case OpKind::AvgPool2d:
      s.add("ceil_mode_last_window_dropped", {in("x", v.uniform({1, 1, 5, 5}))},
            attrs()
                .set("kernel_size", Ints{2})
                .set("stride", Ints{2})
                .set("padding", Ints{1})
                .set("ceil_mode", true));
      s.add("ceil_mode_last_window_dropped_exclude", {in("x", v.uniform({1, 1, 5, 5}))},
            attrs()
                .set("kernel_size", Ints{2})
                .set("stride", Ints{2})
                .set("padding", Ints{1})
                .set("ceil_mode", true)
                .set("count_include_pad", false));
      break;
    case OpKind::LayerNorm:
      s.add("constant_row", {in("input", doubles({0.5, 0.5, 0.5, -1.0, 0.25, 2.0}, {2, 3}))},
            attrs().set("normalized_shape", Ints{3}));
      break;
    case OpKind::Embedding:
      s.add("int32_indices",
            {in("input", v.ints({2, 2}, 0, 3, Dtype::Int32)), param("weight", v.uniform({4, 2}))});
      break;
    case OpKind::IndexSelect:
      s.add("int32_index",
            {in("x", v.uniform({3, 2})), in("index", v.ints({2}, 0, 2, Dtype::Int32))},
            attrs().set("dim", 0));
      break;
    case OpKind::Cat:
      s.add("int64_float", {in("a", v.ints({1, 3}, -5, 5)), in("b", v.uniform({2, 3}))});
      break;
    case OpKind::Stack:
      s.add("int64_float", {in("a", v.ints({3}, -5, 5)), in("b", v.uniform({3}))});
      break;
    case OpKind::Where:
      s.add("float_int64", {in("condition", v.bools({2, 3})), in("x", v.uniform({2, 3})),
                            in("other", v.ints({3}, -5, 5))});
      break;
    case OpKind::Interpolate:
      s.add("bilinear_to_1x1", {in("x", v.uniform({1, 1, 3, 3}))},
            attrs().set("size", Ints{1, 1}).set("mode", "bilinear"));
      s.add("nearest_2d_uneven_down", {in("x", v.uniform({1, 1, 7, 5}))},
            attrs().set("size", Ints{3, 2}));
      break;
    default:
      break;
  }
}

}  // namespace weft::testing::sweep
