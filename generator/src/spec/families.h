#pragma once
// One factory per op family (one file each in this folder); registry.cpp maps every op of the
// IR to its family with a switch that has no default, so an op without a spec cannot compile.
#include <vector>

#include "weft/dtype.h"
#include "weft/gen/spec.h"
#include "weft/ir/attributes.h"

namespace weft::gen {

OpSpec unary_spec(ir::OpKind op);   // unary.cpp: unary math and activations (glu, prelu)
OpSpec binary_spec(ir::OpKind op);  // binary.cpp: arithmetic, comparison, logic, where, lerp, addc*
OpSpec reduce_spec(ir::OpKind op);  // reduce.cpp: reductions, scans, softmaxes, sorting
OpSpec matmul_spec(
    ir::OpKind op);               // matmul.cpp: matmul, mm, bmm, linear, addmm, dot, mv, cdist, ...
OpSpec conv_spec(ir::OpKind op);  // conv.cpp: conv1d, conv2d, conv_transpose1d/2d
OpSpec fold_spec(ir::OpKind op);  // fold.cpp: im2col (F.unfold), col2im (F.fold)
OpSpec pool_spec(ir::OpKind op);  // pool.cpp: max/avg pooling, adaptive pooling
OpSpec norm_spec(ir::OpKind op);  // norm.cpp: batch/layer/group/instance/rms norm, embedding
OpSpec random_spec(ir::OpKind op);   // random.cpp: dropouts, rrelu, rand*, bernoulli, randperm
OpSpec shape_spec(ir::OpKind op);    // shape.cpp: views and shape changes
OpSpec reorder_spec(ir::OpKind op);  // reorder.cpp: flip, roll, repeat, diagonal, pixel_*
OpSpec join_spec(ir::OpKind op);     // join.cpp: cat, stack, split, chunk, pad, tril, triu
OpSpec index_spec(ir::OpKind op);    // index.cpp: gather, index_select, scatter*, index_add/_put
OpSpec loss_spec(ir::OpKind op);     // loss.cpp: mse, l1, smooth_l1, huber
OpSpec classification_loss_spec(ir::OpKind op);  // loss.cpp: nll, cross_entropy
OpSpec interpolate_spec(ir::OpKind op);          // interpolate.cpp
OpSpec cast_spec(ir::OpKind op);                 // cast.cpp: cast, contiguous
OpSpec scalar_spec(ir::OpKind op);               // scalar.cpp: Python scalars as operands

// Output dtype rules shared by the families (OpSpec::output_dtypes).
namespace dtypes {
// The first input's dtype.
std::vector<Dtype> same(const std::vector<Dtype>& in, const ir::Attributes&);
// The first input's dtype when floating, float32 otherwise (sqrt of an int is float32).
std::vector<Dtype> floating(const std::vector<Dtype>& in, const ir::Attributes&);
// PyTorch's promotion of every input (add, mul, where's values, cat).
std::vector<Dtype> promoted(const std::vector<Dtype>& in, const ir::Attributes&);
std::vector<Dtype> boolean(const std::vector<Dtype>& in, const ir::Attributes&);
std::vector<Dtype> int64(const std::vector<Dtype>& in, const ir::Attributes&);
}  // namespace dtypes

}  // namespace weft::gen
