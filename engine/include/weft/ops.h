#pragma once
// Every differentiable operation of the engine, as free functions named like PyTorch's
// (torch.* and torch.nn.functional.*). One op family per file in engine/src/ops/, with its
// forward and backward side by side. The IR's op list (ir/op_kind.h) maps onto these.

#include <optional>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include "weft/tensor.h"

namespace weft {

// ---- unary math (ops/unary.cpp) ----
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);  // half to even
Tensor sign(const Tensor& x);
Tensor trunc(const Tensor& x);
Tensor frac(const Tensor& x);  // x - trunc(x), floating only
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
Tensor erfinv(const Tensor& x);
Tensor isnan(const Tensor& x);   // bool
Tensor isinf(const Tensor& x);   // bool
Tensor square(const Tensor& x);  // x * x; integers keep their dtype, bool gives int64
Tensor erfc(const Tensor& x);
Tensor sinc(const Tensor& x);  // sin(pi x) / (pi x), 1 at 0
Tensor deg2rad(const Tensor& x);
Tensor rad2deg(const Tensor& x);
Tensor isfinite(const Tensor& x);  // bool
Tensor signbit(const Tensor& x);   // bool: the sign bit, so -0.0 is negative
// log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given.
Tensor logit(const Tensor& x, std::optional<double> eps = std::nullopt);
// log |Gamma(x)| and its derivative, digamma (poles at 0 and the negative integers: inf, NaN).
Tensor lgamma(const Tensor& x);
Tensor digamma(const Tensor& x);
// NaN, +inf, -inf replaced (by 0 and the dtype's largest and lowest finite values by default).
Tensor nan_to_num(const Tensor& x, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);

// ---- activations (ops/activation.cpp) ----
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);
Tensor hardswish(const Tensor& x);
Tensor hardsigmoid(const Tensor& x);
Tensor relu6(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor selu(const Tensor& x);
Tensor celu(const Tensor& x, double alpha = 1.0);
Tensor softsign(const Tensor& x);
Tensor logsigmoid(const Tensor& x);
Tensor tanhshrink(const Tensor& x);
Tensor threshold(const Tensor& x, double threshold, double value);
Tensor hardshrink(const Tensor& x, double lambd = 0.5);
Tensor softshrink(const Tensor& x, double lambd = 0.5);
Tensor glu(const Tensor& x, std::int64_t dim = -1);   // first half * sigmoid(second half)
Tensor prelu(const Tensor& x, const Tensor& weight);  // weight: 1 slope or 1 per channel

// ---- binary arithmetic with broadcasting and type promotion (ops/binary.cpp) ----
Tensor add(const Tensor& a, const Tensor& b, double alpha = 1.0);
Tensor sub(const Tensor& a, const Tensor& b, double alpha = 1.0);
Tensor mul(const Tensor& a, const Tensor& b);
// rounding_mode: none (true division), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode = {});
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, double exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);

// ---- two-argument math (ops/binary_math.cpp) ----
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor logaddexp(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);       // the sign of a (C's fmod)
Tensor remainder(const Tensor& a, const Tensor& b);  // the sign of b (Python's %)
Tensor logaddexp2(const Tensor& a, const Tensor& b);
Tensor xlogy(const Tensor& a, const Tensor& b);     // a * log(b), 0 where a is 0
Tensor copysign(const Tensor& a, const Tensor& b);  // |a| with b's sign bit
Tensor fmax(const Tensor& a, const Tensor& b);      // a NaN loses to a number
Tensor fmin(const Tensor& a, const Tensor& b);

// ---- pointwise ops of three tensors (ops/pointwise3.cpp) ----
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               double value = 1.0);
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               double value = 1.0);

// ---- comparison and logic, results are bool (ops/compare.cpp) ----
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
// Bitwise ops of integer or bool tensors, in their promoted type (torch.bitwise_*).
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_not(const Tensor& a);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
// x with `value` (cast to x's dtype) where mask holds; mask broadcasts with x: torch.masked_fill.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);

// ---- reductions (ops/reduce.cpp); an empty dim list means every dim ----
Tensor sum(const Tensor& x, IntList dims = {}, bool keepdim = false,
           std::optional<Dtype> dtype = std::nullopt);
Tensor mean(const Tensor& x, IntList dims = {}, bool keepdim = false);
Tensor prod(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);
std::tuple<Tensor, Tensor> max(const Tensor& x, std::int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);  // of every element
Tensor min(const Tensor& x);
Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt,
              bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt,
              bool keepdim = false);
Tensor var(const Tensor& x, IntList dims = {}, std::int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& x, IntList dims = {}, std::int64_t correction = 1, bool keepdim = false);
Tensor logsumexp(const Tensor& x, IntList dims, bool keepdim = false);
// (var, mean) and (std, mean) of the same dims in one call.
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, IntList dims = {}, std::int64_t correction = 1,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntList dims = {}, std::int64_t correction = 1,
                                    bool keepdim = false);

// ---- reductions without indices (ops/reduce_any.cpp) ----
Tensor amax(const Tensor& x, IntList dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, IntList dims = {}, bool keepdim = false);
// Bool: whether some (every) element along `dim`, or of all, is non-zero (NaN is non-zero).
Tensor any(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);
Tensor all(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);

// ---- scans (ops/scan.cpp): integers and bool scan to int64 ----
Tensor cumsum(const Tensor& x, std::int64_t dim);
Tensor cumprod(const Tensor& x, std::int64_t dim);
// log(cumsum(exp(x))), computed stably; floating only.
Tensor logcumsumexp(const Tensor& x, std::int64_t dim);
// The running maximum (minimum) and the int64 index where it was last reached: a NaN, once
// seen, stays the running value.
std::tuple<Tensor, Tensor> cummax(const Tensor& x, std::int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& x, std::int64_t dim);

// ---- sorting (ops/sort.cpp): values and int64 indices; NaN sorts as the largest value ----
std::tuple<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim = -1, bool descending = false,
                                bool stable = false);
Tensor argsort(const Tensor& x, std::int64_t dim = -1, bool descending = false,
               bool stable = false);
// The k largest (or smallest) of every line along dim, sorted (torch.topk with sorted=True).
std::tuple<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t dim = -1,
                                bool largest = true);

// ---- softmax (ops/softmax.cpp) ----
Tensor softmax(const Tensor& x, std::int64_t dim);
Tensor log_softmax(const Tensor& x, std::int64_t dim);

// ---- linear algebra (ops/matmul.cpp) ----
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, double beta = 1.0,
             double alpha = 1.0);

// ---- products by name (ops/vector_products.cpp) ----
Tensor dot(const Tensor& a, const Tensor& b);           // 1-D · 1-D -> 0-D
Tensor mv(const Tensor& matrix, const Tensor& vector);  // [n, m] · [m] -> [n]
Tensor outer(const Tensor& a, const Tensor& b);         // [n], [m] -> [n, m]
Tensor trace(const Tensor& x);                          // the sum of a matrix's diagonal
// beta * self + alpha * batch1 @ batch2; self broadcasts, and is not read when beta is 0.
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, double beta = 1.0,
               double alpha = 1.0);

// ---- convolution (ops/conv.cpp); one-element lists apply to every spatial dim ----
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              IntList stride = {1}, IntList padding = {0}, IntList dilation = {1},
              std::int64_t groups = 1);
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              IntList stride = {1}, IntList padding = {0}, IntList dilation = {1},
              std::int64_t groups = 1);
// The transposed convolutions (the input gradient of a convolution): weight [in, out/groups,
// *kernel]; each spatial dim gives (in - 1) s - 2p + d(k-1) + output_padding + 1.
// output_padding must be smaller than the stride or the dilation, as in PyTorch.
Tensor conv_transpose1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        IntList stride = {1}, IntList padding = {0}, IntList output_padding = {0},
                        std::int64_t groups = 1, IntList dilation = {1});
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        IntList stride = {1}, IntList padding = {0}, IntList output_padding = {0},
                        std::int64_t groups = 1, IntList dilation = {1});

// ---- pairwise p-norm distances (ops/distance.cpp) ----
// cdist: x1 [..., P, M], x2 [..., R, M] (batch dims broadcast) -> [..., P, R].
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);
// pdist: x [N, M] -> the N (N - 1) / 2 distances of rows i < j, in row-major order.
Tensor pdist(const Tensor& x, double p = 2.0);

// ---- losses (ops/loss.cpp): self and target broadcast; reduction "none", "mean" or "sum" ----
Tensor mse_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean");
Tensor l1_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean");
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta = 0: l1_loss).
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean",
                      double beta = 1.0);
// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta): smooth_l1_loss times beta.
Tensor huber_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean",
                  double delta = 1.0);
// Classification losses: self holds scores of C classes ([C], [N, C] or [N, C, d...]), target
// int64 class indices of self's shape without the class dim; a target equal to ignore_index
// adds nothing and is not counted by "mean", which divides by the summed class weights of the
// counted targets (weight: [C], optional). nll_loss takes self as log-probabilities;
// cross_entropy_loss takes its log_softmax first, and label_smoothing mixes in the uniform
// distribution over the classes.
Tensor nll_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean",
                std::int64_t ignore_index = -100, const Tensor& weight = Tensor());
Tensor cross_entropy_loss(const Tensor& self, const Tensor& target,
                          std::string_view reduction = "mean", std::int64_t ignore_index = -100,
                          double label_smoothing = 0.0, const Tensor& weight = Tensor());
// (1 - target) self - log_weight log_sigmoid(self), log_weight = (pos_weight - 1) target + 1,
// times weight (both optional, broadcast): binary cross entropy of logits, target in [0, 1].
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target,
                                        std::string_view reduction = "mean",
                                        const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor());
// target (log target - self), or exp(target) (target - self) when the target is given as a log;
// 0 where a target (not given as a log) is 0.
Tensor kl_div(const Tensor& self, const Tensor& target, std::string_view reduction = "mean",
              bool log_target = false);

// ---- pooling (ops/pool.cpp); an empty stride means stride = kernel_size ----
Tensor max_pool1d(const Tensor& x, IntList kernel_size, IntList stride = {}, IntList padding = {0},
                  IntList dilation = {1}, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& x, IntList kernel_size, IntList stride = {}, IntList padding = {0},
                  IntList dilation = {1}, bool ceil_mode = false);
Tensor avg_pool1d(const Tensor& x, IntList kernel_size, IntList stride = {}, IntList padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor avg_pool2d(const Tensor& x, IntList kernel_size, IntList stride = {}, IntList padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& x, IntList output_size);
// The max of each adaptive window (F.adaptive_max_pool1d/2d's values).
Tensor adaptive_max_pool1d(const Tensor& x, IntList output_size);
Tensor adaptive_max_pool2d(const Tensor& x, IntList output_size);
// 3-D pools over [N, C, T, H, W] or [C, T, H, W] (ops/pool3d.cpp).
Tensor max_pool3d(const Tensor& x, IntList kernel_size, IntList stride = {}, IntList padding = {0},
                  IntList dilation = {1}, bool ceil_mode = false);
Tensor avg_pool3d(const Tensor& x, IntList kernel_size, IntList stride = {}, IntList padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool3d(const Tensor& x, IntList output_size);

// ---- normalization, embedding (ops/norm.cpp) ----
// In training mode, running_mean/var (when defined) are updated in place like PyTorch's.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum = 0.1,
                  double eps = 1e-5);
Tensor layer_norm(const Tensor& x, IntList normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// x * rsqrt(mean(x², last dims) + eps) * weight, as torch.nn.functional.rms_norm; eps absent:
// the machine epsilon of x's type (float32's for float16 and bfloat16, which run in float32).
Tensor rms_norm(const Tensor& x, IntList normalized_shape, const Tensor& weight = Tensor(),
                std::optional<double> eps = std::nullopt);
// The eps rms_norm takes when none is given, for an input of this type.
double rms_norm_default_eps(Dtype input);
// (N, C, *) normalized per sample over groups of C / num_groups channels: torch.group_norm.
Tensor group_norm(const Tensor& x, std::int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// F.instance_norm with the input's statistics and no running statistics (use_input_stats).
Tensor instance_norm(const Tensor& x, const Tensor& weight = Tensor(),
                     const Tensor& bias = Tensor(), double eps = 1e-5);
Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<std::int64_t> padding_idx = std::nullopt);

// ---- random draws (ops/random.cpp) ----
// Each draws from a generator seeded with `seed`, so that a graph runs the same twice; the values
// are weft's own, not PyTorch's (the oracle judges what depends on them by their properties).
// Zeroes elements with probability p using a generator seeded with `seed`, scales by 1/(1-p).
Tensor dropout(const Tensor& x, double p, bool training, std::uint64_t seed);
// Dropout of whole channels: one draw per (x.size(0), x.size(1)) entry (F.dropout1d/2d/3d).
Tensor feature_dropout(const Tensor& x, double p, bool training, std::uint64_t seed);
// SELU-preserving dropout: dropped elements take SELU's negative saturation, then an affine map
// keeps mean and variance (F.alpha_dropout); `feature`: per channel (F.feature_alpha_dropout).
Tensor alpha_dropout(const Tensor& x, double p, bool training, std::uint64_t seed);
Tensor feature_alpha_dropout(const Tensor& x, double p, bool training, std::uint64_t seed);
// Randomized leaky ReLU: slopes drawn from U(lower, upper) where x <= 0 in training, the mean
// slope (lower + upper) / 2 otherwise (F.rrelu).
Tensor rrelu(const Tensor& x, double lower, double upper, bool training, std::uint64_t seed);
// U[0, 1) and N(0, 1) in x's floating type and shape.
Tensor rand_like(const Tensor& x, std::uint64_t seed);
Tensor randn_like(const Tensor& x, std::uint64_t seed);
// The same draws as a program writes them with the factory, torch.rand(x.shape, dtype=x.dtype):
// an op of its own, since PyTorch (aten::rand) and its compilers take another path for it.
Tensor rand(const Tensor& shape_of, std::uint64_t seed);
Tensor randn(const Tensor& shape_of, std::uint64_t seed);
// Integers uniform in [low, high), in x's type and shape.
Tensor randint_like(const Tensor& x, std::int64_t low, std::int64_t high, std::uint64_t seed);
// 1 with probability p (per element of the tensor p, or the number p for every element of x's
// shape), 0 otherwise, in x's type. Not differentiable: the gradient of x is zero.
Tensor bernoulli(const Tensor& p, std::uint64_t seed);
Tensor bernoulli(const Tensor& x, double p, std::uint64_t seed);
// A random permutation of 0 .. n - 1 (int64); the second form is torch.randperm(x.size(dim)).
Tensor randperm(std::int64_t n, std::uint64_t seed);
Tensor randperm(const Tensor& size_of, std::int64_t dim, std::uint64_t seed);

// ---- views and shape (ops/shape.cpp); also available as Tensor methods ----
Tensor reshape(const Tensor& x, IntList shape);
Tensor view(const Tensor& x, IntList shape);
Tensor flatten(const Tensor& x, std::int64_t start_dim = 0, std::int64_t end_dim = -1);
Tensor squeeze(const Tensor& x, IntList dims = {});
Tensor unsqueeze(const Tensor& x, std::int64_t dim);
Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1);
Tensor permute(const Tensor& x, IntList dims);
Tensor expand(const Tensor& x, IntList sizes);
Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end,
             std::int64_t step = 1);
Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index);

// ---- reordering (ops/reorder.cpp): copies, never views ----
Tensor flip(const Tensor& x, IntList dims);
// Rolls each of `dims` by its shift; without dims the flattened tensor rolls by shifts[0].
Tensor roll(const Tensor& x, IntList shifts, IntList dims = {});
// x.repeat(repeats): at least x's rank of counts; extra leading counts add leading dims.
Tensor repeat(const Tensor& x, IntList repeats);
// torch.diagonal: the other dims in order, then the diagonal (a copy here, a view in PyTorch).
Tensor diagonal(const Tensor& x, std::int64_t offset = 0, std::int64_t dim1 = 0,
                std::int64_t dim2 = 1);

// [*, C * r * r, H, W] -> [*, C, H * r, W * r], and back: torch.pixel_shuffle / _unshuffle.
Tensor pixel_shuffle(const Tensor& x, std::int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& x, std::int64_t downscale_factor);

// ---- writes through views, functionalized (ops/scatter.cpp) ----
// A copy of base with slice(base, dim, start, end, step) (select(base, dim, index)) replaced
// by src, whose shape must be the slice's: torch.slice_scatter, torch.select_scatter.
Tensor slice_scatter(const Tensor& base, const Tensor& src, std::int64_t dim, std::int64_t start,
                     std::int64_t end, std::int64_t step = 1);
Tensor select_scatter(const Tensor& base, const Tensor& src, std::int64_t dim, std::int64_t index);
// src broadcast into self's shape and dtype: what `self.copy_(src)` computes (aten.copy).
Tensor copy(const Tensor& self, const Tensor& src);
// self (broadcast with the bool mask) with its masked elements replaced, in row-major order, by
// the leading elements of source: torch.masked_scatter.
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);

// ---- sliding blocks (ops/fold.cpp) ----
// F.unfold: every kernel-sized block of x [N, C, H, W] (or [C, H, W]) as a column of
// [N, C*kh*kw, L]; each list holds two values (height, width).
Tensor im2col(const Tensor& x, const std::vector<std::int64_t>& kernel_size,
              const std::vector<std::int64_t>& dilation, const std::vector<std::int64_t>& padding,
              const std::vector<std::int64_t>& stride);
// F.fold: columns [N, C*kh*kw, L] (or [C*kh*kw, L]) summed back into [N, C, *output_size].
Tensor col2im(const Tensor& x, const std::vector<std::int64_t>& output_size,
              const std::vector<std::int64_t>& kernel_size,
              const std::vector<std::int64_t>& dilation, const std::vector<std::int64_t>& padding,
              const std::vector<std::int64_t>& stride);

// ---- joining, splitting, padding (ops/join.cpp) ----
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, IntList section_sizes, std::int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0);
// pad lists (left, right) pairs starting from the last dim, as torch.nn.functional.pad.
Tensor pad(const Tensor& x, IntList pad, std::string_view mode = "constant", double value = 0.0);

// ---- triangles and indexing (ops/index.cpp) ----
Tensor tril(const Tensor& x, std::int64_t diagonal = 0);
Tensor triu(const Tensor& x, std::int64_t diagonal = 0);
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index);
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index);

// ---- index-driven writes and accumulation (ops/scatter_reduce.cpp) ----
// self with src[p] combined into the element whose position along `dim` is index[p] (and p's
// elsewhere): torch.scatter_add, torch.scatter_reduce (reduce: sum, prod, mean, amax, amin;
// include_self false leaves self's value out where a source lands).
Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_reduce(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self = true);
// self with src[p] written to the element that index[p] names along `dim`: torch.scatter. A
// repeated index writes twice; which write stays is undefined in PyTorch (here: the last).
Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
// self with alpha * source's slice i added to slice index[i] along `dim`: torch.index_add.
Tensor index_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source,
                 double alpha = 1.0);
// self with values written to (accumulate: added to) the rows that the 1-d index names along
// dim 0; values broadcast to those rows: torch.index_put(self, (index,), values, accumulate),
// x[index] = values.
Tensor index_put(const Tensor& self, const Tensor& index, const Tensor& values,
                 bool accumulate = false);

// ---- resampling (ops/interpolate.cpp): nearest, linear (3-d input), bilinear (4-d) ----
Tensor interpolate(const Tensor& x, IntList size, std::string_view mode = "nearest",
                   bool align_corners = false);

// ---- Python scalars as operands (ops/scalar.cpp) ----
// A Python number as an operand: `x * 2.5`, `x + True`, `2 - x`. Its kind (bool, int, float)
// takes part in type promotion as PyTorch's wrapped numbers do: it decides the result's
// category only when above the tensor's (int tensor * 2.5 is float32, float64 * 2.5 float64).
using Scalar = std::variant<bool, std::int64_t, double>;
Tensor add_scalar(const Tensor& x, const Scalar& other);   // x + other
Tensor sub_scalar(const Tensor& x, const Scalar& other);   // x - other
Tensor rsub_scalar(const Tensor& x, const Scalar& other);  // other - x
Tensor mul_scalar(const Tensor& x, const Scalar& other);   // x * other
Tensor div_scalar(const Tensor& x, const Scalar& other);   // x / other (true division)
Tensor pow_scalar(const Tensor& x, const Scalar& other);   // x ** other
Tensor rpow_scalar(const Tensor& x, const Scalar& other);  // other ** x
// A wrapped-number tensor holding `value` (weft::wrapped_scalar of its kind).
Tensor wrapped_scalar(const Scalar& value);

// ---- type conversion (ops/cast.cpp): differentiable between floating types ----
Tensor cast(const Tensor& x, Dtype dtype);
// x.contiguous(memory_format=...): "contiguous_format", or "channels_last" (rank 4: the
// values in NHWC order, strides to match). A copy only when the layout differs.
Tensor contiguous(const Tensor& x, std::string_view memory_format = "contiguous_format");

}  // namespace weft
