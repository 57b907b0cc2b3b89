// nn::LSTM and nn::GRU, following torch.nn.RNNBase (PyTorch 1.13): the same argument checks and
// messages, parameters registered in the same order, and the cell formulas of ATen's CPU
// kernels. Each layer and direction projects every time step's input in one matmul, then walks
// the sequence with one small matmul per step.
#include "weft/nn/rnn.h"

#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::nn {
namespace {}  // namespace

RNNBase::RNNBase(std::string mode, std::int64_t gate_count, std::int64_t input_size_,
                 std::int64_t hidden_size_, std::int64_t num_layers_, bool bias_, bool batch_first_,
                 double dropout_, bool bidirectional_)
    : input_size(input_size_),
      hidden_size(hidden_size_),
      num_layers(num_layers_),
      bias(bias_),
      batch_first(batch_first_),
      dropout(dropout_),
      bidirectional(bidirectional_),
      mode_(std::move(mode)) {
  if (!(dropout >= 0.0 && dropout <= 1.0)) {
    throw Error(
        "dropout should be a number in range [0, 1] representing the probability of an element "
        "being zeroed");
  }
  if (input_size < 0) {
    throw Error(mode_ + ": input_size must be non-negative, got " + std::to_string(input_size));
  }
  if (hidden_size <= 0) {
    throw Error("hidden_size must be greater than zero, got " + std::to_string(hidden_size));
  }
  if (num_layers <= 0) {
    throw Error("num_layers must be greater than zero, got " + std::to_string(num_layers));
  }
  const std::int64_t gate_size = gate_count * hidden_size;
  for (std::int64_t layer = 0; layer < num_layers; ++layer) {
    const std::int64_t layer_input_size = layer == 0 ? input_size : hidden_size * num_directions();
    for (std::int64_t direction = 0; direction < num_directions(); ++direction) {
      const std::string suffix = "_l" + std::to_string(layer) + (direction == 1 ? "_reverse" : "");
      CellWeights w;
      w.w_ih = register_parameter("weight_ih" + suffix, empty({gate_size, layer_input_size}));
      w.w_hh = register_parameter("weight_hh" + suffix, empty({gate_size, hidden_size}));
      if (bias) {
        w.b_ih = register_parameter("bias_ih" + suffix, empty({gate_size}));
        w.b_hh = register_parameter("bias_hh" + suffix, empty({gate_size}));
      }
      weights_.push_back(w);
    }
  }
  reset_parameters();
}

void RNNBase::reset_parameters() {
  autograd::NoGradGuard no_grad;
  const double stdv = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (Tensor& p : parameters(false)) uniform_(p, -stdv, stdv);
}

std::tuple<Tensor, std::vector<Tensor>> RNNBase::run(const Tensor& input, std::vector<Tensor> hx,
                                                     std::size_t state_count) {
  if (input.dim() != 2 && input.dim() != 3) {
    throw Error(mode_ + ": Expected input to be 2-D or 3-D but received " +
                std::to_string(input.dim()) + "-D tensor");
  }
  const bool batched = input.dim() == 3;
  const bool given = !hx.empty();
  if (given) {
    const std::int64_t want = batched ? 3 : 2;
    bool ok = true;
    for (const Tensor& h : hx) ok = ok && h.defined() && h.dim() == want;
    if (!ok) {
      std::string dims;
      for (std::size_t k = 0; k < hx.size(); ++k) {
        dims += (k ? ", " : "") +
                (hx[k].defined() ? std::to_string(hx[k].dim()) + "-D" : std::string("undefined"));
      }
      const std::string kind = batched ? "batched 3-D" : "unbatched 2-D";
      const std::string rank = batched ? "3-D" : "2-D";
      throw Error(state_count == 2 ? "For " + kind + " input, hx and cx should also be " + rank +
                                         " but got (" + dims + ") tensors"
                                   : "For " + kind + " input, hx should also be " + rank +
                                         " but got " + dims + " tensor");
    }
  }
  const Tensor& w0 = weights_.front().w_ih;
  if (input.dtype() != w0.dtype()) {
    throw Error(std::string("input must have the type torch.") + dtype_name(w0.dtype()) +
                ", got type torch." + dtype_name(input.dtype()));
  }
  // Internally [L, N, features].
  Tensor x = batched ? (batch_first ? input.transpose(0, 1) : input) : input.unsqueeze(1);
  if (x.size(-1) != input_size) {
    throw Error("input.size(-1) must be equal to input_size. Expected " +
                std::to_string(input_size) + ", got " + std::to_string(x.size(-1)));
  }
  const std::int64_t steps = x.size(0);
  const std::int64_t batch = x.size(1);
  const std::int64_t directions = num_directions();
  const Shape state_shape{num_layers * directions, batch, hidden_size};
  if (given) {
    for (std::size_t k = 0; k < hx.size(); ++k) {
      if (!batched) hx[k] = hx[k].unsqueeze(1);
      if (hx[k].sizes() != state_shape) {
        const std::string which = state_count == 2 ? "hidden[" + std::to_string(k) + "]" : "hidden";
        throw Error("Expected " + which + " size " + tuple_str(state_shape) + ", got " +
                    shape_str(hx[k].sizes()));
      }
    }
  }
  if (steps == 0) throw Error(mode_ + ": Expected a sequence of at least one step, got 0");

  std::vector<std::vector<Tensor>> finals(state_count);
  Tensor layer_input = x;
  for (std::int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<Tensor> direction_outputs;
    for (std::int64_t direction = 0; direction < directions; ++direction) {
      const std::int64_t index = layer * directions + direction;
      const CellWeights& w = weights_[static_cast<std::size_t>(index)];
      const Tensor x_gates = linear(layer_input, w.w_ih, w.b_ih);  // every step at once
      std::vector<Tensor> state;
      for (std::size_t k = 0; k < state_count; ++k) {
        state.push_back(given ? hx[k].select(0, index)
                              : zeros({batch, hidden_size}, dtype(input.dtype())));
      }
      std::vector<Tensor> outputs(static_cast<std::size_t>(steps));
      for (std::int64_t s = 0; s < steps; ++s) {
        const std::int64_t t = direction == 0 ? s : steps - 1 - s;
        state = cell(x_gates.select(0, t), state, w);
        outputs[static_cast<std::size_t>(t)] = state[0];
      }
      for (std::size_t k = 0; k < state_count; ++k) finals[k].push_back(state[k]);
      direction_outputs.push_back(stack(outputs, 0));
    }
    Tensor output = directions == 2 ? cat(direction_outputs, 2) : direction_outputs[0];
    if (dropout > 0.0 && is_training() && layer + 1 < num_layers) {
      output = weft::dropout(output, dropout, true, default_generator().engine()());
    }
    layer_input = output;
  }

  Tensor output = layer_input;
  if (!batched) {
    output = output.squeeze({1});
  } else if (batch_first) {
    output = output.transpose(0, 1);
  }
  std::vector<Tensor> states;
  for (std::size_t k = 0; k < state_count; ++k) {
    Tensor s = stack(finals[k], 0);
    states.push_back(batched ? s : s.squeeze({1}));
  }
  return {output, states};
}

LSTM::LSTM(std::int64_t input_size_, std::int64_t hidden_size_, std::int64_t num_layers_,
           bool bias_, bool batch_first_, double dropout_, bool bidirectional_)
    : RNNBase("LSTM", 4, input_size_, hidden_size_, num_layers_, bias_, batch_first_, dropout_,
              bidirectional_) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTM::forward(
    const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx) {
  std::vector<Tensor> initial;
  if (hx) initial = {std::get<0>(*hx), std::get<1>(*hx)};
  auto [output, states] = run(input, std::move(initial), 2);
  return {output, {states[0], states[1]}};
}

std::vector<Tensor> LSTM::cell(const Tensor& x_gates, const std::vector<Tensor>& state,
                               const CellWeights& w) const {
  const Tensor gates = add(x_gates, linear(state[0], w.w_hh, w.b_hh));
  const std::vector<Tensor> g = chunk(gates, 4, 1);
  const Tensor c = add(mul(sigmoid(g[1]), state[1]), mul(sigmoid(g[0]), tanh(g[2])));
  const Tensor h = mul(sigmoid(g[3]), tanh(c));
  return {h, c};
}

GRU::GRU(std::int64_t input_size_, std::int64_t hidden_size_, std::int64_t num_layers_, bool bias_,
         bool batch_first_, double dropout_, bool bidirectional_)
    : RNNBase("GRU", 3, input_size_, hidden_size_, num_layers_, bias_, batch_first_, dropout_,
              bidirectional_) {}

std::tuple<Tensor, Tensor> GRU::forward(const Tensor& input, const Tensor& hx) {
  std::vector<Tensor> initial;
  if (hx.defined()) initial = {hx};
  auto [output, states] = run(input, std::move(initial), 1);
  return {output, states[0]};
}

std::vector<Tensor> GRU::cell(const Tensor& x_gates, const std::vector<Tensor>& state,
                              const CellWeights& w) const {
  const Tensor& h = state[0];
  const std::vector<Tensor> xg = chunk(x_gates, 3, 1);
  const std::vector<Tensor> hg = chunk(linear(h, w.w_hh, w.b_hh), 3, 1);
  const Tensor r = sigmoid(add(xg[0], hg[0]));
  const Tensor z = sigmoid(add(xg[1], hg[1]));
  const Tensor n = tanh(add(xg[2], mul(r, hg[2])));
  // (1 − z)·n + z·h, written as ATen's kernel does.
  return {add(n, mul(z, sub(h, n)))};
}

}  // namespace weft::nn
