#pragma once
// The volume daemon's snapshots of running volumes
// (POST /volumes/NAME/snapshots): each one frozen when it is asked for
// (VolumeSnapshot::Begin, on the API's thread, so the instant is fixed
// before the answer), then uploaded on a thread of its own while the API
// answers 202 and reports progress (GET /volumes/NAME/snapshots/SNAP): an
// upload may take longer than an HTTP exchange should. At most one per
// volume and kMaxRunning in all. Outcomes are kept, for GET, until the
// volume is removed or the daemon stops (not across restarts: a snapshot
// cut short by a stop left no manifest). Thread-safe.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "volume/volume_snapshot.h"

namespace ferry::volume {

class SnapshotJobs {
 public:
  static constexpr int kMaxRunning = 8;

  ~SnapshotJobs();  // Stop()
  // Uploads `snapshot` (frozen already) of volume `volume` in the
  // background; `to` is where it goes (REPOSITORY/NAME), for reports.
  // kThrottled (retryable) past kMaxRunning.
  Status Start(const std::string& volume, const std::string& to, std::unique_ptr<VolumeSnapshot> snapshot,
               const VolumeSnapshotOptions& options);
  // Whether one of `volume`'s snapshots is uploading.
  bool Running(const std::string& volume) const;
  // Running uploads in all (the caller checks this before freezing).
  int running() const;
  // A job's report: {"volume", "snapshot", "to", "state": uploading | done
  // | failed, "written_chunks", "taken_chunks", then the stats when done
  // or "error" when failed}; none when there is no such job.
  std::optional<nlohmann::json> Describe(const std::string& volume, const std::string& snapshot) const;
  nlohmann::json List(const std::string& volume) const;
  void Forget(const std::string& volume);
  // Cancels the uploads and waits for them: no manifest is written after.
  void Stop();

 private:
  struct Job {
    std::string volume, to, name;
    uint64_t written = 0;
    std::unique_ptr<VolumeSnapshot> snapshot;  // while uploading (its progress)
    std::thread thread;                        // joined once done
    bool done = false;                         // guarded by mu_
    Result<VolumeSnapshotStats> result = Status::Internal("running");  // guarded by mu_; set when done
  };
  nlohmann::json Report(const Job& job) const;  // with mu_ held
  // Joins the threads of jobs that are done (with mu_ held: a done job's
  // thread no longer takes it).
  void Reap();

  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Job>> jobs_;  // guarded by mu_; (volume, snapshot)
  int running_ = 0;                                                           // guarded by mu_
  std::atomic<bool> stop_{false};
};

}  // namespace ferry::volume
