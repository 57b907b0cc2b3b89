// The op sweep's cases of the 3-D pools (max_pool3d, avg_pool3d, adaptive_avg_pool3d) over
// [N, C, T, H, W] and unbatched [C, T, H, W]: kernels, strides, paddings, dilations, ceil_mode
// with and without its dropped last window, count_include_pad, and for max pooling ties (a
// convention case: PyTorch gives a tie's gradient to the first maximum in scan order).
#include <string>
#include <utility>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

bool pool3d_cases(Sweep& s, OpKind op) {
  auto& v = s.v;
  const auto one = [&](const std::string& what, const Shape& shape, Attributes a) {
    const Tensor x = op == OpKind::MaxPool3d ? v.distinct(shape) : v.uniform(shape);
    s.add(what, {in("x", x)}, std::move(a));
  };
  switch (op) {
    case OpKind::MaxPool3d:
      one("k2", {1, 1, 4, 4, 4}, attrs().set("kernel_size", Ints{2}));
      one("k3_s2_p1", {1, 2, 5, 5, 4},
          attrs().set("kernel_size", Ints{3}).set("stride", Ints{2}).set("padding", Ints{1}));
      one("dilation2", {1, 1, 5, 5, 5},
          attrs().set("kernel_size", Ints{2}).set("stride", Ints{1}).set("dilation", Ints{2}));
      one("ceil_mode", {1, 1, 5, 3, 5},
          attrs().set("kernel_size", Ints{2}).set("stride", Ints{2}).set("ceil_mode", true));
      one("ceil_mode_last_window_dropped", {1, 1, 5, 5, 3},
          attrs()
              .set("kernel_size", Ints{2})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("ceil_mode", true));
      one("asymmetric", {1, 1, 3, 4, 6},
          attrs()
              .set("kernel_size", Ints{1, 2, 3})
              .set("stride", Ints{1, 1, 2})
              .set("padding", Ints{0, 1, 1})
              .set("dilation", Ints{1, 2, 1}));
      one("unbatched", {2, 3, 4, 4}, attrs().set("kernel_size", Ints{2}));
      one("size0_batch", {0, 1, 2, 2, 2}, attrs().set("kernel_size", Ints{2}));
      s.add_constant("int64", {in("x", v.ints({1, 1, 3, 4, 4}, -9, 9))},
                     attrs().set("kernel_size", Ints{2}));
      add_convention(s, "ties", {in("x", v.grid({1, 1, 3, 4, 4}, -1, 1))},
                     attrs().set("kernel_size", Ints{2}).set("stride", Ints{1}));
      return true;
    case OpKind::AvgPool3d:
      one("k2", {1, 1, 4, 4, 4}, attrs().set("kernel_size", Ints{2}));
      one("k3_s2_p1", {1, 2, 5, 5, 4},
          attrs().set("kernel_size", Ints{3}).set("stride", Ints{2}).set("padding", Ints{1}));
      one("exclude_pad", {1, 1, 5, 4, 5},
          attrs()
              .set("kernel_size", Ints{3})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("count_include_pad", false));
      one("ceil_mode", {1, 1, 5, 3, 5},
          attrs().set("kernel_size", Ints{2}).set("stride", Ints{2}).set("ceil_mode", true));
      one("ceil_mode_padding_exclude", {1, 1, 6, 5, 6},
          attrs()
              .set("kernel_size", Ints{3})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("ceil_mode", true)
              .set("count_include_pad", false));
      one("ceil_mode_last_window_dropped", {1, 1, 5, 5, 3},
          attrs()
              .set("kernel_size", Ints{2})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("ceil_mode", true));
      one("asymmetric", {1, 1, 3, 4, 6},
          attrs()
              .set("kernel_size", Ints{1, 2, 3})
              .set("stride", Ints{1, 1, 2})
              .set("padding", Ints{0, 1, 1}));
      one("unbatched", {2, 3, 4, 4}, attrs().set("kernel_size", Ints{2}));
      one("size0_batch", {0, 1, 2, 2, 2}, attrs().set("kernel_size", Ints{2}));
      return true;
    case OpKind::AdaptiveAvgPool3d:
      one("divisible", {1, 2, 4, 4, 2}, attrs().set("output_size", Ints{2, 2, 1}));
      one("upsample", {1, 1, 2, 3, 2}, attrs().set("output_size", Ints{3, 4, 3}));
      one("uneven", {1, 1, 5, 7, 4}, attrs().set("output_size", Ints{3, 3, 3}));
      one("global", {2, 2, 3, 3, 3}, attrs().set("output_size", Ints{1, 1, 1}));
      one("unbatched", {2, 3, 4, 5}, attrs().set("output_size", Ints{2, 3, 2}));
      // No output size 0: PyTorch 2.x's forward accepts it and its backward refuses it (the
      // guard of pytorch/pytorch#78868), where 1.13 and the engine pass zero gradients; no
      // PyTorch accepts the whole case, and the generator draws output sizes of at least 1.
      return true;
    default:
      return false;
  }
}

}  // namespace weft::testing::sweep
