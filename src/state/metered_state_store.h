#pragma once
// A StateStore that counts what passes through it: calls, and the wall time
// callers spent waiting in them. Wraps any store; for the run summary's
// "state-store operations per object" and "share of the time" (the time
// summed over every calling thread, divided by the run's wall time, is the
// average number of threads waiting on the store), and per operation a
// latency histogram (the worker's metrics).

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/latency_histogram.h"
#include "state/state_store.h"

namespace ferry::state {

class MeteredStateStore : public StateStore {
  // clang-format off
  enum Op {
    kCreateJob, kGetJob, kListJobs, kArchiveJob, kListArchivedJobs, kRestoreJob, kAcquireJob,
    kRenewJob, kSetJobState, kGetShards, kCommitListPage, kSplitShard, kFallBackToFlatListing,
    kRequeueKeys, kClaim, kRenewLeases, kReleaseOwner, kFinish, kRetry, kRelease,
    kDeadLetterObject, kListDeadLetters, kRequeueDeadLetters, kSaveUpload, kAddPart, kGetUpload,
    kDeleteUpload, kListUploads, kCountRows, kSetJobLive, kListJobLive, kOps
  };
  static constexpr std::array<const char*, kOps> kOpNames = {
      "create_job", "get_job", "list_jobs", "archive_job", "list_archived_jobs", "restore_job",
      "acquire_job", "renew_job", "set_job_state", "get_shards", "commit_list_page", "split_shard",
      "fall_back_to_flat_listing", "requeue_keys", "claim", "renew_leases", "release_owner",
      "finish", "retry", "release", "dead_letter_object", "list_dead_letters",
      "requeue_dead_letters", "save_upload", "add_part", "get_upload", "delete_upload",
      "list_uploads", "count_rows", "set_job_live", "list_job_live"};
  // clang-format on

 public:
  explicit MeteredStateStore(StateStore& inner) : inner_(inner) {}

  int64_t calls() const { return calls_.load(); }
  double seconds() const { return static_cast<double>(nanos_.load()) / 1e9; }
  // The operations called so far (snake_case, as "claim") and the latency
  // of their calls, failed ones too (for `ferry worker --metrics`).
  std::vector<std::pair<std::string, LatencyHistogram::Snapshot>> Latencies() const {
    std::vector<std::pair<std::string, LatencyHistogram::Snapshot>> out;
    for (size_t i = 0; i < kOps; ++i) {
      auto snap = latency_[i].Snap();
      if (snap.count() > 0) out.emplace_back(kOpNames[i], std::move(snap));
    }
    return out;
  }

  Status CreateJob(const JobRecord& job, const std::vector<ShardRecord>& shards) override {
    return Meter(kCreateJob, [&] { return inner_.CreateJob(job, shards); });
  }
  Result<JobRecord> GetJob(const std::string& id) override {
    return Meter(kGetJob, [&] { return inner_.GetJob(id); });
  }
  Result<std::vector<JobRecord>> ListJobs() override {
    return Meter(kListJobs, [&] { return inner_.ListJobs(); });
  }
  Status ArchiveJob(const std::string& id, int64_t now_ms) override {
    return Meter(kArchiveJob, [&] { return inner_.ArchiveJob(id, now_ms); });
  }
  Result<std::vector<JobRecord>> ListArchivedJobs() override {
    return Meter(kListArchivedJobs, [&] { return inner_.ListArchivedJobs(); });
  }
  Status RestoreJob(const std::string& id) override {
    return Meter(kRestoreJob, [&] { return inner_.RestoreJob(id); });
  }
  Status AcquireJob(const std::string& id, const std::string& runner, int64_t now_ms,
                    int64_t until_ms, bool force) override {
    return Meter(kAcquireJob,
                 [&] { return inner_.AcquireJob(id, runner, now_ms, until_ms, force); });
  }
  Status RenewJob(const std::string& id, const std::string& runner, int64_t until_ms) override {
    return Meter(kRenewJob, [&] { return inner_.RenewJob(id, runner, until_ms); });
  }
  Status SetJobState(const std::string& id, JobState state, int64_t now_ms, double add_run_seconds,
                     bool release) override {
    return Meter(kSetJobState,
                 [&] { return inner_.SetJobState(id, state, now_ms, add_run_seconds, release); });
  }
  Result<std::vector<ShardRecord>> GetShards(const std::string& job) override {
    return Meter(kGetShards, [&] { return inner_.GetShards(job); });
  }
  Result<ListPageResult> CommitListPage(const std::string& job,
                                        const ListPageCommit& page) override {
    return Meter(kCommitListPage, [&] { return inner_.CommitListPage(job, page); });
  }
  Result<std::vector<ShardRecord>> SplitShard(const std::string& job, int shard,
                                              const std::string& expect_upper,
                                              const std::vector<std::string>& bounds) override {
    return Meter(kSplitShard, [&] { return inner_.SplitShard(job, shard, expect_upper, bounds); });
  }
  Result<ShardRecord> FallBackToFlatListing(const std::string& job, const std::string& prefix,
                                            const std::string& lower,
                                            const std::string& upper) override {
    return Meter(kFallBackToFlatListing,
                 [&] { return inner_.FallBackToFlatListing(job, prefix, lower, upper); });
  }
  Result<int64_t> RequeueKeys(const std::string& job,
                              const std::vector<ListedObject>& objects) override {
    return Meter(kRequeueKeys, [&] { return inner_.RequeueKeys(job, objects); });
  }
  Result<std::vector<ClaimedObject>> Claim(const std::string& job, const std::string& owner,
                                           int max, int64_t now_ms,
                                           int64_t lease_until_ms) override {
    return Meter(kClaim, [&] { return inner_.Claim(job, owner, max, now_ms, lease_until_ms); });
  }
  Status RenewLeases(const std::string& job, const std::string& owner,
                     int64_t lease_until_ms) override {
    return Meter(kRenewLeases, [&] { return inner_.RenewLeases(job, owner, lease_until_ms); });
  }
  Result<int64_t> ReleaseOwner(const std::string& job, const std::string& owner) override {
    return Meter(kReleaseOwner, [&] { return inner_.ReleaseOwner(job, owner); });
  }
  Result<std::vector<bool>> Finish(const std::string& job, const std::string& owner,
                                   const std::vector<FinishedObject>& done) override {
    return Meter(kFinish, [&] { return inner_.Finish(job, owner, done); });
  }
  Result<bool> Retry(const std::string& job, const std::string& owner, const std::string& key,
                     const std::string& error, int64_t not_before_ms) override {
    return Meter(kRetry, [&] { return inner_.Retry(job, owner, key, error, not_before_ms); });
  }
  Result<bool> Release(const std::string& job, const std::string& owner, const std::string& key,
                       int64_t not_before_ms) override {
    return Meter(kRelease, [&] { return inner_.Release(job, owner, key, not_before_ms); });
  }
  Result<bool> DeadLetterObject(const std::string& job, const std::string& owner,
                                const DeadLetter& entry) override {
    return Meter(kDeadLetterObject, [&] { return inner_.DeadLetterObject(job, owner, entry); });
  }
  Result<std::vector<DeadLetter>> ListDeadLetters(const std::string& job) override {
    return Meter(kListDeadLetters, [&] { return inner_.ListDeadLetters(job); });
  }
  Result<int64_t> RequeueDeadLetters(const std::string& job) override {
    return Meter(kRequeueDeadLetters, [&] { return inner_.RequeueDeadLetters(job); });
  }
  Status SaveUpload(const std::string& job, const std::string& key,
                    const UploadRecord& upload) override {
    return Meter(kSaveUpload, [&] { return inner_.SaveUpload(job, key, upload); });
  }
  Status AddPart(const std::string& job, const std::string& key,
                 const UploadRecord::Part& part) override {
    return Meter(kAddPart, [&] { return inner_.AddPart(job, key, part); });
  }
  Result<std::optional<UploadRecord>> GetUpload(const std::string& job,
                                                const std::string& key) override {
    return Meter(kGetUpload, [&] { return inner_.GetUpload(job, key); });
  }
  Status DeleteUpload(const std::string& job, const std::string& key) override {
    return Meter(kDeleteUpload, [&] { return inner_.DeleteUpload(job, key); });
  }
  Result<std::vector<std::pair<std::string, UploadRecord>>> ListUploads(
      const std::string& job) override {
    return Meter(kListUploads, [&] { return inner_.ListUploads(job); });
  }
  Result<int64_t> CountRows(const std::string& job) override {
    return Meter(kCountRows, [&] { return inner_.CountRows(job); });
  }
  Status SetJobLive(const std::string& job, const JobLive& live) override {
    return Meter(kSetJobLive, [&] { return inner_.SetJobLive(job, live); });
  }
  Result<std::map<std::string, JobLive>> ListJobLive() override {
    return Meter(kListJobLive, [&] { return inner_.ListJobLive(); });
  }

 private:
  template <class F>
  auto Meter(Op op, F f) -> decltype(f()) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = f();
    const auto d = std::chrono::steady_clock::now() - t0;
    nanos_ += std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    latency_[op].Observe(d);
    ++calls_;
    return r;
  }

  StateStore& inner_;
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> nanos_{0};
  std::array<LatencyHistogram, kOps> latency_;
};

}  // namespace ferry::state
