// The rounding model (weft/oracle/rounding.h): Monte Carlo arithmetic on the float64 engine,
// then two runs that move every decision rounding could have flipped.
#include "weft/oracle/rounding.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <string>

#include "weft/autograd/hooks.h"
#include "weft/ir/op_schema.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::oracle {

namespace {

constexpr double kUnit32 = 0x1p-23;  // FLT_EPSILON: one float32 rounding, with margin
constexpr double kUnit64 = 0x1p-52;

// One rounding of a value of `dtype`: float16's and bfloat16's epsilons are their own (the
// op computed in float32 and rounded its result to them).
double unit_of(Dtype dtype) {
  if (dtype == Dtype::Float64) return kUnit64;
  return is_reduced_floating(dtype) ? dtype_epsilon(dtype) : kUnit32;
}

enum class Decision { None, Elementwise, Index, Kink };

bool reads_floating(const ir::Graph& graph, const ir::Node& node) {
  return std::any_of(node.inputs.begin(), node.inputs.end(),
                     [&](ir::ValueId id) { return is_floating(graph.type(id).dtype); });
}

Decision decision_of(const ir::Graph& graph, const ir::Node& node) {
  // The order of exact ties is a path's choice for any dtype, unless the sort is stable.
  const bool sorts = node.op == ir::OpKind::Sort || node.op == ir::OpKind::Argsort;
  if ((sorts && !node.attrs.get_bool("stable", false)) || node.op == ir::OpKind::Topk) {
    return Decision::Index;
  }
  if (!reads_floating(graph, node)) return Decision::None;
  switch (node.op) {
    case ir::OpKind::Floor:
    case ir::OpKind::Ceil:
    case ir::OpKind::Round:
    case ir::OpKind::Sign:
    case ir::OpKind::Signbit:
    case ir::OpKind::Copysign:  // b's sign, which a rounding near 0 can flip
    case ir::OpKind::Trunc:
    case ir::OpKind::Frac:
    case ir::OpKind::Fmod:
    case ir::OpKind::Remainder:
    case ir::OpKind::Threshold:
    case ir::OpKind::Hardshrink:
    case ir::OpKind::Eq:
    case ir::OpKind::Ne:
    case ir::OpKind::Lt:
    case ir::OpKind::Le:
    case ir::OpKind::Gt:
    case ir::OpKind::Ge:
    case ir::OpKind::Any:  // x != 0, reduced: a rounding can make an element zero or not
    case ir::OpKind::All:
      return Decision::Elementwise;
    case ir::OpKind::Div:
      return node.attrs.has("rounding_mode") ? Decision::Elementwise : Decision::None;
    case ir::OpKind::Logit:  // with eps: a clamp to [eps, 1 - eps]
      return node.attrs.has("eps") ? Decision::Kink : Decision::None;
    case ir::OpKind::Cast:
      return !node.outputs.empty() && !is_floating(graph.type(node.outputs[0]).dtype)
                 ? Decision::Elementwise
                 : Decision::None;
    case ir::OpKind::Argmax:
    case ir::OpKind::Argmin:
    case ir::OpKind::Sort:
    case ir::OpKind::Argsort:
    case ir::OpKind::Topk:
      return Decision::Index;
    case ir::OpKind::Max:
    case ir::OpKind::Min:
      return node.outputs.size() == 2 ? Decision::Index : Decision::None;
    case ir::OpKind::Cummax:
    case ir::OpKind::Cummin:
      return Decision::Index;
    case ir::OpKind::Relu:
    case ir::OpKind::LeakyRelu:
    case ir::OpKind::Hardtanh:
    case ir::OpKind::Clamp:
    case ir::OpKind::Abs:
    case ir::OpKind::Maximum:
    case ir::OpKind::Minimum:
    case ir::OpKind::Fmax:
    case ir::OpKind::Fmin:
    case ir::OpKind::Prelu:
    case ir::OpKind::Hardswish:
    case ir::OpKind::Hardsigmoid:
    case ir::OpKind::Relu6:
    case ir::OpKind::Selu:
    case ir::OpKind::Softshrink:
    case ir::OpKind::L1Loss:  // |self - target|
    // A zero distance passes no gradient, and p = 1 takes the sign of each difference: a
    // rounding moves both (and PyTorch's p = 2 by matrix product, above 25 rows, puts a
    // rounding error where the distance is 0).
    case ir::OpKind::Cdist:
    case ir::OpKind::Pdist:
      return Decision::Kink;
    default:
      return Decision::None;
  }
}

// Ops whose kernels accumulate many terms: their float32 error grows with the terms' sizes,
// not the result's, so each of their floating inputs carries a rounding of its own.
bool accumulates(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::Sum:
    case ir::OpKind::Mean:
    case ir::OpKind::Prod:
    case ir::OpKind::Cumsum:
    case ir::OpKind::Cumprod:
    case ir::OpKind::Logcumsumexp:
    // The losses' mean and sum (reduction "none" only rounds each element: looser than it
    // needs, not wrong).
    case ir::OpKind::MseLoss:
    case ir::OpKind::L1Loss:
    case ir::OpKind::SmoothL1Loss:
    case ir::OpKind::HuberLoss:
    // nll_loss and cross_entropy_loss: their picked scores summed (and cross_entropy's
    // log_softmax over the classes).
    case ir::OpKind::NllLoss:
    case ir::OpKind::CrossEntropyLoss:
    case ir::OpKind::BinaryCrossEntropyWithLogits:
    case ir::OpKind::KlDiv:
    case ir::OpKind::Var:
    case ir::OpKind::Std:
    case ir::OpKind::VarMean:
    case ir::OpKind::StdMean:
    case ir::OpKind::Logsumexp:
    case ir::OpKind::Softmax:
    case ir::OpKind::LogSoftmax:
    case ir::OpKind::Matmul:
    case ir::OpKind::Mm:
    case ir::OpKind::Bmm:
    case ir::OpKind::Linear:
    case ir::OpKind::Addmm:
    case ir::OpKind::Dot:
    case ir::OpKind::Mv:
    case ir::OpKind::Trace:
    case ir::OpKind::Baddbmm:
    case ir::OpKind::Cdist:
    case ir::OpKind::Pdist:
    case ir::OpKind::Conv1d:
    case ir::OpKind::Conv2d:
    case ir::OpKind::ConvTranspose1d:
    case ir::OpKind::ConvTranspose2d:
    case ir::OpKind::AvgPool1d:
    case ir::OpKind::AvgPool2d:
    case ir::OpKind::AdaptiveAvgPool2d:
    case ir::OpKind::AvgPool3d:
    case ir::OpKind::AdaptiveAvgPool3d:
    case ir::OpKind::BatchNorm:
    case ir::OpKind::LayerNorm:
    case ir::OpKind::RmsNorm:
    case ir::OpKind::GroupNorm:
    case ir::OpKind::InstanceNorm:
    case ir::OpKind::ScatterAdd:
    case ir::OpKind::IndexAdd:
    case ir::OpKind::IndexPut:  // accumulate adds repeated rows; a plain put moves values
    case ir::OpKind::Interpolate:
    case ir::OpKind::Col2im:      // overlapping blocks add up
    case ir::OpKind::Tanhshrink:  // a difference that cancels: decomposed below
    case ir::OpKind::Sinc:        // its slope is a difference that cancels: decomposed below
      return true;
    default:
      return false;
  }
}

// Ops that move, select or compare values without rounding them: no perturbation of their own.
bool exact(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::Neg:
    case ir::OpKind::Abs:
    case ir::OpKind::Relu:
    case ir::OpKind::Hardtanh:
    case ir::OpKind::Clamp:
    case ir::OpKind::Maximum:
    case ir::OpKind::Minimum:
    case ir::OpKind::Fmax:
    case ir::OpKind::Fmin:
    case ir::OpKind::Copysign:
    case ir::OpKind::NanToNum:
    case ir::OpKind::Max:
    case ir::OpKind::Min:
    case ir::OpKind::Amax:
    case ir::OpKind::Amin:
    case ir::OpKind::Argmax:
    case ir::OpKind::Argmin:
    case ir::OpKind::Sort:
    case ir::OpKind::Argsort:
    case ir::OpKind::Topk:
    case ir::OpKind::MaxPool1d:
    case ir::OpKind::MaxPool2d:
    case ir::OpKind::MaxPool3d:
    case ir::OpKind::AdaptiveMaxPool1d:
    case ir::OpKind::AdaptiveMaxPool2d:
    case ir::OpKind::Where:
    case ir::OpKind::Floor:
    case ir::OpKind::Ceil:
    case ir::OpKind::Round:
    case ir::OpKind::Sign:
    case ir::OpKind::Trunc:
    case ir::OpKind::Frac:
    case ir::OpKind::Fmod:
    case ir::OpKind::Isnan:
    case ir::OpKind::Isinf:
    case ir::OpKind::Isfinite:
    case ir::OpKind::Relu6:
    case ir::OpKind::Threshold:
    case ir::OpKind::Hardshrink:
    case ir::OpKind::Eq:
    case ir::OpKind::Ne:
    case ir::OpKind::Lt:
    case ir::OpKind::Le:
    case ir::OpKind::Gt:
    case ir::OpKind::Ge:
    case ir::OpKind::Embedding:
    case ir::OpKind::Reshape:
    case ir::OpKind::Flatten:
    case ir::OpKind::Squeeze:
    case ir::OpKind::Unsqueeze:
    case ir::OpKind::Transpose:
    case ir::OpKind::Permute:
    case ir::OpKind::Expand:
    case ir::OpKind::Slice:
    case ir::OpKind::Select:
    case ir::OpKind::Flip:
    case ir::OpKind::Roll:
    case ir::OpKind::Repeat:
    case ir::OpKind::Diagonal:
    case ir::OpKind::SliceScatter:
    case ir::OpKind::SelectScatter:
    case ir::OpKind::Cat:
    case ir::OpKind::Stack:
    case ir::OpKind::Split:
    case ir::OpKind::Chunk:
    case ir::OpKind::Pad:
    case ir::OpKind::Tril:
    case ir::OpKind::Triu:
    case ir::OpKind::Gather:
    case ir::OpKind::IndexSelect:
    case ir::OpKind::MaskedFill:
    case ir::OpKind::Im2col:
    case ir::OpKind::Copy:  // the generator gives src self's dtype: no rounding cast
    case ir::OpKind::MaskedScatter:
    case ir::OpKind::Scatter:
    case ir::OpKind::PixelShuffle:
    case ir::OpKind::PixelUnshuffle:
    case ir::OpKind::Cummax:
    case ir::OpKind::Cummin:
      return true;
    default:
      return false;
  }
}

// scatter_reduce takes the max or min of its terms (amax, amin: exact, as amax is) or
// accumulates them (sum, prod, mean).
bool exact(const ir::Node& node) {
  if (node.op == ir::OpKind::ScatterReduce) {
    const std::string reduce = node.attrs.get_string("reduce", "sum");
    return reduce == "amax" || reduce == "amin";
  }
  return exact(node.op);
}
bool accumulates(const ir::Node& node) {
  return node.op == ir::OpKind::ScatterReduce ? !exact(node) : accumulates(node.op);
}

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

// t + sign * delta (delta per element, a constant); differentiable in t.
Tensor shift(const Tensor& t, const std::vector<double>& delta, double sign) {
  if (!t.defined() || !t.is_floating_point() || delta.size() != static_cast<std::size_t>(t.numel()))
    return t;
  std::vector<double> moved(delta.size());
  for (std::size_t i = 0; i < delta.size(); ++i) moved[i] = sign * delta[i];
  return add(t, from_blob(moved.data(), t.sizes(), Dtype::Float64).to(t.dtype()));
}

bool same_values(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.sizes() != b.sizes()) return false;
  const std::vector<double> x = a.to_vector<double>();
  const std::vector<double> y = b.to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] != y[i] && !(std::isnan(x[i]) && std::isnan(y[i]))) return false;
  }
  return true;
}

// The slices an index op reduces: output element e reads x[begin(e) + j * inner], j < size.
struct Slices {
  std::size_t count = 1;
  std::size_t size = 0;
  std::size_t inner = 1;
  std::size_t begin(std::size_t e) const { return (e / inner) * size * inner + e % inner; }
};

Slices slices_of(const ir::Node& node, const Shape& shape) {
  Slices s;
  std::size_t numel = 1;
  for (std::int64_t d : shape) numel *= static_cast<std::size_t>(d);
  if (!node.attrs.has("dim") || shape.empty()) {
    s.size = numel;
    return s;
  }
  std::int64_t dim = node.attrs.get_int("dim");
  const auto rank = static_cast<std::int64_t>(shape.size());
  if (dim < 0) dim += rank;
  dim = std::clamp<std::int64_t>(dim, 0, rank - 1);
  s.size = static_cast<std::size_t>(shape[static_cast<std::size_t>(dim)]);
  for (std::int64_t d = dim + 1; d < rank; ++d) {
    s.inner *= static_cast<std::size_t>(shape[static_cast<std::size_t>(d)]);
  }
  s.count = s.size == 0 ? 0 : numel / s.size;
  return s;
}

class Model {
 public:
  Model(const ir::Graph& graph, const ir::TensorMap& values, const std::vector<Tensor>& cotangents,
        const RoundingOptions& options)
      : graph_(graph), values_(values), cotangents_(cotangents), options_(options) {}

  RoundingModel build() {
    RoundingModel model;
    try {
      ir::ExecutionOptions run;
      run.floating_dtype = Dtype::Float64;
      run.keep_values = true;
      reference_ = ir::execute(graph_, values_, run).values;
    } catch (const std::exception& e) {
      model.failure = e.what();
      return model;
    }
    error_.assign(reference_.size(), {});
    try {
      ir::ExecutionOptions run;
      run.keep_values = true;
      widen(ir::execute(graph_, values_, run).values);
    } catch (const std::exception&) {
      // The float32 engine refused the case: the Monte Carlo runs alone set the honest error.
    }
    for (int k = 0; k < options_.monte_carlo_runs; ++k) {
      try {
        ir::Execution forward;
        model.runs.push_back(monte_carlo_run(static_cast<std::uint64_t>(k), forward));
        widen(forward.values);
      } catch (const std::exception& e) {
        model.failure = e.what();
      }
    }
    model.monte_carlo_runs = static_cast<int>(model.runs.size());
    model.value_error = error_;
    bool has_decisions = false;
    for (const ir::Node& node : graph_.nodes()) {
      has_decisions = has_decisions || decision_of(graph_, node) != Decision::None;
    }
    if (has_decisions) {
      for (double side : {-1.0, 1.0}) {
        try {
          model.runs.push_back(decision_run(side));
        } catch (const std::exception&) {
          // A moved decision the rest of the graph cannot take (an index out of range): that
          // side tells nothing.
        }
      }
    }
    model.moved_decisions.assign(moved_.begin(), moved_.end());
    model.undecided_outputs = outputs_reached_by_undecided_order();
    return model;
  }

 private:
  // Every element's error grows to its distance from the reference in `run`.
  void widen(const std::vector<Tensor>& run) {
    for (std::size_t id = 0; id < reference_.size() && id < run.size(); ++id) {
      const Tensor& r = reference_[id];
      const Tensor& x = run[id];
      if (!r.defined() || !x.defined() || r.sizes() != x.sizes()) continue;
      const std::vector<double> rv = r.to_vector<double>();
      const std::vector<double> xv = x.to_vector<double>();
      std::vector<double>& error = error_[id];
      error.resize(rv.size(), 0.0);
      for (std::size_t i = 0; i < rv.size(); ++i) {
        const double d = std::abs(xv[i] - rv[i]);
        if (std::isnan(d)) {
          if (!(std::isnan(xv[i]) && std::isnan(rv[i])) && !(xv[i] == rv[i])) {
            error[i] = std::numeric_limits<double>::infinity();
          }
        } else {
          error[i] = std::max(error[i], d);
        }
      }
    }
  }

  CallResult run_with(const ir::ExecutionOptions& options, ir::Execution* forward) {
    CallResult call;
    if (cotangents_.empty()) {
      ir::Execution run = ir::execute(graph_, values_, options);
      call.outputs = run.outputs;
      if (forward) *forward = std::move(run);
      return call;
    }
    ir::GradientExecution run = ir::execute_with_gradients(graph_, values_, cotangents_, options);
    call.outputs = run.forward.outputs;
    call.gradients = std::move(run.gradients);
    if (forward) *forward = std::move(run.forward);
    return call;
  }

  CallResult monte_carlo_run(std::uint64_t k, ir::Execution& forward) {
    Generator gen(options_.seed + 0x9e3779b97f4a7c15ull * (k + 1));
    const bool all_double =
        std::all_of(graph_.values().begin(), graph_.values().end(), [](const ir::Value& v) {
          return !is_floating(v.type.dtype) || v.type.dtype == Dtype::Float64;
        });
    // Gradients between ops are stored in their value's dtype: the widest unit of the case
    // stands for all of them (the hook does not say which value a gradient belongs to).
    double gradient_unit = all_double ? kUnit64 : kUnit32;
    for (const ir::Value& v : graph_.values()) {
      if (is_reduced_floating(v.type.dtype))
        gradient_unit = std::max(gradient_unit, unit_of(v.type.dtype));
    }
    ir::ExecutionOptions run;
    run.floating_dtype = Dtype::Float64;
    run.keep_values = true;
    run.after_node = [&](std::size_t n, const std::vector<Tensor>& inputs,
                         std::vector<Tensor>& outputs) {
      const ir::Node& node = graph_.nodes()[n];
      const Decision decision = decision_of(graph_, node);
      if (decision == Decision::Elementwise || decision == Decision::Index) {
        decide_as_reference(node, outputs);
        return;
      }
      if (exact(node)) return;
      if (accumulates(node)) {
        std::vector<Tensor> rounded = inputs;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          rounded[i] = perturb(inputs[i], unit_of(graph_.type(node.inputs[i]).dtype), gen);
        }
        // var_mean and std_mean: their var (std) is var's (std's) steps, their mean a mean.
        const bool with_mean = node.op == ir::OpKind::VarMean || node.op == ir::OpKind::StdMean;
        std::optional<ir::Node> spread;  // a copy only for these two and rms_norm
        if (with_mean) {
          spread = node;
          spread->op = node.op == ir::OpKind::VarMean ? ir::OpKind::Var : ir::OpKind::Std;
        } else if (node.op == ir::OpKind::RmsNorm && !node.attrs.has("eps")) {
          // Its default eps is its declared input type's, not float64's.
          spread = node;
          spread->attrs.set("eps", rms_norm_default_eps(graph_.type(node.inputs[0]).dtype));
        }
        const Tensor steps = decomposed(spread ? *spread : node, rounded,
                                        unit_of(graph_.type(node.outputs[0]).dtype), gen);
        if (steps.defined() && outputs.size() == 1 && steps.sizes() == outputs[0].sizes()) {
          outputs = {steps};
        } else {
          outputs = ir::run_node(node, rounded, Dtype::Float64);
          if (with_mean && steps.defined() && !outputs.empty() &&
              steps.sizes() == outputs[0].sizes()) {
            outputs[0] = steps;
          }
        }
      }
      if (node.op == ir::OpKind::Logsumexp && outputs.size() == 1) {
        outputs[0] =
            rounded_saved_result(outputs[0], unit_of(graph_.type(node.outputs[0]).dtype), gen);
        return;
      }
      for (std::size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k) {
        outputs[k] = perturb(outputs[k], unit_of(graph_.type(node.outputs[k]).dtype), gen);
      }
    };
    autograd::BackwardHookGuard hook([&](const std::string&, std::vector<Tensor>& gradients) {
      for (Tensor& g : gradients) g = perturb(g, gradient_unit, gen);
    });
    return run_with(run, &forward);
  }

  // Monte Carlo runs measure continuous rounding only: their decisions are the reference's,
  // and the decision runs alone move them (a flip is no spread to multiply by the margin).
  void decide_as_reference(const ir::Node& node, std::vector<Tensor>& outputs) const {
    const std::size_t first = node.outputs.size() == 2 ? 1 : 0;  // max/min: the indices
    for (std::size_t k = first; k < outputs.size() && k < node.outputs.size(); ++k) {
      const Tensor& decided = reference_[static_cast<std::size_t>(node.outputs[k])];
      if (!decided.defined() || decided.sizes() != outputs[k].sizes()) continue;
      outputs[k] = outputs[k].is_floating_point()
                       ? add(outputs[k], sub(decided.to(outputs[k].dtype()), outputs[k].detach()))
                       : decided.to(outputs[k].dtype());
    }
  }

  // How far the decisions reading value `id` may move: margin x its honest error.
  std::vector<double> delta(ir::ValueId id) const {
    const auto index = static_cast<std::size_t>(id);
    std::vector<double> d = index < error_.size() ? error_[index] : std::vector<double>();
    for (double& v : d) v = std::isfinite(v) ? options_.margin * v : 0.0;
    return d;
  }

  CallResult decision_run(double side) {
    ir::ExecutionOptions run;
    run.floating_dtype = Dtype::Float64;
    run.after_node = [&](std::size_t n, const std::vector<Tensor>& inputs,
                         std::vector<Tensor>& outputs) {
      const ir::Node& node = graph_.nodes()[n];
      switch (decision_of(graph_, node)) {
        case Decision::None:
          return;
        case Decision::Elementwise:
          move_elementwise(n, inputs, outputs, side);
          return;
        case Decision::Kink:
          move_kink(n, inputs, outputs, side);
          return;
        case Decision::Index:
          move_index(n, inputs, outputs, side);
          return;
      }
    };
    return run_with(run, nullptr);
  }

  // The other input of a binary decision moves the other way: a - b moves by both.
  std::vector<Tensor> moved_inputs(const ir::Node& node, const std::vector<Tensor>& inputs,
                                   double side) const {
    std::vector<Tensor> moved = inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      moved[i] = shift(inputs[i], delta(node.inputs[i]), i == 0 ? side : -side);
    }
    return moved;
  }

  void move_elementwise(std::size_t n, const std::vector<Tensor>& inputs,
                        std::vector<Tensor>& outputs, double side) {
    const ir::Node& node = graph_.nodes()[n];
    if ((node.op == ir::OpKind::Eq || node.op == ir::OpKind::Ne) && inputs.size() == 2) {
      move_equality(n, inputs, outputs, side);
      return;
    }
    std::vector<Tensor> detached;
    for (const Tensor& t : inputs) detached.push_back(t.defined() ? t.detach() : t);
    std::vector<Tensor> moved =
        ir::run_node(node, moved_inputs(node, detached, side), Dtype::Float64);
    if (moved.size() != outputs.size()) return;
    for (std::size_t k = 0; k < moved.size(); ++k) {
      if (!same_values(moved[k], outputs[k])) moved_.insert(n);
      // Keep the node's own autograd link where it has one (a floor's zero gradient).
      if (moved[k].is_floating_point() && outputs[k].is_floating_point()) {
        moved[k] = add(outputs[k], sub(moved[k], outputs[k].detach()));
      }
    }
    outputs = std::move(moved);
  }

  // The graph outputs computed from the indices of a sort, argsort or topk whose order the
  // decision runs moved. The two runs try two orders of each group of ties, all groups at once;
  // a path may pick any order in each group, and what a consumer makes of indices used as
  // values (another topk of them) can then differ from both runs where they agree (campaign
  // seed 1207: topk of the indices of a topk over tied floats).
  std::vector<std::size_t> outputs_reached_by_undecided_order() const {
    // The indices themselves are judged element by element (the decision runs differ on every
    // tied position); only what is computed from them is left out.
    std::set<ir::ValueId> undecided_indices, tainted;
    const auto reads = [](const ir::Node& node, const std::set<ir::ValueId>& values) {
      return std::any_of(node.inputs.begin(), node.inputs.end(),
                         [&](ir::ValueId id) { return values.count(id) > 0; });
    };
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
      const ir::Node& node = graph_.nodes()[n];
      if (reads(node, undecided_indices) || reads(node, tainted)) {
        tainted.insert(node.outputs.begin(), node.outputs.end());
      }
      const bool order = node.op == ir::OpKind::Sort || node.op == ir::OpKind::Argsort ||
                         node.op == ir::OpKind::Topk;
      if (order && moved_.count(n) > 0) undecided_indices.insert(node.outputs.back());
    }
    std::vector<std::size_t> reached;
    for (std::size_t k = 0; k < graph_.outputs().size(); ++k) {
      if (tainted.count(graph_.outputs()[k]) > 0) reached.push_back(k);
    }
    return reached;
  }

  // eq, ne: moving the inputs apart or across never makes them equal, yet a path can round two
  // values that differ in float64 to the same float (two bfloat16 results of different
  // functions). Elements whose inputs lie within their margins of each other are equal on one
  // side and unequal on the other, so either reading is honest there.
  void move_equality(std::size_t n, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                     double side) {
    const ir::Node& node = graph_.nodes()[n];
    if (outputs.size() != 1 || !inputs[0].defined() || !inputs[1].defined()) return;
    const auto margin = [&](std::size_t i) {
      const Tensor x = inputs[i].detach().to(Dtype::Float64);
      std::vector<double> d = delta(node.inputs[i]);
      if (d.size() != static_cast<std::size_t>(x.numel())) d.assign(x.numel(), 0.0);
      return std::make_pair(x, from_blob(d.data(), x.sizes(), Dtype::Float64).clone());
    };
    const auto [a, da] = margin(0);
    const auto [b, db] = margin(1);
    const Tensor undecided = le(abs(sub(a, b)), add(da, db));
    Tensor equal = where(undecided, full_like(undecided, side > 0 ? 1.0 : 0.0), eq(a, b));
    if (node.op == ir::OpKind::Ne) equal = logical_not(equal);
    const Tensor moved = equal.to(outputs[0].dtype());
    if (!same_values(moved, outputs[0])) moved_.insert(n);
    outputs[0] = moved;
  }

  // A kink keeps its forward value; its derivative is taken at the moved input, so the
  // gradient routes as a path whose rounding crossed the kink would route it. A kink moves at
  // least one ulp of its input's dtype (float32's, float16's, bfloat16's): the derivative on a
  // kink is each PyTorch's convention (clamp's at a bound is 1 in LibTorch 1.13, 0 in 2.x, 0.5
  // with tensor bounds), and the dtype may put an input that float64 puts near a bound on
  // either side of it, or on it (PyTorch rounds a clamp's scalar bound to a float16 tensor's
  // dtype), so an input on a kink is undecided even where rounding cannot move it.
  void move_kink(std::size_t n, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                 double side) {
    const ir::Node& node = graph_.nodes()[n];
    std::vector<Tensor> shifted = inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined() || !inputs[i].is_floating_point()) continue;
      const std::vector<double> x = inputs[i].to_vector<double>();
      std::vector<double> d = delta(node.inputs[i]);
      d.resize(x.size(), 0.0);
      const Dtype declared = graph_.type(node.inputs[i]).dtype;
      const double unit = is_reduced_floating(declared) ? dtype_epsilon(declared) : 0x1p-23;
      const double smallest = declared == Dtype::Float16
                                  ? 0x1p-24
                                  : static_cast<double>(std::numeric_limits<float>::denorm_min());
      for (std::size_t j = 0; j < x.size(); ++j) {
        const double ulp = std::max(std::abs(x[j]) * unit, smallest);
        if (std::isfinite(ulp)) d[j] = std::max(d[j], ulp);
      }
      shifted[i] = shift(inputs[i], d, i == 0 ? side : -side);
    }
    const std::vector<Tensor> moved = ir::run_node(node, shifted, Dtype::Float64);
    if (moved.size() != outputs.size()) return;
    for (std::size_t k = 0; k < moved.size(); ++k) {
      if (!moved[k].is_floating_point() || moved[k].sizes() != outputs[k].sizes()) continue;
      const std::vector<double> want = outputs[k].to_vector<double>();
      const std::vector<double> got = moved[k].to_vector<double>();
      std::vector<double> correction(want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        const double c = want[i] - got[i];
        correction[i] = std::isfinite(c) ? c : 0.0;
      }
      if (!same_values(moved[k], outputs[k])) moved_.insert(n);
      outputs[k] =
          add(moved[k],
              from_blob(correction.data(), moved[k].sizes(), Dtype::Float64).to(moved[k].dtype()));
    }
  }

  // argmax/argmin (and max/min's indices) pick the first (side < 0) or the last (side > 0) of
  // the elements whose values lie within their moves of the extreme.
  void move_index(std::size_t n, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                  double side) {
    const ir::Node& node = graph_.nodes()[n];
    if (node.op == ir::OpKind::Sort || node.op == ir::OpKind::Argsort ||
        node.op == ir::OpKind::Topk) {
      move_order(n, inputs, outputs, side);
      return;
    }
    if (node.op == ir::OpKind::Cummax || node.op == ir::OpKind::Cummin) {
      move_running_index(n, inputs, outputs, side);
      return;
    }
    const std::size_t slot = node.outputs.size() == 2 ? 1 : 0;
    if (inputs.empty() || !inputs[0].defined() || slot >= outputs.size()) return;
    const bool largest = node.op == ir::OpKind::Argmax || node.op == ir::OpKind::Max;
    const std::vector<double> x = inputs[0].to_vector<double>();
    const std::vector<double> d = delta(node.inputs[0]);
    const Slices s = slices_of(node, inputs[0].sizes());
    std::vector<std::int64_t> index = outputs[slot].to_vector<std::int64_t>();
    if (s.size == 0 || index.size() != s.count) return;
    bool changed = false;
    for (std::size_t e = 0; e < s.count; ++e) {
      const std::size_t begin = s.begin(e);
      std::size_t best = begin;
      bool has_nan = false;
      for (std::size_t j = 0; j < s.size; ++j) {
        const std::size_t at = begin + j * s.inner;
        has_nan = has_nan || std::isnan(x[at]);
        if (largest ? x[at] > x[best] : x[at] < x[best]) best = at;
      }
      if (has_nan) continue;
      const double best_move = best < d.size() ? d[best] : 0.0;
      std::int64_t pick = -1;
      for (std::size_t j = 0; j < s.size; ++j) {
        const std::size_t at = begin + j * s.inner;
        const double move = (at < d.size() ? d[at] : 0.0) + best_move;
        if (std::abs(x[at] - x[best]) <= move) {
          if (pick < 0 || side > 0) pick = static_cast<std::int64_t>(j);
        }
      }
      if (pick >= 0 && pick != index[e]) {
        index[e] = pick;
        changed = true;
      }
    }
    if (!changed) return;
    moved_.insert(n);
    outputs[slot] =
        from_blob(index.data(), outputs[slot].sizes(), Dtype::Int64).to(outputs[slot].dtype());
  }

  // cummax/cummin's indices: at each position, any earlier position whose value lies within the
  // margins of the running extreme's could be the one a path names (ATen names the last of
  // exact ties). One side picks the first such position, the other the last; a line stops
  // being moved at its first NaN, which then holds the running value.
  void move_running_index(std::size_t n, const std::vector<Tensor>& inputs,
                          std::vector<Tensor>& outputs, double side) {
    const ir::Node& node = graph_.nodes()[n];
    if (inputs.empty() || !inputs[0].defined() || outputs.size() != 2) return;
    const bool largest = node.op == ir::OpKind::Cummax;
    const std::vector<double> x = inputs[0].to_vector<double>();
    const std::vector<double> d = delta(node.inputs[0]);
    const Slices s = slices_of(node, inputs[0].sizes());
    std::vector<std::int64_t> index = outputs[1].to_vector<std::int64_t>();
    if (s.size == 0 || index.size() != s.count * s.size) return;
    const auto margin = [&](std::size_t at) { return at < d.size() ? d[at] : 0.0; };
    bool changed = false;
    for (std::size_t e = 0; e < s.count; ++e) {
      const std::size_t begin = s.begin(e);
      std::size_t best = begin;
      for (std::size_t k = 0; k < s.size; ++k) {
        const std::size_t at = begin + k * s.inner;
        if (std::isnan(x[at])) break;
        if (largest ? x[at] >= x[best] : x[at] <= x[best]) best = at;
        std::int64_t pick = -1;
        for (std::size_t j = 0; j <= k; ++j) {
          const std::size_t other = begin + j * s.inner;
          if (std::abs(x[other] - x[best]) <= margin(other) + margin(best)) {
            if (pick < 0 || side > 0) pick = static_cast<std::int64_t>(j);
          }
        }
        if (pick >= 0 && pick != index[at]) {
          index[at] = pick;
          changed = true;
        }
      }
    }
    if (!changed) return;
    moved_.insert(n);
    outputs[1] = from_blob(index.data(), outputs[1].sizes(), Dtype::Int64).to(outputs[1].dtype());
  }

  // sort, argsort, topk: elements whose values lie within their rounding margins of each other
  // (chained, in sorted order) could come out in any order, and a path may order exact ties as
  // it likes (stable=False, topk). One side keeps such a group in input order, the other
  // rotates it by one, so every position in a group differs between the two runs and is not
  // judged, nor is anything computed from it; topk then keeps the first k.
  void move_order(std::size_t n, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                  double side) {
    ir::Node node = graph_.nodes()[n];
    node.attrs = ir::with_defaults(node.op, node.attrs);  // dim -1 when the graph leaves it out
    const std::size_t slot = outputs.size() == 2 ? 1 : 0;
    if (inputs.empty() || !inputs[0].defined() || slot >= outputs.size()) return;
    const bool descending = node.op == ir::OpKind::Topk ? node.attrs.get_bool("largest")
                                                        : node.attrs.get_bool("descending");
    // Line e of the input starts at lines.begin(e), of the indices at kept.begin(e).
    const Slices lines = slices_of(node, inputs[0].sizes());
    Slices kept = lines;
    kept.size = inputs[0].dim() == 0 ? 1
                                     : static_cast<std::size_t>(outputs[slot].size(
                                           wrap_dim(node.attrs.get_int("dim"), inputs[0].dim())));
    const std::vector<double> x = inputs[0].to_vector<double>();
    const std::vector<double> d = delta(node.inputs[0]);
    std::vector<std::int64_t> index = outputs[slot].to_vector<std::int64_t>();
    if (index.size() != lines.count * kept.size) return;
    bool changed = false;
    std::vector<std::size_t> order(lines.size);
    for (std::size_t e = 0; e < lines.count; ++e) {
      const auto at = [&](std::size_t j) { return lines.begin(e) + j * lines.inner; };
      bool has_nan = false;
      for (std::size_t j = 0; j < lines.size; ++j) has_nan = has_nan || std::isnan(x[at(j)]);
      if (has_nan) continue;
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return descending ? x[at(a)] > x[at(b)] : x[at(a)] < x[at(b)];
      });
      // Groups of neighbours in sorted order that rounding could swap.
      std::size_t begin = 0;
      while (begin < order.size()) {
        std::size_t end = begin + 1;
        while (end < order.size()) {
          const std::size_t p = at(order[end - 1]), q = at(order[end]);
          const double move = (p < d.size() ? d[p] : 0.0) + (q < d.size() ? d[q] : 0.0);
          if (std::abs(x[p] - x[q]) > move) break;
          ++end;
        }
        const auto first = order.begin() + static_cast<std::ptrdiff_t>(begin);
        const auto last = order.begin() + static_cast<std::ptrdiff_t>(end);
        std::sort(first, last);
        if (side > 0 && end - begin > 1) std::rotate(first, first + 1, last);
        begin = end;
      }
      for (std::size_t j = 0; j < kept.size; ++j) {
        std::int64_t& slot_index = index[kept.begin(e) + j * kept.inner];
        const auto picked = static_cast<std::int64_t>(order[j]);
        changed = changed || slot_index != picked;
        slot_index = picked;
      }
    }
    if (!changed) return;
    moved_.insert(n);
    const Tensor moved =
        from_blob(index.data(), outputs[slot].sizes(), Dtype::Int64).to(outputs[slot].dtype());
    outputs[slot] = moved;
    // The values follow their indices (a gather, so the gradient follows them too).
    if (slot == 1) {
      outputs[0] = gather(inputs[0], inputs[0].dim() == 0 ? 0 : node.attrs.get_int("dim"), moved);
    }
  }

  const ir::Graph& graph_;
  const ir::TensorMap& values_;
  const std::vector<Tensor>& cotangents_;
  const RoundingOptions& options_;
  std::vector<Tensor> reference_;
  std::vector<std::vector<double>> error_;
  std::set<std::size_t> moved_;
};

}  // namespace

bool is_decision_node(const ir::Graph& graph, const ir::Node& node) {
  return decision_of(graph, node) != Decision::None;
}

bool is_discrete_decision(const ir::Graph& graph, const ir::Node& node) {
  const Decision decision = decision_of(graph, node);
  return decision == Decision::Elementwise || decision == Decision::Index;
}

RoundingModel model_rounding(const ir::Graph& graph, const ir::TensorMap& values,
                             const std::vector<Tensor>& cotangents,
                             const RoundingOptions& options) {
  return Model(graph, values, cotangents, options).build();
}

}  // namespace weft::oracle
