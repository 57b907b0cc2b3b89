#include "commands.h"

namespace weft::cli {

void add_all_commands(CLI::App& app) {
  add_ops_command(app);
  add_gen_command(app);
  add_fuzz_command(app);
  add_replay_command(app);
  add_backends_command(app);
  add_export_command(app);
  add_report_command(app);
  add_merge_command(app);
  add_worker_command(app);
}

}  // namespace weft::cli
