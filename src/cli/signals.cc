#include "cli/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <thread>

#include "base/cancel.h"
#include "base/reload.h"
#include "cli/config_file.h"

namespace ferry::cli {

void InstallSignalHandling() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    for (int seen = 0;; ++seen) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (sig == SIGHUP && ReloadOnHangup()) {
        RequestReload();
        --seen;
        continue;
      }
      if (seen > 0) _exit(130);
      if (JsonLogsOn()) {  // every line on stderr a JSON object
        spdlog::warn("interrupted, cleaning up (again to quit at once)");
      } else {
        static const char kMsg[] = "ferry: interrupted, cleaning up (again to quit at once)\n";
        (void)!write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
      }
      RequestCancel();
    }
  }).detach();
}

}  // namespace ferry::cli
