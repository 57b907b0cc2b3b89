#include "commands.h"

namespace weft::cli {

void add_all_commands(CLI::App& app) {
  add_ops_command(app);
  add_gen_command(app);
}

}  // namespace weft::cli
