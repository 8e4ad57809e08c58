#pragma once
// SIGINT / SIGTERM for the command line: the first asks every operation to
// stop and clean up (base/cancel.h), a second exits at once with 130.
// SIGHUP asks a daemon that reloads (base/reload.h) to reload; any other
// command takes it as SIGTERM.
// Must be called before any thread starts, so all threads inherit the mask.

namespace ferry::cli {

void InstallSignalHandling();

}  // namespace ferry::cli
