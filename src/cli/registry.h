#pragma once
// How subcommands attach to the CLI11 application. Each cmd_*.cc defines
// one Add*Command; it stores the exit code of its run in *exit_code.

#include <CLI/CLI.hpp>
#include <chrono>
#include <string>

#include "store/open/open.h"

namespace ferry::cli {

// Options every network command shares.
struct GlobalOptions {
  std::string profile;
  double connect_timeout_s = 10;
  double timeout_s = 60;
  int retries = 5;

  OpenOptions ToOpenOptions(const std::string& profile_override) const {
    OpenOptions o;
    o.profile = profile_override.empty() ? profile : profile_override;
    o.http.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(connect_timeout_s * 1000));
    o.http.io_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    o.retry.max_attempts = retries < 1 ? 1 : retries;
    return o;
  }
};

void AddGlobalOptions(CLI::App& cmd, GlobalOptions* g);
void AddLsCommand(CLI::App& app, int* exit_code);
void AddCpCommand(CLI::App& app, int* exit_code);
void AddMigrateCommand(CLI::App& app, int* exit_code);
void AddWorkerCommand(CLI::App& app, int* exit_code);
void AddServerCommand(CLI::App& app, int* exit_code);
void AddCacheCommand(CLI::App& app, int* exit_code);
void AddGatewayCommand(CLI::App& app, int* exit_code);
void AddSnapshotCommand(CLI::App& app, int* exit_code);
void AddVolumeCommand(CLI::App& app, int* exit_code);

}  // namespace ferry::cli
