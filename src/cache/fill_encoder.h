#pragma once
// Compressing fills behind their requests, in batches. A fill whose body
// may be compressed hands it here (Submit) and is answered at once with
// the original bytes; one thread of its own takes every body waiting,
// compresses them one after another, and only then hands the turn's
// results to the sink, in submission order (so it may store them with one
// disk sync). Back to back, each compression runs
// after the last one's match tables and code rather than after the
// network stack and the other requests that ran on that core between two
// fills, which is most of what a small body's fill cost above libzstd's
// tight loop (docs/benchmarks.md, "what compressing costs on the fill path").
//
// A turn starts when max_batch bodies wait, or `gather` after the thread
// woke for a first one (a body that came during a turn may wait that turn
// and the next one's gathering). Bounded: past max_jobs bodies or
// max_bytes waiting (those of the turn under way not counted), Submit
// refuses and the caller compresses inline. The sink runs on the
// encoder's thread, never concurrently with itself, and must not call
// Drain. The destructor compresses what is still waiting, hands it on,
// then joins.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "cache/hot_set.h"

namespace ferry::cache {

struct FillEncoderOptions {
  int level = 3;                   // zstd level
  size_t max_jobs = 256;           // bodies waiting, at most
  uint64_t max_bytes = 32 << 20;   // their bytes, at most
  size_t max_batch = 32;           // bodies compressed in one turn, at most
  std::chrono::microseconds gather{2000};  // longest a body waits for others to join its turn
};

class FillEncoder {
 public:
  struct Done {
    std::shared_ptr<const CachedObject> plain;  // as submitted
    Result<std::string> frame;                  // its body as one zstd frame
    uint64_t cpu_ns = 0;                        // the encoder thread's CPU time for it
  };
  using Sink = std::function<void(std::vector<Done>)>;  // a turn's bodies, in submission order

  FillEncoder(FillEncoderOptions options, Sink sink);
  ~FillEncoder();
  FillEncoder(const FillEncoder&) = delete;
  FillEncoder& operator=(const FillEncoder&) = delete;

  // Queues `plain`'s body; false (nothing queued) when the queue is full.
  bool Submit(std::shared_ptr<const CachedObject> plain);
  // Returns once everything submitted before has been handed to the sink
  // (the turn starts without gathering).
  void Drain();
  uint64_t batches() const;  // turns taken so far

 private:
  void Run();

  const FillEncoderOptions options_;
  const Sink sink_;
  mutable std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<std::shared_ptr<const CachedObject>> queue_;  // guarded by mu_
  uint64_t queued_bytes_ = 0;                              // guarded by mu_
  uint64_t submitted_ = 0, finished_ = 0;                  // guarded by mu_
  uint64_t batches_ = 0;                                   // guarded by mu_
  int draining_ = 0;                                       // guarded by mu_: Drain calls waiting
  bool stopping_ = false;                                  // guarded by mu_
  std::thread thread_;                                     // last: started once the rest is set
};

}  // namespace ferry::cache
