#pragma once
// EXPECT that a call throws weft::Error whose message contains `fragment` (PyTorch-worded
// messages are part of the contract, so tests check their text, not only that they throw).

#include <gtest/gtest.h>

#include <string>

#include "weft/error.h"

namespace weft::testing {

template <typename F>
void expect_error(F&& call, const std::string& fragment) {
  try {
    call();
    ADD_FAILURE() << "expected weft::Error containing: " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace weft::testing
