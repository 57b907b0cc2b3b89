// cast: any dtype to any dtype, the shape kept; the output dtype is the attribute's.
// contiguous: the same values in a memory format (channels_last for rank 4 only).
#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

template <class B>
void cast_rule(B& b) {
  b.attr_dtype("dtype", {Dtype::Float32, Dtype::Float64, Dtype::Float16, Dtype::BFloat16,
                         Dtype::Int32, Dtype::Int64, Dtype::Bool});
  b.output(b.data(0));
}

std::vector<Dtype> cast_dtypes(const std::vector<Dtype>&, const ir::Attributes& attrs) {
  return {attrs.get_dtype("dtype")};
}

template <class B>
void contiguous_rule(B& b) {
  if (b.rank(0) == 4) {
    b.attr_string("memory_format", {"contiguous_format", "channels_last"});
  } else {
    b.set_attr("memory_format", std::string("contiguous_format"));
  }
  b.output(b.data(0));
}

}  // namespace

OpSpec cast_spec(ir::OpKind op) {
  if (op == ir::OpKind::Contiguous) {
    OpSpec s{op, {InputDecl{"self"}}};
    s.dtypes = kAnyDtype;
    s.output_dtypes = dtypes::same;
    s.sample = &contiguous_rule<Sampler>;
    s.encode = &contiguous_rule<Encoder>;
    return s;
  }
  if (op != ir::OpKind::Cast) return OpSpec{op, {}};
  OpSpec s{op, {InputDecl{"self"}}};
  s.dtypes = kAnyDtype;
  // Floats outside an integer type's range convert differently per framework (undefined in
  // C++): keep magnitudes moderate.
  s.hint = ValueHint::Bounded;
  s.output_dtypes = cast_dtypes;
  s.sample = &cast_rule<Sampler>;
  s.encode = &cast_rule<Encoder>;
  return s;
}

}  // namespace weft::gen
