// ferry's command line: parses arguments and calls the library.
#include "cli/commands.h"
#include "cli/signals.h"

int main(int argc, char** argv) {
  ferry::cli::InstallSignalHandling();
  return ferry::cli::Main(argc, argv);
}
