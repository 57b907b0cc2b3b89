// Names of backend outcomes (backend.h), as they appear in verdicts and reports.
#include <string>
#include <string_view>

#include "weft/error.h"
#include "weft/oracle/backend.h"

namespace weft::oracle {

namespace {

constexpr Outcome kOutcomes[] = {Outcome::Ok,      Outcome::Exception,   Outcome::Crash,
                                 Outcome::Timeout, Outcome::OutOfMemory, Outcome::Unavailable};

}  // namespace

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::Ok:
      return "ok";
    case Outcome::Exception:
      return "exception";
    case Outcome::Crash:
      return "crash";
    case Outcome::Timeout:
      return "timeout";
    case Outcome::OutOfMemory:
      return "out-of-memory";
    case Outcome::Unavailable:
      return "unavailable";
  }
  return "unknown";
}

Outcome outcome_from_name(std::string_view name) {
  std::string known;
  for (Outcome outcome : kOutcomes) {
    if (outcome_name(outcome) == name) return outcome;
    known += (known.empty() ? "" : ", ") + std::string(outcome_name(outcome));
  }
  throw Error("unknown backend outcome '" + std::string(name) + "' (expected one of " + known +
              ")");
}

}  // namespace weft::oracle
