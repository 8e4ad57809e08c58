#pragma once
// Entry point of the ferry command line. Each subcommand lives in its own
// cmd_*.cc file and registers itself through the functions below.

namespace ferry::cli {

// Parses argv, runs the chosen command and returns the process exit code.
int Main(int argc, char** argv);

}  // namespace ferry::cli
