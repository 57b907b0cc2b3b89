// The op sweep's cases of the pairwise distances cdist and pdist: p = 2 (the usual), 1, a
// fraction below 1, a power above 2, 0 (a count of differing elements) and inf (the largest
// difference); broadcast batch dims, empty sides, no columns, and zero distances (a row
// against itself: PyTorch passes no gradient there, a convention case for the gradient).
#include <limits>
#include <string>
#include <utility>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

bool distance_cases(Sweep& s, OpKind op) {
  auto& v = s.v;
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case OpKind::Cdist: {
      const auto two = [&](const std::string& what, const Shape& a, const Shape& b, double p) {
        s.add(what, {in("x1", v.distinct(a)), in("x2", v.distinct(b))}, attrs().set("p", p));
      };
      two("p2", {4, 3}, {5, 3}, 2.0);
      two("p1", {3, 4}, {2, 4}, 1.0);
      two("p0_5", {3, 2}, {4, 2}, 0.5);
      two("p3", {2, 3, 4}, {2, 5, 4}, 3.0);
      two("p1_5_broadcast_batch", {2, 1, 3, 2}, {3, 4, 2}, 1.5);
      two("inf", {3, 4}, {4, 4}, inf);
      s.add_constant("p0", {in("x1", v.grid({3, 4}, -1, 1)), in("x2", v.grid({2, 4}, -1, 1))},
                     attrs().set("p", 0.0));
      two("empty_rows", {0, 3}, {4, 3}, 2.0);
      two("no_columns", {3, 0}, {2, 0}, 2.0);
      // Above 25 rows PyTorch's p = 2 goes through a matrix product.
      two("p2_26_rows", {26, 3}, {2, 3}, 2.0);
      const Tensor x = v.distinct({3, 4});
      add_convention(s, "zero_distance", {in("x1", x), in("x2", x.clone())}, attrs().set("p", 2.0));
      return true;
    }
    case OpKind::Pdist: {
      const auto one = [&](const std::string& what, const Shape& shape, double p) {
        s.add(what, {in("x", v.distinct(shape))}, attrs().set("p", p));
      };
      one("p2", {5, 3}, 2.0);
      one("p1", {4, 2}, 1.0);
      one("p0_5", {3, 3}, 0.5);
      one("p3", {4, 4}, 3.0);
      one("inf", {4, 3}, inf);
      one("one_row", {1, 3}, 2.0);
      s.add("no_rows", {in("x", v.distinct({0, 3}))}, attrs().set("p", 2.0)).torch_crash =
          "pdist's backward divides by the row count (pytorch/pytorch#197099); corpus case "
          "bug-eager-pdist-backward-zero-rows";
      s.add_constant("p0", {in("x", v.grid({4, 3}, -1, 1))}, attrs().set("p", 0.0));
      add_convention(s, "repeated_row",
                     {in("x", doubles({0.5, -1.0, 0.5, -1.0, 2.0, 0.25}, {3, 2}))},
                     attrs().set("p", 2.0));
      return true;
    }
    default:
      return false;
  }
}

}  // namespace weft::testing::sweep
