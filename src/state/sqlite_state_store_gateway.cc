// The SQLite store's gateway marks (state_store.h KeyMark): the table
// gateway_keys (schema version 5, sqlite_state_store.cc), what a listing
// does with a marked key, and ClaimKey / MarkKey / ReleaseKey / KeyMarks.

#include <optional>

#include "state/key_marks.h"
#include "state/sqlite_state_store.h"

namespace ferry::state {
namespace {

using sqlite::Stmt;
using sqlite::Txn;

Result<std::optional<StoredMark>> ReadMark(sqlite::Db& db, const std::string& job,
                                        const std::string& key) {
  FERRY_ASSIGN_OR_RETURN(Stmt st,
                         db.Prepare("SELECT mark, owner, lease_until_ms, size, etag, counted "
                                    "FROM gateway_keys WHERE job = ? AND key = ?"));
  FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(job, key).Step());
  if (!row) return std::optional<StoredMark>();
  auto mark = KeyMarkFromString(st.Text(0));
  if (!mark) {
    return Status::Corruption("state: key " + key + " of job " + job + " has an unknown mark '" +
                              st.Text(0) + "'")
        .set_retryable(false);
  }
  StoredMark m;
  m.mark = *mark;
  m.owner = st.Text(1);
  m.lease_until_ms = st.Int(2);
  m.size = static_cast<uint64_t>(std::max<int64_t>(0, st.Int(3)));
  m.etag = st.Text(4);
  m.counted = st.Int(5) != 0;
  return std::optional<StoredMark>(std::move(m));
}

Result<std::optional<KeyRow>> ReadObject(sqlite::Db& db, const std::string& job,
                                            const std::string& key) {
  FERRY_ASSIGN_OR_RETURN(Stmt st,
                         db.Prepare("SELECT size, etag, last_modified_ms, owner, lease_until_ms "
                                    "FROM objects WHERE job = ? AND key = ?"));
  FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(job, key).Step());
  if (!row) return std::optional<KeyRow>();
  KeyRow r;
  r.object.key = key;
  r.object.size = static_cast<uint64_t>(std::max<int64_t>(0, st.Int(0)));
  r.object.etag = st.Text(1);
  r.object.last_modified_ms = st.Int(2);
  r.owner = st.Text(3);
  r.lease_until_ms = st.Int(4);
  return std::optional<KeyRow>(std::move(r));
}

Status UpsertMark(sqlite::Db& db, const std::string& job, const std::string& key, KeyMark mark,
                  const std::string& owner, int64_t lease_until_ms, uint64_t size,
                  const std::string& etag, bool counted, int64_t now_ms) {
  FERRY_ASSIGN_OR_RETURN(
      Stmt st,
      db.Prepare("INSERT INTO gateway_keys(job, key, mark, owner, lease_until_ms, size, etag, "
                 "counted, at_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?) "
                 "ON CONFLICT(job, key) DO UPDATE SET mark = excluded.mark, "
                 "owner = excluded.owner, lease_until_ms = excluded.lease_until_ms, "
                 "size = excluded.size, etag = excluded.etag, counted = excluded.counted, "
                 "at_ms = excluded.at_ms"));
  return st
      .Bind(job, key, ToString(mark), owner, lease_until_ms, static_cast<int64_t>(size), etag,
            counted ? 1 : 0, now_ms)
      .Run();
}

}  // namespace

Result<bool> SqliteStateStore::HasMarksLocked(const std::string& job) {
  FERRY_ASSIGN_OR_RETURN(Stmt st,
                         db_->Prepare("SELECT EXISTS(SELECT 1 FROM gateway_keys WHERE job = ?)"));
  FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(job).Step());
  const bool has = row && st.Int(0) != 0;
  if (row) FERRY_RETURN_IF_ERROR(st.Run());
  return has;
}

Result<bool> SqliteStateStore::ApplyMarkLocked(const std::string& job, const ListedObject& o,
                                               ListedMarkCounts& counts) {
  FERRY_ASSIGN_OR_RETURN(auto mark, ReadMark(*db_, job, o.key));
  if (!mark) return false;
  if (mark->mark == KeyMark::kClaimed) {
    // Enqueued under the gateway's lease: no worker takes it before the
    // lease ends, and one does when it ends without a result.
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("INSERT INTO objects(job, key, size, etag, last_modified_ms, "
                              "owner, lease_until_ms, not_before_ms, attempts, claims, "
                              "last_error) VALUES(?, ?, ?, ?, ?, ?, ?, 0, 0, 1, '') "
                              "ON CONFLICT(job, key) DO NOTHING"));
    FERRY_RETURN_IF_ERROR(st.Bind(job, o.key, static_cast<int64_t>(o.size), o.etag,
                                  o.last_modified_ms, mark->owner,
                                  std::max<int64_t>(1, mark->lease_until_ms))
                              .Run());
    counts.enqueued += st.Changes();
    return true;
  }
  if (mark->counted) return true;  // in the counters already
  counts.CountFinal(*mark);
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("UPDATE gateway_keys SET counted = 1 WHERE job = ? AND key = ?"));
  FERRY_RETURN_IF_ERROR(st.Bind(job, o.key).Run());
  return true;
}

// Most answers change nothing (the key is finished, marked, or busy), so
// they are read in a read transaction, which in WAL mode never waits for
// the job's writers; only a claim takes the write lock, and decides again
// under it.
Result<KeyClaim> SqliteStateStore::ClaimKey(const std::string& job, const std::string& key,
                                            const std::string& owner, int64_t now_ms,
                                            int64_t lease_until_ms, bool insert) {
  FERRY_RETURN_IF_ERROR(CheckClaimArguments(owner, now_ms, lease_until_ms));
  std::lock_guard lock(mu_);
  {
    Txn txn(*db_);
    FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kRead));
    FERRY_ASSIGN_OR_RETURN(KeyClaim peek,
                           ClaimKeyLocked(job, key, owner, now_ms, lease_until_ms, insert, false));
    if (peek.kind != KeyClaim::Kind::kClaimed) return peek;
  }
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  FERRY_ASSIGN_OR_RETURN(KeyClaim claim,
                         ClaimKeyLocked(job, key, owner, now_ms, lease_until_ms, insert, true));
  if (claim.kind == KeyClaim::Kind::kClaimed) FERRY_RETURN_IF_ERROR(txn.Commit());
  return claim;
}

Result<KeyClaim> SqliteStateStore::ClaimKeyLocked(const std::string& job, const std::string& key,
                                                  const std::string& owner, int64_t now_ms,
                                                  int64_t lease_until_ms, bool insert, bool write) {
  FERRY_ASSIGN_OR_RETURN(JobRecord rec, ReadJobLocked(job));
  FERRY_ASSIGN_OR_RETURN(auto row, ReadObject(*db_, job, key));
  FERRY_ASSIGN_OR_RETURN(auto mark, ReadMark(*db_, job, key));
  KeyClaim claim = DecideKeyClaim(row, mark, owner, now_ms, insert);
  claim.listing_done = rec.listing_done;
  claim.state = rec.state;
  if (!rec.listing_done) {
    FERRY_ASSIGN_OR_RETURN(std::vector<ShardRecord> shards, ReadShardsLocked(job));
    claim.unlisted = KeyUnlisted(shards, key);
  }
  if (claim.kind != KeyClaim::Kind::kClaimed || !write) return claim;
  if (claim.from_row) {
    FERRY_ASSIGN_OR_RETURN(Stmt st,
                           db_->Prepare("UPDATE objects SET owner = ?, lease_until_ms = ?, "
                                        "claims = claims + 1 WHERE job = ? AND key = ?"));
    FERRY_RETURN_IF_ERROR(st.Bind(owner, lease_until_ms, job, key).Run());
    if (!mark || mark->mark != KeyMark::kClaimed) return claim;
  }
  FERRY_RETURN_IF_ERROR(UpsertMark(*db_, job, key, KeyMark::kClaimed, owner, lease_until_ms, 0, "",
                                   mark && mark->counted, now_ms));
  return claim;
}

Result<bool> SqliteStateStore::MarkKey(const std::string& job, const std::string& key,
                                       const std::string& owner, KeyMark mark, uint64_t size,
                                       const std::string& etag, int64_t now_ms) {
  if (mark == KeyMark::kClaimed) {
    return Status::InvalidArgument("MarkKey takes a final mark, not claimed");
  }
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  FERRY_RETURN_IF_ERROR(ReadJobLocked(job).status());
  FERRY_ASSIGN_OR_RETURN(auto row, ReadObject(*db_, job, key));
  FERRY_ASSIGN_OR_RETURN(auto old, ReadMark(*db_, job, key));
  if (!MayMarkKey(row, old, owner, mark, now_ms)) return false;
  bool counted = old && old->counted;
  if (row) {
    FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("DELETE FROM objects WHERE job = ? AND key = ?"));
    FERRY_RETURN_IF_ERROR(st.Bind(job, key).Run());
    FERRY_RETURN_IF_ERROR(DeleteUploadRowsLocked(job, key));
    const bool copied = mark == KeyMark::kCopied;
    FERRY_RETURN_IF_ERROR(AddCountersLocked(job, 0, copied ? 1 : 0, copied ? 0 : 1, 0,
                                            copied ? static_cast<int64_t>(size) : 0, -1));
    counted = true;
  }
  FERRY_RETURN_IF_ERROR(UpsertMark(*db_, job, key, mark, "", 0, size, etag, counted, now_ms));
  FERRY_RETURN_IF_ERROR(txn.Commit());
  return true;
}

Status SqliteStateStore::ReleaseKey(const std::string& job, const std::string& key,
                                    const std::string& owner) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  {
    FERRY_ASSIGN_OR_RETURN(Stmt st,
                           db_->Prepare("UPDATE objects SET owner = '', lease_until_ms = 0 "
                                        "WHERE job = ? AND key = ? AND owner = ?"));
    FERRY_RETURN_IF_ERROR(st.Bind(job, key, owner).Run());
  }
  {
    FERRY_ASSIGN_OR_RETURN(Stmt st,
                           db_->Prepare("DELETE FROM gateway_keys WHERE job = ? AND key = ? AND "
                                        "mark = 'claimed' AND owner = ? AND counted = 0"));
    FERRY_RETURN_IF_ERROR(st.Bind(job, key, owner).Run());
  }
  {
    // A counted claim (its key was in the counters before) stays, unowned.
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("UPDATE gateway_keys SET owner = '', lease_until_ms = 0 "
                              "WHERE job = ? AND key = ? AND mark = 'claimed' AND owner = ?"));
    FERRY_RETURN_IF_ERROR(st.Bind(job, key, owner).Run());
  }
  return txn.Commit();
}

Result<std::map<std::string, KeyMark>> SqliteStateStore::KeyMarks(
    const std::string& job, const std::vector<std::string>& keys) {
  std::map<std::string, KeyMark> marks;
  if (keys.empty()) return marks;
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kRead));
  FERRY_ASSIGN_OR_RETURN(Stmt st,
                         db_->Prepare("SELECT mark FROM gateway_keys WHERE job = ? AND key = ? AND "
                                      "mark != 'claimed'"));
  for (const std::string& key : keys) {
    st.Bind(job, key);
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) continue;
    if (auto m = KeyMarkFromString(st.Text(0))) marks[key] = *m;
    FERRY_RETURN_IF_ERROR(st.Run());
  }
  return marks;
}

Status SqliteStateStore::RecordKey(const std::string& job, const std::string& key, KeyMark mark,
                                   int64_t now_ms) {
  if (mark != KeyMark::kWritten && mark != KeyMark::kDeleted) {
    return Status::InvalidArgument("RecordKey takes a client's write or delete");
  }
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("INSERT INTO gateway_keys(job, key, mark, owner, lease_until_ms, size, "
                            "etag, counted, at_ms) VALUES(?, ?, ?, '', 0, 0, '', 1, ?) "
                            "ON CONFLICT(job, key) DO UPDATE SET mark = excluded.mark, owner = '', "
                            "lease_until_ms = 0, at_ms = excluded.at_ms"));
  return st.Bind(job, key, ToString(mark), now_ms).Run();
}

}  // namespace ferry::state
