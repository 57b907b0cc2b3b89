#pragma once
// The op vocabulary of weft: one list, and every part keeps one table keyed by it
// (engine kernels, generator specs, oracle lowerings). Names follow PyTorch's aten names.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

// X(Identifier, "name") for every op, grouped by family (the engine file that implements it).
// clang-format off
#define WEFT_OP_LIST(X)                                                    \
  /* unary math: ops/unary.cpp */                                          \
  X(Neg, "neg")                                                            \
  X(Abs, "abs")                                                            \
  X(Exp, "exp")                                                            \
  X(Log, "log")                                                            \
  X(Log2, "log2")                                                          \
  X(Sqrt, "sqrt")                                                          \
  X(Rsqrt, "rsqrt")                                                        \
  X(Reciprocal, "reciprocal")                                              \
  X(Sin, "sin")                                                            \
  X(Cos, "cos")                                                            \
  X(Tan, "tan")                                                            \
  X(Asin, "asin")                                                          \
  X(Acos, "acos")                                                          \
  X(Atan, "atan")                                                          \
  X(Sinh, "sinh")                                                          \
  X(Cosh, "cosh")                                                          \
  X(Tanh, "tanh")                                                          \
  X(Erf, "erf")                                                            \
  X(Floor, "floor")                                                        \
  X(Ceil, "ceil")                                                          \
  X(Round, "round")                                                        \
  X(Sign, "sign")                                                          \
  X(Trunc, "trunc")                                                        \
  X(Frac, "frac")                                                          \
  X(Log1p, "log1p")                                                        \
  X(Expm1, "expm1")                                                        \
  X(Log10, "log10")                                                        \
  X(Exp2, "exp2")                                                          \
  X(Asinh, "asinh")                                                        \
  X(Acosh, "acosh")                                                        \
  X(Atanh, "atanh")                                                        \
  X(Erfinv, "erfinv")                                                      \
  X(Isnan, "isnan")                                                        \
  X(Isinf, "isinf")                                                        \
  X(Square, "square")                                                      \
  X(Erfc, "erfc")                                                          \
  X(Sinc, "sinc")                                                          \
  X(Deg2rad, "deg2rad")                                                    \
  X(Rad2deg, "rad2deg")                                                    \
  X(Isfinite, "isfinite")                                                  \
  X(Signbit, "signbit")                                                    \
  X(Logit, "logit")                                                        \
  X(NanToNum, "nan_to_num")                                                \
  X(Lgamma, "lgamma")                                                      \
  X(Digamma, "digamma")                                                    \
  /* activations: ops/activation.cpp */                                    \
  X(Sigmoid, "sigmoid")                                                    \
  X(Relu, "relu")                                                          \
  X(LeakyRelu, "leaky_relu")                                               \
  X(Elu, "elu")                                                            \
  X(Gelu, "gelu")                                                          \
  X(Silu, "silu")                                                          \
  X(Softplus, "softplus")                                                  \
  X(Hardtanh, "hardtanh")                                                  \
  X(Clamp, "clamp")                                                        \
  X(Hardswish, "hardswish")                                                \
  X(Hardsigmoid, "hardsigmoid")                                            \
  X(Relu6, "relu6")                                                        \
  X(Mish, "mish")                                                          \
  X(Selu, "selu")                                                          \
  X(Celu, "celu")                                                          \
  X(Softsign, "softsign")                                                  \
  X(Logsigmoid, "logsigmoid")                                              \
  X(Tanhshrink, "tanhshrink")                                              \
  X(Threshold, "threshold")                                                \
  X(Hardshrink, "hardshrink")                                              \
  X(Softshrink, "softshrink")                                              \
  X(Glu, "glu")                                                            \
  X(Prelu, "prelu")                                                        \
  /* binary arithmetic: ops/binary.cpp */                                  \
  X(Add, "add")                                                            \
  X(Sub, "sub")                                                            \
  X(Mul, "mul")                                                            \
  X(Div, "div")                                                            \
  X(Pow, "pow")                                                            \
  X(Maximum, "maximum")                                                    \
  X(Minimum, "minimum")                                                    \
  /* two-argument math: ops/binary_math.cpp */                             \
  X(Atan2, "atan2")                                                        \
  X(Hypot, "hypot")                                                        \
  X(Logaddexp, "logaddexp")                                                \
  X(Fmod, "fmod")                                                          \
  X(Remainder, "remainder")                                                \
  X(Logaddexp2, "logaddexp2")                                              \
  X(Xlogy, "xlogy")                                                        \
  X(Copysign, "copysign")                                                  \
  X(Fmax, "fmax")                                                          \
  X(Fmin, "fmin")                                                          \
  /* pointwise ops of three tensors: ops/pointwise3.cpp */                 \
  X(Lerp, "lerp")                                                          \
  X(Addcmul, "addcmul")                                                    \
  X(Addcdiv, "addcdiv")                                                    \
  /* Python scalars as operands: ops/scalar.cpp */                         \
  X(AddScalar, "add_scalar")                                               \
  X(SubScalar, "sub_scalar")                                               \
  X(RsubScalar, "rsub_scalar")                                             \
  X(MulScalar, "mul_scalar")                                               \
  X(DivScalar, "div_scalar")                                               \
  X(PowScalar, "pow_scalar")                                               \
  X(RpowScalar, "rpow_scalar")                                             \
  /* comparison and logic: ops/compare.cpp */                              \
  X(Eq, "eq")                                                              \
  X(Ne, "ne")                                                              \
  X(Lt, "lt")                                                              \
  X(Le, "le")                                                              \
  X(Gt, "gt")                                                              \
  X(Ge, "ge")                                                              \
  X(LogicalAnd, "logical_and")                                             \
  X(LogicalOr, "logical_or")                                               \
  X(LogicalXor, "logical_xor")                                             \
  X(LogicalNot, "logical_not")                                             \
  X(BitwiseAnd, "bitwise_and")                                             \
  X(BitwiseOr, "bitwise_or")                                               \
  X(BitwiseXor, "bitwise_xor")                                             \
  X(BitwiseNot, "bitwise_not")                                             \
  X(Where, "where")                                                        \
  X(MaskedFill, "masked_fill")                                             \
  /* reductions: ops/reduce.cpp */                                         \
  X(Sum, "sum")                                                            \
  X(Mean, "mean")                                                          \
  X(Prod, "prod")                                                          \
  X(Max, "max")                                                            \
  X(Min, "min")                                                            \
  X(Argmax, "argmax")                                                      \
  X(Argmin, "argmin")                                                      \
  X(Var, "var")                                                            \
  X(Std, "std")                                                            \
  X(Logsumexp, "logsumexp")                                                \
  X(VarMean, "var_mean")                                                   \
  X(StdMean, "std_mean")                                                   \
  /* reductions without indices: ops/reduce_any.cpp */                     \
  X(Amax, "amax")                                                          \
  X(Amin, "amin")                                                          \
  X(Any, "any")                                                            \
  X(All, "all")                                                            \
  /* scans: ops/scan.cpp */                                                \
  X(Cumsum, "cumsum")                                                      \
  X(Cumprod, "cumprod")                                                    \
  X(Cummax, "cummax")                                                      \
  X(Cummin, "cummin")                                                      \
  X(Logcumsumexp, "logcumsumexp")                                          \
  /* sorting: ops/sort.cpp */                                              \
  X(Sort, "sort")                                                          \
  X(Argsort, "argsort")                                                    \
  X(Topk, "topk")                                                          \
  /* softmax: ops/softmax.cpp */                                           \
  X(Softmax, "softmax")                                                    \
  X(LogSoftmax, "log_softmax")                                             \
  /* linear algebra: ops/matmul.cpp */                                     \
  X(Matmul, "matmul")                                                      \
  X(Mm, "mm")                                                              \
  X(Bmm, "bmm")                                                            \
  X(Linear, "linear")                                                      \
  X(Addmm, "addmm")                                                        \
  /* products by name: ops/vector_products.cpp */                          \
  X(Dot, "dot")                                                            \
  X(Mv, "mv")                                                              \
  X(Outer, "outer")                                                        \
  X(Trace, "trace")                                                        \
  X(Baddbmm, "baddbmm")                                                    \
  /* pairwise distances: ops/distance.cpp */                             \
  X(Cdist, "cdist")                                                      \
  X(Pdist, "pdist")                                                      \
  /* convolution: ops/conv.cpp */                                          \
  X(Conv1d, "conv1d")                                                      \
  X(Conv2d, "conv2d")                                                      \
  X(ConvTranspose1d, "conv_transpose1d")                                   \
  X(ConvTranspose2d, "conv_transpose2d")                                   \
  /* pooling: ops/pool.cpp, 3-D in ops/pool3d.cpp */                                              \
  X(MaxPool1d, "max_pool1d")                                               \
  X(MaxPool2d, "max_pool2d")                                               \
  X(AvgPool1d, "avg_pool1d")                                               \
  X(AvgPool2d, "avg_pool2d")                                               \
  X(AdaptiveAvgPool2d, "adaptive_avg_pool2d")                              \
  X(AdaptiveMaxPool1d, "adaptive_max_pool1d")                              \
  X(AdaptiveMaxPool2d, "adaptive_max_pool2d")                              \
  X(MaxPool3d, "max_pool3d")                                             \
  X(AvgPool3d, "avg_pool3d")                                             \
  X(AdaptiveAvgPool3d, "adaptive_avg_pool3d")                            \
  /* normalization and embedding: ops/norm.cpp */                          \
  X(BatchNorm, "batch_norm")                                               \
  X(LayerNorm, "layer_norm")                                               \
  X(GroupNorm, "group_norm")                                               \
  X(InstanceNorm, "instance_norm")                                         \
  X(RmsNorm, "rms_norm")                                                   \
  X(Embedding, "embedding")                                                \
  /* random draws, judged by their properties: ops/random.cpp */           \
  X(Dropout, "dropout")                                                    \
  X(FeatureDropout, "feature_dropout")                                     \
  X(AlphaDropout, "alpha_dropout")                                         \
  X(FeatureAlphaDropout, "feature_alpha_dropout")                          \
  X(Rrelu, "rrelu")                                                        \
  X(RandLike, "rand_like")                                                 \
  X(RandnLike, "randn_like")                                               \
  X(Rand, "rand")                                                          \
  X(Randn, "randn")                                                        \
  X(RandintLike, "randint_like")                                           \
  X(Bernoulli, "bernoulli")                                                \
  X(Randperm, "randperm")                                                  \
  /* losses: ops/loss.cpp */                                               \
  X(MseLoss, "mse_loss")                                                   \
  X(L1Loss, "l1_loss")                                                     \
  X(SmoothL1Loss, "smooth_l1_loss")                                        \
  X(HuberLoss, "huber_loss")                                               \
  X(NllLoss, "nll_loss")                                                   \
  X(CrossEntropyLoss, "cross_entropy_loss")                                \
  X(BinaryCrossEntropyWithLogits, "binary_cross_entropy_with_logits")      \
  X(KlDiv, "kl_div")                                                       \
  /* views and shape: ops/shape.cpp */                                     \
  X(Reshape, "reshape")                                                    \
  X(Flatten, "flatten")                                                    \
  X(Squeeze, "squeeze")                                                    \
  X(Unsqueeze, "unsqueeze")                                                \
  X(Transpose, "transpose")                                                \
  X(Permute, "permute")                                                    \
  X(Expand, "expand")                                                      \
  X(Slice, "slice")                                                        \
  X(Select, "select")                                                      \
  /* reordering: ops/reorder.cpp */                                        \
  X(Flip, "flip")                                                          \
  X(Roll, "roll")                                                          \
  X(Repeat, "repeat")                                                      \
  X(Diagonal, "diagonal")                                                  \
  X(PixelShuffle, "pixel_shuffle")                                         \
  X(PixelUnshuffle, "pixel_unshuffle")                                     \
  /* writes through views, functionalized: ops/scatter.cpp */              \
  X(SliceScatter, "slice_scatter")                                         \
  X(SelectScatter, "select_scatter")                                       \
  X(Copy, "copy")                                                          \
  X(MaskedScatter, "masked_scatter")                                       \
  /* joining, splitting, padding, indexing: ops/join.cpp, ops/index.cpp */ \
  X(Cat, "cat")                                                            \
  X(Stack, "stack")                                                        \
  X(Split, "split")                                                        \
  X(Chunk, "chunk")                                                        \
  X(Pad, "pad")                                                            \
  X(Tril, "tril")                                                          \
  X(Triu, "triu")                                                          \
  X(Gather, "gather")                                                      \
  X(IndexSelect, "index_select")                                           \
  /* index-driven writes: ops/scatter_reduce.cpp */                        \
  X(ScatterAdd, "scatter_add")                                             \
  X(ScatterReduce, "scatter_reduce")                                       \
  X(IndexAdd, "index_add")                                                 \
  X(IndexPut, "index_put")                                                 \
  X(Scatter, "scatter")                                                    \
  /* resampling: ops/interpolate.cpp */                                    \
  X(Interpolate, "interpolate")                                            \
  /* sliding blocks: ops/fold.cpp */                                       \
  X(Im2col, "im2col")                                                      \
  X(Col2im, "col2im")                                                      \
  /* type conversion: ops/cast.cpp */                                      \
  X(Cast, "cast")                                                          \
  X(Contiguous, "contiguous")
// clang-format on

namespace weft::ir {

enum class OpKind : std::uint16_t {
#define WEFT_OP_ENUM(id, name) id,
  WEFT_OP_LIST(WEFT_OP_ENUM)
#undef WEFT_OP_ENUM
};

inline constexpr std::array<OpKind, 0
#define WEFT_OP_COUNT(id, name) +1
                            WEFT_OP_LIST(WEFT_OP_COUNT)
#undef WEFT_OP_COUNT
                            >
    kAllOps{{
#define WEFT_OP_VALUE(id, name) OpKind::id,
        WEFT_OP_LIST(WEFT_OP_VALUE)
#undef WEFT_OP_VALUE
    }};

inline constexpr std::size_t kNumOps = kAllOps.size();

// "conv2d" for OpKind::Conv2d.
std::string_view op_name(OpKind op);
// The inverse of op_name; nullopt for names not in the list.
std::optional<OpKind> op_from_name(std::string_view name);

}  // namespace weft::ir
