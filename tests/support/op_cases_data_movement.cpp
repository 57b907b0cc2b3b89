// The op sweep's cases of the ops that move data rather than compute it: views and shape ops,
// writes through views (functionalized), joining, splitting, padding and indexing, resampling,
// casts and layouts, and the ops with a Python-scalar operand.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

namespace {

// ---- views and shape ----

void shape(Sweep& s, OpKind op) {
  auto& v = s.v;
  auto one = [&](const std::string& what, const Shape& shape, Attributes a) {
    s.add(what, {in("x", v.uniform(shape))}, std::move(a));
  };
  auto typed = [&](const Shape& shape, Attributes a) {
    s.add_constant("int64", {in("x", v.ints(shape, -5, 5))}, a);
    s.add_constant("bool", {in("x", v.bools(shape))}, a);
  };
  switch (op) {
    case OpKind::Reshape:
      one("2x3x4_to_6x4", {2, 3, 4}, attrs().set("shape", Ints{6, 4}));
      one("flat_-1", {2, 3}, attrs().set("shape", Ints{-1}));
      one("infer_middle", {2, 3, 4}, attrs().set("shape", Ints{4, -1, 2}));
      one("rank0_to_1", {}, attrs().set("shape", Ints{1}));
      one("1_to_rank0", {1}, attrs().set("shape", Ints{}));
      one("size0", {0, 3}, attrs().set("shape", Ints{3, 0}));
      typed({2, 3}, attrs().set("shape", Ints{3, 2}));
      break;
    case OpKind::Flatten:
      one("default", {2, 3, 2}, attrs());
      one("start1", {2, 3, 2}, attrs().set("start_dim", 1));
      one("start1_end2", {2, 2, 3, 2}, attrs().set("start_dim", 1).set("end_dim", 2));
      one("negative", {2, 2, 3, 2}, attrs().set("start_dim", -3).set("end_dim", -2));
      one("rank0", {}, attrs());
      typed({2, 3}, attrs());
      break;
    case OpKind::Squeeze:
      one("all", {1, 2, 1, 3}, attrs());
      one("dim1", {2, 1, 3}, attrs().set("dim", Ints{1}));
      one("dim-1_not_one", {2, 3}, attrs().set("dim", Ints{-1}));
      one("dims0_2", {1, 2, 1, 3}, attrs().set("dim", Ints{0, 2}));
      one("rank0", {}, attrs());
      typed({2, 1, 3}, attrs().set("dim", Ints{1}));
      break;
    case OpKind::Unsqueeze:
      one("dim0", {2, 3}, attrs().set("dim", 0));
      one("dim-1", {2, 3}, attrs().set("dim", -1));
      one("dim2", {2, 3}, attrs().set("dim", 2));
      one("rank0", {}, attrs().set("dim", 0));
      typed({2, 3}, attrs().set("dim", 1));
      break;
    case OpKind::Transpose:
      one("2d", {2, 3}, attrs().set("dim0", 0).set("dim1", 1));
      one("3d_negative", {2, 3, 4}, attrs().set("dim0", -1).set("dim1", 0));
      one("same_dim", {2, 3}, attrs().set("dim0", 1).set("dim1", 1));
      typed({2, 3}, attrs().set("dim0", 1).set("dim1", 0));
      break;
    case OpKind::Permute:
      one("2d", {2, 3}, attrs().set("dims", Ints{1, 0}));
      one("3d", {2, 3, 4}, attrs().set("dims", Ints{2, 0, 1}));
      one("negative", {2, 3, 4}, attrs().set("dims", Ints{-1, 0, 1}));
      one("rank0", {}, attrs().set("dims", Ints{}));
      typed({2, 3}, attrs().set("dims", Ints{1, 0}));
      break;
    case OpKind::Expand:
      one("3x1_to_3x4", {3, 1}, attrs().set("size", Ints{3, 4}));
      one("new_dim", {3}, attrs().set("size", Ints{2, 3}));
      one("minus1", {3, 1}, attrs().set("size", Ints{-1, 4}));
      one("rank0", {}, attrs().set("size", Ints{2, 2}));
      one("to_size0", {1}, attrs().set("size", Ints{0}));
      typed({2, 1}, attrs().set("size", Ints{2, 3}));
      break;
    case OpKind::Slice:
      one("start1", {4, 3}, attrs().set("dim", 0).set("start", 1));
      one("step2", {2, 5}, attrs().set("dim", 1).set("start", 0).set("end", 4).set("step", 2));
      one("negative_start", {5, 2}, attrs().set("start", -2));
      one("end_past_size", {3, 2}, attrs().set("start", 1).set("end", 10));
      one("empty", {4, 2}, attrs().set("start", 3).set("end", 1));
      one("dim-1_step3", {2, 7}, attrs().set("dim", -1).set("start", 1).set("step", 3));
      typed({4, 3}, attrs().set("dim", 1).set("start", 1));
      break;
    case OpKind::Select:
      one("dim0", {3, 2}, attrs().set("dim", 0).set("index", 1));
      one("negative", {2, 3}, attrs().set("dim", -1).set("index", -1));
      one("3d_dim1", {2, 3, 4}, attrs().set("dim", 1).set("index", 0));
      one("to_rank0", {3}, attrs().set("dim", 0).set("index", 2));
      typed({2, 3}, attrs().set("dim", 1).set("index", 2));
      break;
    default:
      break;
  }
}

// ---- writes through views, functionalized ----

void scatter(Sweep& s, OpKind op) {
  auto& v = s.v;
  auto one = [&](const std::string& what, const Shape& base, const Shape& src, Attributes a) {
    s.add(what, {in("x", v.uniform(base)), in("src", v.uniform(src))}, std::move(a));
  };
  if (op == OpKind::SliceScatter) {
    one("dim0", {4, 3}, {2, 3}, attrs().set("dim", 0).set("start", 1).set("end", 3));
    one("step2", {2, 5}, {2, 2},
        attrs().set("dim", 1).set("start", 0).set("end", 4).set("step", 2));
    one("negative_start", {5, 2}, {2, 2}, attrs().set("start", -2));
    one("to_end_3d", {2, 3, 4}, {2, 3, 2}, attrs().set("dim", -1).set("start", 2));
    one("empty", {4, 2}, {0, 2}, attrs().set("start", 3).set("end", 1));
    s.add_constant("int64", {in("x", v.ints({4, 3}, -5, 5)), in("src", v.ints({1, 3}, -5, 5))},
                   attrs().set("dim", 0).set("start", 2).set("end", 3));
  } else {
    one("dim0", {3, 2}, {2}, attrs().set("dim", 0).set("index", 1));
    one("negative", {2, 3}, {2}, attrs().set("dim", -1).set("index", -1));
    one("3d_dim1", {2, 3, 4}, {2, 4}, attrs().set("dim", 1).set("index", 0));
    one("from_rank0", {3}, {}, attrs().set("dim", 0).set("index", 2));
    s.add_constant("bool", {in("x", v.bools({2, 3})), in("src", v.bools({3}))},
                   attrs().set("dim", 0).set("index", 1));
  }
}

// ---- joining, splitting, padding, indexing ----

void join(Sweep& s, OpKind op) {
  auto& v = s.v;
  auto one = [&](const std::string& what, const Shape& shape, Attributes a) {
    s.add(what, {in("x", v.uniform(shape))}, std::move(a));
  };
  switch (op) {
    case OpKind::Cat:
      s.add("two_dim0", {in("a", v.uniform({2, 3})), in("b", v.uniform({1, 3}))});
      s.add("three_dim1",
            {in("a", v.uniform({2, 1})), in("b", v.uniform({2, 3})), in("c", v.uniform({2, 2}))},
            attrs().set("dim", 1));
      s.add("dim-1_3d", {in("a", v.uniform({2, 2, 1})), in("b", v.uniform({2, 2, 2}))},
            attrs().set("dim", -1));
      s.add("single", {in("a", v.uniform({2, 3}))});
      s.add("with_size0", {in("a", v.uniform({0, 3})), in("b", v.uniform({2, 3}))});
      s.add_constant("int64", {in("a", v.ints({2, 2}, -5, 5)), in("b", v.ints({1, 2}, -5, 5))});
      s.add_constant("bool", {in("a", v.bools({2})), in("b", v.bools({3}))});
      break;
    case OpKind::Stack:
      s.add("two_dim0", {in("a", v.uniform({2, 3})), in("b", v.uniform({2, 3}))});
      s.add("three_dim1",
            {in("a", v.uniform({2, 2})), in("b", v.uniform({2, 2})), in("c", v.uniform({2, 2}))},
            attrs().set("dim", 1));
      s.add("dim-1", {in("a", v.uniform({3})), in("b", v.uniform({3}))}, attrs().set("dim", -1));
      s.add("rank0", {in("a", v.uniform({})), in("b", v.uniform({})), in("c", v.uniform({}))});
      s.add("single", {in("a", v.uniform({2, 2}))}, attrs().set("dim", 2));
      s.add_constant("int64", {in("a", v.ints({2}, -5, 5)), in("b", v.ints({2}, -5, 5))});
      break;
    case OpKind::Split:
      one("size2_dim0", {5, 3}, attrs().set("split_size", Ints{2}));
      one("sections_dim1", {2, 3}, attrs().set("split_size", Ints{1, 2}).set("dim", 1));
      one("whole", {2, 3}, attrs().set("split_size", Ints{3}).set("dim", -1));
      one("larger_than_dim", {2, 3}, attrs().set("split_size", Ints{4}).set("dim", 1));
      one("sections_with_zero", {3, 2}, attrs().set("split_size", Ints{0, 2, 1}));
      s.add_constant("int64", {in("x", v.ints({4, 2}, -5, 5))}, attrs().set("split_size", Ints{3}));
      break;
    case OpKind::Chunk:
      one("2_of_5", {5, 3}, attrs().set("chunks", 2));
      one("3_of_4_gives_2", {2, 4}, attrs().set("chunks", 3).set("dim", 1));
      one("4_of_6_gives_3", {2, 6}, attrs().set("chunks", 4).set("dim", -1));
      one("more_than_size", {2, 3}, attrs().set("chunks", 5).set("dim", 1));
      s.add_constant("int64", {in("x", v.ints({4, 2}, -5, 5))}, attrs().set("chunks", 2));
      break;
    case OpKind::Pad:
      one("constant", {2, 3}, attrs().set("pad", Ints{1, 2}));
      one("constant_value_2d", {2, 3}, attrs().set("pad", Ints{1, 1, 2, 0}).set("value", 1.5));
      one("constant_negative", {2, 4}, attrs().set("pad", Ints{-1, 1}));
      one("constant_3_dims", {1, 2, 2}, attrs().set("pad", Ints{0, 1, 1, 0, 1, 1}));
      one("reflect_1d", {1, 2, 4}, attrs().set("pad", Ints{2, 1}).set("mode", "reflect"));
      one("reflect_1d_unbatched", {2, 4}, attrs().set("pad", Ints{1, 3}).set("mode", "reflect"));
      one("reflect_2d", {1, 1, 3, 4}, attrs().set("pad", Ints{1, 1, 1, 2}).set("mode", "reflect"));
      one("replicate_1d", {1, 2, 3}, attrs().set("pad", Ints{2, 1}).set("mode", "replicate"));
      one("replicate_2d", {1, 1, 3, 3},
          attrs().set("pad", Ints{1, 0, 2, 1}).set("mode", "replicate"));
      one("replicate_2d_unbatched", {2, 3, 3},
          attrs().set("pad", Ints{0, 2, 1, 1}).set("mode", "replicate"));
      s.add_constant("int64", {in("x", v.ints({2, 3}, -5, 5))},
                     attrs().set("pad", Ints{1, 1}).set("value", 0.0));
      break;
    case OpKind::Tril:
    case OpKind::Triu:
      one("diagonal0", {3, 4}, attrs());
      one("diagonal1", {3, 4}, attrs().set("diagonal", 1));
      one("diagonal-1", {4, 3}, attrs().set("diagonal", -1));
      one("batched", {2, 3, 3}, attrs().set("diagonal", -2));
      one("far_diagonal", {2, 3}, attrs().set("diagonal", 5));
      s.add_constant("int64", {in("x", v.ints({3, 3}, -5, 5))}, attrs());
      s.add_constant("bool", {in("x", v.bools({3, 3}))}, attrs().set("diagonal", 1));
      break;
    case OpKind::Gather:
      s.add("dim1", {in("x", v.uniform({3, 4})), in("index", v.ints({3, 2}, 0, 3))},
            attrs().set("dim", 1));
      s.add("dim0", {in("x", v.uniform({3, 4})), in("index", v.ints({2, 4}, 0, 2))},
            attrs().set("dim", 0));
      s.add("smaller_index", {in("x", v.uniform({3, 4})), in("index", v.ints({2, 2}, 0, 3))},
            attrs().set("dim", 1));
      s.add("dim-1_3d", {in("x", v.uniform({2, 3, 4})), in("index", v.ints({2, 3, 5}, 0, 3))},
            attrs().set("dim", -1));
      s.add_constant("int64", {in("x", v.ints({3, 4}, -5, 5)), in("index", v.ints({3, 2}, 0, 3))},
                     attrs().set("dim", 1));
      break;
    case OpKind::IndexSelect:
      s.add("dim0", {in("x", v.uniform({4, 3})), in("index", int64s({3, 1}, {2}))},
            attrs().set("dim", 0));
      s.add("repeats", {in("x", v.uniform({2, 4})), in("index", int64s({0, 2, 2, 3}, {4}))},
            attrs().set("dim", 1));
      s.add("dim-1_3d", {in("x", v.uniform({2, 3, 4})), in("index", int64s({3, 0}, {2}))},
            attrs().set("dim", -1));
      s.add("rank0_index", {in("x", v.uniform({3, 2})), in("index", int64s({1}, {}))},
            attrs().set("dim", 0));
      s.add("empty_index", {in("x", v.uniform({3, 2})), in("index", int64s({}, {0}))},
            attrs().set("dim", 0));
      s.add_constant("int64", {in("x", v.ints({3, 3}, -5, 5)), in("index", int64s({2, 0}, {2}))},
                     attrs().set("dim", 1));
      break;
    default:
      break;
  }
}

void interpolate(Sweep& s) {
  auto& v = s.v;
  auto one = [&](const std::string& what, const Shape& shape, Attributes a) {
    s.add(what, {in("x", v.uniform(shape))}, std::move(a));
  };
  one("nearest_1d", {1, 2, 4}, attrs().set("size", Ints{7}));
  one("nearest_1d_down", {1, 1, 7}, attrs().set("size", Ints{3}));
  one("nearest_2d", {1, 2, 3, 3}, attrs().set("size", Ints{5, 4}));
  one("nearest_2d_down", {1, 1, 5, 6}, attrs().set("size", Ints{2, 4}));
  one("linear", {1, 2, 4}, attrs().set("size", Ints{7}).set("mode", "linear"));
  one("linear_align_corners", {1, 2, 4},
      attrs().set("size", Ints{7}).set("mode", "linear").set("align_corners", true));
  one("linear_down", {1, 1, 6}, attrs().set("size", Ints{4}).set("mode", "linear"));
  one("linear_down_align_corners", {1, 1, 6},
      attrs().set("size", Ints{4}).set("mode", "linear").set("align_corners", true));
  one("bilinear", {1, 1, 3, 3}, attrs().set("size", Ints{5, 4}).set("mode", "bilinear"));
  one("bilinear_align_corners", {1, 2, 3, 3},
      attrs().set("size", Ints{5, 4}).set("mode", "bilinear").set("align_corners", true));
  one("bilinear_down", {1, 1, 4, 5}, attrs().set("size", Ints{3, 2}).set("mode", "bilinear"));
  one("bilinear_down_align_corners", {1, 1, 4, 5},
      attrs().set("size", Ints{3, 2}).set("mode", "bilinear").set("align_corners", true));
  one("bilinear_to_1x1_align_corners", {1, 1, 3, 3},
      attrs().set("size", Ints{1, 1}).set("mode", "bilinear").set("align_corners", true));
}

void cast(Sweep& s) {
  auto& v = s.v;
  const std::vector<Dtype> all{Dtype::Bool,     Dtype::Int32,   Dtype::Int64,  Dtype::Float16,
                               Dtype::BFloat16, Dtype::Float32, Dtype::Float64};
  // Floats with exact zeros and negative non-integers (truncation toward zero).
  for (Dtype to : all) {
    Tensor x = v.away({2, 4}, -3.0, 3.0, {-3, -2, -1, 1, 2, 3});
    x.data<double>()[1] = 0.0;
    OpCase& c =
        s.add(std::string("float_to_") + dtype_name(to), {in("x", x)}, attrs().set("dtype", to));
    c.differentiable = is_floating(to);
    if (to == Dtype::Float32) {
      // The result is rounded to float32: the step must be far above its rounding error.
      c.fd_eps = 1e-2;
      c.fd_rtol = 1e-3;
      c.fd_atol = 1e-4;
    }
    if (is_reduced_floating(to)) {
      // float16 spaces values 2^-9 apart below 4, bfloat16 2^-6: steps far above that.
      c.fd_eps = 0.25;
      c.fd_rtol = 0.05;
      c.fd_atol = 0.05;
    }
  }
  for (Dtype to : all) {
    s.add_constant(std::string("int64_to_") + dtype_name(to), {in("x", v.ints({2, 3}, -3, 3))},
                   attrs().set("dtype", to));
    s.add_constant(std::string("bool_to_") + dtype_name(to), {in("x", v.bools({2, 3}))},
                   attrs().set("dtype", to));
    s.add_constant(std::string("int32_to_") + dtype_name(to),
                   {in("x", v.ints({3}, -3, 3, Dtype::Int32))}, attrs().set("dtype", to));
  }
  s.add("rank0", {in("x", v.uniform({}))}, attrs().set("dtype", Dtype::Float64));
  s.add("size0", {in("x", v.uniform({0, 2}))}, attrs().set("dtype", Dtype::Int64));
}

void contiguous(Sweep& s) {
  auto& v = s.v;
  s.add("rank2", {in("x", v.uniform({2, 3}))}, attrs().set("memory_format", "contiguous_format"));
  s.add("rank0", {in("x", v.uniform({}))});
  s.add("channels_last", {in("x", v.uniform({2, 3, 2, 4}))},
        attrs().set("memory_format", "channels_last"));
  s.add("channels_last_size0", {in("x", v.uniform({0, 3, 2, 2}))},
        attrs().set("memory_format", "channels_last"));
  s.add_constant("int64_channels_last", {in("x", v.ints({1, 2, 2, 3}, -3, 3))},
                 attrs().set("memory_format", "channels_last"));
  s.add_constant("bool", {in("x", v.bools({2, 2}))});
}

// Python scalars: every kind of scalar (bool, int, float; floats that round in float32) on
// float tensors, and on int and bool tensors where the op takes them (the wrapped-number
// promotion decides the dtype).
void scalar(Sweep& s, OpKind op) {
  auto& v = s.v;
  const bool power = op == OpKind::PowScalar;
  const bool base = op == OpKind::RpowScalar;
  auto values = [&](const Shape& shape) {
    return power ? v.uniform(shape, 0.5, 2.0) : v.uniform(shape, -1.5, 1.5);
  };
  std::vector<std::pair<std::string, ir::AttrValue>> scalars;
  if (power) {
    scalars = {{"int2", std::int64_t{2}},      {"int3", std::int64_t{3}},
               {"int_neg1", std::int64_t{-1}}, {"half", 0.5},
               {"float_neg1_5", -1.5},         {"float2", 2.0},
               {"zero", std::int64_t{0}},      {"true", true}};
  } else if (base) {
    scalars = {{"int2", std::int64_t{2}}, {"half", 0.5}, {"e", 2.718281828459045}, {"ten", 10.0}};
  } else {
    scalars = {{"float", 2.5},
               {"tenth", 0.1},
               {"negative", -3.0},
               {"int", std::int64_t{3}},
               {"int_negative", std::int64_t{-2}}};
    if (op == OpKind::AddScalar || op == OpKind::MulScalar) scalars.emplace_back("true", true);
    if (op == OpKind::AddScalar || op == OpKind::MulScalar) scalars.emplace_back("false", false);
  }
  for (const auto& [name, value] : scalars) {
    s.add(name, {in("x", values({2, 3}))}, attrs().set("other", value));
  }
  for (const char* spelling : {"function", "method"}) {
    s.add(std::string("spelling_") + spelling, {in("x", values({3}))},
          attrs().set("other", std::int64_t{2}).set("spelling", spelling));
  }
  s.add("rank0", {in("x", values({}))}, attrs().set("other", 0.5));
  s.add("size0", {in("x", values({0, 2}))}, attrs().set("other", 0.5));
  if (power || base) return;
  // Integer and bool tensors: an int scalar keeps int32, a float one makes float32.
  for (const auto& [name, value] : scalars) {
    s.add_constant("int64_" + name, {in("x", v.ints({2, 3}, -3, 3))}, attrs().set("other", value));
    s.add_constant("int32_" + name, {in("x", v.ints({3}, 1, 4, Dtype::Int32))},
                   attrs().set("other", value));
  }
  if (op == OpKind::AddScalar || op == OpKind::MulScalar) {
    for (const auto& [name, value] : scalars) {
      s.add_constant("bool_" + name, {in("x", v.bools({2, 3}))}, attrs().set("other", value));
    }
  }
}

}  // namespace

void data_movement_cases(Sweep& s, OpKind op, std::string_view family) {
  if (family == "shape") {
    shape(s, op);
  } else if (family == "scatter") {
    scatter(s, op);
  } else if (family == "join" || family == "index") {
    join(s, op);
  } else if (family == "interpolate") {
    interpolate(s);
  } else if (family == "cast") {
    if (op == OpKind::Contiguous) {
      contiguous(s);
    } else {
      cast(s);
    }
  } else if (family == "scalar") {
    scalar(s, op);
  }
}

}  // namespace weft::testing::sweep
