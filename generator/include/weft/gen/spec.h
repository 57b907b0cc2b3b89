#pragma once
// Op specs: for every op of the IR, what the generator needs to use it validly — its inputs
// (roles and ranks), the dtypes it accepts, the dtypes it returns, and one shape rule. The rule
// is written once, as a template over a builder (generator/src/spec/builder.h), and compiled
// twice: with integers (a cheap random sampler that checks its draws) and with Z3 expressions
// (an encoder whose constraints Z3 solves when sampling fails). DESIGN.md's "spec" table.

#include <cstdint>
#include <string>
#include <vector>

#include "weft/dtype.h"
#include "weft/ir/attributes.h"
#include "weft/ir/op_kind.h"

namespace weft::gen {

class Sampler;
class Encoder;

// How the generator feeds an input of an op.
enum class InputRole : std::uint8_t {
  Data,    // any value of the graph, or a fresh input/parameter
  Weight,  // always a fresh parameter whose shape the rule spells out (conv weight, bias)
  Index,   // a fresh int64 input of indices; the value search keeps them in range
  Mask,    // a fresh or existing bool value (where's condition)
};

struct InputDecl {
  std::string name;
  InputRole role = InputRole::Data;
  int min_rank = 0;
  int max_rank = 5;
  bool optional = false;  // present or absent, drawn at random (bias)
};

// Dtype classes a Data input may have, as a bit set.
enum DtypeClass : unsigned { kFloat = 1u, kInt = 2u, kBool = 4u, kAnyDtype = 7u };

// Value-domain hints for the value search: where the op is finite and smooth.
enum class ValueHint : std::uint8_t {
  None,
  Positive,      // log, log2, rsqrt, reciprocal-like: inputs away from 0 and above it
  NonNegative,   // sqrt
  UnitInterval,  // asin, acos: |x| < 1
  NonZero,       // divisors, reciprocal
  Bounded,       // exp, sinh, cosh, pow, tan: moderate magnitudes
};

struct OpSpec {
  ir::OpKind op;
  std::vector<InputDecl> inputs;
  // Cat, stack: inputs[0] repeated 1..max_variadic times.
  bool variadic = false;
  int max_variadic = 4;
  // The dtype classes every Data input may take (all Data inputs of a node share one dtype).
  unsigned dtypes = kFloat;
  ValueHint hint = ValueHint::None;
  // The output dtypes from the inputs' dtypes and the node's attributes.
  std::vector<Dtype> (*output_dtypes)(const std::vector<Dtype>& inputs,
                                      const ir::Attributes& attrs) = nullptr;
  // The shape rule, compiled for each builder.
  void (*sample)(Sampler&) = nullptr;
  void (*encode)(Encoder&) = nullptr;
};

// The spec of `op`. Throws weft::Error for an op without one (ops_without_spec lists them).
const OpSpec& spec(ir::OpKind op);
bool has_spec(ir::OpKind op);
// The ops of ir::kAllOps that have no spec yet (a test requires this to be empty).
std::vector<ir::OpKind> ops_without_spec();

}  // namespace weft::gen
