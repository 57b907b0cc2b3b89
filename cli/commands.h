#pragma once
// The weft subcommands. Adding one: write cli/<name>.cpp with an add_<name>_command that
// registers a CLI11 subcommand and its callback, declare it here, call it in commands.cpp.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace weft::cli {

void add_all_commands(CLI::App& app);

void add_ops_command(CLI::App& app);       // ops.cpp
void add_gen_command(CLI::App& app);       // gen.cpp
void add_worker_command(CLI::App& app);    // worker.cpp
void add_replay_command(CLI::App& app);    // replay.cpp
void add_backends_command(CLI::App& app);  // replay.cpp
void add_export_command(CLI::App& app);    // export.cpp
void add_report_command(CLI::App& app);    // report.cpp
void add_merge_command(CLI::App& app);     // merge.cpp
void add_fuzz_command(CLI::App& app);      // fuzz.cpp
void add_reduce_command(CLI::App& app);    // reduce.cpp
void add_issue_command(CLI::App& app);     // issue.cpp

// Runs a subcommand's body as its CLI11 callback: an exception is printed as
// "weft <command>: error: …" and gives exit status 2; any other non-zero status ends weft with
// that status (CLI::RuntimeError, which main() turns into the exit code).
void run_command(const char* command, const std::function<int()>& body);

// The text of `weft --version`: weft, LibTorch, Z3, CUDA availability and every PyTorch target.
std::string version_text();

}  // namespace weft::cli
