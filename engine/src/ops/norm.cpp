// Normalization and embedding. batch_norm is fused (statistics, normalization and a
// closed-form backward in a few passes; engine ops when a double backward is recorded);
// layer_norm, rms_norm, group_norm and instance_norm are compositions of engine ops, so their
// gradients come from autograd; embedding is an index map (see index.cpp). The dropouts are in
// random.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "index_map.h"
#include "kernels/dispatch.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {

namespace {

void check_floating(const Tensor& x, const char* op) {
  if (!x.is_floating_point()) {
    throw Error(std::string("\"") + op + "\" not implemented for '" + dtype_name(x.dtype()) + "'");
  }
}

// layer_norm's and rms_norm's checks (PyTorch's _check_layer_norm_inputs): the normalized
// shape is x's last dims and the weight's (and bias's) shape. Returns those dims.
std::vector<std::int64_t> normalized_dims(const Tensor& x, IntList normalized_shape,
                                          const Tensor& weight, const Tensor& bias) {
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
  std::vector<std::int64_t> dims;
  for (std::int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  return dims;
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
    case Dtype::Float16:
      return "torch.HalfTensor";
    case Dtype::BFloat16:
      return "torch.BFloat16Tensor";
    case Dtype::Float32:
      return "torch.FloatTensor";
    case Dtype::Float64:
      return "torch.DoubleTensor";
  }
  return "torch.Tensor";
}

// Per-channel mean and biased variance of x as [N, C, S], accumulated in double (two passes:
// the mean, then the squared deviations, which is exact enough where one pass is not).
template <typename T>
void channel_stats(const T* x, std::int64_t n, std::int64_t channels, std::int64_t spatial,
                   double* mean, double* var) {
  const double count = static_cast<double>(n * spatial);
  parallel_for(0, channels, 1, [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c) {
      double total = 0.0;
      for (std::int64_t i = 0; i < n; ++i) {
        const T* row = x + (i * channels + c) * spatial;
        for (std::int64_t s = 0; s < spatial; ++s) total += row[s];
      }
      const double mu = count > 0 ? total / count : NAN;
      double squares = 0.0;
      for (std::int64_t i = 0; i < n; ++i) {
        const T* row = x + (i * channels + c) * spatial;
        for (std::int64_t s = 0; s < spatial; ++s) {
          const double d = row[s] - mu;
          squares += d * d;
        }
      }
      mean[c] = mu;
      var[c] = count > 0 ? squares / count : NAN;
    }
  });
}

// out = (x - mean) * invstd * weight + bias, as one multiply-add per element.
template <typename T>
void normalize_channels(const T* x, T* out, std::int64_t n, std::int64_t channels,
                        std::int64_t spatial, const double* mean, const double* invstd,
                        const double* weight, const double* bias) {
  parallel_for(0, n * channels,
               std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(spatial, 1)),
               [&](std::int64_t r0, std::int64_t r1) {
                 for (std::int64_t r = r0; r < r1; ++r) {
                   const std::int64_t c = r % channels;
                   const double scale = invstd[c] * (weight ? weight[c] : 1.0);
                   const T a = static_cast<T>(scale);
                   const T b = static_cast<T>((bias ? bias[c] : 0.0) - mean[c] * scale);
                   const T* in = x + r * spatial;
                   T* o = out + r * spatial;
                   for (std::int64_t s = 0; s < spatial; ++s) o[s] = in[s] * a + b;
                 }
               });
}

// d(batch_norm)/d(x, weight, bias). Training: dx = w·invstd·(dy − mean(dy) − x̂·mean(dy·x̂));
// eval: dx = w·invstd·dy. dweight = Σ dy·x̂, dbias = Σ dy. Fused kernels normally; engine ops
// when a double backward is being recorded (create_graph), so that it stays differentiable.
std::vector<Tensor> batch_norm_backward(const Tensor& dy0, const Tensor& x, const Tensor& mean_t,
                                        const Tensor& invstd_t, const Tensor& weight, bool training,
                                        bool has_weight, bool has_bias, double eps) {
  const std::int64_t channels = x.size(1);
  Shape channel_shape(static_cast<std::size_t>(x.dim()), 1);
  channel_shape[1] = channels;
  std::vector<std::int64_t> dims{0};
  for (std::int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  std::vector<Tensor> grads;
  if (autograd::grad_enabled()) {
    // Differentiable form: x̂ recomputed from x with ops.
    const Tensor mu = training ? mean(x, dims, true) : mean_t.to(x.dtype()).reshape(channel_shape);
    const Tensor centered = x - mu;
    const Tensor invstd = training ? rsqrt(mean(centered * centered, dims, true) + eps)
                                   : invstd_t.to(x.dtype()).reshape(channel_shape);
    const Tensor xhat = centered * invstd;
    const Tensor scale = has_weight ? invstd * weight.reshape(channel_shape) : invstd;
    Tensor dx;
    if (training) {
      dx = scale * (dy0 - mean(dy0, dims, true) - xhat * mean(dy0 * xhat, dims, true));
    } else {
      dx = scale * dy0;
    }
    grads.push_back(dx);
    if (has_weight) grads.push_back(sum(dy0 * xhat, dims).to(weight.dtype()));
    if (has_bias) grads.push_back(sum(dy0, dims).to(x.dtype()));
    return grads;
  }
  const Tensor dy = dy0.contiguous();
  const Tensor xc = x.contiguous();
  const std::int64_t n = x.size(0);
  const std::int64_t spatial = channels > 0 && n > 0 ? x.numel() / (n * channels) : 0;
  const double count = static_cast<double>(n * spatial);
  Tensor sum_dy = empty({channels}, dtype(Dtype::Float64));
  Tensor sum_dy_xhat = empty({channels}, dtype(Dtype::Float64));
  Tensor dx = empty(x.sizes(), dtype(x.dtype()));
  const Tensor w = has_weight ? weight.detach().to(Dtype::Float64).contiguous() : Tensor();
  kernels::dispatch_floating(x.dtype(), "batch_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xd = xc.data<T>();
    const T* gd = dy.data<T>();
    T* dxd = dx.data<T>();
    const double* mu = mean_t.data<double>();
    const double* invstd = invstd_t.data<double>();
    double* sdy = sum_dy.data<double>();
    double* sdyx = sum_dy_xhat.data<double>();
    parallel_for(0, channels, 1, [&](std::int64_t c0, std::int64_t c1) {
      for (std::int64_t c = c0; c < c1; ++c) {
        double a = 0.0, b = 0.0;
        for (std::int64_t i = 0; i < n; ++i) {
          const std::int64_t base = (i * channels + c) * spatial;
          for (std::int64_t s = 0; s < spatial; ++s) {
            a += gd[base + s];
            b += gd[base + s] * (xd[base + s] - mu[c]);
          }
        }
        sdy[c] = a;
        sdyx[c] = b * invstd[c];
        const double scale = invstd[c] * (w.defined() ? w.data<double>()[c] : 1.0);
        const double mean_dy = training && count > 0 ? a / count : 0.0;
        const double k = training && count > 0 ? sdyx[c] / count * invstd[c] : 0.0;
        for (std::int64_t i = 0; i < n; ++i) {
          const std::int64_t base = (i * channels + c) * spatial;
          for (std::int64_t s = 0; s < spatial; ++s) {
            dxd[base + s] =
                static_cast<T>(scale * (gd[base + s] - mean_dy - (xd[base + s] - mu[c]) * k));
          }
        }
      }
    });
  });
  grads.push_back(dx);
  if (has_weight) grads.push_back(sum_dy_xhat.to(weight.dtype()).reshape(weight.sizes()));
  if (has_bias) grads.push_back(sum_dy.to(x.dtype()).reshape({channels}));
  return grads;
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

  // x viewed as [N, C, S]: one fused pass for the statistics, one for the output, and a
  // closed-form backward (two passes) instead of a dozen broadcasting ops each way.
  const Tensor xc = x.contiguous();
  const std::int64_t n = x.size(0);
  const std::int64_t spatial = channels > 0 && n > 0 ? x.numel() / (n * channels) : 0;
  const std::int64_t count = n * spatial;
  Tensor mean_t, invstd_t;  // float64 [C]
  if (training) {
    mean_t = empty({channels}, dtype(Dtype::Float64));
    Tensor var_t = empty({channels}, dtype(Dtype::Float64));
    kernels::dispatch_floating(x.dtype(), "batch_norm", [&](auto tag) {
      using T = typename decltype(tag)::type;
      channel_stats<T>(xc.data<T>(), n, channels, spatial, mean_t.data<double>(),
                       var_t.data<double>());
    });
    const double* var = var_t.data<double>();
    invstd_t = empty({channels}, dtype(Dtype::Float64));
    for (std::int64_t c = 0; c < channels; ++c) {
      invstd_t.data<double>()[c] = 1.0 / std::sqrt(var[c] + eps);
    }
    // The running statistics use the unbiased variance and carry no history.
    autograd::NoGradGuard guard;
    if (running_mean.defined()) {
      Tensor target = running_mean;
      target.copy_(momentum * mean_t.to(running_mean.dtype()).reshape(running_mean.sizes()) +
                   (1.0 - momentum) * running_mean);
    }
    if (running_var.defined()) {
      Tensor target = running_var;
      const double unbias = count > 1 ? static_cast<double>(count) / (count - 1) : NAN;
      target.copy_(momentum *
                       (var_t * unbias).to(running_var.dtype()).reshape(running_var.sizes()) +
                   (1.0 - momentum) * running_var);
    }
  } else {
    // Running statistics are constants: PyTorch gives them no gradient.
    mean_t = running_mean.detach().to(Dtype::Float64).contiguous().reshape({channels});
    invstd_t = rsqrt(running_var.detach().to(Dtype::Float64).reshape({channels}) + eps);
  }
  Tensor out = empty(x.sizes(), dtype(x.dtype()));
  kernels::dispatch_floating(x.dtype(), "batch_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Tensor w = weight.defined() ? weight.detach().to(Dtype::Float64).contiguous() : Tensor();
    const Tensor b = bias.defined() ? bias.detach().to(Dtype::Float64).contiguous() : Tensor();
    normalize_channels<T>(xc.data<T>(), out.data<T>(), n, channels, spatial, mean_t.data<double>(),
                          invstd_t.data<double>(), w.defined() ? w.data<double>() : nullptr,
                          b.defined() ? b.data<double>() : nullptr);
  });
  std::vector<Tensor> inputs{x};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  const bool has_weight = weight.defined(), has_bias = bias.defined();
  autograd::record_function(
      "NativeBatchNormBackward0", inputs, {out}, {x, mean_t, invstd_t, weight},
      [training, has_weight, has_bias, eps](const std::vector<Tensor>& g,
                                            const std::vector<Tensor>& saved) {
        return batch_norm_backward(g[0], saved[0], saved[1], saved[2], saved[3], training,
                                   has_weight, has_bias, eps);
      });
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
  const std::vector<std::int64_t> dims = normalized_dims(x, normalized_shape, weight, bias);
  check_floating(x, "layer_norm");
  const Tensor mu = mean(x, dims, /*keepdim=*/true);
  const Tensor centered = x - mu;
  const Tensor variance = mean(centered * centered, dims, /*keepdim=*/true);
  Tensor out = centered * rsqrt(variance + eps);
  if (weight.defined()) out = out * weight;
  if (bias.defined()) out = out + bias;
  return out;
}

double rms_norm_default_eps(Dtype input) {
  // ATen's opmath type: float for float16 and bfloat16.
  return input == Dtype::Float64 ? std::numeric_limits<double>::epsilon()
                                 : static_cast<double>(std::numeric_limits<float>::epsilon());
}

Tensor rms_norm(const Tensor& x, IntList normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  ir::Attributes attrs;
  attrs.set("normalized_shape", ops_detail::to_ints(normalized_shape));
  if (eps) attrs.set("eps", *eps);
  WEFT_TRACE_OP(RmsNorm, (x, weight), attrs, rms_norm(x, normalized_shape, weight, eps));
  const std::vector<std::int64_t> dims = normalized_dims(x, normalized_shape, weight, Tensor());
  check_floating(x, "rms_norm");
  const double epsilon = eps ? *eps : rms_norm_default_eps(x.dtype());
  Tensor out = x * rsqrt(mean(x * x, dims, /*keepdim=*/true) + epsilon);
  if (weight.defined()) out = out * weight;
  return out;
}

namespace {

// Normalizes x (N, C, *) over groups of C / groups channels and the spatial dims, then applies
// a per-channel affine map: group_norm's and instance_norm's (groups == C) shared body, a
// composition of engine ops like layer_norm, so autograd gives its gradients.
Tensor normalize_groups(const Tensor& x, std::int64_t groups, const Tensor& weight,
                        const Tensor& bias, double eps) {
  const std::int64_t n = x.size(0), channels = x.size(1);
  std::int64_t spatial = 1;
  for (std::int64_t d = 2; d < x.dim(); ++d) spatial *= x.size(d);
  const Tensor grouped = reshape(x, {n, groups, channels / groups * spatial});
  const Tensor mu = mean(grouped, {2}, /*keepdim=*/true);
  const Tensor centered = grouped - mu;
  const Tensor variance = mean(centered * centered, {2}, /*keepdim=*/true);
  Tensor out = reshape(centered * rsqrt(variance + eps), x.sizes());
  Shape per_channel(static_cast<std::size_t>(x.dim()), 1);
  per_channel[1] = channels;
  if (weight.defined()) out = out * reshape(weight, per_channel);
  if (bias.defined()) out = out + reshape(bias, per_channel);
  return out;
}

}  // namespace

Tensor group_norm(const Tensor& x, std::int64_t num_groups, const Tensor& weight,
                  const Tensor& bias, double eps) {
  WEFT_TRACE_OP(GroupNorm, (x, weight, bias),
                ir::Attributes().set("num_groups", num_groups).set("eps", eps),
                group_norm(x, num_groups, weight, bias, eps));
  if (x.dim() < 2) {
    throw Error("Expected at least 2 dimensions for input tensor but received " +
                std::to_string(x.dim()));
  }
  const std::int64_t channels = x.size(1);
  if (num_groups <= 0 || channels % num_groups != 0) {
    throw Error(
        "Expected number of channels in input to be divisible by num_groups, but got "
        "input of shape " +
        shape_str(x.sizes()) + " and num_groups=" + std::to_string(num_groups));
  }
  check_features(weight, "weight", channels);
  check_features(bias, "bias", channels);
  if (channels == 0) {
    throw Error("Expected number of channels to be greater than 0, got 0");
  }
  std::int64_t spatial = 1;
  for (std::int64_t d = 2; d < x.dim(); ++d) spatial *= x.size(d);
  if (spatial == 0) throw Error("Expected HxW to be greater than 0, got 0");
  check_floating(x, "group_norm");
  return normalize_groups(x, num_groups, weight, bias, eps);
}

Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  WEFT_TRACE_OP(InstanceNorm, (x, weight, bias), ir::Attributes().set("eps", eps),
                instance_norm(x, weight, bias, eps));
  if (x.dim() < 2) {
    throw Error("instance_norm: expected an input of shape (N, C, *), got " + shape_str(x.sizes()));
  }
  std::int64_t spatial = 1;
  for (std::int64_t d = 2; d < x.dim(); ++d) spatial *= x.size(d);
  if (spatial <= 1) {
    throw Error("Expected more than 1 spatial element when training, got input size " +
                shape_str(x.sizes()));
  }
  check_features(weight, "weight", x.size(1));
  check_features(bias, "bias", x.size(1));
  check_floating(x, "instance_norm");
  if (x.numel() == 0) return x.clone();
  return normalize_groups(x, x.size(1), weight, bias, eps);
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
