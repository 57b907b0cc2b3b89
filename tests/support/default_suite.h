// scripts/test runs the torch2 build's suite right after the default build's, and the default
// build's workers reach the torch2 build as their sibling (build/torch2/cli/weft). A test whose
// work all happens in worker processes (Python paths, either LibTorch's C++ paths) or in code
// that never touches the linked LibTorch (the reducer, the generator) then did the very same work
// in the default suite. The torch2 suite skips such a test when scripts/test says the default
// suite ran in the same invocation (WEFT_DEFAULT_SUITE_RAN=1) and the sibling exists; `ctest
// --preset torch2` on its own still runs it. This keeps a clean build and test under CI's budget.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "weft/oracle/torch_info.h"
#include "weft/oracle/worker.h"

namespace weft::testing {

inline bool the_default_suite_ran_this() {
  const char* flag = std::getenv("WEFT_DEFAULT_SUITE_RAN");
  return oracle::torch_major() == 2 && flag != nullptr && std::string(flag) == "1" &&
         oracle::sibling_worker(1).unavailable.empty();
}

}  // namespace weft::testing

#define WEFT_SKIP_WHERE_THE_DEFAULT_SUITE_RAN_IT()                                             \
  if (weft::testing::the_default_suite_ran_this())                                             \
  GTEST_SKIP() << "the default suite of this scripts/test run did the same work (its workers " \
                  "reached this build as their sibling)"
