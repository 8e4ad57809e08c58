#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/version.h"

namespace ferry::cli {

int Main(int argc, char** argv) {
  CLI::App app{"ferry: moves data between storage tiers, fast and without losing a byte"};
  app.require_subcommand(1);
  auto* version = app.add_subcommand("version", "Print ferry's version");
  version->callback([] { std::printf("ferry %s\n", kVersion); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}

}  // namespace ferry::cli
