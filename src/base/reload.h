#pragma once
// Process-wide reload requests (SIGHUP to a daemon: read your certificates
// again). The signal thread counts them; a daemon's loop polls the count
// and reloads when it moved. A process that has not said it reloads takes
// SIGHUP as a stop (base/cancel.h), as it takes SIGTERM.

#include <cstdint>

namespace ferry {

// Called by a daemon before it serves.
void SetReloadOnHangup(bool on);
bool ReloadOnHangup();

void RequestReload();
// Reloads asked for so far.
uint64_t ReloadRequests();

}  // namespace ferry
