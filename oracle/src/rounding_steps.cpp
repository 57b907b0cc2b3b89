// The rounding model's rounded steps (rounding_ops.h): Monte Carlo perturbation of values, and
// the ops whose float32 evaluation rounds in steps that matter, run decomposed with every step
// perturbed (var and std with their mean, the norms, cdist by matrix product, sinc, tanhshrink).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "rounding_ops.h"
#include "weft/ops.h"

namespace weft::oracle::rounding_detail {

// t * (1 + unit * u), u uniform in [-1, 1] per element; differentiable in t.
Tensor perturb(const Tensor& t, double unit, Generator& gen) {
  if (!t.defined() || !t.is_floating_point() || t.numel() == 0) return t;
  std::vector<double> factor(static_cast<std::size_t>(t.numel()));
  for (double& f : factor) f = 1.0 + unit * (2.0 * gen.uniform() - 1.0);
  return mul(t, from_blob(factor.data(), t.sizes(), Dtype::Float64).to(t.dtype()));
}

// logsumexp's backward, g * exp(x - result), reads its rounded result beside its unrounded
// input: a rounding delta of the result (eps * |result|, large for a large result) scales the
// gradient by exp(-delta), which perturbing the output alone cannot show (the backward keeps
// the exact result it saved). The output as result + delta, with that gradient:
//   delta + exp(-delta) * result + (1 - exp(-delta)) * detach(result).
Tensor rounded_saved_result(const Tensor& result, double unit, Generator& gen) {
  if (!result.defined() || !result.is_floating_point() || result.numel() == 0) return result;
  const std::vector<double> values = result.to_vector<double>();
  std::vector<double> delta(values.size()), scale(values.size()), rest(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    delta[i] =
        std::isfinite(values[i]) ? unit * (2.0 * gen.uniform() - 1.0) * std::abs(values[i]) : 0.0;
    scale[i] = std::exp(-delta[i]);
    rest[i] = 1.0 - scale[i];
  }
  const auto constant = [&](const std::vector<double>& v) {
    return from_blob(v.data(), result.sizes(), Dtype::Float64).to(result.dtype());
  };
  return add(add(constant(delta), mul(constant(scale), result)),
             mul(constant(rest), result.detach()));
}

namespace {

// (x - mean) / sqrt(var + eps) over `dims`, each step rounded: layer_norm's, group_norm's and
// instance_norm's normalization, whose derivative keeps its mean terms.
Tensor normalized_rounded(const Tensor& x, const std::vector<std::int64_t>& dims, double epsilon,
                          double unit, Generator& gen) {
  const Tensor m = perturb(mean(x, dims, true), unit, gen);
  const auto count = static_cast<double>(x.numel()) / static_cast<double>(m.numel());
  const Tensor d = perturb(sub(x, m), unit, gen);
  const Tensor squares = perturb(mul(d, d), unit, gen);
  const Tensor v = perturb(sum(squares, dims, true) / count, unit, gen);
  return perturb(d / perturb(sqrt(v + epsilon), unit, gen), unit, gen);
}

// group_norm and instance_norm (groups == C): (N, C, *) normalized per group, rounded as
// above, then the per-channel affine map. Undefined where the shapes do not fit.
Tensor group_normalized_rounded(const ir::Node& node, const std::vector<Tensor>& in, double unit,
                                Generator& gen) {
  const Tensor& x = in[0];
  if (x.dim() < 2) return {};
  const std::int64_t n = x.size(0), channels = x.size(1);
  const std::int64_t groups =
      node.op == ir::OpKind::GroupNorm ? node.attrs.get_int("num_groups") : channels;
  if (groups <= 0 || channels % groups != 0) return {};
  const std::int64_t per_group = x.numel() / std::max<std::int64_t>(n * groups, 1);
  const Tensor grouped = reshape(x, {n, groups, per_group});
  Tensor y = reshape(normalized_rounded(grouped, {2}, node.attrs.get_float("eps", 1e-5), unit, gen),
                     x.sizes());
  Shape per_channel(static_cast<std::size_t>(x.dim()), 1);
  per_channel[1] = channels;
  if (in.size() > 1 && in[1].defined()) y = perturb(mul(y, reshape(in[1], per_channel)), unit, gen);
  if (in.size() > 2 && in[2].defined()) y = add(y, reshape(in[2], per_channel));
  return y;
}

// var, std and the normalizations subtract a mean that float32 rounds once per slice: an error
// common to every deviation, which breaks their summing to zero (the gradient of the variance of a
// constant is then eps-sized in float32, exactly zero in float64). Independent roundings of
// the elements cannot stand for it, so these ops run decomposed, each step rounded. Returns
// an undefined tensor where the op is not one of them.
// PyTorch's cdist with p = 2 and more than 25 rows on a side (compute_mode
// 'use_mm_for_euclid_dist_if_necessary') is _euclidean_dist, sqrt(clamp_min(|x1|^2 + |x2|^2 -
// 2 x1.x2, 1e-30)): its float32 error is eps times those terms, not the distance's, so rows
// near each other come out near sqrt(eps) |x| (expected, say the maintainers:
// pytorch/pytorch#57690). The run computes the same terms and adds a residue of that size, of
// positive sign so that the sqrt shows it (a negative one clamps to the exact 0). An empty
// result when the case takes the direct kernel.
Tensor euclidean_by_matrix_product(const ir::Node& node, const std::vector<Tensor>& in, double unit,
                                   Generator& gen) {
  if (in.size() != 2 || !in[1].defined() || node.attrs.get_float("p", 2.0) != 2.0) return {};
  const Tensor& x1 = in[0];
  const Tensor& x2 = in[1];
  if (x1.dim() < 2 || x2.dim() < 2 || x1.size(-1) == 0 || x2.numel() == 0) return {};
  if (x1.size(-2) <= 25 && x2.size(-2) <= 25) return {};
  const Tensor n1 = perturb(sum(mul(x1, x1), {-1}, true), unit, gen);
  const Tensor n2 = perturb(sum(mul(x2, x2), {-1}, true), unit, gen).transpose(-1, -2);
  const Tensor dot = perturb(matmul(x1, x2.transpose(-1, -2)), unit, gen);
  const Tensor terms = add(add(n1, n2), abs(dot) * 2.0).detach();
  std::vector<double> share(static_cast<std::size_t>(terms.numel()));
  for (double& s : share) s = unit * gen.uniform();
  const Tensor residue = mul(terms, from_blob(share.data(), terms.sizes(), Dtype::Float64));
  const Tensor squared = add(sub(add(n1, n2), dot * 2.0), residue.to(terms.dtype()));
  return sqrt(clamp(squared, 1e-30, std::nullopt));
}

// sinc's slope, PyTorch's (a cos a - sin a) / (pi x^2) with a = pi x, is a difference that
// cancels near 0: float32's rounding of sin a, eps * |sin a|, moves it by eps * |sin a| / (pi x^2),
// far beyond the slope's own rounding (seed 1208: Inductor's vectorized sin, 1 % off at
// x = -0.0016, where eager's was 0.03 % off). sin(a) / a with that rounding added as a constant
// moves the slope as much (by -delta pi / a^2); sinc(0) = 1 with slope 0, through a safe a.
Tensor sinc_rounded(const Tensor& x, double unit, Generator& gen) {
  const Tensor at_zero = eq(x, zeros({}, dtype(x.dtype())));
  const Tensor a =
      mul(where(at_zero, ones({}, dtype(x.dtype())), x), wrapped_scalar(3.14159265358979323846));
  const Tensor s = sin(a);
  const Tensor rounding = sub(perturb(s.detach(), unit, gen), s.detach());
  return where(at_zero, ones({}, dtype(x.dtype())), div(add(s, rounding), a));
}

}  // namespace

Tensor decomposed(const ir::Node& node, const std::vector<Tensor>& in, double unit,
                  Generator& gen) {
  const ir::Attributes& a = node.attrs;
  if (in.empty() || !in[0].defined() || !in[0].is_floating_point() || in[0].numel() == 0) {
    return {};
  }
  const Tensor& x = in[0];
  // F.tanhshrink is Python, x - x.tanh(): for small x the difference cancels, and its error is
  // tanh's rounding, eps * |x|, not eps * |x - tanh x| (a selu after it flipped its kink on
  // torchscript-nnc, whose tanh is not ATen's, between two calls).
  if (node.op == ir::OpKind::Tanhshrink) return sub(x, perturb(tanh(x), unit, gen));
  if (node.op == ir::OpKind::Sinc) return sinc_rounded(x, unit, gen);
  if (node.op == ir::OpKind::GroupNorm || node.op == ir::OpKind::InstanceNorm) {
    return group_normalized_rounded(node, in, unit, gen);
  }
  if (node.op == ir::OpKind::Cdist) return euclidean_by_matrix_product(node, in, unit, gen);
  std::vector<std::int64_t> dims;
  std::int64_t correction = 0;
  bool keepdim = true;
  if (node.op == ir::OpKind::Var || node.op == ir::OpKind::Std) {
    dims = a.get_ints("dim", {});
    correction = a.get_int("correction", 1);
    keepdim = a.get_bool("keepdim", false);
  } else if (node.op == ir::OpKind::RmsNorm) {
    // x * rsqrt(mean(x²) + eps) * weight, each step rounded; a sum of squares does not cancel.
    const std::size_t normalized = a.get_ints("normalized_shape").size();
    const std::size_t rank = x.sizes().size();
    if (normalized == 0 || normalized > rank || !a.has("eps")) return {};
    for (std::size_t d = rank - normalized; d < rank; ++d)
      dims.push_back(static_cast<std::int64_t>(d));
    const Tensor squares = perturb(mul(x, x), unit, gen);
    const Tensor m = perturb(mean(squares, dims, true), unit, gen);
    Tensor y = perturb(mul(x, perturb(rsqrt(m + a.get_float("eps")), unit, gen)), unit, gen);
    if (in.size() > 1 && in[1].defined()) y = perturb(mul(y, in[1]), unit, gen);
    return y;
  } else if (node.op == ir::OpKind::LayerNorm) {
    const std::size_t normalized = a.get_ints("normalized_shape").size();
    const std::size_t rank = x.sizes().size();
    if (normalized == 0 || normalized > rank) return {};
    for (std::size_t d = rank - normalized; d < rank; ++d)
      dims.push_back(static_cast<std::int64_t>(d));
    Tensor y = normalized_rounded(x, dims, a.get_float("eps", 1e-5), unit, gen);
    if (in.size() > 1 && in[1].defined()) y = perturb(mul(y, in[1]), unit, gen);
    if (in.size() > 2 && in[2].defined()) y = add(y, in[2]);
    return y;
  } else {
    return {};
  }
  // For var and std the mean is a constant of the backward too: their derivative,
  // 2 (x - mean) / (n - correction), holds because the deviations sum to zero, and float32
  // evaluates it with its rounded mean.
  const Tensor m = perturb(mean(x, dims, true), unit, gen).detach();
  const auto count = static_cast<double>(x.numel()) / static_cast<double>(m.numel());
  if (count - static_cast<double>(correction) <= 0) return {};
  const Tensor d = perturb(sub(x, m), unit, gen);
  const Tensor squares = perturb(mul(d, d), unit, gen);
  Tensor v =
      perturb(sum(squares, dims, keepdim) / (count - static_cast<double>(correction)), unit, gen);
  return node.op == ir::OpKind::Std ? sqrt(v) : v;
}

}  // namespace weft::oracle::rounding_detail
