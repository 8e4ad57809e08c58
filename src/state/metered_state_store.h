#pragma once
// A StateStore that counts what passes through it: calls, and the wall time
// callers spent waiting in them. Wraps any store; for the run summary's
// "state-store operations per object" and "share of the time" (the time
// summed over every calling thread, divided by the run's wall time, is the
// average number of threads waiting on the store).

#include <atomic>
#include <chrono>
#include <cstdint>

#include "state/state_store.h"

namespace ferry::state {

class MeteredStateStore : public StateStore {
 public:
  explicit MeteredStateStore(StateStore& inner) : inner_(inner) {}

  int64_t calls() const { return calls_.load(); }
  double seconds() const { return static_cast<double>(nanos_.load()) / 1e9; }

  Status CreateJob(const JobRecord& job, const std::vector<ShardRecord>& shards) override {
    return Meter([&] { return inner_.CreateJob(job, shards); });
  }
  Result<JobRecord> GetJob(const std::string& id) override {
    return Meter([&] { return inner_.GetJob(id); });
  }
  Result<std::vector<JobRecord>> ListJobs() override {
    return Meter([&] { return inner_.ListJobs(); });
  }
  Status ArchiveJob(const std::string& id, int64_t now_ms) override {
    return Meter([&] { return inner_.ArchiveJob(id, now_ms); });
  }
  Result<std::vector<JobRecord>> ListArchivedJobs() override {
    return Meter([&] { return inner_.ListArchivedJobs(); });
  }
  Status RestoreJob(const std::string& id) override {
    return Meter([&] { return inner_.RestoreJob(id); });
  }
  Status AcquireJob(const std::string& id, const std::string& runner, int64_t now_ms,
                    int64_t until_ms, bool force) override {
    return Meter([&] { return inner_.AcquireJob(id, runner, now_ms, until_ms, force); });
  }
  Status RenewJob(const std::string& id, const std::string& runner, int64_t until_ms) override {
    return Meter([&] { return inner_.RenewJob(id, runner, until_ms); });
  }
  Status SetJobState(const std::string& id, JobState state, int64_t now_ms, double add_run_seconds,
                     bool release) override {
    return Meter([&] { return inner_.SetJobState(id, state, now_ms, add_run_seconds, release); });
  }
  Result<std::vector<ShardRecord>> GetShards(const std::string& job) override {
    return Meter([&] { return inner_.GetShards(job); });
  }
  Result<ListPageResult> CommitListPage(const std::string& job,
                                        const ListPageCommit& page) override {
    return Meter([&] { return inner_.CommitListPage(job, page); });
  }
  Result<std::vector<ShardRecord>> SplitShard(const std::string& job, int shard,
                                              const std::string& expect_upper,
                                              const std::vector<std::string>& bounds) override {
    return Meter([&] { return inner_.SplitShard(job, shard, expect_upper, bounds); });
  }
  Result<ShardRecord> FallBackToFlatListing(const std::string& job, const std::string& prefix,
                                            const std::string& lower,
                                            const std::string& upper) override {
    return Meter([&] { return inner_.FallBackToFlatListing(job, prefix, lower, upper); });
  }
  Result<int64_t> RequeueKeys(const std::string& job,
                              const std::vector<ListedObject>& objects) override {
    return Meter([&] { return inner_.RequeueKeys(job, objects); });
  }
  Result<std::vector<ClaimedObject>> Claim(const std::string& job, const std::string& owner,
                                           int max, int64_t now_ms,
                                           int64_t lease_until_ms) override {
    return Meter([&] { return inner_.Claim(job, owner, max, now_ms, lease_until_ms); });
  }
  Status RenewLeases(const std::string& job, const std::string& owner,
                     int64_t lease_until_ms) override {
    return Meter([&] { return inner_.RenewLeases(job, owner, lease_until_ms); });
  }
  Result<int64_t> ReleaseOwner(const std::string& job, const std::string& owner) override {
    return Meter([&] { return inner_.ReleaseOwner(job, owner); });
  }
  Result<std::vector<bool>> Finish(const std::string& job, const std::string& owner,
                                   const std::vector<FinishedObject>& done) override {
    return Meter([&] { return inner_.Finish(job, owner, done); });
  }
  Result<bool> Retry(const std::string& job, const std::string& owner, const std::string& key,
                     const std::string& error, int64_t not_before_ms) override {
    return Meter([&] { return inner_.Retry(job, owner, key, error, not_before_ms); });
  }
  Result<bool> Release(const std::string& job, const std::string& owner, const std::string& key,
                       int64_t not_before_ms) override {
    return Meter([&] { return inner_.Release(job, owner, key, not_before_ms); });
  }
  Result<bool> DeadLetterObject(const std::string& job, const std::string& owner,
                                const DeadLetter& entry) override {
    return Meter([&] { return inner_.DeadLetterObject(job, owner, entry); });
  }
  Result<std::vector<DeadLetter>> ListDeadLetters(const std::string& job) override {
    return Meter([&] { return inner_.ListDeadLetters(job); });
  }
  Result<int64_t> RequeueDeadLetters(const std::string& job) override {
    return Meter([&] { return inner_.RequeueDeadLetters(job); });
  }
  Status SaveUpload(const std::string& job, const std::string& key,
                    const UploadRecord& upload) override {
    return Meter([&] { return inner_.SaveUpload(job, key, upload); });
  }
  Status AddPart(const std::string& job, const std::string& key,
                 const UploadRecord::Part& part) override {
    return Meter([&] { return inner_.AddPart(job, key, part); });
  }
  Result<std::optional<UploadRecord>> GetUpload(const std::string& job,
                                                const std::string& key) override {
    return Meter([&] { return inner_.GetUpload(job, key); });
  }
  Status DeleteUpload(const std::string& job, const std::string& key) override {
    return Meter([&] { return inner_.DeleteUpload(job, key); });
  }
  Result<std::vector<std::pair<std::string, UploadRecord>>> ListUploads(
      const std::string& job) override {
    return Meter([&] { return inner_.ListUploads(job); });
  }
  Result<int64_t> CountRows(const std::string& job) override {
    return Meter([&] { return inner_.CountRows(job); });
  }

 private:
  template <class F>
  auto Meter(F f) -> decltype(f()) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = f();
    nanos_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
    ++calls_;
    return r;
  }

  StateStore& inner_;
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> nanos_{0};
};

}  // namespace ferry::state
