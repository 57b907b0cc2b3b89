// Normalization (batch, layer, group, instance, rms) and embedding. The parameters
// (weight, bias, running statistics, embedding table) are Weight inputs whose shapes follow the
// input's.
#include <algorithm>
#include <string>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

// IR order: input, weight, bias[, running_mean, running_var], every parameter of shape [C].
template <class B>
void batch_norm_rule(B& b) {
  const auto x = b.data(0);
  b.require_that(x.size() >= 2, "batch_norm: input without a channel dim");
  const bool stats = b.present(3);
  b.require_that(stats == b.present(4), "batch_norm: running_mean and running_var go together");
  // Evaluation mode needs the running statistics.
  const bool training = !stats || b.chance("training", 0.3);
  b.set_attr("training", training);
  if (training) {
    // PyTorch needs more than one value per channel to take batch statistics.
    auto values = x[0];
    for (std::size_t d = 2; d < x.size(); ++d) values = values * x[d];
    b.require(values >= 2);
  }
  b.attr_float("momentum", 0.0, 1.0);
  b.attr_float("eps", 1e-5, 1e-2);
  for (int i = 1; i <= 4; ++i) {
    if (b.present(i)) b.shape_input(i, {x[1]});
  }
  b.output(x);
}

template <class B>
void layer_norm_rule(B& b) {
  const int rank = b.rank(0);
  b.require_that(rank >= 1, "layer_norm: scalar input");
  const auto x = b.data(0);
  const bool affine = b.present(1);
  b.require_that(affine == b.present(2), "layer_norm: weight and bias go together");
  // normalized_shape: the trailing k dims.
  const auto k = static_cast<std::size_t>(b.choose("normalized.count", 1, rank));
  const std::vector<typename B::Int> normalized(x.end() - static_cast<std::ptrdiff_t>(k), x.end());
  set_ints(b, "normalized_shape", normalized);
  b.attr_float("eps", 1e-5, 1e-2);
  if (affine) {
    b.shape_input(1, normalized);
    b.shape_input(2, normalized);
  }
  b.output(x);
}

// rms_norm: layer_norm's trailing dims and optional weight (no bias); eps is often left out,
// as models do (F.rms_norm's None: the epsilon of the input's type).
template <class B>
void rms_norm_rule(B& b) {
  const int rank = b.rank(0);
  b.require_that(rank >= 1, "rms_norm: scalar input");
  const auto x = b.data(0);
  const auto k = static_cast<std::size_t>(b.choose("normalized.count", 1, rank));
  const std::vector<typename B::Int> normalized(x.end() - static_cast<std::ptrdiff_t>(k), x.end());
  set_ints(b, "normalized_shape", normalized);
  if (!b.chance("eps.default", 0.5)) b.attr_float("eps", 1e-6, 1e-2);
  if (b.present(1)) b.shape_input(1, normalized);
  b.output(x);
}

// group_norm: (N, C, *) with C a multiple of num_groups; ATen refuses empty channel and
// spatial dims (N may be 0). weight and bias are [C], together or absent.
template <class B>
void group_norm_rule(B& b) {
  const auto x = b.data(0);
  b.require_that(x.size() >= 2, "group_norm: input without a channel dim");
  for (std::size_t d = 1; d < x.size(); ++d) b.require(x[d] >= 1);
  const std::int64_t max_groups = b.chance("groups.many", 0.3) ? 8 : 2;
  const auto groups = b.attr_int("num_groups", 1, max_groups);
  b.require(x[1] % groups == 0);
  b.attr_float("eps", 1e-5, 1e-2);
  const bool affine = b.present(1);
  b.require_that(affine == b.present(2), "group_norm: weight and bias go together");
  if (affine) {
    b.shape_input(1, {x[1]});
    b.shape_input(2, {x[1]});
  }
  b.output(x);
}

// instance_norm (F.instance_norm with the input's statistics): (N, C, *) with more than one
// spatial element, which F.instance_norm requires.
template <class B>
void instance_norm_rule(B& b) {
  const auto x = b.data(0);
  b.require_that(x.size() >= 3, "instance_norm: input without a spatial dim");
  b.require(x[1] >= 1);
  auto spatial = x[2];
  for (std::size_t d = 3; d < x.size(); ++d) spatial = spatial * x[d];
  b.require(spatial >= 2);
  b.attr_float("eps", 1e-5, 1e-2);
  const bool affine = b.present(1);
  b.require_that(affine == b.present(2), "instance_norm: weight and bias go together");
  if (affine) {
    b.shape_input(1, {x[1]});
    b.shape_input(2, {x[1]});
  }
  b.output(x);
}

// Indices of any rank into a [num_embeddings, dim] table: out = indices.shape + [dim].
template <class B>
void embedding_rule(B& b) {
  auto out = b.data(0);
  const std::int64_t max_dim = b.bounds().max_dim;
  const auto rows = b.var("num_embeddings", 1, b.chance("rows.large", 0.15) ? max_dim : 10);
  const auto width = b.var("embedding_dim", 1, b.chance("width.large", 0.15) ? max_dim : 8);
  b.shape_input(1, {rows, width});
  if (b.chance("padding_idx.set", 0.3)) {
    // In [-rows, rows); the sampler draws there, the encoder requires it.
    const std::int64_t r = hint(rows, max_dim);
    const auto pad = b.attr_int("padding_idx", -r, r - 1);
    b.require(pad >= -rows && pad < rows);
  }
  out.push_back(width);
  b.output(out);
}

// The table's dtype (input 1); the indices are int64.
std::vector<Dtype> table_dtype(const std::vector<Dtype>& in, const ir::Attributes&) {
  return {in.at(1)};
}

OpSpec make(ir::OpKind op, std::vector<InputDecl> inputs, void (*sample)(Sampler&),
            void (*encode)(Encoder&),
            std::vector<Dtype> (*out)(const std::vector<Dtype>&,
                                      const ir::Attributes&) = dtypes::same) {
  OpSpec s;
  s.op = op;
  s.inputs = std::move(inputs);
  s.dtypes = kFloat;
  s.output_dtypes = out;
  s.sample = sample;
  s.encode = encode;
  return s;
}

}  // namespace

OpSpec norm_spec(ir::OpKind op) {
  using K = ir::OpKind;
  const InputDecl channel{"weight", InputRole::Weight, 1, 1};
  switch (op) {
    case K::BatchNorm: {
      InputDecl bias = channel, mean = channel, var = channel;
      bias.name = "bias";
      mean.name = "running_mean";
      mean.optional = true;
      var.name = "running_var";
      var.optional = true;
      return make(op, {InputDecl{"input", InputRole::Data, 2, 5}, channel, bias, mean, var},
                  WEFT_RULE(batch_norm_rule));
    }
    case K::LayerNorm:
      return make(op,
                  {InputDecl{"input", InputRole::Data, 1, 5},
                   InputDecl{"weight", InputRole::Weight, 1, 5, true},
                   InputDecl{"bias", InputRole::Weight, 1, 5, true}},
                  WEFT_RULE(layer_norm_rule));
    case K::RmsNorm:
      return make(op,
                  {InputDecl{"input", InputRole::Data, 1, 5},
                   InputDecl{"weight", InputRole::Weight, 1, 5, true}},
                  WEFT_RULE(rms_norm_rule));
    case K::GroupNorm:
      return make(op,
                  {InputDecl{"input", InputRole::Data, 2, 5},
                   InputDecl{"weight", InputRole::Weight, 1, 1, true},
                   InputDecl{"bias", InputRole::Weight, 1, 1, true}},
                  WEFT_RULE(group_norm_rule));
    case K::InstanceNorm:
      return make(op,
                  {InputDecl{"input", InputRole::Data, 3, 5},
                   InputDecl{"weight", InputRole::Weight, 1, 1, true},
                   InputDecl{"bias", InputRole::Weight, 1, 1, true}},
                  WEFT_RULE(instance_norm_rule));
    case K::Embedding:
      return make(op,
                  {InputDecl{"input", InputRole::Index, 0, 3},
                   InputDecl{"weight", InputRole::Weight, 2, 2}},
                  WEFT_RULE(embedding_rule), table_dtype);
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
