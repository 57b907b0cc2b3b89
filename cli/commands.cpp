#include "commands.h"

#include <exception>
#include <iostream>

namespace weft::cli {

void run_command(const char* command, const std::function<int()>& body) {
  int status = 2;
  try {
    status = body();
  } catch (const std::exception& e) {
    std::cerr << "weft " << command << ": error: " << e.what() << "\n";
    status = 2;
  }
  if (status != 0) throw CLI::RuntimeError(status);
}

void add_all_commands(CLI::App& app) {
  add_ops_command(app);
  add_gen_command(app);
  add_fuzz_command(app);
  add_reduce_command(app);
  add_replay_command(app);
  add_backends_command(app);
  add_export_command(app);
  add_report_command(app);
  add_merge_command(app);
  add_issue_command(app);
  add_worker_command(app);
}

}  // namespace weft::cli
