#pragma once
// `ferry volume serve`: the daemon that holds lazy volumes in pools (one
// directory each, standing for a replica group), serves each as an NBD
// export named after it, hydrates them in the background, and answers the
// control API:
//   POST   /volumes         {"name", "from": "REPOSITORY/SNAPSHOT", "size"?, "count"?}
//   GET    /volumes         every volume's status
//   GET    /volumes/NAME    one volume's status
//   GET    /volumes/NAME/first-touches   chunks in the order clients first touched them
//   POST   /volumes/NAME/snapshots   {"to": "REPOSITORY/NEW"}: a snapshot of the
//          running volume (volume_snapshot.h), frozen now; 202, then
//   GET    /volumes/NAME/snapshots[/NEW]  its progress and stats (snapshot_jobs.h)
//   DELETE /volumes/NAME
//   GET    /metrics         Prometheus text
// A volume is POOL/volumes/NAME/{volume.json, data, bitmap}; a restarted
// daemon finds its volumes again and goes on hydrating where it stopped.
// Chunks come through one transfer cache per snapshot repository, shared
// by every volume made from it.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "nbd/server.h"
#include "store/open/open.h"
#include "volume/fetch_gate.h"
#include "volume/order_learner.h"
#include "volume/qos.h"

namespace ferry::volume {

struct DaemonOptions {
  std::vector<std::string> pools;
  std::string nbd_listen = "127.0.0.1:10809";  // HOST:PORT, [V6]:PORT or unix:PATH
  nbd::NbdTlsOptions nbd_tls;                  // NBD_OPT_STARTTLS: off, on or require
  int nbd_queue_depth = 64;                    // requests in flight per NBD connection (1: one at a time)
  std::string api_listen = "127.0.0.1:10810";
  std::string port_file;               // "NBD_PORT API_PORT\n" once listening
  // Bounds an API request's arrival and an answer's write, an NBD
  // handshake and each NBD reply's write (an idle NBD client may stay).
  std::chrono::milliseconds client_timeout{60'000};
  uint64_t cache_bytes = 256ull << 20;  // transfer cache (compressed chunks)
  // zstd level of the transfer cache. 1: on an ext4 image of binaries it
  // stores 2.8x in memory at ~410 MB/s per core (level 3: 3.1x at ~260
  // MB/s), so a fill at the object store's full speed costs half a core.
  int cache_level = 1;
  uint64_t hydration_rate = 0;         // bytes/s per pool; 0: no cap
  QosSettings qos;                     // how hydration yields to a pool's clients (qos.h)
  int hydration_threads = 4;
  // Threads that fetch new volumes' prefetch orders at once (Daemon's
  // PrefetchLoop); 0: the order is left to the hydrators (first in line).
  int prefetch_threads = 16;
  int readahead_chunks = 2;            // a trigger also fetches this many chunks after it (volume.h)
  int read_around_chunks = 0;          // and, once in, this many on either side (volume.h)
  // Concurrent fetches from the object store. 32: at 20 ms per request and
  // 200 MB/s, 16 kept hydration at 74-86% of the cap on a machine whose
  // two cores were busy (load 7-9); 32 kept it at 91-92%.
  int fetch_slots = 32;
  FetchGateSettings fetch_gate;        // the slots only triggers take, and how the rest yield (fetch_gate.h)
  // Merge each new clone's first touches into its snapshot's prefetch
  // order (order_learner.h). Off by default: it writes the manifest.
  bool learn_orders = false;
  LearnSettings learn;
  // Placement counts a volume as the snapshot's stored bytes (volumes are
  // thin) against a pool's free space times this (above 1: overcommit).
  double overcommit = 1.0;
  // How long a chunk fetch keeps retrying a failing origin before the I/O
  // waiting for it fails with EIO (background hydration pauses and retries).
  std::chrono::milliseconds fetch_deadline{30'000};
  OpenOptions open;                    // repositories: credentials, endpoints
  // Chunks through this HTTP cache tier (e.g. `ferry cache serve` in front
  // of the repository served over HTTP) instead of from the repository;
  // manifests still come from the repository. "": none.
  std::string cache_url;
  // Each volume's NBD requests are recorded to TRACE_DIR/NAME.trace
  // (nbd/traced_device.h) from the first one this daemon serves; a volume
  // whose trace exists already is served unrecorded (a warning says so).
  // "": none.
  std::string trace_dir;
};

// Serves until SIGINT or SIGTERM; setup errors are returned.
Status ServeVolumes(const DaemonOptions& options);

}  // namespace ferry::volume
