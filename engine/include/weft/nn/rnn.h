#pragma once
// Recurrent layers (torch.nn.LSTM, torch.nn.GRU) with PyTorch's constructor arguments, parameter
// names (weight_ih_l0, bias_hh_l1_reverse, …), initialisation and forward results.

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "weft/nn/module.h"

namespace weft::nn {

// The part LSTM and GRU share (torch.nn.RNNBase): arguments, parameters and the loop over layers,
// directions and time steps. Subclasses supply the cell.
class RNNBase : public Module {
 public:
  // Redraws every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), in
  // registration order, with the default generator.
  void reset_parameters();

  std::int64_t input_size;
  std::int64_t hidden_size;
  std::int64_t num_layers;
  bool bias;
  bool batch_first;
  double dropout;  // between layers, in training mode only
  bool bidirectional;

 protected:
  // `mode` names the layer in messages ("LSTM"); `gate_count` is 4 for LSTM, 3 for GRU.
  RNNBase(std::string mode, std::int64_t gate_count, std::int64_t input_size,
          std::int64_t hidden_size, std::int64_t num_layers, bool bias, bool batch_first,
          double dropout, bool bidirectional);

  // The weights of one layer and direction; b_ih / b_hh are undefined without bias.
  struct CellWeights {
    Tensor w_ih, w_hh, b_ih, b_hh;
  };
  // One time step: `x_gates` = x·W_ihᵀ + b_ih ([N, gate_count·H]) and the state ({h} or {h, c},
  // each [N, H]) give the next state.
  virtual std::vector<Tensor> cell(const Tensor& x_gates, const std::vector<Tensor>& state,
                                   const CellWeights& w) const = 0;

  // Checks the input and the initial states (each [num_layers·D, N, H], or [num_layers·D, H] for
  // unbatched input; empty = zeros), runs every layer and returns the output in the input's
  // layout and the final states in the layout of hx.
  std::tuple<Tensor, std::vector<Tensor>> run(const Tensor& input, std::vector<Tensor> hx,
                                              std::size_t state_count);

  std::string mode_;

 private:
  std::int64_t num_directions() const { return bidirectional ? 2 : 1; }
  std::vector<CellWeights> weights_;  // [layer · num_directions + direction]
};

// LSTM and GRU replace the single-tensor Module::forward with torch's forward(input, hx), which
// returns several tensors; hiding the base's forward is intended.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverloaded-virtual"

// A multi-layer long short-term memory RNN. Gates i, f, g, o (in that order in the weights):
// c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c').
class LSTM : public RNNBase {
 public:
  LSTM(std::int64_t input_size, std::int64_t hidden_size, std::int64_t num_layers = 1,
       bool bias = true, bool batch_first = false, double dropout = 0.0,
       bool bidirectional = false);

  // input [L, N, input_size] ([N, L, input_size] when batch_first, [L, input_size] unbatched);
  // hx = (h_0, c_0), each [num_layers·D, N, hidden_size] (zeros when absent). Returns
  // (output [L, N, D·hidden_size], (h_n, c_n)), like torch: auto [out, state] = lstm(x).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt);
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> operator()(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx = std::nullopt) {
    return forward(input, hx);
  }

 protected:
  std::vector<Tensor> cell(const Tensor& x_gates, const std::vector<Tensor>& state,
                           const CellWeights& w) const override;
};

// A multi-layer gated recurrent unit RNN. Gates r, z, n (in that order in the weights):
// n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)), h' = (1 − z) ⊙ n + z ⊙ h.
class GRU : public RNNBase {
 public:
  GRU(std::int64_t input_size, std::int64_t hidden_size, std::int64_t num_layers = 1,
      bool bias = true, bool batch_first = false, double dropout = 0.0, bool bidirectional = false);

  // input as for LSTM; hx = h_0 [num_layers·D, N, hidden_size] (zeros when undefined). Returns
  // (output [L, N, D·hidden_size], h_n), like torch: auto [out, h_n] = gru(x).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = Tensor());
  std::tuple<Tensor, Tensor> operator()(const Tensor& input, const Tensor& hx = Tensor()) {
    return forward(input, hx);
  }

 protected:
  std::vector<Tensor> cell(const Tensor& x_gates, const std::vector<Tensor>& state,
                           const CellWeights& w) const override;
};

#pragma GCC diagnostic pop

}  // namespace weft::nn
