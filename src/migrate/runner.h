#pragma once
// Runs one migration job to its end (Super Slurper's pipeline on one
// machine):
//
//   lister ──pages──▶ state store ◀──claim── dispatcher ──queue──▶ workers
//                          ▲                                         │
//                          └──────── committer (group commit) ◀──────┘
//
// - The lister (lister.h) enqueues keys into the state store, never into
//   memory, so memory is bounded whatever the bucket size; it pauses when
//   max_pending keys wait (back-pressure).
// - The dispatcher claims batches of keys with a lease (owner + expiry) and
//   hands them to a bounded in-memory queue. Small objects between two S3
//   stores are copied as callbacks on the HTTP event loops
//   (TransferObjectAsync), each one that ends starting the next, so
//   thousands can be in flight with no thread each; worker threads transfer
//   the rest (transfer.h). The committer records finished keys in batches,
//   each key deleted and counted in one transaction — a key whose lease was
//   lost is not counted (exactly-once accounting).
// - Failures: retryable errors go back with backoff and full jitter;
//   permanent ones and exhausted retries to the dead-letter queue. One pacer
//   per endpoint lowers its concurrency on 503 SlowDown / 429; one circuit
//   breaker per dependency (source, destination, state store) stops new work
//   while it keeps failing, and objects caught by an outage are released
//   without counting an attempt.
// - The monitor (the calling thread) renews leases, watches for
//   cancellation, reports progress, and marks the job completed (or failed,
//   when keys were dead-lettered) once listing is done and nothing is
//   pending or in flight.
//
// A job made for the worker pool (JobSpec::pool, `ferry migrate --detach`)
// is run by any number of runners at once, in any number of processes
// (`ferry worker`; the state store is what they share). Each claims and
// transfers its own batches; the job's runner claim becomes the listing
// lease: the runner holding it lists, the others take it over when it
// lapses (its holder died) and go on from the last committed page. Any of
// them marks the job finished; one that stops early leaves the job running
// for the others and gives back its leases and the listing.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "engine/circuit_breaker.h"
#include "state/state_store.h"
#include "store/open/open.h"

namespace ferry::migrate {

// A snapshot for progress output.
struct Progress {
  state::JobCounters counters;  // as committed in the state store
  int64_t in_flight = 0;
  bool listing_done = false;
  double seconds = 0;           // this run
  double objects_per_s = 0;     // this run's finished keys (transferred + skipped)
  double bytes_per_s = 0;
  std::string circuits;         // "" when all closed, else e.g. "destination open"
  int src_limit = 0, dst_limit = 0;  // the pacers' concurrency limits now
  uint64_t throttles = 0;            // 503 SlowDown / 429 answers seen this run
  uint64_t retries = 0;              // objects sent back to be tried again, this run
  CircuitState source_circuit = CircuitState::kClosed;
  CircuitState destination_circuit = CircuitState::kClosed;
  CircuitState state_circuit = CircuitState::kClosed;  // the state store's
};

// Something worth a line of its own.
struct Event {
  enum class Kind { kDeadLetter, kCircuit, kListingDone, kWarning };
  Kind kind = Kind::kWarning;
  std::string key;      // kDeadLetter
  std::string reason;   // kDeadLetter: class; kCircuit: "destination open" / "destination closed"
  std::string error;    // last error text
  int attempts = 0;
};

struct RunOptions {
  OpenOptions open;  // network settings for both stores (profiles come from the job)
  std::chrono::milliseconds lease{60'000};        // object and job lease; renewed at a quarter
  int64_t max_pending = 200'000;                  // listing pauses above this many pending keys
  uint64_t buffer_budget = 128ull << 20;          // bytes of object/part buffers at once
  int claim_batch = 256;
  std::chrono::milliseconds progress_every{500};  // on_progress period
  bool force = false;  // take the job even if another live runner holds it
  std::function<void(const Progress&)> on_progress;  // may be empty
  std::function<void(const Event&)> on_event;        // may be empty
};

struct RunResult {
  state::JobRecord job;  // as the run left it
  double seconds = 0;
  bool interrupted = false;  // stopped by a signal: resumable
  uint64_t buffers_reused = 0;  // large buffers that came from the pool again
  double listing_seconds = 0;   // from the start of this run until its listing was seen done (0: not in this run)
};

// "host:pid:nonce": identifies a runner (and its leases) in the state store.
std::string NewRunnerId();
// True when `runner` names a process on this host that no longer exists.
bool RunnerIsDead(const std::string& runner);

// Runs job `id` until it completes, fails, is cancelled, or the process is
// interrupted. Errors that stop the run (the state store unusable, a
// permanent listing error, the job held by another live runner) are
// returned as a Status; the job stays resumable.
Result<RunResult> RunJob(state::StateStore& store, const std::string& id, const RunOptions& o);

}  // namespace ferry::migrate
