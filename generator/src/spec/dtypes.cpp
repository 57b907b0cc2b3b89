// Output dtype rules shared by the op families.
#include "spec/families.h"

namespace weft::gen::dtypes {

std::vector<Dtype> same(const std::vector<Dtype>& in, const ir::Attributes&) {
  return {in.at(0)};
}

std::vector<Dtype> floating(const std::vector<Dtype>& in, const ir::Attributes&) {
  return {is_floating(in.at(0)) ? in[0] : Dtype::Float32};
}

std::vector<Dtype> promoted(const std::vector<Dtype>& in, const ir::Attributes&) {
  Dtype out = in.at(0);
  for (Dtype d : in) out = promote_types(out, d);
  return {out};
}

std::vector<Dtype> boolean(const std::vector<Dtype>&, const ir::Attributes&) {
  return {Dtype::Bool};
}

std::vector<Dtype> int64(const std::vector<Dtype>&, const ir::Attributes&) {
  return {Dtype::Int64};
}

}  // namespace weft::gen::dtypes
