#pragma once
// Judging: from the results of every backend on one case, decide whether the paths disagree,
// which path is at fault, and with which symptom. The float64 engine run ("engine-f64") is
// the reference; the float32 engine run ("engine") shows how far an honest float32
// execution of the same graph lands from it, and so sets the tolerance: a path is wrong when
// its distance to the reference is far beyond that, not when it misses a fixed rtol.
// Pure computation on engine tensors: no torch, no processes.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "weft/ir/graph.h"
#include "weft/oracle/backend.h"
#include "weft/oracle/rounding.h"

namespace weft::oracle {

// In order of precedence: when one path shows several, the first is reported.
enum class Symptom {
  Crash,              // the worker died (signal, abort)
  Timeout,            // the worker hung past the time limit
  OutOfMemory,        // the worker hit its memory cap
  ExceptionMismatch,  // one path throws where the reference does not, or the reverse
  ShapeMismatch,      // an output or gradient with another shape or dtype than the reference
  NanInfMismatch,     // NaN/Inf where the reference is finite, or the reverse
  WrongOutput,        // forward values far from the reference
  WrongGradient,      // gradients far from the reference
  Nondeterminism,     // a path disagrees with itself across calls
};

std::string_view symptom_name(Symptom symptom);    // "crash", "wrong-output", ...
Symptom symptom_from_name(std::string_view name);  // throws weft::Error for unknown names

struct Finding {
  Symptom symptom;
  std::string backend;  // the path at fault
  std::string message;  // what differs: "output 1 [3, 4]: max abs error 0.5 (tolerance 1e-5)"
  // Where the values part from the reference, when known (localize() in weft/oracle/oracle.h
  // fills these in; the judge sets them from a node label in an exception message).
  std::optional<std::size_t> node;
  std::string op;  // the localized node's op name ("conv2d"); empty when unknown
  // Deduplication key: symptom, backend, op and a detail, e.g. "wrong-output|torchscript-ofi|
  // conv2d|" or "wrong-output|torchscript-nnc|round|call 1". Messages are the root cause of
  // exceptions and shape mismatches, so there the op is left out and the detail is the
  // normalized message (numbers, quoted names, shapes, dtype and op names removed):
  // "exception-mismatch|torchscript-nnc||Invalid integral op_type: N".
  std::string signature;  // Wrong values that appear only from this call on, after calls that
                          // agreed with the
  // reference: the path's warm-up (profiling, specialization) switched to a wrong graph.
  std::optional<int> call;
  // Other paths of the same PyTorch that show the same finding: folded into eager's, since
  // a compiled path gets a bucket of its own only where eager is right.
  std::vector<std::string> also;
  // A dynamic-shape case: the shape set (1, 2, ...) at which the finding shows, when it does not
  // at set 0 (the path was prepared at set 0 and then called at this one).
  std::optional<int> shape_set;
};

// A case eager PyTorch refuses for want of a kernel ("not implemented for 'Long'", "not
// supported") while the engine runs it: a capability gap of the target, not a bug of a path.
struct Unsupported {
  std::string backend;              // the eager path that refused ("torch")
  std::string op;                   // the node it names, when it names one
  std::vector<std::string> dtypes;  // that node's input dtypes
  std::string message;
  std::string signature;  // "unsupported|torch|<op>|<normalized message>"
};

struct BackendSummary {
  std::string backend;
  Outcome outcome = Outcome::Ok;
  std::string message;
  double seconds = 0;
  double compile_seconds = 0;  // the part of `seconds` spent compiling (torch.compile paths)
  // Largest errors against the reference over every call's outputs and gradients (0 when the
  // path did not run or nothing is comparable).
  double max_abs_error = 0;
  double max_rel_error = 0;
  // Largest error / tolerance over the compared floating elements (above 1: out of tolerance),
  // to show how much margin a passing path has.
  double max_error_ratio = 0;
  bool agrees = true;  // no finding names this backend
};

struct Verdict {
  std::vector<Finding> findings;  // empty: no bug
  std::vector<Unsupported> unsupported;
  std::vector<BackendSummary> backends;
  // False when the reference itself is not finite (the value search failed): NaN/Inf
  // differences are then not reported.
  bool reference_finite = true;
  // Why nothing could be judged, e.g. "every path refused the case: ..."; empty otherwise.
  std::string note;

  bool bug() const { return !findings.empty(); }
};

struct JudgeOptions {
  // A value is wrong when its error exceeds `error_factor` × the honest float32 error plus
  // the floor (see judge.cpp for the exact rule).
  double error_factor = 16;
  // The float32 engine sets the tolerance, so it is judged on a generous bound instead: a
  // tensor of it is wrong when its error exceeds `engine_error_factor` float32 epsilons of
  // the tensor's scale while another path lands `error_factor` times closer to the reference.
  double engine_error_factor = 4096;
  // Ties: whether `value` at `element` of integer graph output `output` is an equally valid
  // answer where it differs from the reference (an argmax index that points at another copy
  // of the maximum). The oracle sets it from the reference's intermediate values; empty: no
  // such answers.
  std::function<bool(std::size_t output, std::size_t element, double value)> accept_tie;
  // The case's rounding model (weft/oracle/rounding.h): the honest error of every element is
  // the largest of the float32 engine's and the Monte Carlo runs' distances to the reference;
  // an element a run cannot compute finitely, or that an undecided decision reaches, is not
  // judged. Null: the float32 engine alone sets the honest error.
  std::shared_ptr<const RoundingModel> rounding;
};

// `results` holds one entry per backend run on the case, including kReferenceBackend and
// kEngineBackend; Unavailable results are listed in the summary and otherwise ignored.
Verdict judge(const ir::Graph& graph, const std::vector<BackendResult>& results,
              const JudgeOptions& options = {});

// Recomputes a finding's signature from its fields (after localization changed `op`).
std::string make_signature(const Finding& finding);

// Whether an exception message says that a kernel or dtype is missing (a capability gap).
bool is_capability_message(const std::string& message);

nlohmann::json verdict_to_json(const Verdict& verdict);
// Throws weft::FormatError naming `source` and the field for a malformed document.
Verdict verdict_from_json(const nlohmann::json& document, const std::string& source);

}  // namespace weft::oracle
