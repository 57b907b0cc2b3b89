// The oracle's LibTorch eager row of the op table: every OpKind lowered to the ATen call that
// PyTorch's Python API makes for it (the switch has no default, so a new op without a row does
// not compile), conversions between engine and ATen tensors, and the graph runner with autograd.
// The only translation unit of the eager backend that includes torch headers: <ATen/ATen.h>
// is enough, since Tensor::backward() reaches the autograd engine without torch/csrc headers.
#include "weft/oracle/torch_eager.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/Reduction.h>
#include <ATen/core/grad_mode.h>
#include <c10/util/Exception.h>
#include <c10/util/Flags.h>
#include <c10/util/Logging.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/torch_tensors.h"
#include "weft/error.h"
#include "weft/ir/inplace.h"
#include "weft/ir/leaf_values.h"
#include "weft/ir/op_schema.h"
#include "weft/ops.h"
#include "weft/oracle/backend.h"

namespace weft::oracle {

namespace {

// at::rms_norm came with PyTorch 2.4; LibTorch 1.13 runs the same steps (ATen's composite in
// layer_norm.cpp): upcast 16-bit floats to float, x * rsqrt(mean(x²) + eps), back to x's type,
// times the weight. eps absent: the epsilon of the upcast type.
at::Tensor rms_norm_eager(const at::Tensor& x, std::vector<std::int64_t> normalized_shape,
                          const c10::optional<at::Tensor>& weight, std::optional<double> eps) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::rms_norm(x, normalized_shape, weight,
                      eps ? c10::optional<double>(*eps) : c10::optional<double>());
#else
  const bool reduced = x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16;
  const at::Tensor upcast = reduced ? x.to(at::kFloat) : x;
  const double epsilon = eps ? *eps : rms_norm_default_eps(from_torch_dtype(upcast.scalar_type()));
  std::vector<std::int64_t> dims;
  const auto k = static_cast<std::int64_t>(normalized_shape.size());
  for (std::int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  at::Tensor y = upcast.mul(at::rsqrt(upcast.pow(2).mean(dims, true).add(epsilon))).type_as(x);
  return weight ? y.mul(*weight) : y;
#endif
}

using ir::Attributes;
using ir::OpKind;

std::string first_line(const char* text) {
  std::string line(text);
  const auto end = line.find('\n');
  if (end != std::string::npos) line.resize(end);
  return line;
}

c10::optional<double> optional_float(const Attributes& a, std::string_view name) {
  if (!a.has(name)) return c10::nullopt;
  return a.get_float(name);
}

c10::optional<std::int64_t> optional_int(const Attributes& a, std::string_view name) {
  if (!a.has(name)) return c10::nullopt;
  return a.get_int(name);
}

c10::optional<at::Tensor> optional_input(const std::vector<at::Tensor>& in, std::size_t i) {
  if (i < in.size()) return in[i];
  return c10::nullopt;
}

// An empty dim list means every dim (the IR's convention): ATen's "none".
at::OptionalIntArrayRef optional_dims(const std::vector<std::int64_t>& dims) {
  if (dims.empty()) return c10::nullopt;
  return at::IntArrayRef(dims);
}

// A whole-valued multiplier (add's alpha, addmm's beta) becomes an integer Scalar, as a Python
// program writes it (`alpha=2`): ATen refuses floating alphas for integral tensors.
at::Scalar multiplier(double value) {
  if (std::nearbyint(value) == value && std::abs(value) < 9.0e15) {
    return at::Scalar(static_cast<std::int64_t>(value));
  }
  return at::Scalar(value);
}

// A loss's reduction attribute as ATen's enum (at::Reduction: None, Mean, Sum).
std::int64_t loss_reduction(const Attributes& a) {
  const std::string reduction = a.get_string("reduction", "mean");
  if (reduction == "none") return at::Reduction::None;
  if (reduction == "sum") return at::Reduction::Sum;
  return at::Reduction::Mean;
}

// A scalar operand attribute ("other") as the Scalar of its kind.
at::Scalar torch_scalar(const Attributes& a) {
  const ir::AttrValue& value = a.get_scalar("other");
  if (const auto* b = std::get_if<bool>(&value)) return at::Scalar(*b);
  if (const auto* i = std::get_if<std::int64_t>(&value)) return at::Scalar(*i);
  return at::Scalar(std::get<double>(value));
}

// torch.squeeze with several dims (PyTorch 1.13 takes one): wrap them against the input's
// rank, then squeeze one at a time from the highest so the lower ones keep their positions.
at::Tensor eager_squeeze(const at::Tensor& x, const std::vector<std::int64_t>& dims) {
  if (dims.empty()) return at::squeeze(x);
  std::vector<std::int64_t> wrapped;
  for (std::int64_t d : dims) wrapped.push_back(c10::maybe_wrap_dim(d, x.dim()));
  std::sort(wrapped.begin(), wrapped.end(), std::greater<>());
  const auto repeat = std::adjacent_find(wrapped.begin(), wrapped.end());
  if (repeat != wrapped.end()) {
    throw Error("dim " + std::to_string(*repeat) + " appears multiple times in the list of dims");
  }
  at::Tensor out = x;
  for (std::int64_t d : wrapped) out = at::squeeze(out, d);
  return out;
}

// prod without a dim ignores keepdim in PyTorch; the IR keeps every dim as size 1.
at::Tensor eager_prod(const at::Tensor& x, c10::optional<std::int64_t> dim, bool keepdim) {
  if (dim) return at::prod(x, *dim, keepdim);
  at::Tensor out = at::prod(x);
  if (keepdim) out = out.reshape(std::vector<std::int64_t>(static_cast<std::size_t>(x.dim()), 1));
  return out;
}

// torch.nn.functional.embedding: padding_idx checked and wrapped in Python, -1 means none.
at::Tensor eager_embedding(const at::Tensor& indices, const at::Tensor& weight,
                           c10::optional<std::int64_t> padding_idx) {
  std::int64_t pad = -1;
  if (padding_idx) {
    const std::int64_t rows = weight.size(0);
    if (*padding_idx >= rows || *padding_idx < -rows) {
      throw Error("Padding_idx must be within num_embeddings");
    }
    pad = *padding_idx < 0 ? *padding_idx + rows : *padding_idx;
  }
  return at::embedding(weight, indices, pad);
}

// torch.nn.functional.pad is at::pad in 1.13; the non-constant modes take no value, so the
// IR's default 0.0 is passed as "none" there (a non-zero value stays, and ATen refuses it).
at::Tensor eager_pad(const at::Tensor& x, const std::vector<std::int64_t>& pads,
                     const std::string& mode, double value) {
  c10::optional<double> fill = value;
  if (mode != "constant" && value == 0.0) fill = c10::nullopt;
  return at::pad(x, pads, mode, fill);
}

// torch.nn.functional.interpolate with `size`: its Python-side checks in their order, then the
// upsample op it dispatches to (the overloads with a scale-factor list, as Python calls them).
at::Tensor eager_interpolate(const at::Tensor& x, const std::vector<std::int64_t>& size,
                             const std::string& mode, bool align_corners) {
  if (mode == "nearest" && align_corners) {
    throw Error(
        "align_corners option can only be set with the interpolating modes: linear | bilinear | "
        "bicubic | trilinear");
  }
  const std::int64_t rank = x.dim();
  if (static_cast<std::int64_t>(size.size()) != rank - 2) {
    std::string spatial = "[";
    for (std::int64_t d = 2; d < rank; ++d) {
      spatial += (d > 2 ? ", " : "") + std::to_string(x.size(d));
    }
    std::string out = "[";
    for (std::size_t i = 0; i < size.size(); ++i) {
      out += (i > 0 ? ", " : "") + std::to_string(size[i]);
    }
    throw Error(
        "Input and output must have the same number of spatial dimensions, but got input with "
        "spatial dimensions of " +
        spatial + "] and output size of " + out +
        "]. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
        "(o1, o2, ...,oK) format.");
  }
  const at::OptionalIntArrayRef output_size = at::IntArrayRef(size);
  const c10::optional<at::ArrayRef<double>> no_scales = c10::nullopt;
  if (mode == "nearest") {
    if (rank == 3) return at::upsample_nearest1d(x, output_size, no_scales);
    if (rank == 4) return at::upsample_nearest2d(x, output_size, no_scales);
    if (rank == 5) return at::upsample_nearest3d(x, output_size, no_scales);
  }
  if (mode == "linear" && rank == 3) {
    return at::upsample_linear1d(x, output_size, align_corners, no_scales);
  }
  if (mode == "bilinear" && rank == 4) {
    return at::upsample_bilinear2d(x, output_size, align_corners, no_scales);
  }
  if ((mode == "linear" || mode == "bilinear") && rank >= 3 && rank <= 5) {
    throw Error("Got " + std::to_string(rank) + "D input, but " + mode + " mode needs " +
                (mode == "linear" ? "3D" : "4D") + " input");
  }
  throw Error("Input Error: Only 3D, 4D and 5D input Tensors supported (got " +
              std::to_string(rank) +
              "D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
              "nearest-exact (got " +
              mode + ")");
}

// index_put's index list: one index, into dim 0 (weft's op).
c10::List<c10::optional<at::Tensor>> index_list(const at::Tensor& index) {
  c10::List<c10::optional<at::Tensor>> list;
  list.push_back(index);
  return list;
}

}  // namespace

void init_torch_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    at::set_num_threads(1);
    c10::SetStackTraceFetcher([] { return std::string("(backtrace omitted by weft)"); });
    // Every CPU allocation starts as NaN junk instead of whatever the allocator last held: a
    // kernel that leaves its output unwritten (float32 gelu backward with a permuted gradient
    // does) then shows as NaN on every run, instead of as stale values that can even be the
    // right ones, which made such bugs come and go with the allocation history.
    char program[] = "weft";
    char junk_fill[] = "--caffe2_cpu_allocator_do_junk_fill=true";
    char* argv[] = {program, junk_fill, nullptr};
    char** argv_pointer = argv;
    int argc = 2;
    if (!c10::ParseCommandLineFlags(&argc, &argv_pointer)) {
      throw Error("LibTorch refused its allocator's junk-fill flag");
    }
  });
}

at::ScalarType to_torch_dtype(Dtype dtype) {
  switch (dtype) {
    case Dtype::Bool:
      return at::kBool;
    case Dtype::Int32:
      return at::kInt;
    case Dtype::Int64:
      return at::kLong;
    case Dtype::Float16:
      return at::kHalf;
    case Dtype::BFloat16:
      return at::kBFloat16;
    case Dtype::Float32:
      return at::kFloat;
    case Dtype::Float64:
      return at::kDouble;
  }
  throw Error("to_torch_dtype: unknown dtype #" + std::to_string(static_cast<int>(dtype)));
}

Dtype from_torch_dtype(at::ScalarType type) {
  switch (type) {
    case at::kBool:
      return Dtype::Bool;
    case at::kInt:
      return Dtype::Int32;
    case at::kLong:
      return Dtype::Int64;
    case at::kHalf:
      return Dtype::Float16;
    case at::kBFloat16:
      return Dtype::BFloat16;
    case at::kFloat:
      return Dtype::Float32;
    case at::kDouble:
      return Dtype::Float64;
    default:
      break;
  }
  throw Error(std::string("LibTorch returned a tensor of type ") + c10::toString(type) +
              ", which weft has no dtype for");
}

at::Tensor to_torch(const Tensor& tensor) {
  Tensor source = tensor.detach();
  if (source.device() != kCPU) source = source.to(kCPU);
  source = source.contiguous();
  at::Tensor out =
      at::empty(source.sizes(), at::TensorOptions().dtype(to_torch_dtype(source.dtype())));
  const auto bytes = static_cast<std::size_t>(source.numel()) * itemsize(source.dtype());
  if (bytes > 0) std::memcpy(out.data_ptr(), source.raw_data(), bytes);
  return out;
}

at::Tensor leaf_to_torch(const ir::Value& leaf, const Tensor& value, bool cuda) {
  at::Tensor contiguous = to_torch(value);
  if (cuda) contiguous = contiguous.to(at::kCUDA);
  if (!leaf.has_layout()) return contiguous;
  // A buffer of the layout's extent (NaN junk where the layout reaches nothing), the values
  // written through the layout without its stride-0 dims (one element each), then the view.
  const std::int64_t extent =
      ir::storage_extent(leaf.type.shape, leaf.strides, leaf.storage_offset);
  at::Tensor buffer = at::empty({extent}, contiguous.options());
  std::vector<std::int64_t> written = leaf.type.shape;
  at::Tensor source = contiguous;
  for (std::size_t d = 0; d < written.size(); ++d) {
    if (leaf.strides[d] == 0 && written[d] > 1) {
      written[d] = 1;
      source = source.narrow(static_cast<std::int64_t>(d), 0, 1);
    }
  }
  buffer.as_strided(written, leaf.strides, leaf.storage_offset).copy_(source);
  return buffer.as_strided(leaf.type.shape, leaf.strides, leaf.storage_offset);
}

Tensor from_torch(const at::Tensor& tensor) {
  const at::Tensor source = tensor.detach().to(at::kCPU).contiguous();
  const Dtype dtype = from_torch_dtype(source.scalar_type());
  return from_blob(source.numel() > 0 ? source.data_ptr() : nullptr, source.sizes().vec(), dtype);
}

std::vector<at::Tensor> lower_node(const ir::Node& node, const std::vector<at::Tensor>& in) {
  const ir::OpSchema& schema = ir::schema(node.op);
  if (!schema.accepts_input_count(static_cast<int>(in.size()))) {
    throw Error(std::string(schema.name()) + " expects " + schema.input_count_text() +
                " inputs, got " + std::to_string(in.size()));
  }
  const Attributes& a = node.attrs;
  auto one = [](at::Tensor t) { return std::vector<at::Tensor>{std::move(t)}; };
  switch (node.op) {
    case OpKind::Neg:
      return one(at::neg(in[0]));
    case OpKind::Abs:
      return one(at::abs(in[0]));
    case OpKind::Exp:
      return one(at::exp(in[0]));
    case OpKind::Log:
      return one(at::log(in[0]));
    case OpKind::Log2:
      return one(at::log2(in[0]));
    case OpKind::Sqrt:
      return one(at::sqrt(in[0]));
    case OpKind::Rsqrt:
      return one(at::rsqrt(in[0]));
    case OpKind::Reciprocal:
      return one(at::reciprocal(in[0]));
    case OpKind::Sin:
      return one(at::sin(in[0]));
    case OpKind::Cos:
      return one(at::cos(in[0]));
    case OpKind::Tan:
      return one(at::tan(in[0]));
    case OpKind::Asin:
      return one(at::asin(in[0]));
    case OpKind::Acos:
      return one(at::acos(in[0]));
    case OpKind::Atan:
      return one(at::atan(in[0]));
    case OpKind::Sinh:
      return one(at::sinh(in[0]));
    case OpKind::Cosh:
      return one(at::cosh(in[0]));
    case OpKind::Tanh:
      return one(at::tanh(in[0]));
    case OpKind::Erf:
      return one(at::erf(in[0]));
    case OpKind::Floor:
      return one(at::floor(in[0]));
    case OpKind::Ceil:
      return one(at::ceil(in[0]));
    case OpKind::Round:
      return one(at::round(in[0]));
    case OpKind::Sign:
      return one(at::sign(in[0]));
    case OpKind::Trunc:
      return one(at::trunc(in[0]));
    case OpKind::Frac:
      return one(at::frac(in[0]));
    case OpKind::Log1p:
      return one(at::log1p(in[0]));
    case OpKind::Expm1:
      return one(at::expm1(in[0]));
    case OpKind::Log10:
      return one(at::log10(in[0]));
    case OpKind::Exp2:
      return one(at::exp2(in[0]));
    case OpKind::Asinh:
      return one(at::asinh(in[0]));
    case OpKind::Acosh:
      return one(at::acosh(in[0]));
    case OpKind::Atanh:
      return one(at::atanh(in[0]));
    case OpKind::Erfinv:
      return one(at::erfinv(in[0]));
    case OpKind::Lgamma:
      return one(at::lgamma(in[0]));
    case OpKind::Digamma:
      return one(at::digamma(in[0]));
    case OpKind::Isnan:
      return one(at::isnan(in[0]));
    case OpKind::Isinf:
      return one(at::isinf(in[0]));
    case OpKind::Square:
      return one(at::square(in[0]));
    case OpKind::Erfc:
      return one(at::erfc(in[0]));
    case OpKind::Sinc:
      return one(at::sinc(in[0]));
    case OpKind::Deg2rad:
      return one(at::deg2rad(in[0]));
    case OpKind::Rad2deg:
      return one(at::rad2deg(in[0]));
    case OpKind::Isfinite:
      return one(at::isfinite(in[0]));
    case OpKind::Signbit:
      return one(at::signbit(in[0]));
    case OpKind::Logit:
      return one(at::logit(in[0], optional_float(a, "eps")));
    case OpKind::NanToNum:
      return one(at::nan_to_num(in[0], optional_float(a, "nan"), optional_float(a, "posinf"),
                                optional_float(a, "neginf")));
    case OpKind::Glu:
      return one(at::glu(in[0], a.get_int("dim", -1)));
    case OpKind::Prelu:
      return one(at::prelu(in[0], in[1]));
    case OpKind::Logaddexp2:
      return one(at::logaddexp2(in[0], in[1]));
    case OpKind::Xlogy:
      return one(at::xlogy(in[0], in[1]));
    case OpKind::Copysign:
      return one(at::copysign(in[0], in[1]));
    case OpKind::Fmax:
      return one(at::fmax(in[0], in[1]));
    case OpKind::Fmin:
      return one(at::fmin(in[0], in[1]));
    case OpKind::Lerp:
      return one(at::lerp(in[0], in[1], in[2]));
    case OpKind::Addcmul:
      return one(at::addcmul(in[0], in[1], in[2], multiplier(a.get_float("value", 1.0))));
    case OpKind::Addcdiv:
      return one(at::addcdiv(in[0], in[1], in[2], multiplier(a.get_float("value", 1.0))));
    case OpKind::Dot:
      return one(at::dot(in[0], in[1]));
    case OpKind::Mv:
      return one(at::mv(in[0], in[1]));
    case OpKind::Outer:
      return one(at::outer(in[0], in[1]));
    case OpKind::Trace:
      return one(at::trace(in[0]));
    case OpKind::Baddbmm:
      return one(at::baddbmm(in[0], in[1], in[2], multiplier(a.get_float("beta", 1.0)),
                             multiplier(a.get_float("alpha", 1.0))));
    case OpKind::Atan2:
      return one(at::atan2(in[0], in[1]));
    case OpKind::Hypot:
      return one(at::hypot(in[0], in[1]));
    case OpKind::Logaddexp:
      return one(at::logaddexp(in[0], in[1]));
    case OpKind::Fmod:
      return one(at::fmod(in[0], in[1]));
    case OpKind::Remainder:
      return one(at::remainder(in[0], in[1]));
    case OpKind::Hardswish:
      return one(at::hardswish(in[0]));
    case OpKind::Hardsigmoid:
      return one(at::hardsigmoid(in[0]));
    case OpKind::Relu6:  // F.relu6: hardtanh(x, 0, 6)
      return one(at::hardtanh(in[0], 0.0, 6.0));
    case OpKind::Mish:
      return one(at::mish(in[0]));
    case OpKind::Selu:
      return one(at::selu(in[0]));
    case OpKind::Celu:
      return one(at::celu(in[0], a.get_float("alpha", 1.0)));
    case OpKind::Softsign:  // F.softsign is Python: x / (x.abs() + 1)
      return one(at::div(in[0], at::add(at::abs(in[0]), 1)));
    case OpKind::Logsigmoid:
      return one(at::log_sigmoid(in[0]));
    case OpKind::Tanhshrink:  // F.tanhshrink is Python: x - x.tanh()
      return one(at::sub(in[0], at::tanh(in[0])));
    case OpKind::Threshold:
      return one(at::threshold(in[0], a.get_float("threshold"), a.get_float("value")));
    case OpKind::Hardshrink:
      return one(at::hardshrink(in[0], a.get_float("lambd", 0.5)));
    case OpKind::Softshrink:
      return one(at::softshrink(in[0], a.get_float("lambd", 0.5)));
    case OpKind::Sigmoid:
      return one(at::sigmoid(in[0]));
    case OpKind::Relu:
      return one(at::relu(in[0]));
    case OpKind::LeakyRelu:
      return one(at::leaky_relu(in[0], a.get_float("negative_slope", 0.01)));
    case OpKind::Elu:
      return one(at::elu(in[0], a.get_float("alpha", 1.0)));
    case OpKind::Gelu: {
      const std::string approximate = a.get_string("approximate", "none");
      return one(at::gelu(in[0], approximate));
    }
    case OpKind::Silu:
      return one(at::silu(in[0]));
    case OpKind::Softplus:
      return one(at::softplus(in[0], a.get_float("beta", 1.0), a.get_float("threshold", 20.0)));
    case OpKind::Hardtanh:
      return one(at::hardtanh(in[0], a.get_float("min_val", -1.0), a.get_float("max_val", 1.0)));
    case OpKind::Clamp: {
      // Floating bounds, as the engine's: an integral input is promoted like torch.clamp's.
      const auto lo = optional_float(a, "min"), hi = optional_float(a, "max");
      const c10::optional<at::Scalar> min = lo ? c10::optional<at::Scalar>(*lo) : c10::nullopt;
      const c10::optional<at::Scalar> max = hi ? c10::optional<at::Scalar>(*hi) : c10::nullopt;
      return one(at::clamp(in[0], min, max));
    }
    case OpKind::Add:
      return one(at::add(in[0], in[1], multiplier(a.get_float("alpha", 1.0))));
    case OpKind::Sub:
      return one(at::sub(in[0], in[1], multiplier(a.get_float("alpha", 1.0))));
    case OpKind::Mul:
      return one(at::mul(in[0], in[1]));
    case OpKind::Div: {
      if (!a.has("rounding_mode")) return one(at::div(in[0], in[1]));
      const std::string mode = a.get_string("rounding_mode");
      return one(at::div(in[0], in[1], c10::string_view(mode)));
    }
    case OpKind::Pow:
      return one(at::pow(in[0], in[1]));
    case OpKind::Maximum:
      return one(at::maximum(in[0], in[1]));
    case OpKind::Minimum:
      return one(at::minimum(in[0], in[1]));
    case OpKind::Eq:
      return one(at::eq(in[0], in[1]));
    case OpKind::Ne:
      return one(at::ne(in[0], in[1]));
    case OpKind::Lt:
      return one(at::lt(in[0], in[1]));
    case OpKind::Le:
      return one(at::le(in[0], in[1]));
    case OpKind::Gt:
      return one(at::gt(in[0], in[1]));
    case OpKind::Ge:
      return one(at::ge(in[0], in[1]));
    case OpKind::LogicalAnd:
      return one(at::logical_and(in[0], in[1]));
    case OpKind::LogicalOr:
      return one(at::logical_or(in[0], in[1]));
    case OpKind::LogicalXor:
      return one(at::logical_xor(in[0], in[1]));
    case OpKind::LogicalNot:
      return one(at::logical_not(in[0]));
    case OpKind::BitwiseAnd:
      return one(at::bitwise_and(in[0], in[1]));
    case OpKind::BitwiseOr:
      return one(at::bitwise_or(in[0], in[1]));
    case OpKind::BitwiseXor:
      return one(at::bitwise_xor(in[0], in[1]));
    case OpKind::BitwiseNot:
      return one(at::bitwise_not(in[0]));
    case OpKind::Where:
      return one(at::where(in[0], in[1], in[2]));
    case OpKind::MaskedFill:
      return one(at::masked_fill(in[0], in[1], a.get_float("value")));
    case OpKind::Sum: {
      const auto dims = a.get_ints("dim", {});
      return one(at::sum(in[0], optional_dims(dims), a.get_bool("keepdim", false)));
    }
    case OpKind::Mean: {
      const auto dims = a.get_ints("dim", {});
      return one(at::mean(in[0], optional_dims(dims), a.get_bool("keepdim", false)));
    }
    case OpKind::Prod:
      return one(eager_prod(in[0], optional_int(a, "dim"), a.get_bool("keepdim", false)));
    case OpKind::Max: {
      auto [values, indices] = at::max(in[0], a.get_int("dim"), a.get_bool("keepdim", false));
      return {values, indices};
    }
    case OpKind::Min: {
      auto [values, indices] = at::min(in[0], a.get_int("dim"), a.get_bool("keepdim", false));
      return {values, indices};
    }
    case OpKind::Argmax:
      return one(at::argmax(in[0], optional_int(a, "dim"), a.get_bool("keepdim", false)));
    case OpKind::Argmin:
      return one(at::argmin(in[0], optional_int(a, "dim"), a.get_bool("keepdim", false)));
    case OpKind::Var:
    case OpKind::Std: {
      const auto dims = a.get_ints("dim", {});
      const c10::optional<std::int64_t> correction = a.get_int("correction", 1);
      const bool keepdim = a.get_bool("keepdim", false);
      if (node.op == OpKind::Var)
        return one(at::var(in[0], optional_dims(dims), correction, keepdim));
      return one(at::std(in[0], optional_dims(dims), correction, keepdim));
    }
    case OpKind::VarMean:
    case OpKind::StdMean: {
      const auto dims = a.get_ints("dim", {});
      const c10::optional<std::int64_t> correction = a.get_int("correction", 1);
      const bool keepdim = a.get_bool("keepdim", false);
      auto [spread, average] = node.op == OpKind::VarMean
                                   ? at::var_mean(in[0], optional_dims(dims), correction, keepdim)
                                   : at::std_mean(in[0], optional_dims(dims), correction, keepdim);
      return {spread, average};
    }
    case OpKind::Logsumexp:
      return one(at::logsumexp(in[0], a.get_ints("dim"), a.get_bool("keepdim", false)));
    case OpKind::Amax:
      return one(at::amax(in[0], a.get_ints("dim", {}), a.get_bool("keepdim", false)));
    case OpKind::Amin:
      return one(at::amin(in[0], a.get_ints("dim", {}), a.get_bool("keepdim", false)));
    case OpKind::Any:
    case OpKind::All: {
      const bool every = node.op == OpKind::All;
      const bool keepdim = a.get_bool("keepdim", false);
      if (const auto dim = optional_int(a, "dim")) {
        return one(every ? at::all(in[0], *dim, keepdim) : at::any(in[0], *dim, keepdim));
      }
      // torch.any(x) has no keepdim: the IR keeps every dim as 1, as prod.
      at::Tensor out = every ? at::all(in[0]) : at::any(in[0]);
      if (keepdim) out = out.reshape(std::vector<std::int64_t>(in[0].dim(), 1));
      return one(out);
    }
    case OpKind::Cumsum:
      return one(at::cumsum(in[0], a.get_int("dim")));
    case OpKind::Cumprod:
      return one(at::cumprod(in[0], a.get_int("dim")));
    case OpKind::Logcumsumexp:
      return one(at::logcumsumexp(in[0], a.get_int("dim")));
    case OpKind::Cummax: {
      auto [values, indices] = at::cummax(in[0], a.get_int("dim"));
      return {values, indices};
    }
    case OpKind::Cummin: {
      auto [values, indices] = at::cummin(in[0], a.get_int("dim"));
      return {values, indices};
    }
    case OpKind::Sort: {
      auto [values, indices] = at::sort(in[0], a.get_bool("stable", false), a.get_int("dim", -1),
                                        a.get_bool("descending", false));
      return {values, indices};
    }
    case OpKind::Argsort:
      return one(at::argsort(in[0], a.get_bool("stable", false), a.get_int("dim", -1),
                             a.get_bool("descending", false)));
    case OpKind::Topk: {
      auto [values, indices] = at::topk(in[0], a.get_int("k"), a.get_int("dim", -1),
                                        a.get_bool("largest", true), /*sorted=*/true);
      return {values, indices};
    }
    case OpKind::Softmax:
      return one(at::softmax(in[0], a.get_int("dim")));
    case OpKind::LogSoftmax:
      return one(at::log_softmax(in[0], a.get_int("dim")));
    case OpKind::Matmul:
      return one(at::matmul(in[0], in[1]));
    case OpKind::Mm:
      return one(at::mm(in[0], in[1]));
    case OpKind::Bmm:
      return one(at::bmm(in[0], in[1]));
    case OpKind::Linear:
      return one(at::linear(in[0], in[1], optional_input(in, 2)));
    case OpKind::Cdist:
      return one(at::cdist(in[0], in[1], a.get_float("p", 2.0)));
    case OpKind::Pdist:
      return one(at::pdist(in[0], a.get_float("p", 2.0)));
    case OpKind::MseLoss:
      return one(at::mse_loss(in[0], in[1], loss_reduction(a)));
    case OpKind::L1Loss:
      return one(at::l1_loss(in[0], in[1], loss_reduction(a)));
    case OpKind::SmoothL1Loss:
      return one(at::smooth_l1_loss(in[0], in[1], loss_reduction(a), a.get_float("beta", 1.0)));
    case OpKind::HuberLoss:
      return one(at::huber_loss(in[0], in[1], loss_reduction(a), a.get_float("delta", 1.0)));
    // torch.nn.functional's calls: nll_loss_nd takes any number of trailing dims.
    case OpKind::NllLoss:
      return one(at::nll_loss_nd(in[0], in[1], optional_input(in, 2), loss_reduction(a),
                                 a.get_int("ignore_index", -100)));
    case OpKind::CrossEntropyLoss:
      return one(at::cross_entropy_loss(in[0], in[1], optional_input(in, 2), loss_reduction(a),
                                        a.get_int("ignore_index", -100),
                                        a.get_float("label_smoothing", 0.0)));
    case OpKind::BinaryCrossEntropyWithLogits:
      return one(at::binary_cross_entropy_with_logits(in[0], in[1], optional_input(in, 2),
                                                      optional_input(in, 3), loss_reduction(a)));
    case OpKind::KlDiv: {
      // torch.nn.functional's "batchmean": the sum over the batch size.
      const bool log_target = a.get_bool("log_target", false);
      if (a.get_string("reduction", "mean") == "batchmean") {
        at::Tensor total = at::kl_div(in[0], in[1], at::Reduction::Sum, log_target);
        return one(in[0].dim() == 0 ? total : total / in[0].size(0));
      }
      return one(at::kl_div(in[0], in[1], loss_reduction(a), log_target));
    }
    case OpKind::Addmm:
      return one(at::addmm(in[0], in[1], in[2], multiplier(a.get_float("beta", 1.0)),
                           multiplier(a.get_float("alpha", 1.0))));
    case OpKind::Conv1d:
    case OpKind::Conv2d: {
      // One-element lists apply to every spatial dim (ATen expands them itself).
      const auto stride = a.get_ints("stride", {1});
      const auto padding = a.get_ints("padding", {0});
      const auto dilation = a.get_ints("dilation", {1});
      const std::int64_t groups = a.get_int("groups", 1);
      if (node.op == OpKind::Conv1d) {
        return one(
            at::conv1d(in[0], in[1], optional_input(in, 2), stride, padding, dilation, groups));
      }
      return one(
          at::conv2d(in[0], in[1], optional_input(in, 2), stride, padding, dilation, groups));
    }
    case OpKind::ConvTranspose1d:
    case OpKind::ConvTranspose2d: {
      const auto stride = a.get_ints("stride", {1});
      const auto padding = a.get_ints("padding", {0});
      const auto output_padding = a.get_ints("output_padding", {0});
      const auto dilation = a.get_ints("dilation", {1});
      const std::int64_t groups = a.get_int("groups", 1);
      if (node.op == OpKind::ConvTranspose1d) {
        return one(at::conv_transpose1d(in[0], in[1], optional_input(in, 2), stride, padding,
                                        output_padding, groups, dilation));
      }
      return one(at::conv_transpose2d(in[0], in[1], optional_input(in, 2), stride, padding,
                                      output_padding, groups, dilation));
    }
    case OpKind::MaxPool1d:
    case OpKind::MaxPool2d:
    case OpKind::MaxPool3d: {
      const auto kernel = a.get_ints("kernel_size");
      const auto stride = a.get_ints("stride", {});  // empty: stride = kernel_size
      const auto padding = a.get_ints("padding", {0});
      const auto dilation = a.get_ints("dilation", {1});
      const bool ceil_mode = a.get_bool("ceil_mode", false);
      if (node.op == OpKind::MaxPool1d) {
        return one(at::max_pool1d(in[0], kernel, stride, padding, dilation, ceil_mode));
      }
      if (node.op == OpKind::MaxPool3d) {
        return one(at::max_pool3d(in[0], kernel, stride, padding, dilation, ceil_mode));
      }
      return one(at::max_pool2d(in[0], kernel, stride, padding, dilation, ceil_mode));
    }
    case OpKind::AvgPool1d:
    case OpKind::AvgPool2d:
    case OpKind::AvgPool3d: {
      const auto kernel = a.get_ints("kernel_size");
      const auto stride = a.get_ints("stride", {});
      const auto padding = a.get_ints("padding", {0});
      const bool ceil_mode = a.get_bool("ceil_mode", false);
      const bool include_pad = a.get_bool("count_include_pad", true);
      if (node.op == OpKind::AvgPool1d) {
        return one(at::avg_pool1d(in[0], kernel, stride, padding, ceil_mode, include_pad));
      }
      if (node.op == OpKind::AvgPool3d) {
        return one(at::avg_pool3d(in[0], kernel, stride, padding, ceil_mode, include_pad));
      }
      return one(at::avg_pool2d(in[0], kernel, stride, padding, ceil_mode, include_pad));
    }
    case OpKind::AdaptiveAvgPool2d:
      return one(at::adaptive_avg_pool2d(in[0], a.get_ints("output_size")));
    case OpKind::AdaptiveAvgPool3d:
      return one(at::adaptive_avg_pool3d(in[0], a.get_ints("output_size")));
    case OpKind::AdaptiveMaxPool1d:
      return one(std::get<0>(at::adaptive_max_pool1d(in[0], a.get_ints("output_size"))));
    case OpKind::AdaptiveMaxPool2d:
      return one(std::get<0>(at::adaptive_max_pool2d(in[0], a.get_ints("output_size"))));
    case OpKind::BatchNorm: {
      // IR order: input, weight, bias[, running_mean, running_var]. Running stats are detached
      // copies: ATen updates them in place in training mode and gives them no gradient.
      c10::optional<at::Tensor> running_mean, running_var;
      if (in.size() > 3) running_mean = in[3].detach().clone();
      if (in.size() > 4) running_var = in[4].detach().clone();
      return one(at::batch_norm(in[0], in[1], in[2], running_mean, running_var,
                                a.get_bool("training", false), a.get_float("momentum", 0.1),
                                a.get_float("eps", 1e-5), /*cudnn_enabled=*/true));
    }
    case OpKind::LayerNorm:
      return one(at::layer_norm(in[0], a.get_ints("normalized_shape"), optional_input(in, 1),
                                optional_input(in, 2), a.get_float("eps", 1e-5)));
    case OpKind::RmsNorm:
      return one(
          rms_norm_eager(in[0], a.get_ints("normalized_shape"), optional_input(in, 1),
                         a.has("eps") ? std::optional<double>(a.get_float("eps")) : std::nullopt));
    case OpKind::GroupNorm:
      return one(at::group_norm(in[0], a.get_int("num_groups"), optional_input(in, 1),
                                optional_input(in, 2), a.get_float("eps", 1e-5),
                                /*cudnn_enabled=*/true));
    case OpKind::InstanceNorm:
      return one(at::instance_norm(in[0], optional_input(in, 1), optional_input(in, 2), {}, {},
                                   /*use_input_stats=*/true, /*momentum=*/0.1,
                                   a.get_float("eps", 1e-5), /*cudnn_enabled=*/true));
    // Random draws: LibTorch's generator, seeded before every call (kTorchSeed).
    case OpKind::Dropout:
      return one(at::dropout(in[0], a.get_float("p", 0.5), a.get_bool("training", true)));
    case OpKind::FeatureDropout:
      return one(at::feature_dropout(in[0], a.get_float("p", 0.5), a.get_bool("training", true)));
    case OpKind::AlphaDropout:
      return one(at::alpha_dropout(in[0], a.get_float("p", 0.5), a.get_bool("training", true)));
    case OpKind::FeatureAlphaDropout:
      return one(
          at::feature_alpha_dropout(in[0], a.get_float("p", 0.5), a.get_bool("training", true)));
    case OpKind::Rrelu:
      return one(at::rrelu(in[0], a.get_float("lower", 1.0 / 8), a.get_float("upper", 1.0 / 3),
                           a.get_bool("training", true)));
    case OpKind::RandLike:
      return one(at::rand_like(in[0]));
    case OpKind::RandnLike:
      return one(at::randn_like(in[0]));
    case OpKind::Rand:
      return one(at::rand(in[0].sizes(), in[0].options()));
    case OpKind::Randn:
      return one(at::randn(in[0].sizes(), in[0].options()));
    case OpKind::RandintLike:
      // Its input gives only shape and type: a constant for autograd, as in Python (LibTorch's
      // C++ call would record a NotImplemented backward).
      return one(at::randint_like(in[0].detach(), a.get_int("low", 0), a.get_int("high")));
    case OpKind::Bernoulli:
      if (a.has("p")) return one(at::bernoulli(in[0], a.get_float("p")));
      return one(at::bernoulli(in[0]));
    case OpKind::Randperm:
      return one(at::randperm(in[0].size(a.get_int("dim", 0)),
                              at::TensorOptions().dtype(at::kLong).device(in[0].device())));
    case OpKind::Embedding:
      return one(eager_embedding(in[0], in[1], optional_int(a, "padding_idx")));
    case OpKind::Reshape:
      return one(at::reshape(in[0], a.get_ints("shape")));
    case OpKind::Flatten:
      return one(at::flatten(in[0], a.get_int("start_dim", 0), a.get_int("end_dim", -1)));
    case OpKind::Squeeze:
      return one(eager_squeeze(in[0], a.get_ints("dim", {})));
    case OpKind::Unsqueeze:
      return one(at::unsqueeze(in[0], a.get_int("dim")));
    case OpKind::Transpose:
      return one(at::transpose(in[0], a.get_int("dim0"), a.get_int("dim1")));
    case OpKind::Permute:
      return one(in[0].permute(a.get_ints("dims")));
    case OpKind::Expand:
      return one(in[0].expand(a.get_ints("size")));
    case OpKind::Slice:
      return one(at::slice(in[0], a.get_int("dim", 0), a.get_int("start", 0),
                           a.get_int("end", INT64_MAX), a.get_int("step", 1)));
    case OpKind::Select:
      return one(at::select(in[0], a.get_int("dim"), a.get_int("index")));
    case OpKind::SliceScatter:
      return one(at::slice_scatter(in[0], in[1], a.get_int("dim", 0), a.get_int("start", 0),
                                   a.get_int("end", INT64_MAX), a.get_int("step", 1)));
    case OpKind::SelectScatter:
      return one(at::select_scatter(in[0], in[1], a.get_int("dim"), a.get_int("index")));
    case OpKind::Copy:  // x.clone().copy_(src): aten.copy once functionalized
      return one(in[0].clone().copy_(in[1]));
    case OpKind::MaskedScatter:
      return one(at::masked_scatter(in[0], in[1], in[2]));
    case OpKind::Cat:
      return one(at::cat(in, a.get_int("dim", 0)));
    case OpKind::Stack:
      return one(at::stack(in, a.get_int("dim", 0)));
    case OpKind::Split: {
      // One size: the chunk size (torch.split(x, 2)); several: the sections.
      const auto sizes = a.get_ints("split_size");
      if (sizes.size() == 1) return at::split(in[0], sizes[0], a.get_int("dim", 0));
      return at::split_with_sizes(in[0], sizes, a.get_int("dim", 0));
    }
    case OpKind::Chunk:
      return at::chunk(in[0], a.get_int("chunks"), a.get_int("dim", 0));
    case OpKind::Pad:
      return one(eager_pad(in[0], a.get_ints("pad"), a.get_string("mode", "constant"),
                           a.get_float("value", 0.0)));
    case OpKind::Flip:
      return one(at::flip(in[0], a.get_ints("dims")));
    case OpKind::Roll:
      return one(at::roll(in[0], a.get_ints("shifts"), a.get_ints("dims", {})));
    case OpKind::Repeat:
      return one(in[0].repeat(a.get_ints("repeats")));
    case OpKind::PixelShuffle:
      return one(at::pixel_shuffle(in[0], a.get_int("upscale_factor")));
    case OpKind::PixelUnshuffle:
      return one(at::pixel_unshuffle(in[0], a.get_int("downscale_factor")));
    case OpKind::Diagonal:
      return one(
          at::diagonal(in[0], a.get_int("offset", 0), a.get_int("dim1", 0), a.get_int("dim2", 1)));
    case OpKind::Tril:
      return one(at::tril(in[0], a.get_int("diagonal", 0)));
    case OpKind::Triu:
      return one(at::triu(in[0], a.get_int("diagonal", 0)));
    case OpKind::Gather:
      return one(at::gather(in[0], a.get_int("dim"), in[1]));
    case OpKind::IndexSelect:
      return one(at::index_select(in[0], a.get_int("dim"), in[1]));
    case OpKind::ScatterAdd:
      return one(at::scatter_add(in[0], a.get_int("dim"), in[1], in[2]));
    case OpKind::Scatter:
      return one(at::scatter(in[0], a.get_int("dim"), in[1], in[2]));
    case OpKind::ScatterReduce:
      return one(at::scatter_reduce(in[0], a.get_int("dim"), in[1], in[2],
                                    a.get_string("reduce", "sum"),
                                    a.get_bool("include_self", true)));
    case OpKind::IndexAdd:
      return one(at::index_add(in[0], a.get_int("dim"), in[1], in[2], a.get_float("alpha", 1.0)));
    case OpKind::IndexPut:
      return one(at::index_put(in[0], index_list(in[1]), in[2], a.get_bool("accumulate", false)));
    case OpKind::Interpolate:
      return one(eager_interpolate(in[0], a.get_ints("size"), a.get_string("mode", "nearest"),
                                   a.get_bool("align_corners", false)));
    case OpKind::Im2col:
      return one(at::im2col(in[0], a.get_ints("kernel_size"), a.get_ints("dilation"),
                            a.get_ints("padding"), a.get_ints("stride")));
    case OpKind::Col2im:
      return one(at::col2im(in[0], a.get_ints("output_size"), a.get_ints("kernel_size"),
                            a.get_ints("dilation"), a.get_ints("padding"), a.get_ints("stride")));
    case OpKind::Cast:
      return one(in[0].to(to_torch_dtype(a.get_dtype("dtype"))));
    case OpKind::Contiguous:
      return one(
          in[0].contiguous(a.get_string("memory_format", "contiguous_format") == "channels_last"
                               ? at::MemoryFormat::ChannelsLast
                               : at::MemoryFormat::Contiguous));
    // A Python number reaches ATen as a Scalar of its own kind (the .Scalar overloads wrap it
    // into a wrapped-number tensor, as the Python binding of `x * 2.5` does).
    case OpKind::AddScalar:
      return one(at::add(in[0], torch_scalar(a)));
    case OpKind::SubScalar:
      return one(at::sub(in[0], torch_scalar(a)));
    case OpKind::RsubScalar:
      return one(at::rsub(in[0], torch_scalar(a)));
    case OpKind::MulScalar:
      return one(at::mul(in[0], torch_scalar(a)));
    case OpKind::DivScalar:
      return one(at::div(in[0], torch_scalar(a)));
    case OpKind::PowScalar:
      return one(at::pow(in[0], torch_scalar(a)));
    case OpKind::RpowScalar:
      return one(at::pow(torch_scalar(a), in[0]));
  }
  throw Error("lower_node: unknown op kind " + std::to_string(static_cast<int>(node.op)));
}

namespace {

// An "inplace" node or a writeback as the programs write it (weft/ir/inplace.h): the in-place
// op on its first input, which it returns; a writeback returns its base, copying src into the
// slot first unless the base was written through that slot's view.
std::vector<at::Tensor> lower_as_written(const ir::Node& node, const std::vector<at::Tensor>& in) {
  const Attributes& a = node.attrs;
  at::Tensor target = in[0];
  if (ir::is_writeback(node)) {
    if (!in[1].is_alias_of(target)) {
      at::Tensor slot = node.op == OpKind::SliceScatter
                            ? at::slice(target, a.get_int("dim", 0), a.get_int("start", 0),
                                        a.get_int("end", INT64_MAX), a.get_int("step", 1))
                            : at::select(target, a.get_int("dim"), a.get_int("index"));
      slot.copy_(in[1]);
    }
    return {target};
  }
  switch (node.op) {
    case OpKind::Relu:
      target.relu_();
      break;
    case OpKind::Sigmoid:
      target.sigmoid_();
      break;
    case OpKind::Tanh:
      target.tanh_();
      break;
    case OpKind::Exp:
      target.exp_();
      break;
    case OpKind::Neg:
      target.neg_();
      break;
    case OpKind::Clamp: {
      const auto lo = optional_float(a, "min"), hi = optional_float(a, "max");
      target.clamp_(lo ? c10::optional<at::Scalar>(*lo) : c10::nullopt,
                    hi ? c10::optional<at::Scalar>(*hi) : c10::nullopt);
      break;
    }
    case OpKind::Add:
      target.add_(in[1], multiplier(a.get_float("alpha", 1.0)));
      break;
    case OpKind::Sub:
      target.sub_(in[1], multiplier(a.get_float("alpha", 1.0)));
      break;
    case OpKind::Mul:
      target.mul_(in[1]);
      break;
    case OpKind::Div:
      target.div_(in[1]);
      break;
    case OpKind::MaskedFill:
      target.masked_fill_(in[1], a.get_float("value"));
      break;
    case OpKind::IndexPut:
      target.index_put_(index_list(in[1]), in[2], a.get_bool("accumulate", false));
      break;
    case OpKind::Copy:
      target.copy_(in[1]);
      break;
    default:
      throw Error(std::string(ir::op_name(node.op)) + " has no in-place form");
  }
  return {target};
}

}  // namespace

TorchExecution run_torch_eager(const ir::Graph& graph, const ir::TensorMap& leaves,
                               const std::vector<Tensor>& cotangents, bool cuda) {
  init_torch_once();
  const bool with_gradients = !cotangents.empty();
  if (with_gradients && cotangents.size() != graph.outputs().size()) {
    throw Error("run_torch_eager: " + std::to_string(cotangents.size()) + " cotangents for " +
                std::to_string(graph.outputs().size()) + " outputs");
  }
  // Forward-only runs record nothing; with cotangents, floating leaves require grad.
  const at::AutoGradMode grad_mode(with_gradients);
  at::manual_seed(kTorchSeed);  // random ops draw the same numbers on every call

  std::vector<at::Tensor> values(graph.values().size());
  std::map<std::string, at::Tensor> sources;  // floating leaves that require grad, by name
  for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
    for (ir::ValueId id : graph.leaves(kind)) {
      const Tensor& t = ir::leaf_value(graph, leaves, id);
      at::Tensor value = leaf_to_torch(graph.value(id), t, cuda);
      if (with_gradients && t.is_floating_point()) {
        value.requires_grad_(true);
        sources.emplace(graph.value(id).name, value);
      }
      values[static_cast<std::size_t>(id)] = value;
    }
  }

  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    const ir::Node& node = graph.nodes()[n];
    std::vector<at::Tensor> inputs;
    inputs.reserve(node.inputs.size());
    for (ir::ValueId id : node.inputs) {
      if (!graph.has_value(id) || !values[static_cast<std::size_t>(id)].defined()) {
        throw Error(ir::node_label(graph, n) + ": input value " + std::to_string(id) +
                    " is not computed before this node");
      }
      inputs.push_back(values[static_cast<std::size_t>(id)]);
    }
    std::vector<at::Tensor> outputs;
    try {
      outputs = ir::is_in_place(node) || ir::is_writeback(node) ? lower_as_written(node, inputs)
                                                                : lower_node(node, inputs);
    } catch (const c10::Error& e) {
      throw Error(ir::node_label(graph, n) + ": " + first_line(e.what_without_backtrace()));
    } catch (const std::exception& e) {
      throw Error(ir::node_label(graph, n) + ": " + first_line(e.what()));
    }
    if (outputs.size() != node.outputs.size()) {
      throw Error(ir::node_label(graph, n) + ": produced " + std::to_string(outputs.size()) +
                  " outputs, the graph declares " + std::to_string(node.outputs.size()));
    }
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      values[static_cast<std::size_t>(node.outputs[k])] = std::move(outputs[k]);
    }
  }

  TorchExecution result;
  std::vector<at::Tensor> outputs;
  for (ir::ValueId id : graph.outputs()) {
    if (!graph.has_value(id) || !values[static_cast<std::size_t>(id)].defined()) {
      throw Error("output value " + std::to_string(id) + " is never computed");
    }
    outputs.push_back(values[static_cast<std::size_t>(id)]);
    try {
      result.outputs.push_back(from_torch(outputs.back()));
    } catch (const Error& e) {
      throw Error("output " + std::to_string(outputs.size() - 1) + ": " + e.what());
    }
  }
  if (!with_gradients) return result;

  // Backward of sum_i <outputs[i], cotangents[i]> over floating outputs that require grad.
  // The leaves are fresh tensors, so their .grad() is exactly this gradient; a leaf the
  // objective does not reach keeps an undefined grad and reports zeros (allow_unused).
  try {
    at::Tensor objective;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const at::Tensor& out = outputs[i];
      if (!out.is_floating_point() || !out.requires_grad()) continue;
      const at::Tensor term =
          at::sum(out * to_torch(cotangents[i]).to(out.device(), out.scalar_type()));
      objective = objective.defined() ? objective + term : term;
    }
    if (objective.defined()) objective.backward();
  } catch (const c10::Error& e) {
    throw Error("backward: " + first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw Error("backward: " + first_line(e.what()));
  }
  for (const auto& [name, value] : leaves) {
    if (!value.defined() || !value.is_floating_point()) continue;
    const auto it = sources.find(name);
    const at::Tensor grad = it != sources.end() ? it->second.grad() : at::Tensor();
    result.gradients[name] = grad.defined() ? from_torch(grad) : zeros_like(value);
  }
  return result;
}

}  // namespace weft::oracle
