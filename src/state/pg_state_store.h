#pragma once
// The PostgreSQL StateStore (internal to state/; callers use
// OpenPgStateStore or OpenStateStore in state_store.h). The tables are
// pg_schema's; jobs and listing live in pg_state_store.cc, work on object
// rows (claims, finishes, the dead-letter queue, multipart progress) in
// pg_state_store_work.cc, a gateway's key marks in pg_state_store_gateway.cc.
//
// Concurrency comes from PostgreSQL, not from this process: any number of
// stores, in any number of processes and machines, share one database.
//  - Claim takes rows with SELECT ... FOR UPDATE SKIP LOCKED, so claimers
//    never wait for each other and never take the same row.
//  - Every other row change re-checks ownership in its WHERE clause under
//    the row lock (READ COMMITTED re-evaluates it on the newest version), so
//    a lease taken over in the meantime is seen.
//  - The hot calls (Claim, Finish, Retry, Release, lease renewals) are one
//    statement each, whatever the batch size: keys travel as arrays.
//  - Counters change in the statement or transaction that changes the rows.
//
// Connections: a small pool, one connection per concurrent call. A
// connection that broke (the server restarted, the network dropped) is
// found before use (Conn::CheckAlive) and reconnected; a call that fails
// because the server is unreachable returns a retryable kNetwork error, and
// the next call tries again. Every call is safe to repeat after an error,
// even one whose commit may or may not have happened: ownership and list
// sequence checks make a repeat change nothing.

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "state/key_marks.h"
#include "state/pg_db.h"
#include "state/state_store.h"

namespace ferry::state {

// Listed objects as the column arrays the statements bind.
struct ListedColumns {
  explicit ListedColumns(const std::vector<ListedObject>& objects);
  // Drops the objects whose key `drop` is true for, keeping the order.
  void Drop(const std::function<bool(const std::string&)>& drop);

  std::vector<std::string> keys, etags;
  std::vector<int64_t> sizes, times;
};

class PgStateStore : public StateStore {
 public:
  // Connections open at once, at most: a call beyond them waits for one
  // (a runner's hundreds of worker threads must not open hundreds of
  // sessions). They stay open between calls.
  static constexpr size_t kMaxOpen = 12;

  // The two hot statements (pg_state_store_work.cc), for the test that pins
  // their plans to the indexes: Claim (binds job, now_ms, max, owner,
  // lease_until_ms) reads objects_unowned and objects_by_lease; Finish
  // (binds job, owner, keys[], bytes[], skipped[]) finds rows by primary key.
  static const char* const kClaimSql;
  static const char* const kFinishSql;

  // Connects, and creates or migrates the schema (pg_schema.h).
  static Result<std::unique_ptr<StateStore>> Open(const std::string& conninfo);

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
  Result<int64_t> CountRows(const std::string& job) override;
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
  Status SetJobLive(const std::string& job, const JobLive& live) override;
  Result<std::map<std::string, JobLive>> ListJobLive() override;

 private:
  PgStateStore(std::string conninfo, std::unique_ptr<pg::Conn> first);

  // Statements shared by several calls, run on the caller's connection.
  static Result<JobRecord> ReadJob(pg::Conn& c, const std::string& id);
  static Status InsertShards(pg::Conn& c, const std::string& job,
                             const std::vector<ShardRecord>& shards);
  // The job's shards in shard order, locked FOR UPDATE when `lock`.
  static Result<std::vector<ShardRecord>> ReadShards(pg::Conn& c, const std::string& job,
                                                     bool lock);

  // Locks the job's shard rows whose prefix `key` starts with (every one
  // without `key`), so no list page of them commits, and no shard is added
  // over the key, before the caller's transaction ends: FOR SHARE for a
  // gateway's change of one key, FOR UPDATE (`exclusive`: no gateway
  // changes a key meanwhile either) for a requeue of many.
  static Status LockShards(pg::Conn& c, const std::string& job, const std::string* key,
                           bool exclusive);
  // The gateway's marks (pg_state_store_gateway.cc), in the caller's
  // transaction.
  static Result<KeyClaim> ClaimKeyIn(pg::Conn& c, const std::string& job, const std::string& key,
                                     const std::string& owner, int64_t now_ms,
                                     int64_t lease_until_ms, bool insert, bool lock);
  static Result<ListedMarkCounts> ApplyListedMarks(pg::Conn& c, const std::string& job,
                                                   ListedColumns& page);

  // A pooled connection for one call: checked out, and given back when
  // still usable (healthy, no transaction open).
  class Lease;
  Result<Lease> Take();

  // Runs `f(conn)` on a pooled connection: one statement, or several that
  // need no transaction.
  template <class F>
  auto Run(F f) -> decltype(f(std::declval<pg::Conn&>()));
  // Runs `f(conn)` inside BEGIN ... COMMIT; an error (from `f` or the
  // commit) rolls back.
  template <class F>
  auto RunTxn(F f, const char* begin = "BEGIN") -> decltype(f(std::declval<pg::Conn&>()));
  // For reads of several statements that must agree: one snapshot.
  static constexpr const char* kSnapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

  const std::string conninfo_;
  std::mutex mu_;
  std::condition_variable freed_;                // a connection was given back
  std::vector<std::unique_ptr<pg::Conn>> idle_;  // guarded by mu_
  size_t in_use_ = 0;  // slots checked out (in_use_ + idle_ <= kMaxOpen); guarded by mu_
};

// One of the kMaxOpen slots, and the connection in it once there is one.
class PgStateStore::Lease {
 public:
  explicit Lease(PgStateStore* store) : store_(store) {}
  Lease(Lease&& other) noexcept : store_(other.store_), conn_(std::move(other.conn_)) {
    other.store_ = nullptr;
  }
  Lease& operator=(Lease&&) = delete;
  ~Lease();  // gives the slot back, and the connection to the idle list when usable
  void set(std::unique_ptr<pg::Conn> conn) { conn_ = std::move(conn); }
  pg::Conn& conn() { return *conn_; }

 private:
  PgStateStore* store_;  // null once moved from
  std::unique_ptr<pg::Conn> conn_;
};

template <class F>
auto PgStateStore::Run(F f) -> decltype(f(std::declval<pg::Conn&>())) {
  FERRY_ASSIGN_OR_RETURN(Lease lease, Take());
  return f(lease.conn());
}

template <class F>
auto PgStateStore::RunTxn(F f, const char* begin) -> decltype(f(std::declval<pg::Conn&>())) {
  FERRY_ASSIGN_OR_RETURN(Lease lease, Take());
  pg::Conn& c = lease.conn();
  FERRY_RETURN_IF_ERROR(c.ExecScript(begin));
  auto r = f(c);
  if (!r.ok()) {
    (void)c.ExecScript("ROLLBACK");  // when it fails, the connection is not reused
    return r;
  }
  FERRY_RETURN_IF_ERROR(c.ExecScript("COMMIT"));
  return r;
}

}  // namespace ferry::state
