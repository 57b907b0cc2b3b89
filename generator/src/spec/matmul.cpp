// Matrix products: matmul (every rank pair PyTorch allows), mm, bmm, linear, addmm, and the
// pairwise distances cdist and pdist. A fresh operand is fitted to the other one (its
// contraction dim copied, its batch dims mostly copied or 1), so that the sampler rarely needs
// Z3.
#include <string>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

template <class B>
using Dims = std::vector<typename B::Int>;

template <class B>
Dims<B> slice(const Dims<B>& v, std::size_t begin, std::size_t end) {
  return Dims<B>(v.begin() + static_cast<std::ptrdiff_t>(begin),
                 v.begin() + static_cast<std::ptrdiff_t>(end));
}

// Right-aligned: each of `dims` mostly copies `like`'s dim or becomes 1 (a draw, shared by the
// encoder; neither choice can make broadcasting fail).
template <class B>
void fit_batch(B& b, const std::string& name, Dims<B>& dims, std::size_t count,
               const Dims<B>& like) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t from_right = count - i;
    if (from_right > like.size()) continue;
    const std::int64_t how = b.choose(name + "." + std::to_string(i), 0, 9);
    if (how <= 6) {
      dims[i] = like[like.size() - from_right];
    } else if (how == 7) {
      dims[i] = b.lit(1);
    }
  }
}

// Where `dims` (of rank `rank`) holds the contraction size as the left (`left`) or right
// operand of a product.
std::size_t contraction(std::size_t rank, bool left) {
  if (left) return rank - 1;
  return rank == 1 ? 0 : rank - 2;
}

// Reads inputs `i` (left) and `j` (right); a fresh one copies the other's contraction size
// and, when `batch_fit`, fits its batch dims to the other's. `rows_both`: both operands are
// rows of their last dim (cdist's x1 and x2), not a left and a right factor.
template <class B>
std::pair<Dims<B>, Dims<B>> operands(B& b, int i, int j, bool batch_fit, bool rows_both = false) {
  Dims<B> x = b.data(i), y = b.data(j);
  const std::size_t ra = x.size(), rb = y.size();
  const std::size_t ka = contraction(ra, true), kb = contraction(rb, rows_both);
  const std::size_t batch_a = ra >= 2 ? ra - 2 : 0, batch_b = rb >= 2 ? rb - 2 : 0;
  if (!b.bound(j)) {
    y[kb] = x[ka];
    if (batch_fit) fit_batch(b, "fit" + std::to_string(j), y, batch_b, slice<B>(x, 0, batch_a));
    b.shape_input(j, y);
  } else if (!b.bound(i)) {
    x[ka] = y[kb];
    if (batch_fit) fit_batch(b, "fit" + std::to_string(i), x, batch_a, slice<B>(y, 0, batch_b));
    b.shape_input(i, x);
  }
  b.require(x[ka] == y[kb]);
  return {x, y};
}

template <class B>
void matmul_rule(B& b) {
  b.require_that(b.rank(0) >= 1 && b.rank(1) >= 1, "matmul needs 1-D or more");
  const auto [x, y] = operands(b, 0, 1, true);
  const std::size_t ra = x.size(), rb = y.size();
  if (ra == 1 && rb == 1) {
    b.output({});
  } else if (rb == 1) {
    b.output(slice<B>(x, 0, ra - 1));
  } else if (ra == 1) {
    Dims<B> out = slice<B>(y, 0, rb - 2);
    out.push_back(y[rb - 1]);
    b.output(out);
  } else {
    Dims<B> out = broadcast(b, slice<B>(x, 0, ra - 2), slice<B>(y, 0, rb - 2));
    out.push_back(x[ra - 2]);
    out.push_back(y[rb - 1]);
    b.output(out);
  }
}

template <class B>
void mm_rule(B& b) {
  b.require_that(b.rank(0) == 2 && b.rank(1) == 2, "mm needs matrices");
  const auto [x, y] = operands(b, 0, 1, false);
  b.output({x[0], y[1]});
}

// Inputs `i` [B, n, m] and `j` [B, m, p] of a batched product: no broadcasting of the batch,
// so a fresh operand copies it (and the contraction size). Returns [B, n, p].
template <class B>
Dims<B> batched_operands(B& b, int i, int j) {
  Dims<B> x = b.data(i), y = b.data(j);
  if (!b.bound(j)) {
    y[0] = x[0];
    y[1] = x[2];
    b.shape_input(j, y);
  } else if (!b.bound(i)) {
    x[0] = y[0];
    x[2] = y[1];
    b.shape_input(i, x);
  }
  b.require(x[0] == y[0]);
  b.require(x[2] == y[1]);
  return {x[0], x[1], y[2]};
}

template <class B>
void bmm_rule(B& b) {
  b.require_that(b.rank(0) == 3 && b.rank(1) == 3, "bmm needs 3-D tensors");
  b.output(batched_operands(b, 0, 1));
}

// linear(input, weight[out, in], bias[out]): the weight and bias are parameters whose shapes
// the rule spells: out_features a fresh dim, in_features the input's last.
template <class B>
void linear_rule(B& b) {
  b.require_that(b.rank(0) >= 1 && b.rank(1) == 2, "linear needs 1-D+ input, 2-D weight");
  const Dims<B> x = b.data(0);
  Dims<B> w = b.data(1);
  if (!b.bound(1)) {
    w[1] = x.back();
    b.shape_input(1, w);
  }
  b.require(w[1] == x.back());
  if (b.present(2)) {
    b.require_that(b.rank(2) == 1, "bias is 1-D");
    const Dims<B> bias = b.bound(2) ? b.data(2) : Dims<B>{w[0]};
    if (!b.bound(2)) b.shape_input(2, bias);
    b.require(bias[0] == w[0]);
  }
  Dims<B> out(x.begin(), x.end() - 1);
  out.push_back(w[0]);
  b.output(out);
}

// addmm's and baddbmm's self (input 0), which broadcasts to the product's shape `out`, and
// their beta and alpha: whole (or absent), as PyTorch refuses fractional multipliers for
// integral tensors. Returns `out`.
template <class B>
Dims<B> added_self(B& b, const Dims<B>& out) {
  Dims<B> self = b.data(0);
  if (!b.bound(0)) {
    fit_batch(b, "fit0", self, self.size(), out);
    b.shape_input(0, self);
  }
  for (std::size_t i = 0; i < self.size(); ++i) {
    const auto& want = out[out.size() - self.size() + i];
    b.require(self[i] == want || self[i] == b.lit(1));
  }
  if (b.chance("beta.present", 0.5)) {
    b.set_attr("beta", static_cast<double>(b.choose("beta.value", -1, 2)));
  }
  if (b.chance("alpha.present", 0.5)) {
    b.set_attr("alpha", static_cast<double>(b.choose("alpha.value", -2, 2)));
  }
  return out;
}

// addmm(self, mat1, mat2): self broadcasts to [n, p].
template <class B>
void addmm_rule(B& b) {
  b.require_that(b.rank(1) == 2 && b.rank(2) == 2 && b.rank(0) <= 2, "addmm ranks");
  const auto [m1, m2] = operands(b, 1, 2, false);
  b.output(added_self(b, {m1[0], m2[1]}));
}

// dot(self[n], tensor[n]) -> [].
template <class B>
void dot_rule(B& b) {
  b.require_that(b.rank(0) == 1 && b.rank(1) == 1, "dot needs vectors");
  operands(b, 0, 1, false);
  b.output({});
}

// mv(self[n, m], vec[m]) -> [n].
template <class B>
void mv_rule(B& b) {
  b.require_that(b.rank(0) == 2 && b.rank(1) == 1, "mv needs a matrix and a vector");
  const auto [x, y] = operands(b, 0, 1, false);
  b.output({x[0]});
}

// outer(self[n], vec2[m]) -> [n, m]: the two lengths are free.
template <class B>
void outer_rule(B& b) {
  b.require_that(b.rank(0) == 1 && b.rank(1) == 1, "outer needs vectors");
  b.output({b.data(0)[0], b.data(1)[0]});
}

// trace(self[n, m]) -> [].
template <class B>
void trace_rule(B& b) {
  b.require_that(b.rank(0) == 2, "trace needs a matrix");
  b.data(0);  // the matrix's dims are drawn when a rule reads them
  b.output({});
}

// baddbmm(self, batch1[B, n, m], batch2[B, m, p]): self broadcasts to [B, n, p].
template <class B>
void baddbmm_rule(B& b) {
  b.require_that(b.rank(1) == 3 && b.rank(2) == 3 && b.rank(0) <= 3, "baddbmm ranks");
  b.output(added_self(b, batched_operands(b, 1, 2)));
}

// trace sums: an integral matrix gives int64.
std::vector<Dtype> trace_dtypes(const std::vector<Dtype>& in, const ir::Attributes&) {
  return {is_floating(in.at(0)) ? in.at(0) : Dtype::Int64};
}

// The p of a distance: 2 mostly, else 1, 1.5 or 3. Not 0 (a count of differing elements) nor
// inf (the largest difference): both turn a rounding into a different count or a different
// maximum, which the judge has no decision for; the op sweep checks them.
template <class B>
void distance_p(B& b) {
  static constexpr double kPs[] = {2.0, 2.0, 1.0, 1.5, 3.0};
  if (b.chance("p.present", 0.6)) b.set_attr("p", kPs[b.choose("p.value", 0, 4)]);
}

// cdist(x1 [..., P, M], x2 [..., R, M]): batch dims broadcast, the columns match.
template <class B>
void cdist_rule(B& b) {
  b.require_that(b.rank(0) >= 2 && b.rank(1) >= 2, "cdist needs 2-D or more");
  const auto [x, y] = operands(b, 0, 1, true, true);
  const std::size_t ra = x.size(), rb = y.size();
  distance_p(b);
  Dims<B> out = broadcast(b, slice<B>(x, 0, ra - 2), slice<B>(y, 0, rb - 2));
  out.push_back(x[ra - 2]);
  out.push_back(y[rb - 2]);
  b.output(out);
}

// pdist(x [N, M]) -> [N (N - 1) / 2].
template <class B>
void pdist_rule(B& b) {
  b.require_that(b.rank(0) == 2, "pdist needs a matrix");
  const Dims<B> x = b.data(0);
  distance_p(b);
  b.output({x[0] * (x[0] - 1) / 2});
}

OpSpec product(ir::OpKind op, std::vector<InputDecl> inputs, unsigned dtypes_allowed,
               void (*sample)(Sampler&), void (*encode)(Encoder&)) {
  OpSpec s{op, std::move(inputs)};
  s.dtypes = dtypes_allowed;
  s.output_dtypes = dtypes::same;
  s.sample = sample;
  s.encode = encode;
  return s;
}

}  // namespace

OpSpec matmul_spec(ir::OpKind op) {
  using K = ir::OpKind;
  // Integers multiply (PyTorch's CPU GEMM takes them); bool does not.
  constexpr unsigned kNumber = kFloat | kInt;
  switch (op) {
    case K::Matmul:
      return product(
          op, {InputDecl{"self", InputRole::Data, 1, 4}, InputDecl{"other", InputRole::Data, 1, 4}},
          kNumber, WEFT_RULE(matmul_rule));
    case K::Mm:
      return product(
          op, {InputDecl{"self", InputRole::Data, 2, 2}, InputDecl{"mat2", InputRole::Data, 2, 2}},
          kNumber, WEFT_RULE(mm_rule));
    case K::Bmm:
      return product(
          op, {InputDecl{"self", InputRole::Data, 3, 3}, InputDecl{"mat2", InputRole::Data, 3, 3}},
          kNumber, WEFT_RULE(bmm_rule));
    case K::Linear:
      // Floating only: the weight is a floating parameter and linear wants one dtype.
      return product(
          op,
          {InputDecl{"input", InputRole::Data, 1, 4}, InputDecl{"weight", InputRole::Weight, 2, 2},
           InputDecl{"bias", InputRole::Weight, 1, 1, true}},
          kFloat, WEFT_RULE(linear_rule));
    case K::Addmm:
      return product(
          op,
          {InputDecl{"self", InputRole::Data, 0, 2}, InputDecl{"mat1", InputRole::Data, 2, 2},
           InputDecl{"mat2", InputRole::Data, 2, 2}},
          kNumber, WEFT_RULE(addmm_rule));
    case K::Dot:
      return product(
          op,
          {InputDecl{"self", InputRole::Data, 1, 1}, InputDecl{"tensor", InputRole::Data, 1, 1}},
          kNumber, WEFT_RULE(dot_rule));
    case K::Mv:
      return product(
          op, {InputDecl{"self", InputRole::Data, 2, 2}, InputDecl{"vec", InputRole::Data, 1, 1}},
          kNumber, WEFT_RULE(mv_rule));
    case K::Outer:
      return product(
          op, {InputDecl{"self", InputRole::Data, 1, 1}, InputDecl{"vec2", InputRole::Data, 1, 1}},
          kNumber, WEFT_RULE(outer_rule));
    case K::Trace: {
      OpSpec s =
          product(op, {InputDecl{"self", InputRole::Data, 2, 2}}, kNumber, WEFT_RULE(trace_rule));
      s.output_dtypes = trace_dtypes;
      return s;
    }
    case K::Baddbmm:
      return product(
          op,
          {InputDecl{"self", InputRole::Data, 0, 3}, InputDecl{"batch1", InputRole::Data, 3, 3},
           InputDecl{"batch2", InputRole::Data, 3, 3}},
          kNumber, WEFT_RULE(baddbmm_rule));
    case K::Cdist:
      return product(
          op, {InputDecl{"x1", InputRole::Data, 2, 4}, InputDecl{"x2", InputRole::Data, 2, 4}},
          kFloat, WEFT_RULE(cdist_rule));
    case K::Pdist:
      return product(op, {InputDecl{"input", InputRole::Data, 2, 2}}, kFloat,
                     WEFT_RULE(pdist_rule));
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
