#pragma once
// The SQLite StateStore (internal to state/; callers use
// OpenSqliteStateStore in state_store.h). The table layout and the open
// protocol are described at the top of sqlite_state_store.cc; jobs and
// listing live there, work on object rows (claims, finishes, the dead-letter
// queue, multipart progress) in sqlite_state_store_work.cc.
//
// One connection per store, serialised by mu_. Several stores (threads or
// processes) may share one file: write transactions take SQLite's write
// lock at BEGIN (BEGIN IMMEDIATE) and wait up to kBusyTimeoutMs for it.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "state/key_marks.h"
#include "state/sqlite_db.h"
#include "state/state_store.h"

namespace ferry::state {

class SqliteStateStore : public StateStore {
 public:
  static constexpr int kBusyTimeoutMs = 10'000;

  // Claim's two queries (bind: job, now_ms[, now_ms], max). Both must run on
  // the objects_by_lease index: the first reads unowned rows in key order
  // off it, the second a range of expired leases. Any other plan scans the
  // job's rows on every claim (a test pins the plans).
  static constexpr const char* kClaimUnownedSql =
      "SELECT key, size, etag, last_modified_ms, attempts, claims, last_error, force FROM objects "
      "WHERE job = ? AND lease_until_ms = 0 AND not_before_ms <= ? ORDER BY key LIMIT ?";
  static constexpr const char* kClaimExpiredSql =
      "SELECT key, size, etag, last_modified_ms, attempts, claims, last_error, force FROM objects "
      "WHERE job = ? AND lease_until_ms > 0 AND lease_until_ms <= ? AND not_before_ms <= ? "
      "ORDER BY key LIMIT ?";

  explicit SqliteStateStore(std::unique_ptr<sqlite::Db> db, std::shared_ptr<void> open_mark = {})
      : db_(std::move(db)), open_mark_(std::move(open_mark)) {}

  Status CreateJob(const JobRecord& job, const std::vector<ShardRecord>& shards) override;
  Result<JobRecord> GetJob(const std::string& id) override;
  Result<std::vector<JobRecord>> ListJobs() override;
  Status ArchiveJob(const std::string& id, int64_t now_ms) override;
  Result<std::vector<JobRecord>> ListArchivedJobs() override;
  Status RestoreJob(const std::string& id) override;
  Status AcquireJob(const std::string& id, const std::string& runner, int64_t now_ms,
                    int64_t until_ms, bool force) override;
  Status RenewJob(const std::string& id, const std::string& runner, int64_t until_ms) override;
  Status SetJobState(const std::string& id, JobState state, int64_t now_ms, double add_run_seconds,
                     bool release) override;

  Result<std::vector<ShardRecord>> GetShards(const std::string& job) override;
  Result<ListPageResult> CommitListPage(const std::string& job,
                                        const ListPageCommit& page) override;
  Result<std::vector<ShardRecord>> SplitShard(const std::string& job, int shard,
                                              const std::string& expect_upper,
                                              const std::vector<std::string>& bounds) override;
  Result<ShardRecord> FallBackToFlatListing(const std::string& job, const std::string& prefix,
                                            const std::string& lower,
                                            const std::string& upper) override;
  Result<int64_t> RequeueKeys(const std::string& job,
                              const std::vector<ListedObject>& objects) override;

  Result<std::vector<ClaimedObject>> Claim(const std::string& job, const std::string& owner,
                                           int max, int64_t now_ms,
                                           int64_t lease_until_ms) override;
  Status RenewLeases(const std::string& job, const std::string& owner,
                     int64_t lease_until_ms) override;
  Result<int64_t> ReleaseOwner(const std::string& job, const std::string& owner) override;
  Result<std::vector<bool>> Finish(const std::string& job, const std::string& owner,
                                   const std::vector<FinishedObject>& done) override;
  Result<bool> Retry(const std::string& job, const std::string& owner, const std::string& key,
                     const std::string& error, int64_t not_before_ms) override;
  Result<bool> Release(const std::string& job, const std::string& owner, const std::string& key,
                       int64_t not_before_ms) override;
  Result<bool> DeadLetterObject(const std::string& job, const std::string& owner,
                                const DeadLetter& entry) override;
  Result<std::vector<DeadLetter>> ListDeadLetters(const std::string& job) override;
  Result<int64_t> RequeueDeadLetters(const std::string& job) override;

  Status SaveUpload(const std::string& job, const std::string& key,
                    const UploadRecord& upload) override;
  Status AddPart(const std::string& job, const std::string& key,
                 const UploadRecord::Part& part) override;
  Result<std::optional<UploadRecord>> GetUpload(const std::string& job,
                                                const std::string& key) override;
  Status DeleteUpload(const std::string& job, const std::string& key) override;
  Result<std::vector<std::pair<std::string, UploadRecord>>> ListUploads(
      const std::string& job) override;
  Result<KeyClaim> ClaimKey(const std::string& job, const std::string& key,
                            const std::string& owner, int64_t now_ms, int64_t lease_until_ms,
                            bool insert) override;
  Result<bool> MarkKey(const std::string& job, const std::string& key, const std::string& owner,
                       KeyMark mark, uint64_t size, const std::string& etag,
                       int64_t now_ms) override;
  Status ReleaseKey(const std::string& job, const std::string& key,
                    const std::string& owner) override;
  Result<std::map<std::string, KeyMark>> KeyMarks(const std::string& job,
                                                  const std::vector<std::string>& keys) override;
  Status RecordKey(const std::string& job, const std::string& key, KeyMark mark,
                   int64_t now_ms) override;
  Result<int64_t> CountRows(const std::string& job) override;
  Status SetJobLive(const std::string& job, const JobLive& live) override;
  Result<std::map<std::string, JobLive>> ListJobLive() override;

 private:
  // Helpers that run inside the caller's transaction, under mu_.
  Result<JobRecord> ReadJobLocked(const std::string& id);
  Status InsertShardLocked(const std::string& job, const ShardRecord& s);
  Result<std::vector<ShardRecord>> ReadShardsLocked(const std::string& job);
  // ClaimKey's decision (`write`: and its changes) inside the caller's
  // transaction.
  Result<KeyClaim> ClaimKeyLocked(const std::string& job, const std::string& key,
                                  const std::string& owner, int64_t now_ms, int64_t lease_until_ms,
                                  bool insert, bool write);
  Result<int64_t> EnqueueLocked(const std::string& job, const std::vector<ListedObject>& objects,
                                bool relist);
  Result<bool> HasMarksLocked(const std::string& job);
  // A listed key that has a gateway mark (KeyMark): enqueued leased to the
  // mark's owner (kClaimed), or counted once and not enqueued (a final
  // mark). Returns whether it was handled; adds to the counts.
  Result<bool> ApplyMarkLocked(const std::string& job, const ListedObject& o,
                               ListedMarkCounts& counts);
  Status DeleteUploadRowsLocked(const std::string& job, const std::string& key);
  // Adds the deltas to the job's counter columns.
  Status AddCountersLocked(const std::string& job, int64_t listed, int64_t transferred,
                           int64_t skipped, int64_t failed, int64_t bytes, int64_t pending);

  std::mutex mu_;
  std::unique_ptr<sqlite::Db> db_;  // guarded by mu_
  // This process has the file open while it lives (OpenSqliteStateStore).
  std::shared_ptr<void> open_mark_;
};

}  // namespace ferry::state
