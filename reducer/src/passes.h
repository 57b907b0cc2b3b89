#pragma once
// The reducer's passes. Each lists candidate edits of the current case, most promising first,
// accepts the first one the evaluator says still shows the finding, and lists again, until no
// candidate is accepted; it returns whether it changed the case.
#include <functional>
#include <string>
#include <vector>

#include "edit.h"
#include "evaluator.h"
#include "weft/reduce/reducer.h"

namespace weft::reduce {

struct State {
  Case current;
  oracle::Finding finding;  // the kept finding as judged on `current` (its node is localized)
  oracle::Verdict verdict;  // of `current`
  std::vector<ReduceStep> steps;
  std::function<void(const std::string&)> progress;
};

// Makes `candidate` the current case (the evaluator accepted it), tells the evaluator it has
// been visited, and logs the step.
void accept(State& state, Evaluator& evaluator, Candidate candidate, Accepted accepted);

// Lists candidates with `make`, accepts the first that shows the finding, lists again from the
// same position; returns whether anything was accepted.
bool accept_greedily(State& state, Evaluator& evaluator,
                     const std::function<std::vector<Candidate>(const State&)>& make);

// Structure (structure_passes.cpp).
bool remove_nodes_pass(State& state, Evaluator& evaluator);  // "nodes": ddmin over node sets
bool bypass_pass(State& state, Evaluator& evaluator);        // "bypass": a node's own input
bool cut_outputs_pass(State& state, Evaluator& evaluator);   // "outputs"
bool parameters_pass(State& state, Evaluator& evaluator);    // "leaves": parameters → inputs

// Simplification (simplify_passes.cpp).
bool dtypes_pass(State& state, Evaluator& evaluator);      // "dtypes": float64 → float32
bool attributes_pass(State& state, Evaluator& evaluator);  // "attributes"
bool shapes_pass(State& state, Evaluator& evaluator);      // "shapes"
bool values_pass(State& state, Evaluator& evaluator);      // "values"
// "forms": an input made contiguous, nn submodules written as F.* calls, where the finding
// does not need them (a bug that needs a form keeps it).
bool forms_pass(State& state, Evaluator& evaluator);

}  // namespace weft::reduce
