#pragma once
// Config files for the daemons (`--config FILE`) and the format of their
// logs (`--log-format text|json`).
//
// A config file is TOML as CLI11 reads it, one key per long flag of the
// command, named as the flag without its dashes:
//
//   listen = "127.0.0.1:8080"
//   origin = "http://127.0.0.1:9000"
//   compress-type = ["text/x-foo", "application/x-bar"]
//   no-http2 = true
//
// Keys sit at the top level or under a section named by the command's path
// ([cache.serve], [volume.serve], [worker]), so one file may hold several
// daemons' settings; a section naming another daemon is skipped. A flag on
// the command line wins over the file's key (for a repeatable flag, the
// command line's values replace the file's). An unknown key, a section that
// names no daemon, or a file that cannot be read is a one-line error naming
// the file (and the line, when the key or section is found on one).
//
// CLI11 2.1 reads config files for the root command only, so the file is
// expanded into arguments before parsing: ExpandConfig.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "base/status.h"

namespace ferry::cli {

// Declares --config and --log-format on a daemon's command (`path` is its
// words, e.g. "cache serve"), and remembers the command for ExpandConfig.
void AddDaemonOptions(CLI::App* cmd, const std::string& path);

// `args` (argv without the program) with the keys of the --config file of
// the daemon command they run inserted as --key=value arguments after
// `--config FILE`. Unchanged when they run no daemon command or give no
// --config.
Result<std::vector<std::string>> ExpandConfig(CLI::App& root, const std::vector<std::string>& args);

// "text" or "json", from `args` (after ExpandConfig); "text" when not given.
std::string LogFormat(const std::vector<std::string>& args);

// Makes the default logger write one JSON object per line:
// {"time":"2026-12-04T22:30:00.123456Z","level":"info","logger":"ferry","msg":"..."}.
void UseJsonLogs();
// Whether UseJsonLogs() was called (what else writes to stderr follows it).
bool JsonLogsOn();

}  // namespace ferry::cli
