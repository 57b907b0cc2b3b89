// Pointwise ops of three tensors, broadcast together: lerp (self + weight * (end - self), all
// three of one floating dtype), addcmul (self + value * t1 * t2) and addcdiv (self + value *
// t1 / t2), both in the promoted dtype. Each element is computed in one expression, in the
// order PyTorch's CPU kernels use, so float32 rounds as there. Backward: derivatives.yaml's
// formulas, summed over broadcast dims.
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/elementwise.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {
using autograd::sum_to;
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;

// out[i] = f(a[i], b[i], c[i]) over the three inputs' broadcast shape, in T (inputs already T).
template <typename T, typename F>
Tensor map_ternary(const Tensor& a, const Tensor& b, const Tensor& c, Dtype type, F f) {
  autograd::NoGradGuard no_grad;
  const Shape shape = broadcast_shapes(broadcast_shapes(a.sizes(), b.sizes()), c.sizes());
  const Tensor x = a.expand(shape).contiguous();
  const Tensor y = b.expand(shape).contiguous();
  const Tensor z = c.expand(shape).contiguous();
  Tensor out = empty(shape, dtype(type));
  const T* px = x.data<T>();
  const T* py = y.data<T>();
  const T* pz = z.data<T>();
  T* po = out.data<T>();
  for (std::int64_t i = 0; i < out.numel(); ++i) po[i] = f(px[i], py[i], pz[i]);
  return out;
}

// "float", "double", "long": the names lerp's message prints.
std::string lower_type_name(Dtype d) {
  std::string name = torch_scalar_type_name(d);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// The promoted dtype of three operands, every one converted to it.
std::vector<Tensor> promoted(const Tensor& a, const Tensor& b, const Tensor& c) {
  const Dtype type = kernels::result_type({&a, &b, &c});
  return {a.to(type), b.to(type), c.to(type)};
}

// addcmul (divide = false) or addcdiv: self + value * t1 * t2 (or / t2).
Tensor addc(const Tensor& self0, const Tensor& t10, const Tensor& t20, double value, bool divide) {
  const std::vector<Tensor> in = promoted(self0, t10, t20);
  const Dtype type = in[0].dtype();
  if (divide && !is_floating(type)) {
    throw Error(
        "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
        "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
        "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
        "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
        "addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
        "tensor2), for all dtypes.");
  }
  Tensor out = kernels::dispatch_numeric(
      type, divide ? "addcdiv_cpu_out" : "addcmul_cpu_out", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T v = static_cast<T>(value);
        return map_ternary<T>(in[0], in[1], in[2], type, [v, divide](T s, T x, T y) {
          return divide ? static_cast<T>(s + v * x / y) : static_cast<T>(s + v * x * y);
        });
      });
  if (!is_floating(type)) return out;
  autograd::record_function(
      divide ? "AddcdivBackward0" : "AddcmulBackward0", {in[0], in[1], in[2]}, {out},
      {in[1], in[2]}, [value, divide, self_shape = in[0].sizes()](const Grads& g, const Saved& s) {
        const Tensor& x = s[0];
        const Tensor& y = s[1];
        if (divide) {
          return Grads{sum_to(g[0], self_shape), sum_to(g[0] * (value / y), x.sizes()),
                       sum_to(-g[0] * (value * x / (y * y)), y.sizes())};
        }
        return Grads{sum_to(g[0], self_shape), sum_to(g[0] * (y * value), x.sizes()),
                     sum_to(g[0] * (x * value), y.sizes())};
      });
  return out;
}
}  // namespace

Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  WEFT_TRACE_OP(Lerp, (self, end, weight), ir::Attributes(), lerp(self, end, weight));
  for (const auto& [name, t] : {std::pair<const char*, const Tensor*>{"end", &end},
                                std::pair<const char*, const Tensor*>{"weight", &weight}}) {
    if (t->dtype() != self.dtype()) {
      throw Error(std::string("expected dtype ") + lower_type_name(self.dtype()) + " for `" + name +
                  "` but got dtype " + lower_type_name(t->dtype()));
    }
  }
  Tensor out = kernels::dispatch_floating(self.dtype(), "lerp_kernel_tensor", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // PyTorch's two forms: exact at weight 0 (self) and at weight 1 (end).
    return map_ternary<T>(self, end, weight, self.dtype(), [](T s, T e, T w) {
      return std::abs(w) < T(0.5) ? static_cast<T>(s + w * (e - s))
                                  : static_cast<T>(e - (e - s) * (T(1) - w));
    });
  });
  autograd::record_function("LerpBackward1", {self, end, weight}, {out}, {self, end, weight},
                            [](const Grads& g, const Saved& s) {
                              const Tensor& w = s[2];
                              return Grads{sum_to(g[0] * (1.0 - w), s[0].sizes()),
                                           sum_to(g[0] * w, s[1].sizes()),
                                           sum_to(g[0] * (s[1] - s[0]), w.sizes())};
                            });
  return out;
}

Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, double value) {
  WEFT_TRACE_OP(Addcmul, (self, tensor1, tensor2), ir::Attributes().set("value", value),
                addcmul(self, tensor1, tensor2, value));
  return addc(self, tensor1, tensor2, value, false);
}

Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, double value) {
  WEFT_TRACE_OP(Addcdiv, (self, tensor1, tensor2), ir::Attributes().set("value", value),
                addcdiv(self, tensor1, tensor2, value));
  return addc(self, tensor1, tensor2, value, true);
}

}  // namespace weft
