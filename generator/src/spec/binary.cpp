// Elementwise ops of two (where: three) inputs with NumPy broadcasting: arithmetic,
// comparisons, logic. What differs per op is the dtypes it takes, its attributes, where it is
// finite and the dtype it returns.
#include <string>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

template <class B>
using Dims = std::vector<typename B::Int>;

// The dims of `input`; a fresh input's right-aligned dims mostly copy `like` or become 1, so
// that broadcasting holds without Z3 even when no input is bound. The choices are draws, so
// the encoder makes the same ones (copying or 1 never makes the rule unsatisfiable).
template <class B>
Dims<B> conformed(B& b, int input, const Dims<B>& like) {
  Dims<B> dims = b.data(input);
  if (b.bound(input)) return dims;
  const std::size_t n = dims.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t from_right = n - i;
    if (from_right > like.size()) continue;
    const std::string name = "fit" + std::to_string(input) + "." + std::to_string(i);
    const std::int64_t how = b.choose(name, 0, 9);  // 0-6: copy, 7: one, 8-9: keep the draw
    if (how <= 6) {
      dims[i] = like[like.size() - from_right];
    } else if (how == 7) {
      dims[i] = b.lit(1);
    }
  }
  b.shape_input(input, dims);
  return dims;
}

// Inputs `first` and `first + 1`, the fresh one fitted to the bound one.
template <class B>
std::pair<Dims<B>, Dims<B>> operand_pair(B& b, int first) {
  if (!b.bound(first) && b.bound(first + 1)) {
    Dims<B> y = b.data(first + 1);
    Dims<B> x = conformed(b, first, y);
    return {x, y};
  }
  Dims<B> x = b.data(first);
  Dims<B> y = conformed(b, first + 1, x);
  return {x, y};
}

template <class B>
void broadcast_rule(B& b) {
  const auto [x, y] = operand_pair(b, 0);
  b.output(broadcast(b, x, y));
}

// add/sub's alpha: absent or whole. A fractional alpha is refused by PyTorch for integral
// tensors, and the rule does not know the dtype.
template <class B>
void alpha_rule(B& b) {
  if (b.chance("alpha.present", 0.5)) {
    b.set_attr("alpha", static_cast<double>(b.choose("alpha.value", -2, 3)));
  }
  broadcast_rule(b);
}

template <class B>
void div_rule(B& b) {
  const std::int64_t mode = b.choose("rounding_mode.kind", 0, 2);  // 0: true division
  if (mode == 1) b.set_attr("rounding_mode", std::string("trunc"));
  if (mode == 2) b.set_attr("rounding_mode", std::string("floor"));
  broadcast_rule(b);
}

template <class B>
void elementwise_rule(B& b) {
  b.output(b.data(0));
}

// where(condition, self, other): three shapes broadcast together; fresh inputs fit the first
// bound one (or the condition).
template <class B>
void where_rule(B& b) {
  int anchor = 0;
  for (int i = 0; i < 3; ++i) {
    if (b.bound(i)) {
      anchor = i;
      break;
    }
  }
  Dims<B> dims[3];
  dims[anchor] = b.data(anchor);
  for (int i = 0; i < 3; ++i) {
    if (i != anchor) dims[i] = conformed(b, i, dims[anchor]);
  }
  b.output(broadcast(b, broadcast(b, dims[0], dims[1]), dims[2]));
}

// addcmul/addcdiv(self, tensor1, tensor2, value): three shapes broadcast as where's; value is
// absent (1) or drawn.
template <class B>
void addc_rule(B& b) {
  if (b.chance("value.present", 0.5)) b.attr_float("value", -2.0, 2.0);
  where_rule(b);
}

// masked_fill(self, mask, value): the mask broadcasts with self. The value is mostly moderate,
// sometimes 0 or an attention mask's large negative; an integral self truncates it.
template <class B>
void masked_fill_rule(B& b) {
  const auto [x, mask] = operand_pair(b, 0);
  const std::int64_t kind = b.choose("value.kind", 0, 9);
  if (kind == 0) {
    b.set_attr("value", 0.0);
  } else if (kind == 1) {
    b.set_attr("value", -1e4);
  } else {
    b.attr_float("value", -3.0, 3.0);
  }
  b.output(broadcast(b, x, mask));
}

// copy(self, src), what `self.copy_(src)` computes: src broadcasts to self's shape (never
// beyond it), and the result has self's shape.
template <class B>
void copy_rule(B& b) {
  b.require_that(b.rank(1) <= b.rank(0), "copy: src has more dims than self");
  const Dims<B> x = b.data(0);
  const Dims<B> src = conformed(b, 1, x);
  for (std::size_t i = 0; i < src.size(); ++i) {
    const auto& to = x[x.size() - src.size() + i];
    b.require(src[i] == to || src[i] == 1);
  }
  b.output(x);
}

// masked_scatter(self, mask, source): self and mask broadcast; source has the result's shape,
// so it always holds enough elements for every mask.
template <class B>
void masked_scatter_rule(B& b) {
  const auto [x, mask] = operand_pair(b, 0);
  const Dims<B> out = broadcast(b, x, mask);
  if (b.bound(2)) {
    const Dims<B> source = b.data(2);
    b.require_that(source.size() == out.size(), "masked_scatter: source rank is not the result's");
    for (std::size_t i = 0; i < out.size(); ++i) b.require(source[i] == out[i]);
  } else {
    b.shape_input(2, out);
  }
  b.output(out);
}

// True division of integers or bools gives float32; rounded division keeps the promoted type
// (bool divides as int64).
std::vector<Dtype> div_dtypes(const std::vector<Dtype>& in, const ir::Attributes& attrs) {
  const Dtype promoted = promote_types(in.at(0), in.at(1));
  if (!attrs.has("rounding_mode")) return {is_floating(promoted) ? promoted : Dtype::Float32};
  return {promoted == Dtype::Bool ? Dtype::Int64 : promoted};
}

// pow of two bools computes in int64.
std::vector<Dtype> pow_dtypes(const std::vector<Dtype>& in, const ir::Attributes&) {
  const Dtype promoted = promote_types(in.at(0), in.at(1));
  return {promoted == Dtype::Bool ? Dtype::Int64 : promoted};
}

// atan2 promotes integers to float32.
std::vector<Dtype> floating_promoted(const std::vector<Dtype>& in, const ir::Attributes&) {
  const Dtype promoted = promote_types(in.at(0), in.at(1));
  return {is_floating(promoted) ? promoted : Dtype::Float32};
}

// The values' promotion; the condition does not take part.
std::vector<Dtype> where_dtypes(const std::vector<Dtype>& in, const ir::Attributes&) {
  return {promote_types(in.at(1), in.at(2))};
}

OpSpec two_inputs(ir::OpKind op, unsigned dtypes_allowed,
                  std::vector<Dtype> (*out)(const std::vector<Dtype>&, const ir::Attributes&),
                  ValueHint hint = ValueHint::None) {
  OpSpec s{op, {InputDecl{"self"}, InputDecl{"other"}}};
  s.dtypes = dtypes_allowed;
  s.hint = hint;
  s.output_dtypes = out;
  s.sample = &broadcast_rule<Sampler>;
  s.encode = &broadcast_rule<Encoder>;
  return s;
}

}  // namespace

OpSpec binary_spec(ir::OpKind op) {
  using K = ir::OpKind;
  constexpr unsigned kNumber = kFloat | kInt;
  switch (op) {
    case K::Add:
    case K::Sub:
      // Bool is left out: sub refuses it, add refuses it with an alpha other than 1.
      return with_rule<&alpha_rule<Sampler>, &alpha_rule<Encoder>>(
          two_inputs(op, kNumber, dtypes::promoted));
    case K::Mul:
    case K::Maximum:
    case K::Minimum:
      return two_inputs(op, kAnyDtype, dtypes::promoted);
    case K::Div:
      // Floating only: rounded integer division by zero throws (in both frameworks), and the
      // rule cannot tie the rounding mode to the dtype.
      return with_rule<&div_rule<Sampler>, &div_rule<Encoder>>(
          two_inputs(op, kFloat, div_dtypes, ValueHint::NonZero));
    case K::Pow:
      // Floating only: integers to negative integer powers throw.
      return two_inputs(op, kFloat, pow_dtypes, ValueHint::Bounded);
    case K::Atan2:
      return two_inputs(op, kNumber, floating_promoted);
    case K::Hypot:
    case K::Logaddexp:
    case K::Logaddexp2:
      return two_inputs(op, kFloat, dtypes::promoted);
    case K::Xlogy:
    case K::Copysign:
      return two_inputs(op, kNumber, floating_promoted);
    case K::Fmax:
    case K::Fmin:
      return two_inputs(op, kAnyDtype, dtypes::promoted);
    case K::Lerp:
    case K::Addcmul:
    case K::Addcdiv: {
      // Floating only: lerp has no integer kernel, addcdiv refuses integer division, and
      // addcmul's fractional value would need an integral one for integer tensors.
      const bool lerp = op == K::Lerp;
      OpSpec s{op,
               {InputDecl{"self"}, InputDecl{lerp ? "end" : "tensor1"},
                InputDecl{lerp ? "weight" : "tensor2"}}};
      s.dtypes = kFloat;
      s.output_dtypes = dtypes::promoted;
      s.sample = lerp ? &where_rule<Sampler> : &addc_rule<Sampler>;
      s.encode = lerp ? &where_rule<Encoder> : &addc_rule<Encoder>;
      return s;
    }
    case K::Fmod:
    case K::Remainder:
      // Floating only, as div: an integer divisor of zero throws in both frameworks.
      return two_inputs(op, kFloat, dtypes::promoted, ValueHint::NonZero);
    case K::Eq:
    case K::Ne:
    case K::Lt:
    case K::Le:
    case K::Gt:
    case K::Ge:
    case K::LogicalAnd:
    case K::LogicalOr:
    case K::LogicalXor:
      return two_inputs(op, kAnyDtype, dtypes::boolean);
    case K::BitwiseAnd:
    case K::BitwiseOr:
    case K::BitwiseXor:
      return two_inputs(op, kInt | kBool, dtypes::promoted);
    case K::BitwiseNot: {
      OpSpec s{op, {InputDecl{"self"}}};
      s.dtypes = kInt | kBool;
      s.output_dtypes = dtypes::same;
      s.sample = &elementwise_rule<Sampler>;
      s.encode = &elementwise_rule<Encoder>;
      return s;
    }
    case K::LogicalNot: {
      OpSpec s{op, {InputDecl{"self"}}};
      s.dtypes = kAnyDtype;
      s.output_dtypes = dtypes::boolean;
      s.sample = &elementwise_rule<Sampler>;
      s.encode = &elementwise_rule<Encoder>;
      return s;
    }
    case K::MaskedFill: {
      OpSpec s{op, {InputDecl{"self"}, InputDecl{"mask", InputRole::Mask}}};
      s.dtypes = kAnyDtype;
      s.output_dtypes = dtypes::same;
      s.sample = &masked_fill_rule<Sampler>;
      s.encode = &masked_fill_rule<Encoder>;
      return s;
    }
    case K::Copy: {
      OpSpec s{op, {InputDecl{"self"}, InputDecl{"src"}}};
      s.dtypes = kAnyDtype;
      s.output_dtypes = dtypes::same;
      s.sample = &copy_rule<Sampler>;
      s.encode = &copy_rule<Encoder>;
      return s;
    }
    case K::MaskedScatter: {
      OpSpec s{op, {InputDecl{"self"}, InputDecl{"mask", InputRole::Mask}, InputDecl{"source"}}};
      s.dtypes = kAnyDtype;
      s.output_dtypes = dtypes::same;
      s.sample = &masked_scatter_rule<Sampler>;
      s.encode = &masked_scatter_rule<Encoder>;
      return s;
    }
    case K::Where: {
      OpSpec s{op,
               {InputDecl{"condition", InputRole::Mask}, InputDecl{"self"}, InputDecl{"other"}}};
      s.dtypes = kAnyDtype;
      s.output_dtypes = where_dtypes;
      s.sample = &where_rule<Sampler>;
      s.encode = &where_rule<Encoder>;
      return s;
    }
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
