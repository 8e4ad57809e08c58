#pragma once
// `ferry server`'s POST /v1/verify: the independent check of a migration
// (`ferry migrate verify`), run in the server's process in the background
// and read back with GET /v1/verify/ID.
//
//   {"job": ID [, "fix": true]}  a job's source against its destination,
//        with its key mapping and filters; "fix" requeues what is missing
//        or different into the job, which the pool's workers then run
//        (a pool job only)
//   {"src", "dst", "options": {FLAG: VALUE}}  two locations (the options
//        as POST /v1/jobs takes them: profiles, filters)
//   either with "checksum": true (hash both sides where no MD5 is known)
//   and "concurrency": N (key ranges compared at once)
//
// A run's view: {"verify", "state": running|done|failed, "started",
// "finished", "request", "counts" (as `verify --json`), "ok",
// "differences" (the first 1000; "more" counts the rest), "requeued",
// "error"}. At most 4 run at once (503 beyond); the last 100 finished are
// kept. Thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "cli/migrate_args.h"
#include "state/state_store.h"

namespace ferry::cli {

class VerifyRuns {
 public:
  // `base` gives the network settings and the default profile.
  VerifyRuns(state::StateStore& store, MigrateArgs base) : store_(store), base_(std::move(base)) {}
  ~VerifyRuns();  // waits for the running checks (each stops when the process is interrupted)

  Result<nlohmann::json> Start(const std::string& body);
  Result<nlohmann::json> Get(const std::string& id) const;

  static constexpr size_t kMaxRunning = 4;
  static constexpr size_t kKeptFinished = 100;
  static constexpr size_t kDifferencesShown = 1000;

 private:
  struct Run {
    std::string id;
    nlohmann::json request;
    std::string state = "running";  // guarded by VerifyRuns::mu_, as the rest
    nlohmann::json counts;
    std::vector<nlohmann::json> differences;
    int64_t more = 0, requeued = 0;
    std::string error;
    int64_t started_ms = 0, finished_ms = 0;
  };
  struct Request {
    nlohmann::json raw;
    MigrateArgs args;  // the server's, with the request's checksum and concurrency
    migrate::JobSpec spec;
    std::string job;  // "" for two locations
    bool fix = false;
  };
  Result<Request> Parse(const std::string& body) const;
  void Execute(Run& run, const Request& q);  // on the run's thread
  nlohmann::json View(const Run& r) const;
  void Finished();      // drops the oldest finished runs past kKeptFinished; under mu_
  void JoinFinished();  // the threads of finished runs

  state::StateStore& store_;
  const MigrateArgs base_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Run>> runs_;
  std::vector<std::string> order_;  // ids, oldest first
  size_t running_ = 0;
  std::map<std::string, std::thread> threads_;  // by run id
};

}  // namespace ferry::cli
