// `weft worker`: the isolated backend process of the oracle (weft/oracle/worker.h). Started by
// weft itself with fork+exec; not meant to be run by hand, so it is hidden from --help.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "weft/oracle/worker.h"

namespace weft::cli {

void add_worker_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("worker", "Serve backend runs over stdin/stdout");
  cmd->group("");  // hidden
  cmd->callback([] {
    const int status = oracle::serve_worker();
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace weft::cli
