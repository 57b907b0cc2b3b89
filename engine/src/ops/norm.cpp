// Normalization, dropout and embedding. batch_norm and layer_norm are compositions of engine
// ops (mean, sub, mul, rsqrt), so their gradients — and double gradients — come from autograd;
// dropout multiplies by a fixed noise tensor; embedding is an index map (see index.cpp).
#include <algorithm>
#include <random>
#include <sstream>
#include <string>

#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace detail {
// Defined in index.cpp: out.flat[o] = x.flat[idx[o]] (or `fill` where idx < 0), with a
// scatter-add backward through `grad_idx`.
Tensor take_linear(const char* name, const Tensor& x, const Tensor& idx, const Tensor& weights,
                   std::int64_t k, IntList out_shape, double fill, const Tensor& grad_idx);
}  // namespace detail

namespace {

void check_floating(const Tensor& x, const char* op) {
  if (!x.is_floating_point()) {
    throw Error(std::string("\"") + op + "\" not implemented for '" + dtype_name(x.dtype()) + "'");
  }
}

void check_features(const Tensor& t, const char* name, std::int64_t features) {
  if (t.defined() && t.numel() != features) {
    throw Error(std::string(name) + " should contain " + std::to_string(features) +
                " elements not " + std::to_string(t.numel()));
  }
}

// PyTorch's legacy tensor type names, used in its argument-type messages.
const char* legacy_type_name(Dtype d) {
  switch (d) {
    case Dtype::Bool:
      return "torch.BoolTensor";
    case Dtype::Int32:
      return "torch.IntTensor";
    case Dtype::Int64:
      return "torch.LongTensor";
    case Dtype::Float32:
      return "torch.FloatTensor";
    case Dtype::Float64:
      return "torch.DoubleTensor";
  }
  return "torch.Tensor";
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  WEFT_TRACE_OP(
      BatchNorm,
      (x, weight.defined() ? weight : ones({x.size(1)}, dtype(x.dtype())),
       bias.defined() ? bias : zeros({x.size(1)}, dtype(x.dtype())), running_mean, running_var),
      ir::Attributes().set("training", training).set("momentum", momentum).set("eps", eps),
      batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps));
  if (training && x.dim() >= 1) {
    std::int64_t values = x.size(0);
    for (std::int64_t d = 2; d < x.dim(); ++d) values *= x.size(d);
    if (values == 1) {
      throw Error(
          "Expected more than 1 value per channel when training, got input size torch.Size(" +
          shape_str(x.sizes()) + ")");
    }
  }
  wrap_dim(1, x.dim());  // PyTorch's "Dimension out of range" for inputs without channels
  check_floating(x, "batch_norm");
  const std::int64_t channels = x.size(1);
  check_features(weight, "weight", channels);
  check_features(bias, "bias", channels);
  check_features(running_mean, "running_mean", channels);
  check_features(running_var, "running_var", channels);
  if (!training && (!running_mean.defined() || !running_var.defined())) {
    throw Error(std::string(running_mean.defined() ? "running_var" : "running_mean") +
                " must be defined in evaluation mode");
  }

  std::vector<std::int64_t> dims{0};
  Shape channel_shape(static_cast<std::size_t>(x.dim()), 1);
  channel_shape[1] = channels;
  for (std::int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  const std::int64_t count = x.numel() / std::max<std::int64_t>(channels, 1);

  Tensor out;
  if (training) {
    // Normalize with the batch statistics (biased variance).
    const Tensor mu = mean(x, dims, /*keepdim=*/true);
    const Tensor centered = x - mu;
    const Tensor square_sum = sum(centered * centered, dims, /*keepdim=*/true);
    const Tensor variance = square_sum / static_cast<double>(count);
    out = centered * rsqrt(variance + eps);
    // The running statistics use the unbiased variance and carry no history.
    autograd::NoGradGuard guard;
    if (running_mean.defined()) {
      Tensor target = running_mean;
      target.copy_(momentum * mu.reshape(running_mean.sizes()) +
                   (1.0 - momentum) * running_mean.to(x.dtype()));
    }
    if (running_var.defined()) {
      Tensor target = running_var;
      const Tensor unbiased = square_sum / static_cast<double>(count - 1);
      target.copy_(momentum * unbiased.reshape(running_var.sizes()) +
                   (1.0 - momentum) * running_var.to(x.dtype()));
    }
  } else {
    // Running statistics are constants: PyTorch gives them no gradient.
    const Tensor mu = running_mean.detach().to(x.dtype()).reshape(channel_shape);
    const Tensor variance = running_var.detach().to(x.dtype()).reshape(channel_shape);
    out = (x - mu) * rsqrt(variance + eps);
  }
  if (weight.defined()) out = out * weight.reshape(channel_shape);
  if (bias.defined()) out = out + bias.reshape(channel_shape);
  return out;
}

Tensor layer_norm(const Tensor& x, IntList normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  WEFT_TRACE_OP(
      LayerNorm,
      (x, weight.defined() || !bias.defined() ? weight : ones(normalized_shape, dtype(x.dtype())),
       bias.defined() || !weight.defined() ? bias : zeros(normalized_shape, dtype(x.dtype()))),
      ir::Attributes()
          .set("normalized_shape", ops_detail::to_ints(normalized_shape))
          .set("eps", eps),
      layer_norm(x, normalized_shape, weight, bias, eps));
  const std::int64_t k = static_cast<std::int64_t>(normalized_shape.size());
  if (k == 0) {
    throw Error(
        "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
        "one element, but got normalized_shape = []");
  }
  if (weight.defined() && weight.sizes() != normalized_shape.vec()) {
    throw Error(
        "Expected weight to be of same shape as normalized_shape, but got weight of shape " +
        shape_str(weight.sizes()) + " and normalized_shape = " + shape_str(normalized_shape));
  }
  if (bias.defined() && bias.sizes() != normalized_shape.vec()) {
    throw Error("Expected bias to be of same shape as normalized_shape, but got bias of shape " +
                shape_str(bias.sizes()) + " and normalized_shape = " + shape_str(normalized_shape));
  }
  bool matches = x.dim() >= k;
  for (std::int64_t i = 0; matches && i < k; ++i) {
    matches = x.size(x.dim() - k + i) == normalized_shape[static_cast<std::size_t>(i)];
  }
  if (!matches) {
    std::string expected = "[*";
    for (std::int64_t s : normalized_shape) expected += ", " + std::to_string(s);
    throw Error("Given normalized_shape=" + shape_str(normalized_shape) +
                ", expected input with shape " + expected + "], but got input of size" +
                shape_str(x.sizes()));
  }
  check_floating(x, "layer_norm");
  std::vector<std::int64_t> dims;
  for (std::int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  const Tensor mu = mean(x, dims, /*keepdim=*/true);
  const Tensor centered = x - mu;
  const Tensor variance = mean(centered * centered, dims, /*keepdim=*/true);
  Tensor out = centered * rsqrt(variance + eps);
  if (weight.defined()) out = out * weight;
  if (bias.defined()) out = out + bias;
  return out;
}

Tensor dropout(const Tensor& x, double p, bool training, std::uint64_t seed) {
  WEFT_TRACE_OP(Dropout, (x),
                ir::Attributes()
                    .set("p", p)
                    .set("training", training)
                    .set("seed", static_cast<std::int64_t>(seed)),
                dropout(x, p, training, seed));
  if (!(p >= 0.0 && p <= 1.0)) {
    std::ostringstream message;
    message << "dropout probability has to be between 0 and 1, but got " << p;
    throw Error(message.str());
  }
  if (!training || p == 0.0 || x.numel() == 0) return x;
  if (p == 1.0) return mul(x, scalar_tensor(0.0, dtype(x.dtype())));  // NaN stays NaN, as x * 0
  check_floating(x, "dropout");
  // noise = bernoulli(1 - p) / (1 - p), drawn in row-major order from a 53-bit uniform.
  std::mt19937_64 rng(seed);
  const double keep = 1.0 - p;
  std::vector<double> noise(static_cast<std::size_t>(x.numel()));
  for (double& v : noise) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    v = u < keep ? 1.0 / keep : 0.0;
  }
  const Tensor scale = tensor(noise, x.sizes()).to(x.dtype());
  return mul(x, scale);
}

Tensor embedding(const Tensor& indices, const Tensor& weight,
                 std::optional<std::int64_t> padding_idx) {
  WEFT_TRACE_OP(Embedding, (indices, weight),
                padding_idx ? ir::Attributes().set("padding_idx", *padding_idx) : ir::Attributes(),
                embedding(indices, weight, padding_idx));
  if (weight.dim() != 2) throw Error("'weight' must be 2-D");
  if (indices.dtype() != Dtype::Int64 && indices.dtype() != Dtype::Int32) {
    throw Error(
        std::string("Expected tensor for argument #1 'indices' to have one of the following "
                    "scalar types: Long, Int; but got ") +
        legacy_type_name(indices.dtype()) + " instead (while checking arguments for embedding)");
  }
  const std::int64_t rows = weight.size(0), width = weight.size(1);
  std::int64_t pad = -1;
  if (padding_idx) {
    if (*padding_idx >= rows || *padding_idx < -rows) {
      throw Error("Padding_idx must be within num_embeddings");
    }
    pad = *padding_idx < 0 ? *padding_idx + rows : *padding_idx;
  }
  const std::vector<std::int64_t> values = indices.to_vector<std::int64_t>();
  for (std::int64_t v : values) {
    if (v < 0 || v >= rows) throw Error("index out of range in self");
  }
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  Tensor idx = empty({n * width}, dtype(Dtype::Int64));
  Tensor grad_idx = empty({n * width}, dtype(Dtype::Int64));
  std::int64_t* ip = idx.data<std::int64_t>();
  std::int64_t* gp = grad_idx.data<std::int64_t>();
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t v = values[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < width; ++j) {
      ip[i * width + j] = v * width + j;
      gp[i * width + j] = v == pad ? -1 : v * width + j;  // the padding row gets no gradient
    }
  }
  Shape out_shape = indices.sizes();
  out_shape.push_back(width);
  return detail::take_linear("EmbeddingBackward0", weight, idx, Tensor(), 1, out_shape, 0.0,
                             grad_idx);
}

}  // namespace weft
