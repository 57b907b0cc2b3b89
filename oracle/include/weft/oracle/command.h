#pragma once
// Running a shell command and reading what it prints: the oracle asks interpreters about their
// torch, sibling builds about their paths, and `weft issue` runs repro scripts.

#include <string>

namespace weft::oracle {

struct CommandOutput {
  std::string output;  // standard output and standard error, in order
  int status = -1;     // the exit status; -1 when it could not start or was killed by a signal
};

// `/bin/sh -c command 2>&1`. Quote arguments yourself (shell_quoted() below).
CommandOutput run_command(const std::string& command);

// `text` as one single-quoted shell word.
std::string shell_quoted(const std::string& text);

}  // namespace weft::oracle
