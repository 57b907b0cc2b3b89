// The op sweep's cases of the layers added with conv_transpose: the transposed convolutions
// (conv_transpose1d, conv_transpose2d): weight [in, out/groups, *kernel]; strides that spread
// the input (and leave gaps when the stride passes the kernel), padding that crops the output,
// output_padding below the stride and, where the dilation allows it, at or past the stride (its
// extra rows still read the input), groups, unbatched input and a batch of none; and rms_norm:
// one and two normalized dims, with and without a weight, its default eps (the input type's
// epsilon) and a given one, a row of zeros and a row of tiny values where eps matters.
#include <string>
#include <utility>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

namespace {

void rms_norm(Sweep& s) {
  auto& v = s.v;
  s.add("last_dim", {in("input", v.uniform({2, 3})), param("weight", v.uniform({3}, 0.5, 1.5))},
        attrs().set("normalized_shape", Ints{3}));
  s.add("two_dims",
        {in("input", v.uniform({2, 3, 4})), param("weight", v.uniform({3, 4}, 0.5, 1.5))},
        attrs().set("normalized_shape", Ints{3, 4}).set("eps", 1e-5));
  s.add("no_weight", {in("input", v.uniform({3, 4}))}, attrs().set("normalized_shape", Ints{4}));
  s.add("whole_input", {in("input", v.uniform({2, 3}))},
        attrs().set("normalized_shape", Ints{2, 3}).set("eps", 1e-3));
  s.add("zero_row", {in("input", doubles({0.0, 0.0, 0.0, 0.5, -1.0, 2.0}, {2, 3}))},
        attrs().set("normalized_shape", Ints{3}).set("eps", 1e-6));
  // Values near sqrt(eps): eps is a third of the mean square.
  s.add("eps_dominates", {in("input", v.uniform({2, 4}, 0.005, 0.01))},
        attrs().set("normalized_shape", Ints{4}).set("eps", 2.5e-5));
  s.add("size0_batch", {in("input", v.uniform({0, 3})), param("weight", v.uniform({3}))},
        attrs().set("normalized_shape", Ints{3}));
}

}  // namespace

bool layer_cases(Sweep& s, OpKind op) {
  if (op == OpKind::RmsNorm) {
    rms_norm(s);
    return true;
  }
  if (op != OpKind::ConvTranspose1d && op != OpKind::ConvTranspose2d) return false;
  auto& v = s.v;
  const auto three = [&](const std::string& what, const Shape& x, const Shape& w, bool bias,
                         Attributes a) {
    std::vector<Leaf> leaves{in("input", v.uniform(x)), param("weight", v.uniform(w))};
    if (bias) {
      const std::int64_t groups = a.get_int("groups", 1);
      leaves.push_back(param("bias", v.uniform({w[1] * groups})));
    }
    s.add(what, leaves, std::move(a));
  };
  if (op == OpKind::ConvTranspose1d) {
    three("basic", {1, 2, 5}, {2, 3, 3}, true, attrs());
    three("no_bias", {2, 2, 4}, {2, 2, 2}, false, attrs());
    three("stride2", {1, 2, 5}, {2, 2, 3}, true, attrs().set("stride", Ints{2}));
    three("stride_above_kernel", {1, 1, 4}, {1, 2, 2}, true, attrs().set("stride", Ints{3}));
    three("padding1", {1, 2, 5}, {2, 2, 3}, true, attrs().set("padding", Ints{1}));
    three("output_padding", {1, 2, 4}, {2, 1, 3}, true,
          attrs().set("stride", Ints{3}).set("output_padding", Ints{2}));
    // An output_padding at the stride, allowed below the dilation.
    three("output_padding_past_stride", {1, 1, 4}, {1, 2, 2}, true,
          attrs().set("stride", Ints{1}).set("output_padding", Ints{2}).set("dilation", Ints{3}));
    three("dilation2", {1, 2, 4}, {2, 2, 3}, true, attrs().set("dilation", Ints{2}));
    three("groups2", {1, 4, 5}, {4, 3, 2}, true, attrs().set("groups", 2));
    three("unbatched", {2, 5}, {2, 3, 2}, true, attrs().set("stride", Ints{2}));
    three("all", {2, 4, 5}, {4, 1, 3}, true,
          attrs()
              .set("stride", Ints{2})
              .set("padding", Ints{2})
              .set("output_padding", Ints{1})
              .set("dilation", Ints{2})
              .set("groups", 2));
    s.add("size0_batch", {in("input", v.uniform({0, 2, 4})), param("weight", v.uniform({2, 3, 2}))},
          attrs());
  } else {
    three("basic", {1, 2, 4, 4}, {2, 2, 3, 3}, true, attrs());
    three("no_bias_batch2", {2, 1, 3, 3}, {1, 2, 2, 2}, false, attrs());
    three("stride2", {1, 1, 3, 4}, {1, 2, 3, 3}, true, attrs().set("stride", Ints{2}));
    three("padding1", {1, 1, 4, 4}, {1, 2, 3, 3}, true, attrs().set("padding", Ints{1}));
    three("output_padding", {1, 2, 3, 3}, {2, 1, 3, 2}, true,
          attrs().set("stride", Ints{2, 3}).set("output_padding", Ints{1, 2}));
    three("output_padding_past_stride", {1, 1, 3, 3}, {1, 1, 2, 2}, true,
          attrs().set("output_padding", Ints{1, 0}).set("dilation", Ints{2, 1}));
    three("dilation2", {1, 1, 3, 3}, {1, 2, 2, 2}, true, attrs().set("dilation", Ints{2}));
    three("groups2", {1, 4, 3, 3}, {4, 2, 2, 2}, true, attrs().set("groups", 2));
    three("unbatched", {2, 3, 3}, {2, 2, 2, 2}, true, attrs().set("stride", Ints{2}));
    three("asymmetric", {1, 2, 3, 4}, {2, 2, 2, 3}, true,
          attrs()
              .set("stride", Ints{1, 2})
              .set("padding", Ints{1, 0})
              .set("output_padding", Ints{0, 1})
              .set("dilation", Ints{2, 1}));
    s.add("size0_batch",
          {in("input", v.uniform({0, 1, 3, 3})), param("weight", v.uniform({1, 2, 2, 2}))},
          attrs());
  }
  return true;
}

}  // namespace weft::testing::sweep
