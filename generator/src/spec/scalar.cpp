// Python scalars as operands (`x * 2.5`, `x + True`, `2 - x`, `x ** 0.5`, `2 ** x`): one tensor
// input, the shape kept; the scalar's kind (bool, int, float) and value are drawn per op so that
// PyTorch refuses nothing (no bool in a subtraction, no division by zero, no integer base for
// a negative power), and the output dtype follows the wrapped-number promotion.
#include <array>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

using K = ir::OpKind;

// Floats that round differently in float32 (0.1), exact ones, whole ones (2.0 is not 2 to
// promotion), tiny and negative ones.
constexpr std::array<double, 10> kFloats{0.5, 2.5, -1.5, 0.1, 3.0, -0.25, 1e-3, 2.0, 1.0, -3.0};
constexpr std::array<double, 9> kExponents{2.0, 3.0, -1.0, 0.5, 1.5, -0.5, -2.0, 0.0, 1.0};
constexpr std::array<double, 6> kBases{2.0, 0.5, 1.5, 3.0, 2.718281828459045, 10.0};

enum Kind : std::int64_t { kBoolScalar = 0, kIntScalar = 1, kFloatScalar = 2 };

template <class B, std::size_t N>
double pick(B& b, const char* name, const std::array<double, N>& table) {
  return table[static_cast<std::size_t>(b.choose(name, 0, static_cast<std::int64_t>(N) - 1))];
}

template <K op, class B>
void scalar_rule(B& b) {
  // Kinds each op takes: a bool scalar is refused by sub/rsub and divides by False in div;
  // pow's and rpow's values come from their own tables.
  const bool takes_bool = op == K::AddScalar || op == K::MulScalar || op == K::PowScalar;
  const Kind kind = static_cast<Kind>(b.choose("scalar.kind", takes_bool ? 0 : 1, 2));
  ir::AttrValue value;
  if (kind == kBoolScalar) {
    value = b.choose("scalar.bool", 0, 1) == 1;
  } else if (op == K::PowScalar || op == K::RpowScalar) {
    const double v = op == K::PowScalar ? pick(b, "scalar.exponent", kExponents)
                                        : pick(b, "scalar.base", kBases);
    const bool whole = v == static_cast<double>(static_cast<std::int64_t>(v));
    if (kind == kIntScalar && whole) {
      value = static_cast<std::int64_t>(v);
    } else {
      value = v;
    }
  } else if (kind == kIntScalar) {
    std::int64_t v = b.choose("scalar.int", -3, 4);
    if (op == K::DivScalar && v == 0) v = 2;
    value = v;
  } else {
    value = pick(b, "scalar.float", kFloats);
  }
  b.set_attr("other", value);
  b.attr_string("spelling", {"operator", "function", "method"});
  b.output(b.data(0));
}

// The wrapped-number promotion (weft::combine_result_types): a scalar decides the dtype only
// when its category is above the tensor's, as the default dtype of that category.
std::vector<Dtype> scalar_result(const std::vector<Dtype>& in, const ir::Attributes& attrs) {
  const ir::AttrValue& other = attrs.get_scalar("other");
  Dtype scalar = kDefaultFloat;
  if (std::holds_alternative<bool>(other)) scalar = Dtype::Bool;
  if (std::holds_alternative<std::int64_t>(other)) scalar = Dtype::Int64;
  return {combine_result_types(in.at(0), std::nullopt, scalar)};
}

// True division: an integral result becomes the default float.
std::vector<Dtype> divided_result(const std::vector<Dtype>& in, const ir::Attributes& attrs) {
  const Dtype out = scalar_result(in, attrs)[0];
  return {is_floating(out) ? out : kDefaultFloat};
}

template <K op>
OpSpec make(unsigned dtypes_allowed, ValueHint hint,
            std::vector<Dtype> (*out)(const std::vector<Dtype>&, const ir::Attributes&)) {
  OpSpec s;
  s.op = op;
  s.inputs = {InputDecl{"self"}};
  s.dtypes = dtypes_allowed;
  s.hint = hint;
  s.output_dtypes = out;
  s.sample = &scalar_rule<op, Sampler>;
  s.encode = &scalar_rule<op, Encoder>;
  return s;
}

}  // namespace

OpSpec scalar_spec(ir::OpKind op) {
  switch (op) {
    case K::AddScalar:
      return make<K::AddScalar>(kAnyDtype, ValueHint::None, scalar_result);
    case K::MulScalar:
      return make<K::MulScalar>(kAnyDtype, ValueHint::None, scalar_result);
    case K::SubScalar:
      return make<K::SubScalar>(kFloat | kInt, ValueHint::None, scalar_result);
    case K::RsubScalar:
      return make<K::RsubScalar>(kFloat | kInt, ValueHint::None, scalar_result);
    case K::DivScalar:
      return make<K::DivScalar>(kFloat | kInt, ValueHint::None, divided_result);
    // Positive bases keep every exponent real; bounded exponents keep 10 ** x finite.
    case K::PowScalar:
      return make<K::PowScalar>(kFloat, ValueHint::Positive, scalar_result);
    case K::RpowScalar:
      return make<K::RpowScalar>(kFloat, ValueHint::Bounded, scalar_result);
    default:
      return OpSpec{op, {}};
  }
}

}  // namespace weft::gen
