// weft: a differential-testing fuzzer for deep-learning frameworks.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"weft: differential-testing fuzzer for deep-learning frameworks"};
  app.set_version_flag("--version", weft::cli::version_text,
                       "Print the versions of weft, "
                       "LibTorch and Z3, and CUDA status");
  app.require_subcommand(0, 1);
  weft::cli::add_all_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "weft: error: " << e.what() << "\n";
    return 2;
  }
  if (argc == 1) {
    std::cout << app.help();
  }
  return 0;
}
