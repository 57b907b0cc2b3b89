// The op sweep's cases of the products by name: dot, mv, outer, trace and baddbmm. Odd sizes,
// size-0 contractions and rows (a sum of nothing is 0), integers where PyTorch's CPU kernels
// take them, and baddbmm's beta and alpha. No case has beta = 0 (an engine test checks that it
// ignores self): LibTorch 1.13's baddbmm then reads its uninitialized result, so NaN left in
// freed memory comes out now and then (pytorch/pytorch#80588, fixed in 2.x), and such a case
// would pass or fail by the allocator's state.
#include <cmath>
#include <string>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

bool product_cases(Sweep& s, OpKind op) {
  auto& v = s.v;
  switch (op) {
    case OpKind::Dot:
      s.add("5", {in("x", v.uniform({5})), in("tensor", v.uniform({5}))});
      s.add("1", {in("x", v.uniform({1})), in("tensor", v.uniform({1}))});
      s.add("size0", {in("x", v.uniform({0})), in("tensor", v.uniform({0}))});
      s.add_constant("int64", {in("x", v.ints({4}, -5, 5)), in("tensor", v.ints({4}, -5, 5))});
      return true;
    case OpKind::Mv:
      s.add("3x5", {in("x", v.uniform({3, 5})), in("vec", v.uniform({5}))});
      s.add("1x1", {in("x", v.uniform({1, 1})), in("vec", v.uniform({1}))});
      s.add("size0_rows", {in("x", v.uniform({0, 4})), in("vec", v.uniform({4}))});
      s.add("size0_contraction", {in("x", v.uniform({3, 0})), in("vec", v.uniform({0}))});
      s.add_constant("int64", {in("x", v.ints({2, 3}, -4, 4)), in("vec", v.ints({3}, -4, 4))});
      return true;
    case OpKind::Outer:
      s.add("3_4", {in("x", v.uniform({3})), in("vec2", v.uniform({4}))});
      s.add("1_5", {in("x", v.uniform({1})), in("vec2", v.uniform({5}))});
      s.add("size0", {in("x", v.uniform({0})), in("vec2", v.uniform({2}))});
      s.add("int64_float", {in("x", v.ints({3}, -3, 3)), in("vec2", v.uniform({2}))});
      s.add_constant("int64", {in("x", v.ints({3}, -3, 3)), in("vec2", v.ints({2}, -3, 3))});
      return true;
    case OpKind::Trace:
      s.add("3x3", {in("x", v.uniform({3, 3}))});
      s.add("wide_2x5", {in("x", v.uniform({2, 5}))});
      s.add("tall_4x2", {in("x", v.uniform({4, 2}))});
      s.add("size0", {in("x", v.uniform({0, 3}))});
      s.add_constant("int64", {in("x", v.ints({3, 3}, -5, 5))});
      s.add_constant("int32", {in("x", v.ints({2, 2}, -5, 5, Dtype::Int32))});
      return true;
    case OpKind::Baddbmm: {
      auto leaves = [&](const Shape& self, std::int64_t b, std::int64_t n, std::int64_t m,
                        std::int64_t p) {
        return std::vector<Leaf>{in("x", v.uniform(self)), in("batch1", v.uniform({b, n, m})),
                                 in("batch2", v.uniform({b, m, p}))};
      };
      s.add("full_self", leaves({2, 3, 4}, 2, 3, 5, 4));
      s.add("broadcast_self", leaves({4}, 2, 3, 5, 4), attrs().set("beta", 0.5).set("alpha", 2.0));
      s.add("rank0_self", leaves({}, 3, 2, 2, 2), attrs().set("alpha", -1.0));
      s.add("size0_batch", leaves({1, 3}, 0, 2, 4, 3));
      s.add("size0_contraction", leaves({2, 3}, 2, 2, 0, 3), attrs().set("beta", 2.0));
      s.add_constant("int64",
                     {in("x", v.ints({3}, -3, 3)), in("batch1", v.ints({2, 2, 3}, -3, 3)),
                      in("batch2", v.ints({2, 3, 3}, -3, 3))},
                     attrs().set("beta", 2.0).set("alpha", 3.0));
      return true;
    }
    default:
      return false;
  }
}

}  // namespace weft::testing::sweep
