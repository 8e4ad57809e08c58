#pragma once
// How background hydration yields to clients, as a pure function. While a
// pool's clients did I/O within `busy_window`, background hydration on that
// pool trickles: at most one chunk per `trickle` interval, so it keeps
// moving under constant load but takes little from the clients (triggers
// are never held back: they do not pass through here).

#include <chrono>

namespace ferry::volume {

struct QosSettings {
  std::chrono::milliseconds busy_window{50};
  std::chrono::milliseconds trickle{100};
};

// How long the next background fetch on a pool waits, given the time since
// its clients' last I/O and since its last background fetch started.
// `prefetch`: the fetch is of the snapshot's prefetch order (the chunks a
// booting clone is about to read, recorded from an earlier boot). It does
// not wait: it serves those clients ahead of their own triggers.
std::chrono::milliseconds HydrationPause(std::chrono::milliseconds since_client_io,
                                         std::chrono::milliseconds since_last_fetch, bool prefetch,
                                         const QosSettings& s = {});

}  // namespace ferry::volume
