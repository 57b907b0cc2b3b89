// The op sweep's cases of the sliding blocks: im2col (F.unfold) over [N, C, H, W] and
// unbatched [C, H, W], col2im (F.fold) over [N, C*kh*kw, L] and [C*kh*kw, L]: kernels,
// dilations, paddings and strides, overlapping blocks (fold adds them), blocks that skip
// input (stride above the kernel) and a zero batch. PyTorch's errors (a kernel that does not
// fit, a block count that does not match, integers) are engine tests (ops_fold_test.cpp).
#include <string>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

namespace {

Attributes blocks(Ints kernel, Ints dilation, Ints padding, Ints stride) {
  return attrs()
      .set("kernel_size", kernel)
      .set("dilation", dilation)
      .set("padding", padding)
      .set("stride", stride);
}

}  // namespace

bool fold_cases(Sweep& s, OpKind op) {
  auto& v = s.v;
  if (op == OpKind::Im2col) {
    s.add("k2", {in("x", v.uniform({2, 2, 3, 4}))}, blocks({2, 2}, {1, 1}, {0, 0}, {1, 1}));
    s.add("k3_p1_s2", {in("x", v.uniform({1, 2, 5, 4}))}, blocks({3, 3}, {1, 1}, {1, 1}, {2, 2}));
    s.add("asymmetric_dilated", {in("x", v.uniform({1, 1, 6, 5}))},
          blocks({2, 3}, {2, 1}, {0, 1}, {1, 2}));
    s.add("stride_skips_input", {in("x", v.uniform({1, 1, 5, 5}))},
          blocks({1, 2}, {1, 1}, {0, 0}, {3, 3}));
    s.add("unbatched", {in("x", v.uniform({2, 3, 3}))}, blocks({2, 2}, {1, 1}, {0, 0}, {1, 1}));
    s.add("size0_batch", {in("x", v.uniform({0, 1, 3, 3}))},
          blocks({2, 2}, {1, 1}, {0, 0}, {1, 1}));
    return true;
  }
  if (op != OpKind::Col2im) return false;
  const auto fold = [](Ints output_size, Attributes a) {
    return a.set("output_size", output_size);
  };
  // 3x3 from 2x2 blocks: every inner element is the sum of up to four columns.
  s.add("overlapping_k2", {in("x", v.uniform({2, 8, 4}))},
        fold({3, 3}, blocks({2, 2}, {1, 1}, {0, 0}, {1, 1})));
  s.add("k3_p1_s2", {in("x", v.uniform({1, 18, 6}))},
        fold({5, 4}, blocks({3, 3}, {1, 1}, {1, 1}, {2, 2})));
  s.add("asymmetric_dilated", {in("x", v.uniform({1, 6, 12}))},
        fold({6, 5}, blocks({2, 3}, {2, 1}, {0, 1}, {1, 2})));
  s.add("stride_skips_output", {in("x", v.uniform({1, 2, 4}))},
        fold({5, 5}, blocks({1, 2}, {1, 1}, {0, 0}, {3, 3})));
  s.add("unbatched", {in("x", v.uniform({8, 4}))},
        fold({3, 3}, blocks({2, 2}, {1, 1}, {0, 0}, {1, 1})));
  s.add("size0_batch", {in("x", v.uniform({0, 4, 4}))},
        fold({3, 3}, blocks({2, 2}, {1, 1}, {0, 0}, {1, 1})));
  return true;
}

}  // namespace weft::testing::sweep
