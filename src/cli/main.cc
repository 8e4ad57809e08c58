// ferry's command line: parses arguments and calls the library.
#include "cli/commands.h"

int main(int argc, char** argv) { return ferry::cli::Main(argc, argv); }
