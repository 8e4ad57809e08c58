#pragma once
// What only a running job's runner knows (circuit states, the pacers'
// limits, retries, throttles, keys in flight), by job, for the runners of
// this process (`ferry server --run-jobs`): the API's job view adds it to
// what the state store has. Thread-safe.

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "migrate/runner.h"

namespace ferry::cli {

class LiveRuns {
 public:
  void Update(const std::string& job, const migrate::Progress& p) {
    std::lock_guard lock(mu_);
    runs_[job] = p;
  }
  void Ended(const std::string& job) {
    std::lock_guard lock(mu_);
    runs_.erase(job);
  }
  std::optional<migrate::Progress> Of(const std::string& job) const {
    std::lock_guard lock(mu_);
    auto it = runs_.find(job);
    if (it == runs_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, migrate::Progress> runs_;
};

}  // namespace ferry::cli
