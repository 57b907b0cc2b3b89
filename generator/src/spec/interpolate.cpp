// Interpolation to a given size: one size per spatial dim of [N, C, *spatial]; nearest for
// 1 to 3 spatial dims, linear for 3-d inputs, bilinear for 4-d ones, align_corners only with
// the linear modes.
#include <string>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

template <class B>
void interpolate_rule(B& b) {
  const int rank = b.rank(0);
  b.require_that(rank >= 3 && rank <= 5, "interpolate: input rank");
  const auto x = b.data(0);
  for (int d = 2; d < rank; ++d) b.require(x[static_cast<std::size_t>(d)] >= 1);
  std::vector<std::string> modes{"nearest"};
  if (rank == 3) modes.push_back("linear");
  if (rank == 4) modes.push_back("bilinear");
  const std::string mode = b.attr_string("mode", modes);
  if (mode != "nearest") b.attr_bool("align_corners");
  // Mostly small sizes (up- and downsampling); now and then up to the bound.
  const std::int64_t hi = b.chance("size.large", 0.15) ? b.bounds().max_dim : 16;
  const auto size = b.attr_ints("size", rank - 2, 1, hi);
  auto out = x;
  for (int i = 0; i < rank - 2; ++i)
    out[static_cast<std::size_t>(2 + i)] = size[static_cast<std::size_t>(i)];
  b.output(out);
}

}  // namespace

OpSpec interpolate_spec(ir::OpKind op) {
  if (op != ir::OpKind::Interpolate) return OpSpec{op, {}};
  OpSpec s;
  s.op = op;
  s.inputs = {InputDecl{"input", InputRole::Data, 3, 5}};
  s.dtypes = kFloat;
  s.output_dtypes = dtypes::same;
  s.sample = &interpolate_rule<Sampler>;
  s.encode = &interpolate_rule<Encoder>;
  return s;
}

}  // namespace weft::gen
