#pragma once
// The fault-injection backend ("fault:<kind>@<op>"): the engine in float32, except that every
// node of one op kind misbehaves in a chosen way. Tests of the oracle, the campaign loop and
// the reducer plant these faults to prove that detection, attribution, localization,
// deduplication and reduction work.

#include <string>
#include <string_view>

#include "weft/ir/op_kind.h"

namespace weft::oracle {

enum class FaultKind {
  Crash,          // "crash": the process dies of SIGSEGV
  Abort,          // "abort": std::abort()
  Hang,           // "hang": sleeps forever (the worker's time limit ends it)
  Throw,          // "throw": throws an exception naming the node
  Nan,            // "nan": the op's first output element becomes NaN
  PerturbSmall,   // "perturb-small": outputs × (1 + 1e-3): just beyond float32 rounding
  PerturbLarge,   // "perturb-large": outputs × 1.5 + 1
  WrongGradient,  // "wrong-gradient": forward exact, gradient through the op × 1.5
  // "recompile": right at the first shape set, perturb-large's outputs once called with a later
  // one without being prepared again (a dynamic-shape bug)
  Recompile,
};

std::string_view fault_kind_name(FaultKind kind);

struct FaultSpec {
  FaultKind kind = FaultKind::PerturbLarge;
  ir::OpKind op = ir::OpKind::Relu;
};

// "fault:perturb-large@relu".
std::string fault_backend_name(const FaultSpec& spec);
// Parses a backend name of that form; throws weft::Error saying what is expected otherwise.
FaultSpec parse_fault_backend_name(std::string_view name);

}  // namespace weft::oracle
