// The op sweep's cases of the adaptive max pools (adaptive_max_pool1d, adaptive_max_pool2d):
// windows that divide the input, that overlap (uneven sizes), a global window, more outputs than
// inputs (windows of one), unbatched input, a batch of none, and ties (a convention case:
// PyTorch gives a tie's gradient to the first maximum in scan order, and a NaN wins).
#include <limits>
#include <string>
#include <utility>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

bool adaptive_max_cases(Sweep& s, OpKind op) {
  auto& v = s.v;
  const auto one = [&](const std::string& what, const Shape& shape, Attributes a) {
    s.add(what, {in("x", v.distinct(shape))}, std::move(a));
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (op) {
    case OpKind::AdaptiveMaxPool1d:
      one("divisible", {1, 2, 8}, attrs().set("output_size", Ints{4}));
      one("uneven", {2, 1, 7}, attrs().set("output_size", Ints{3}));
      one("global", {1, 3, 5}, attrs().set("output_size", Ints{1}));
      one("upsample", {1, 1, 3}, attrs().set("output_size", Ints{5}));
      one("unbatched", {3, 6}, attrs().set("output_size", Ints{4}));
      s.add("size0_batch", {in("x", v.uniform({0, 2, 4}))}, attrs().set("output_size", Ints{2}));
      add_convention(s, "ties", {in("x", doubles({1.0, 2.0, 2.0, 0.5, 2.0, 2.0}, {1, 1, 6}))},
                     attrs().set("output_size", Ints{2}));
      s.add("nan", {in("x", doubles({1.0, nan, 3.0, 0.5, 2.0, -1.0}, {1, 1, 6}))},
            attrs().set("output_size", Ints{3}))
          .fd_check = false;
      return true;
    case OpKind::AdaptiveMaxPool2d:
      one("divisible", {1, 2, 4, 4}, attrs().set("output_size", Ints{2, 2}));
      one("uneven", {1, 1, 5, 7}, attrs().set("output_size", Ints{3, 3}));
      one("global", {2, 2, 3, 3}, attrs().set("output_size", Ints{1, 1}));
      one("upsample", {1, 1, 2, 3}, attrs().set("output_size", Ints{3, 4}));
      one("unbatched", {2, 4, 5}, attrs().set("output_size", Ints{2, 3}));
      s.add("size0_batch", {in("x", v.uniform({0, 1, 3, 3}))},
            attrs().set("output_size", Ints{2, 2}));
      add_convention(s, "ties", {in("x", v.grid({1, 1, 4, 4}, -1, 1))},
                     attrs().set("output_size", Ints{2, 2}));
      return true;
    default:
      return false;
  }
}

}  // namespace weft::testing::sweep
