// The SQLite state store's work on object rows: claims and leases, finishes,
// retries, the dead-letter queue and multipart progress. The table layout is
// described at the top of sqlite_state_store.cc.
//
// "The caller owns the row" is one SQL condition everywhere:
//   owner = ? AND lease_until_ms > 0
// An expired lease is still owned until another owner claims the row; only
// a claim compares leases with the clock.

#include <algorithm>

#include "state/sqlite_state_store.h"

namespace ferry::state {

using sqlite::Stmt;
using sqlite::Txn;

namespace {

// Appends the rows of a claim query (kClaim*Sql) to `out`.
Status ReadClaimable(Stmt& st, std::vector<ClaimedObject>& out) {
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return Status::Ok();
    ClaimedObject c;
    c.object.key = st.Text(0);
    c.object.size = static_cast<uint64_t>(st.Int(1));
    c.object.etag = st.Text(2);
    c.object.last_modified_ms = st.Int(3);
    c.attempts = static_cast<int>(st.Int(4));
    c.claims = static_cast<int>(st.Int(5));
    c.last_error = st.Text(6);
    c.force = st.Int(7) != 0;
    out.push_back(std::move(c));
  }
}

}  // namespace

Status SqliteStateStore::AddCountersLocked(const std::string& job, int64_t listed,
                                           int64_t transferred, int64_t skipped, int64_t failed,
                                           int64_t bytes, int64_t pending) {
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("UPDATE jobs SET listed = listed + ?, transferred = transferred + ?, "
                            "skipped = skipped + ?, failed = failed + ?, bytes = bytes + ?, "
                            "pending = pending + ? WHERE id = ?"));
  return st.Bind(listed, transferred, skipped, failed, bytes, pending, job).Run();
}

Status SqliteStateStore::DeleteUploadRowsLocked(const std::string& job, const std::string& key) {
  {
    FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("DELETE FROM parts WHERE job = ? AND key = ?"));
    FERRY_RETURN_IF_ERROR(st.Bind(job, key).Run());
  }
  FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("DELETE FROM uploads WHERE job = ? AND key = ?"));
  return st.Bind(job, key).Run();
}

// ---- Claims and leases ----

Result<std::vector<ClaimedObject>> SqliteStateStore::Claim(const std::string& job,
                                                           const std::string& owner, int max,
                                                           int64_t now_ms, int64_t lease_until_ms) {
  FERRY_RETURN_IF_ERROR(CheckClaimArguments(owner, now_ms, lease_until_ms));
  std::vector<ClaimedObject> rows;
  if (max <= 0) return rows;
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  {
    // Unowned rows, in key order straight off objects_by_lease; rows waiting
    // out a retry delay are stepped over.
    FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(kClaimUnownedSql));
    st.Bind(job, now_ms, max);
    FERRY_RETURN_IF_ERROR(ReadClaimable(st, rows));
  }
  {
    // Expired leases (a runner died or stalled): a short range of the index.
    FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(kClaimExpiredSql));
    st.Bind(job, now_ms, now_ms, max);
    const size_t fresh = rows.size();
    FERRY_RETURN_IF_ERROR(ReadClaimable(st, rows));
    if (rows.size() > fresh) {
      auto by_key = [](const ClaimedObject& a, const ClaimedObject& b) {
        return a.object.key < b.object.key;
      };
      std::inplace_merge(rows.begin(), rows.begin() + static_cast<ptrdiff_t>(fresh), rows.end(),
                         by_key);
      if (rows.size() > static_cast<size_t>(max)) rows.resize(static_cast<size_t>(max));
    }
  }
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("UPDATE objects SET owner = ?, lease_until_ms = ?, claims = claims + 1 "
                            "WHERE job = ? AND key = ?"));
  for (ClaimedObject& c : rows) {
    FERRY_RETURN_IF_ERROR(st.Bind(owner, lease_until_ms, job, c.object.key).Run());
    ++c.claims;
  }
  FERRY_RETURN_IF_ERROR(txn.Commit());
  return rows;
}

Status SqliteStateStore::RenewLeases(const std::string& job, const std::string& owner,
                                     int64_t lease_until_ms) {
  if (lease_until_ms <= 0) return Status::InvalidArgument("lease must end after 0");
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  FERRY_ASSIGN_OR_RETURN(Stmt st,
                         db_->Prepare("UPDATE objects SET lease_until_ms = ? "
                                      "WHERE job = ? AND lease_until_ms > 0 AND owner = ?"));
  FERRY_RETURN_IF_ERROR(st.Bind(lease_until_ms, job, owner).Run());
  // A gateway's claimed marks are leases too (sqlite_state_store_gateway.cc).
  FERRY_ASSIGN_OR_RETURN(Stmt marks,
                         db_->Prepare("UPDATE gateway_keys SET lease_until_ms = ? WHERE job = ? "
                                      "AND mark = 'claimed' AND owner = ?"));
  FERRY_RETURN_IF_ERROR(marks.Bind(lease_until_ms, job, owner).Run());
  return txn.Commit();
}

Result<int64_t> SqliteStateStore::ReleaseOwner(const std::string& job, const std::string& owner) {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(Stmt st,
                         db_->Prepare("UPDATE objects SET owner = '', lease_until_ms = 0 "
                                      "WHERE job = ? AND lease_until_ms > 0 AND owner = ?"));
  FERRY_RETURN_IF_ERROR(st.Bind(job, owner).Run());
  return st.Changes();
}

// ---- Outcomes ----

Result<std::vector<bool>> SqliteStateStore::Finish(const std::string& job, const std::string& owner,
                                                   const std::vector<FinishedObject>& done) {
  std::vector<bool> counted(done.size(), false);
  if (done.empty()) return counted;
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  // Most jobs have no multipart upload in progress at a given moment: one
  // look for the job's upload rows saves two deletes per finished object.
  bool has_uploads = false;
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("SELECT EXISTS(SELECT 1 FROM uploads WHERE job = ?) OR "
                              "EXISTS(SELECT 1 FROM parts WHERE job = ?)"));
    FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(job, job).Step());
    has_uploads = row && st.Int(0) != 0;
    FERRY_RETURN_IF_ERROR(st.Run());
  }
  int64_t transferred = 0, skipped = 0, bytes = 0;
  for (size_t i = 0; i < done.size(); ++i) {
    const FinishedObject& d = done[i];
    {
      FERRY_ASSIGN_OR_RETURN(
          Stmt st, db_->Prepare("DELETE FROM objects WHERE job = ? AND key = ? AND owner = ? "
                                "AND lease_until_ms > 0"));
      FERRY_RETURN_IF_ERROR(st.Bind(job, d.key, owner).Run());
      if (st.Changes() == 0) continue;  // not ours (any more), or already finished
    }
    counted[i] = true;
    if (d.outcome == Outcome::kTransferred) {
      ++transferred;
      bytes += static_cast<int64_t>(d.bytes);
    } else {
      ++skipped;
    }
    if (has_uploads) FERRY_RETURN_IF_ERROR(DeleteUploadRowsLocked(job, d.key));
  }
  const int64_t n = transferred + skipped;
  if (n > 0) FERRY_RETURN_IF_ERROR(AddCountersLocked(job, 0, transferred, skipped, 0, bytes, -n));
  FERRY_RETURN_IF_ERROR(txn.Commit());
  return counted;
}

Result<bool> SqliteStateStore::Retry(const std::string& job, const std::string& owner,
                                     const std::string& key, const std::string& error,
                                     int64_t not_before_ms) {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("UPDATE objects SET attempts = attempts + 1, last_error = ?, "
                            "owner = '', lease_until_ms = 0, not_before_ms = ? "
                            "WHERE job = ? AND key = ? AND owner = ? AND lease_until_ms > 0"));
  FERRY_RETURN_IF_ERROR(st.Bind(error, not_before_ms, job, key, owner).Run());
  return st.Changes() == 1;
}

Result<bool> SqliteStateStore::Release(const std::string& job, const std::string& owner,
                                       const std::string& key, int64_t not_before_ms) {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("UPDATE objects SET owner = '', lease_until_ms = 0, not_before_ms = ? "
                            "WHERE job = ? AND key = ? AND owner = ? AND lease_until_ms > 0"));
  FERRY_RETURN_IF_ERROR(st.Bind(not_before_ms, job, key, owner).Run());
  return st.Changes() == 1;
}

Result<bool> SqliteStateStore::DeadLetterObject(const std::string& job, const std::string& owner,
                                                const DeadLetter& entry) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  // The queue keeps the listed size, ETag and time, so a requeue restores them.
  int64_t size = 0, last_modified_ms = 0;
  std::string etag;
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("DELETE FROM objects WHERE job = ? AND key = ? AND owner = ? "
                              "AND lease_until_ms > 0 RETURNING size, etag, last_modified_ms"));
    FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(job, entry.key, owner).Step());
    if (!row) return false;
    size = st.Int(0);
    etag = st.Text(1);
    last_modified_ms = st.Int(2);
    FERRY_RETURN_IF_ERROR(st.Run());
  }
  int64_t already = 0;  // a stale entry for the key (see the overlap assumption)
  {
    FERRY_ASSIGN_OR_RETURN(Stmt st,
                           db_->Prepare("SELECT COUNT(*) FROM dlq WHERE job = ? AND key = ?"));
    FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(job, entry.key).Step());
    already = row ? st.Int(0) : 0;
    FERRY_RETURN_IF_ERROR(st.Run());
  }
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st,
        db_->Prepare("INSERT INTO dlq(job, key, size, etag, last_modified_ms, reason, attempts, "
                     "last_error, at_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?) "
                     "ON CONFLICT(job, key) DO UPDATE SET size = excluded.size, "
                     "etag = excluded.etag, last_modified_ms = excluded.last_modified_ms, "
                     "reason = excluded.reason, attempts = excluded.attempts, "
                     "last_error = excluded.last_error, at_ms = excluded.at_ms"));
    FERRY_RETURN_IF_ERROR(st.Bind(job, entry.key, size, etag, last_modified_ms, entry.reason,
                                  entry.attempts, entry.last_error, entry.at_ms)
                              .Run());
  }
  FERRY_RETURN_IF_ERROR(DeleteUploadRowsLocked(job, entry.key));
  FERRY_RETURN_IF_ERROR(AddCountersLocked(job, 0, 0, 0, already > 0 ? 0 : 1, 0, -1));
  FERRY_RETURN_IF_ERROR(txn.Commit());
  return true;
}

Result<std::vector<DeadLetter>> SqliteStateStore::ListDeadLetters(const std::string& job) {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("SELECT key, size, reason, attempts, last_error, at_ms FROM dlq "
                            "WHERE job = ? UNION ALL SELECT key, size, reason, attempts, "
                            "last_error, at_ms FROM archived_dlq WHERE job = ? ORDER BY key"));
  st.Bind(job, job);
  std::vector<DeadLetter> out;
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    DeadLetter d;
    d.key = st.Text(0);
    d.size = static_cast<uint64_t>(st.Int(1));
    d.reason = st.Text(2);
    d.attempts = static_cast<int>(st.Int(3));
    d.last_error = st.Text(4);
    d.at_ms = st.Int(5);
    out.push_back(std::move(d));
  }
}

Result<int64_t> SqliteStateStore::RequeueDeadLetters(const std::string& job) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  int64_t inserted = 0;
  {
    // A key written or deleted through a gateway since it failed is the
    // user's now: out of the queue, counted skipped, never copied over.
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("DELETE FROM dlq WHERE job = ? AND key IN (SELECT key FROM "
                              "gateway_keys WHERE job = ? AND mark IN ('written', 'deleted'))"));
    FERRY_RETURN_IF_ERROR(st.Bind(job, job).Run());
    if (const int64_t superseded = st.Changes(); superseded > 0) {
      FERRY_RETURN_IF_ERROR(AddCountersLocked(job, 0, 0, superseded, -superseded, 0, 0));
    }
  }
  {
    // The last error stays, for the next attempt's logs.
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("INSERT INTO objects(job, key, size, etag, last_modified_ms, owner, "
                              "lease_until_ms, not_before_ms, attempts, claims, last_error) "
                              "SELECT job, key, size, etag, last_modified_ms, '', 0, 0, 0, 0, "
                              "last_error FROM dlq WHERE job = ? "
                              "ON CONFLICT(job, key) DO NOTHING"));
    FERRY_RETURN_IF_ERROR(st.Bind(job).Run());
    inserted = st.Changes();
  }
  FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("DELETE FROM dlq WHERE job = ?"));
  FERRY_RETURN_IF_ERROR(st.Bind(job).Run());
  const int64_t n = st.Changes();
  if (n > 0) FERRY_RETURN_IF_ERROR(AddCountersLocked(job, 0, 0, 0, -n, 0, inserted));
  FERRY_RETURN_IF_ERROR(txn.Commit());
  return n;
}

// ---- Multipart progress ----

Status SqliteStateStore::SaveUpload(const std::string& job, const std::string& key,
                                    const UploadRecord& upload) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  FERRY_RETURN_IF_ERROR(DeleteUploadRowsLocked(job, key));
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("INSERT INTO uploads(job, key, upload_id, src_etag, part_size) "
                              "VALUES(?, ?, ?, ?, ?)"));
    FERRY_RETURN_IF_ERROR(
        st.Bind(job, key, upload.upload_id, upload.src_etag, static_cast<int64_t>(upload.part_size))
            .Run());
  }
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("INSERT INTO parts(job, key, number, etag, size) VALUES(?, ?, ?, ?, ?) "
                            "ON CONFLICT(job, key, number) DO UPDATE SET etag = excluded.etag, "
                            "size = excluded.size"));
  for (const UploadRecord::Part& p : upload.parts) {
    FERRY_RETURN_IF_ERROR(st.Bind(job, key, p.number, p.etag, static_cast<int64_t>(p.size)).Run());
  }
  return txn.Commit();
}

Status SqliteStateStore::AddPart(const std::string& job, const std::string& key,
                                 const UploadRecord::Part& part) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  {
    // A part without its upload would never be cleaned up.
    FERRY_ASSIGN_OR_RETURN(Stmt st,
                           db_->Prepare("SELECT COUNT(*) FROM uploads WHERE job = ? AND key = ?"));
    FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(job, key).Step());
    if (!row || st.Int(0) == 0) {
      return Status::NotFound("no upload recorded for " + key + " in job " + job);
    }
    FERRY_RETURN_IF_ERROR(st.Run());
  }
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st,
        db_->Prepare("INSERT INTO parts(job, key, number, etag, size) VALUES(?, ?, ?, ?, ?) "
                     "ON CONFLICT(job, key, number) DO UPDATE SET etag = excluded.etag, "
                     "size = excluded.size"));
    FERRY_RETURN_IF_ERROR(
        st.Bind(job, key, part.number, part.etag, static_cast<int64_t>(part.size)).Run());
  }
  return txn.Commit();
}

namespace {

using Uploads = std::vector<std::pair<std::string, UploadRecord>>;

// Reads (key, part) rows of `st` into `uploads`, which is sorted by key.
Status ReadParts(Stmt& st, Uploads& uploads) {
  size_t i = 0;
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return Status::Ok();
    std::string key = st.Text(0);
    while (i < uploads.size() && uploads[i].first < key) ++i;
    if (i == uploads.size() || uploads[i].first != key) continue;  // orphan: cannot happen
    UploadRecord::Part p;
    p.number = static_cast<int>(st.Int(1));
    p.etag = st.Text(2);
    p.size = static_cast<uint64_t>(st.Int(3));
    uploads[i].second.parts.push_back(std::move(p));
  }
}

Status ReadUploads(Stmt& st, Uploads& uploads) {
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return Status::Ok();
    UploadRecord u;
    u.upload_id = st.Text(1);
    u.src_etag = st.Text(2);
    u.part_size = static_cast<uint64_t>(st.Int(3));
    uploads.emplace_back(st.Text(0), std::move(u));
  }
}

// The job's uploads with their parts, sorted by key: all of them, or only
// the one of `*key`. Reads in a transaction of its own; mu_ must be held.
Result<Uploads> ReadUploadsWithParts(sqlite::Db& db, const std::string& job,
                                     const std::string* key) {
  Txn txn(db);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kRead));
  const std::string where = key ? "WHERE job = ? AND key = ? " : "WHERE job = ? ";
  auto bind = [&](Stmt& st) -> Stmt& { return key ? st.Bind(job, *key) : st.Bind(job); };
  Uploads uploads;
  {
    FERRY_ASSIGN_OR_RETURN(Stmt st, db.Prepare("SELECT key, upload_id, src_etag, part_size "
                                               "FROM uploads " + where + "ORDER BY key"));
    FERRY_RETURN_IF_ERROR(ReadUploads(bind(st), uploads));
  }
  if (uploads.empty()) return uploads;
  FERRY_ASSIGN_OR_RETURN(Stmt st, db.Prepare("SELECT key, number, etag, size FROM parts " +
                                             where + "ORDER BY key, number"));
  FERRY_RETURN_IF_ERROR(ReadParts(bind(st), uploads));
  return uploads;
}

}  // namespace

Result<std::optional<UploadRecord>> SqliteStateStore::GetUpload(const std::string& job,
                                                                const std::string& key) {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(Uploads uploads, ReadUploadsWithParts(*db_, job, &key));
  if (uploads.empty()) return std::optional<UploadRecord>();
  return std::optional<UploadRecord>(std::move(uploads.front().second));
}

Status SqliteStateStore::DeleteUpload(const std::string& job, const std::string& key) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  FERRY_RETURN_IF_ERROR(DeleteUploadRowsLocked(job, key));
  return txn.Commit();
}

Result<std::vector<std::pair<std::string, UploadRecord>>> SqliteStateStore::ListUploads(
    const std::string& job) {
  std::lock_guard lock(mu_);
  return ReadUploadsWithParts(*db_, job, nullptr);
}

Result<int64_t> SqliteStateStore::CountRows(const std::string& job) {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(Stmt st,
                         db_->Prepare("SELECT (SELECT COUNT(*) FROM objects WHERE job = ?) + "
                                      "(SELECT COUNT(*) FROM dlq WHERE job = ?) + "
                                      "(SELECT COUNT(*) FROM uploads WHERE job = ?) + "
                                      "(SELECT COUNT(*) FROM parts WHERE job = ?) + "
                                      "(SELECT COUNT(*) FROM gateway_keys WHERE job = ?)"));
  FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(job, job, job, job, job).Step());
  return row ? st.Int(0) : 0;
}

Status SqliteStateStore::SetJobLive(const std::string& job, const JobLive& live) {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("INSERT INTO job_live(job, at_ms, live) "
                            "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?) "
                            "ON CONFLICT(job) DO UPDATE SET at_ms = excluded.at_ms, "
                            "live = excluded.live"));
  return st.Bind(job, live.at_ms, live.json, job).Run();
}

Result<std::map<std::string, JobLive>> SqliteStateStore::ListJobLive() {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("SELECT job, at_ms, live FROM job_live"));
  std::map<std::string, JobLive> out;
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out[st.Text(0)] = JobLive{st.Int(1), st.Text(2)};
  }
  return out;
}

}  // namespace ferry::state
