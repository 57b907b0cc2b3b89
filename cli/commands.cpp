#include "commands.h"

namespace weft::cli {

void add_all_commands(CLI::App& app) {
  (void)app;  // subcommands are added here as their issues land
}

}  // namespace weft::cli
