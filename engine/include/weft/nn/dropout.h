#pragma once
// The dropout modules (torch.nn.Dropout, Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout):
// in training each zeroes elements (or whole channels) with probability p; the identity in eval.
// Each training call draws a fresh seed from the default generator, so results are reproducible
// after weft::manual_seed.

#include <cstdint>

#include "weft/nn/module.h"

namespace weft::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);

  Tensor forward(const Tensor& input) override;

  double p;
};

// Channel dropout: one draw per (N, C) of a batched input of rank `rank` (3, 4 or 5), or per C
// of an unbatched one (rank - 1), as nn.Dropout1d, Dropout2d and Dropout3d.
class FeatureDropout : public Module {
 public:
  FeatureDropout(double p, int rank, const char* name);

  Tensor forward(const Tensor& input) override;

  double p;

 private:
  int rank_;
  const char* name_;
};

class Dropout1d : public FeatureDropout {
 public:
  explicit Dropout1d(double p = 0.5) : FeatureDropout(p, 3, "dropout1d") {}
};
class Dropout2d : public FeatureDropout {
 public:
  explicit Dropout2d(double p = 0.5) : FeatureDropout(p, 4, "dropout2d") {}
};
class Dropout3d : public FeatureDropout {
 public:
  explicit Dropout3d(double p = 0.5) : FeatureDropout(p, 5, "dropout3d") {}
};

// SELU-preserving dropout (nn.AlphaDropout); nn.FeatureAlphaDropout drops whole channels.
class AlphaDropout : public Module {
 public:
  explicit AlphaDropout(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  double p;
};
class FeatureAlphaDropout : public Module {
 public:
  explicit FeatureAlphaDropout(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  double p;
};

}  // namespace weft::nn
