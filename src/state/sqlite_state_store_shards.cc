// The SQLite state store: listing shards and list pages (state_store.h
// "Listing"). Table layout: sqlite_state_store.cc.

#include "state/sqlite_state_store.h"

#include <algorithm>

namespace ferry::state {

using sqlite::Stmt;
using sqlite::Txn;

namespace {

// The shards columns in ShardFromRow's order, spliced into the statements
// at compile time.
#define FERRY_SHARD_COLUMNS \
  "shard, prefix, delimiter, seq, token, done, ranged, lower, upper, cursor, relist"

ShardRecord ShardFromRow(const Stmt& st) {
  ShardRecord s;
  s.shard = static_cast<int>(st.Int(0));
  s.prefix = st.Text(1);
  s.delimiter = st.Text(2);
  s.seq = st.Int(3);
  s.token = st.Text(4);
  s.done = st.Int(5) != 0;
  s.ranged = st.Int(6) != 0;
  s.lower = st.Text(7);
  s.upper = st.Text(8);
  s.cursor = st.Text(9);
  s.relist = st.Int(10) != 0;
  return s;
}

}  // namespace

Status SqliteStateStore::InsertShardLocked(const std::string& job, const ShardRecord& s) {
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("INSERT INTO shards(job, " FERRY_SHARD_COLUMNS
                            ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  return st.Bind(job, s.shard, s.prefix, s.delimiter, s.seq, s.token, s.done ? 1 : 0,
                 s.ranged ? 1 : 0, s.lower, s.upper, s.cursor, s.relist ? 1 : 0)
      .Run();
}

Result<std::vector<ShardRecord>> SqliteStateStore::ReadShardsLocked(const std::string& job) {
  std::vector<ShardRecord> shards;
  FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("SELECT " FERRY_SHARD_COLUMNS
                                               " FROM shards WHERE job = ? ORDER BY shard"));
  st.Bind(job);
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    shards.push_back(ShardFromRow(st));
  }
  if (shards.empty()) FERRY_RETURN_IF_ERROR(ReadJobLocked(job).status());
  return shards;
}

Result<std::vector<ShardRecord>> SqliteStateStore::GetShards(const std::string& job) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kRead));
  return ReadShardsLocked(job);
}

// Inserts a page's keys as pending rows (those already present are not
// counted again) and returns how many rows it added.
Result<int64_t> SqliteStateStore::EnqueueLocked(const std::string& job,
                                                const std::vector<ListedObject>& objects,
                                                bool relist) {
  int64_t enqueued = 0;
  // Keys a gateway marked (sqlite_state_store_gateway.cc): most jobs have
  // none, so one look spares a lookup per listed key.
  FERRY_ASSIGN_OR_RETURN(const bool has_marks, HasMarksLocked(job));
  ListedMarkCounts marked;
  {
    // A relisting shard's keys count as claimed once: their transfer asks
    // the destination first (policy.h NeedDestinationCheck).
    // and a key it finds in the dead-letter queue stays there.
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare(relist ? "INSERT INTO objects(job, key, size, etag, "
                                       "last_modified_ms, owner, lease_until_ms, not_before_ms, "
                                       "attempts, claims, last_error) "
                                       "SELECT ?1, ?2, ?3, ?4, ?5, '', 0, 0, 0, 1, '' WHERE NOT "
                                       "EXISTS(SELECT 1 FROM dlq WHERE job = ?1 AND key = ?2) "
                                       "ON CONFLICT(job, key) DO NOTHING"
                                     : "INSERT INTO objects(job, key, size, etag, "
                                       "last_modified_ms, owner, lease_until_ms, not_before_ms, "
                                       "attempts, claims, last_error) "
                                       "VALUES(?, ?, ?, ?, ?, '', 0, 0, 0, 0, '') "
                                       "ON CONFLICT(job, key) DO NOTHING"));
    for (const ListedObject& o : objects) {
      if (has_marks) {
        FERRY_ASSIGN_OR_RETURN(bool handled, ApplyMarkLocked(job, o, marked));
        if (handled) continue;
      }
      FERRY_RETURN_IF_ERROR(
          st.Bind(job, o.key, static_cast<int64_t>(o.size), o.etag, o.last_modified_ms).Run());
      enqueued += st.Changes();
    }
  }
  enqueued += marked.enqueued;
  if (marked.listed > 0) {
    FERRY_RETURN_IF_ERROR(AddCountersLocked(job, marked.listed, marked.transferred,
                                            marked.skipped, 0, marked.bytes, 0));
  }
  return enqueued;
}

Result<ListPageResult> SqliteStateStore::CommitListPage(const std::string& job,
                                                        const ListPageCommit& page) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  ListPageResult result;
  bool relist = false;
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("SELECT seq, upper, relist FROM shards WHERE job = ? AND shard = ?"));
    FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(job, page.shard).Step());
    if (!row) {
      FERRY_RETURN_IF_ERROR(ReadJobLocked(job).status());
      return result;  // gone: replaced by a fallback
    }
    // A replay, a gap, or a split since the page was listed: nothing changes.
    if (page.seq != st.Int(0) + 1 || page.upper != st.Text(1)) return result;
    relist = st.Int(2) != 0;
  }
  FERRY_ASSIGN_OR_RETURN(result.enqueued, EnqueueLocked(job, page.objects, relist));
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("UPDATE shards SET seq = ?, token = ?, done = ?, "
                              "cursor = CASE WHEN ? = '' THEN cursor ELSE ? END "
                              "WHERE job = ? AND shard = ?"));
    FERRY_RETURN_IF_ERROR(st.Bind(page.seq, page.done ? "" : page.next_token, page.done ? 1 : 0,
                                  page.cursor, page.cursor, job, page.shard)
                              .Run());
  }
  if (!page.new_shards.empty()) {
    FERRY_ASSIGN_OR_RETURN(
        Stmt max, db_->Prepare("SELECT COALESCE(MAX(shard), -1) + 1 FROM shards WHERE job = ?"));
    FERRY_ASSIGN_OR_RETURN(bool row, max.Bind(job).Step());
    int shard = row ? static_cast<int>(max.Int(0)) : 0;
    for (const std::string& prefix : page.new_shards) {
      ShardRecord s;
      s.shard = shard++;
      s.prefix = prefix;
      s.relist = relist;
      FERRY_RETURN_IF_ERROR(InsertShardLocked(job, s));
    }
  }
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("UPDATE jobs SET listed = listed + ?, pending = pending + ?, "
                              "skipped = skipped + ?, "
                              "listing_done = CASE WHEN EXISTS(SELECT 1 FROM shards "
                              "WHERE job = ? AND done = 0) THEN 0 ELSE 1 END WHERE id = ?"));
    FERRY_RETURN_IF_ERROR(st.Bind(result.enqueued + page.unchanged, result.enqueued,
                                  page.unchanged, job, job)
                              .Run());
  }
  FERRY_RETURN_IF_ERROR(txn.Commit());
  result.applied = true;
  return result;
}

Result<std::vector<ShardRecord>> SqliteStateStore::SplitShard(
    const std::string& job, int shard, const std::string& expect_upper,
    const std::vector<std::string>& bounds) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  FERRY_ASSIGN_OR_RETURN(std::vector<ShardRecord> all, ReadShardsLocked(job));
  const ShardRecord* victim = nullptr;
  int next_id = 0;
  for (const ShardRecord& s : all) {
    if (s.shard == shard) victim = &s;
    next_id = std::max(next_id, s.shard + 1);
  }
  if (victim == nullptr) {
    return Status::NotFound("job " + job + " has no shard " + std::to_string(shard));
  }
  FERRY_RETURN_IF_ERROR(CheckSplit(*victim, expect_upper, bounds));
  std::vector<ShardRecord> made = SplitOff(*victim, bounds, next_id);
  FERRY_ASSIGN_OR_RETURN(Stmt st,
                         db_->Prepare("UPDATE shards SET upper = ? WHERE job = ? AND shard = ?"));
  FERRY_RETURN_IF_ERROR(st.Bind(bounds.front(), job, shard).Run());
  for (const ShardRecord& s : made) FERRY_RETURN_IF_ERROR(InsertShardLocked(job, s));
  FERRY_RETURN_IF_ERROR(txn.Commit());
  return made;
}

Result<ShardRecord> SqliteStateStore::FallBackToFlatListing(const std::string& job,
                                                            const std::string& prefix,
                                                            const std::string& lower,
                                                            const std::string& upper) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  FERRY_ASSIGN_OR_RETURN(JobRecord j, ReadJobLocked(job));
  FERRY_RETURN_IF_ERROR(CheckFallBack(j));
  FERRY_ASSIGN_OR_RETURN(std::vector<ShardRecord> all, ReadShardsLocked(job));
  ShardRecord flat;
  flat.prefix = prefix;
  flat.lower = lower;
  flat.upper = upper;
  flat.relist = j.counters.listed > 0;
  for (const ShardRecord& s : all) flat.shard = std::max(flat.shard, s.shard + 1);
  FERRY_ASSIGN_OR_RETURN(Stmt del, db_->Prepare("DELETE FROM shards WHERE job = ?"));
  FERRY_RETURN_IF_ERROR(del.Bind(job).Run());
  FERRY_RETURN_IF_ERROR(InsertShardLocked(job, flat));
  // What finished before is listed again: the counters start over from
  // what is left (state_store.h).
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare(flat.relist ? "UPDATE jobs SET listing_done = 0, listed = failed, "
                                          "transferred = 0, skipped = 0, bytes = 0 WHERE id = ?"
                                        : "UPDATE jobs SET listing_done = 0 WHERE id = ?"));
  FERRY_RETURN_IF_ERROR(st.Bind(job).Run());
  if (flat.relist) {
    // Marked keys are counted again when the relisting meets them.
    FERRY_ASSIGN_OR_RETURN(Stmt marks,
                           db_->Prepare("UPDATE gateway_keys SET counted = 0 WHERE job = ?"));
    FERRY_RETURN_IF_ERROR(marks.Bind(job).Run());
  }
  FERRY_RETURN_IF_ERROR(txn.Commit());
  return flat;
}

Result<int64_t> SqliteStateStore::RequeueKeys(const std::string& job,
                                              const std::vector<ListedObject>& objects) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  FERRY_RETURN_IF_ERROR(ReadJobLocked(job).status());
  int64_t added = 0, moved = 0;
  {
    FERRY_ASSIGN_OR_RETURN(Stmt undlq, db_->Prepare("DELETE FROM dlq WHERE job = ? AND key = ?"));
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("INSERT INTO objects(job, key, size, etag, last_modified_ms, owner, "
                              "lease_until_ms, not_before_ms, attempts, claims, last_error, force) "
                              "VALUES(?, ?, ?, ?, ?, '', 0, 0, 0, 0, '', 1) "
                              "ON CONFLICT(job, key) DO NOTHING"));
    FERRY_ASSIGN_OR_RETURN(Stmt mark,
                           db_->Prepare("UPDATE objects SET force = 1 WHERE job = ? AND key = ?"));
    // A key written or deleted through a gateway differs from the source
    // on purpose: it is never requeued over.
    FERRY_ASSIGN_OR_RETURN(Stmt gateway,
                           db_->Prepare("SELECT 1 FROM gateway_keys WHERE job = ? AND key = ? AND "
                                        "mark IN ('written', 'deleted')"));
    for (const ListedObject& o : objects) {
      gateway.Bind(job, o.key);
      FERRY_ASSIGN_OR_RETURN(bool users, gateway.Step());
      FERRY_RETURN_IF_ERROR(gateway.Run());
      if (users) continue;
      FERRY_RETURN_IF_ERROR(undlq.Bind(job, o.key).Run());
      const bool was_dead = undlq.Changes() > 0;
      FERRY_RETURN_IF_ERROR(
          st.Bind(job, o.key, static_cast<int64_t>(o.size), o.etag, o.last_modified_ms).Run());
      if (st.Changes() > 0) {
        ++(was_dead ? moved : added);
      } else {
        FERRY_RETURN_IF_ERROR(mark.Bind(job, o.key).Run());
      }
    }
  }
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("UPDATE jobs SET listed = listed + ?, pending = pending + ?, "
                            "failed = failed - ? WHERE id = ?"));
  FERRY_RETURN_IF_ERROR(st.Bind(added, added + moved, moved, job).Run());
  FERRY_RETURN_IF_ERROR(txn.Commit());
  return added + moved;
}

}  // namespace ferry::state
