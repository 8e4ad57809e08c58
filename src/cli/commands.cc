#include "cli/commands.h"

#include <malloc.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>

#include "base/cancel.h"
#include "base/process_limits.h"
#include "base/version.h"
#include "cli/config_file.h"
#include "cli/registry.h"

namespace ferry::cli {

namespace {

// A number of seconds > 0.
const CLI::Validator kPositiveSeconds(
    [](std::string& v) -> std::string {
      char* end = nullptr;
      double d = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(d > 0)) return "must be a number of seconds above 0";
      return "";
    },
    "SECONDS");

}  // namespace

void AddGlobalOptions(CLI::App& cmd, GlobalOptions* g) {
  cmd.add_option("--profile", g->profile, "AWS profile for S3 locations (default: $AWS_PROFILE or default)");
  cmd.add_option("--connect-timeout", g->connect_timeout_s, "Seconds to connect (TCP + TLS)")
      ->capture_default_str()
      ->check(kPositiveSeconds);
  cmd.add_option("--timeout", g->timeout_s, "Seconds a network read or write may stall")
      ->capture_default_str()
      ->check(kPositiveSeconds);
  cmd.add_option("--retries", g->retries, "Attempts per request for retryable errors")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
}

int Main(int argc, char** argv) {
  // Object and part buffers (up to tens of MiB, freed by other threads than
  // those that made them) come from mmap and go back to the system when
  // freed. glibc's default raises the mmap threshold after the first large
  // free, after which such buffers stay in per-thread arenas and the
  // resident size grows far past what is live (456 vs ~200 MiB in the 75k
  // benchmark). Smaller buffers come from at most 8 arenas, and freed heap
  // memory is kept for reuse up to 256 MiB (about the buffer budget) instead
  // of being handed back at once: every page taken back had to be zeroed
  // again on its next use, which was a third of ferry's CPU time.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_ARENA_MAX, 8);
  RaiseOpenFileLimit();
  // Logs go to stderr: stdout carries the commands' output (listings,
  // --json event lines), which a log line must never interleave with.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ferry"));
  CLI::App app{"ferry: moves data between storage tiers, fast and without losing a byte"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ferry ") + kVersion);
  int exit_code = 0;
  auto* version = app.add_subcommand("version", "Print ferry's version");
  version->callback([] { std::printf("ferry %s\n", kVersion); });
  AddLsCommand(app, &exit_code);
  AddCpCommand(app, &exit_code);
  AddMigrateCommand(app, &exit_code);
  AddWorkerCommand(app, &exit_code);
  AddServerCommand(app, &exit_code);
  AddCacheCommand(app, &exit_code);
  AddGatewayCommand(app, &exit_code);
  AddSnapshotCommand(app, &exit_code);
  AddVolumeCommand(app, &exit_code);
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == argv[1]) known = true;
    }
    if (!known) {
      std::fprintf(stderr, "ferry: unknown command \"%s\" (see ferry --help)\n", argv[1]);
      return 2;
    }
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  auto expanded = ExpandConfig(app, args);
  if (!expanded.ok()) {
    std::fprintf(stderr, "ferry: %s\n", expanded.status().message().c_str());
    return 2;
  }
  args = std::move(expanded).value();
  if (LogFormat(args) == "json") UseJsonLogs();
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      std::string where = argc > 1 && argv[1][0] != '-' ? std::string(" ") + argv[1] : "";
      std::fprintf(stderr, "ferry: %s (see ferry%s --help)\n", e.what(), where.c_str());
      return 2;
    }
    return app.exit(e);
  }
  if (CancelRequested() && exit_code != 0) return 130;
  return exit_code;
}

}  // namespace ferry::cli
