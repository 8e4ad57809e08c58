// The PostgreSQL state store's work on object rows: claims and leases,
// finishes, retries, the dead-letter queue and multipart progress.
//
// "The caller owns the row" is the same SQL condition as in the SQLite
// store: owner = $owner AND lease_until_ms > 0. In PostgreSQL it is
// re-checked under the row lock, so a row another worker took over (its
// lease had expired) is not touched by the old owner.

#include <algorithm>
#include <unordered_map>

#include "state/pg_state_store.h"

namespace ferry::state {

using pg::Conn;
using pg::Rows;

// The claim, in one statement. Unowned rows in key order off
// objects_unowned (job, key WHERE lease_until_ms = 0), and expired leases
// as a short range of objects_by_lease (job, lease_until_ms, key). FOR
// UPDATE SKIP LOCKED lets claimers in other processes pass each other: a
// row one claimer holds is skipped by the rest, and READ COMMITTED
// re-checks each candidate's lease on its newest version, so a row claimed
// and committed meanwhile is not taken twice.

const char* const PgStateStore::kClaimSql =
    "WITH unowned AS (SELECT key FROM objects WHERE job = $1 AND lease_until_ms = 0 "
    "  AND not_before_ms <= $2 ORDER BY key LIMIT $3 FOR UPDATE SKIP LOCKED), "
    "expired AS (SELECT key FROM objects WHERE job = $1 AND lease_until_ms > 0 "
    "  AND lease_until_ms <= $2 AND not_before_ms <= $2 ORDER BY key LIMIT $3 "
    "  FOR UPDATE SKIP LOCKED), "
    "chosen AS (SELECT key FROM (SELECT key FROM unowned UNION ALL SELECT key FROM expired) a "
    "  ORDER BY key LIMIT $3) "
    "UPDATE objects o SET owner = $4, lease_until_ms = $5, claims = o.claims + 1 FROM chosen "
    "WHERE o.job = $1 AND o.key = chosen.key "
    "RETURNING o.key, o.size, o.etag, o.last_modified_ms, o.attempts, o.claims, o.last_error, "
    "o.force";

// Finish, in one statement: the owned rows are deleted with their multipart
// rows, and the job's counters move by what was deleted.
const char* const PgStateStore::kFinishSql =
    "WITH d AS (DELETE FROM objects o WHERE o.job = $1 AND o.key = ANY($3::text[]) "
    "  AND o.owner = $2 AND o.lease_until_ms > 0 RETURNING o.key), "
    "f AS (SELECT f.* FROM unnest($3::text[], $4::bigint[], $5::boolean[]) "
    "  AS f(key, bytes, skipped) JOIN d ON d.key = f.key), "
    "u AS (DELETE FROM uploads x USING d WHERE x.job = $1 AND x.key = d.key), "
    "p AS (DELETE FROM parts x USING d WHERE x.job = $1 AND x.key = d.key), "
    "j AS (UPDATE jobs SET "
    "  transferred = transferred + (SELECT COUNT(*) FROM f WHERE NOT skipped), "
    "  skipped = skipped + (SELECT COUNT(*) FROM f WHERE skipped), "
    "  bytes = bytes + (SELECT COALESCE(SUM(bytes), 0) FROM f WHERE NOT skipped), "
    "  pending = pending - (SELECT COUNT(*) FROM d) "
    "  WHERE id = $1 AND EXISTS(SELECT 1 FROM d)) "
    "SELECT key FROM d";

namespace {

Status AddCounters(Conn& c, const std::string& job, int64_t failed, int64_t pending) {
  return c
      .Exec("UPDATE jobs SET failed = failed + $2, pending = pending + $3 WHERE id = $1",
            {job, pg::IntText(failed), pg::IntText(pending)})
      .status();
}

Status DeleteUploadRows(Conn& c, const std::string& job, const std::string& key) {
  FERRY_RETURN_IF_ERROR(
      c.Exec("DELETE FROM parts WHERE job = $1 AND key = $2", {job, key}).status());
  return c.Exec("DELETE FROM uploads WHERE job = $1 AND key = $2", {job, key}).status();
}

}  // namespace

// ---- Claims and leases ----

Result<std::vector<ClaimedObject>> PgStateStore::Claim(const std::string& job,
                                                       const std::string& owner, int max,
                                                       int64_t now_ms, int64_t lease_until_ms) {
  FERRY_RETURN_IF_ERROR(CheckClaimArguments(owner, now_ms, lease_until_ms));
  std::vector<ClaimedObject> rows;
  if (max <= 0) return rows;
  FERRY_ASSIGN_OR_RETURN(Rows r, Run([&](Conn& c) {
                           return c.Exec(kClaimSql, {job, pg::IntText(now_ms), pg::IntText(max),
                                                     owner, pg::IntText(lease_until_ms)});
                         }));
  for (int i = 0; i < r.size(); ++i) {
    ClaimedObject c;
    c.object.key = r.Text(i, 0);
    c.object.size = static_cast<uint64_t>(r.Int(i, 1));
    c.object.etag = r.Text(i, 2);
    c.object.last_modified_ms = r.Int(i, 3);
    c.attempts = static_cast<int>(r.Int(i, 4));
    c.claims = static_cast<int>(r.Int(i, 5));
    c.last_error = r.Text(i, 6);
    c.force = r.Bool(i, 7);
    rows.push_back(std::move(c));
  }
  // RETURNING keeps no order; callers get key order, as from SQLite.
  std::sort(rows.begin(), rows.end(), [](const ClaimedObject& a, const ClaimedObject& b) {
    return a.object.key < b.object.key;
  });
  return rows;
}

Status PgStateStore::RenewLeases(const std::string& job, const std::string& owner,
                                 int64_t lease_until_ms) {
  if (lease_until_ms <= 0) return Status::InvalidArgument("lease must end after 0");
  return Run([&](Conn& c) {
    FERRY_RETURN_IF_ERROR(c.Exec("UPDATE objects SET lease_until_ms = $3 "
                                 "WHERE job = $1 AND lease_until_ms > 0 AND owner = $2",
                                 {job, owner, pg::IntText(lease_until_ms)})
                              .status());
    // A gateway's claimed marks are leases too (pg_state_store_gateway.cc),
    // locked in key order as a list page locks its marks.
    return c
        .Exec(
            "UPDATE gateway_keys SET lease_until_ms = $3 WHERE job = $1 AND "
            "mark = 'claimed' AND owner = $2 AND key IN (SELECT key FROM gateway_keys "
            "WHERE job = $1 AND mark = 'claimed' AND owner = $2 ORDER BY key FOR UPDATE)",
            {job, owner, pg::IntText(lease_until_ms)})
        .status();
  });
}

Result<int64_t> PgStateStore::ReleaseOwner(const std::string& job, const std::string& owner) {
  return Run([&](Conn& c) -> Result<int64_t> {
    FERRY_ASSIGN_OR_RETURN(Rows r, c.Exec("UPDATE objects SET owner = '', lease_until_ms = 0 "
                                          "WHERE job = $1 AND lease_until_ms > 0 AND owner = $2",
                                          {job, owner}));
    return r.affected();
  });
}

// ---- Outcomes ----

Result<std::vector<bool>> PgStateStore::Finish(const std::string& job, const std::string& owner,
                                               const std::vector<FinishedObject>& done) {
  std::vector<bool> counted(done.size(), false);
  if (done.empty()) return counted;
  // A key listed twice in one batch counts once, at its first place.
  std::vector<std::string> keys;
  std::vector<int64_t> bytes;
  std::vector<bool> skipped;
  std::unordered_map<std::string, size_t> first;
  for (size_t i = 0; i < done.size(); ++i) {
    if (!first.emplace(done[i].key, i).second) continue;
    keys.push_back(done[i].key);
    bytes.push_back(static_cast<int64_t>(done[i].bytes));
    skipped.push_back(done[i].outcome == Outcome::kSkipped);
  }
  FERRY_ASSIGN_OR_RETURN(Rows r, Run([&](Conn& c) {
                           return c.Exec(kFinishSql, {job, owner, pg::TextArray(keys),
                                                      pg::IntArray(bytes), pg::BoolArray(skipped)});
                         }));
  for (int i = 0; i < r.size(); ++i) counted[first.at(r.Text(i, 0))] = true;
  return counted;
}

Result<bool> PgStateStore::Retry(const std::string& job, const std::string& owner,
                                 const std::string& key, const std::string& error,
                                 int64_t not_before_ms) {
  return Run([&](Conn& c) -> Result<bool> {
    FERRY_ASSIGN_OR_RETURN(
        Rows r, c.Exec("UPDATE objects SET attempts = attempts + 1, last_error = $4, "
                       "owner = '', lease_until_ms = 0, not_before_ms = $5 "
                       "WHERE job = $1 AND key = $2 AND owner = $3 AND lease_until_ms > 0",
                       {job, key, owner, error, pg::IntText(not_before_ms)}));
    return r.affected() == 1;
  });
}

Result<bool> PgStateStore::Release(const std::string& job, const std::string& owner,
                                   const std::string& key, int64_t not_before_ms) {
  return Run([&](Conn& c) -> Result<bool> {
    FERRY_ASSIGN_OR_RETURN(
        Rows r, c.Exec("UPDATE objects SET owner = '', lease_until_ms = 0, not_before_ms = $4 "
                       "WHERE job = $1 AND key = $2 AND owner = $3 AND lease_until_ms > 0",
                       {job, key, owner, pg::IntText(not_before_ms)}));
    return r.affected() == 1;
  });
}

Result<bool> PgStateStore::DeadLetterObject(const std::string& job, const std::string& owner,
                                            const DeadLetter& entry) {
  return RunTxn([&](Conn& c) -> Result<bool> {
    // The queue keeps the listed size, ETag and time, so a requeue restores
    // them.
    FERRY_ASSIGN_OR_RETURN(Rows gone,
                           c.Exec("DELETE FROM objects WHERE job = $1 AND key = $2 AND owner = $3 "
                                  "AND lease_until_ms > 0 RETURNING size, etag, last_modified_ms",
                                  {job, entry.key, owner}));
    if (gone.size() == 0) return false;
    // A stale entry for the key (see the overlap assumption) is replaced,
    // not counted again.
    FERRY_ASSIGN_OR_RETURN(
        Rows already, c.Exec("SELECT 1 FROM dlq WHERE job = $1 AND key = $2", {job, entry.key}));
    FERRY_RETURN_IF_ERROR(
        c.Exec("INSERT INTO dlq(job, key, size, etag, last_modified_ms, reason, attempts, "
               "last_error, at_ms) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9) "
               "ON CONFLICT(job, key) DO UPDATE SET size = excluded.size, "
               "etag = excluded.etag, last_modified_ms = excluded.last_modified_ms, "
               "reason = excluded.reason, attempts = excluded.attempts, "
               "last_error = excluded.last_error, at_ms = excluded.at_ms",
               {job, entry.key, gone.Text(0, 0), gone.Text(0, 1), gone.Text(0, 2), entry.reason,
                pg::IntText(entry.attempts), entry.last_error, pg::IntText(entry.at_ms)})
            .status());
    FERRY_RETURN_IF_ERROR(DeleteUploadRows(c, job, entry.key));
    FERRY_RETURN_IF_ERROR(AddCounters(c, job, already.size() > 0 ? 0 : 1, -1));
    return true;
  });
}

Result<std::vector<DeadLetter>> PgStateStore::ListDeadLetters(const std::string& job) {
  return Run([&](Conn& c) -> Result<std::vector<DeadLetter>> {
    FERRY_ASSIGN_OR_RETURN(Rows r,
                           c.Exec("SELECT key, size, reason, attempts, last_error, at_ms FROM dlq "
                                  "WHERE job = $1 UNION ALL SELECT key, size, reason, attempts, "
                                  "last_error, at_ms FROM archived_dlq WHERE job = $1 ORDER BY key",
                                  {job}));
    std::vector<DeadLetter> out;
    for (int i = 0; i < r.size(); ++i) {
      DeadLetter d;
      d.key = r.Text(i, 0);
      d.size = static_cast<uint64_t>(r.Int(i, 1));
      d.reason = r.Text(i, 2);
      d.attempts = static_cast<int>(r.Int(i, 3));
      d.last_error = r.Text(i, 4);
      d.at_ms = r.Int(i, 5);
      out.push_back(std::move(d));
    }
    return out;
  });
}

Result<int64_t> PgStateStore::RequeueDeadLetters(const std::string& job) {
  return RunTxn([&](Conn& c) -> Result<int64_t> {
    // The shards first (a gateway's mark of a key waits, and is seen), the
    // dead-letter and object rows, the job's row last.
    FERRY_RETURN_IF_ERROR(LockShards(c, job, nullptr, true));
    // A key written or deleted through a gateway since it failed is the
    // user's now: out of the queue, counted skipped, never copied over.
    FERRY_ASSIGN_OR_RETURN(
        Rows gone, c.Exec("WITH d AS (DELETE FROM dlq WHERE job = $1 AND key IN (SELECT key FROM "
                          "gateway_keys WHERE job = $1 AND mark IN ('written', 'deleted')) "
                          "RETURNING 1) SELECT count(*) FROM d",
                          {job}));
    const int64_t superseded = gone.Int(0, 0);
    // One statement, so the rows moved are exactly the rows deleted: a
    // dead letter a worker adds meanwhile is either moved or left whole.
    // The last error stays, for the next attempt's logs.
    FERRY_ASSIGN_OR_RETURN(
        Rows r, c.Exec("WITH d AS (DELETE FROM dlq WHERE job = $1 RETURNING job, key, size, etag, "
                       "last_modified_ms, last_error), "
                       "i AS (INSERT INTO objects(job, key, size, etag, last_modified_ms, owner, "
                       "lease_until_ms, not_before_ms, attempts, claims, last_error) "
                       "SELECT job, key, size, etag, last_modified_ms, '', 0, 0, 0, 0, last_error "
                       "FROM d ON CONFLICT(job, key) DO NOTHING RETURNING 1) "
                       "SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM i)",
                       {job}));
    const int64_t n = r.Int(0, 0);
    if (n > 0 || superseded > 0) {
      FERRY_RETURN_IF_ERROR(
          c.Exec("UPDATE jobs SET skipped = skipped + $2, "
                 "failed = failed - $2 - $3, pending = pending + $4 WHERE id = $1",
                 {job, pg::IntText(superseded), pg::IntText(n), pg::IntText(r.Int(0, 1))})
              .status());
    }
    return n;
  });
}

// ---- Multipart progress ----

namespace {

constexpr const char* kUpsertPartsSql =
    "INSERT INTO parts(job, key, number, etag, size) "
    "SELECT $1, $2, * FROM unnest($3::int[], $4::text[], $5::bigint[]) "
    "ON CONFLICT(job, key, number) DO UPDATE SET etag = excluded.etag, size = excluded.size";

Status UpsertParts(Conn& c, const std::string& job, const std::string& key,
                   const std::vector<UploadRecord::Part>& parts) {
  if (parts.empty()) return Status::Ok();
  std::vector<int64_t> numbers, sizes;
  std::vector<std::string> etags;
  for (const UploadRecord::Part& p : parts) {
    numbers.push_back(p.number);
    etags.push_back(p.etag);
    sizes.push_back(static_cast<int64_t>(p.size));
  }
  return c
      .Exec(kUpsertPartsSql,
            {job, key, pg::IntArray(numbers), pg::TextArray(etags), pg::IntArray(sizes)})
      .status();
}

// Reads (key, upload_id, src_etag, part_size) rows, then (key, number,
// etag, size) rows sorted by key, into uploads sorted by key.
std::vector<std::pair<std::string, UploadRecord>> ReadUploads(const Rows& ups, const Rows& parts) {
  std::vector<std::pair<std::string, UploadRecord>> uploads;
  for (int i = 0; i < ups.size(); ++i) {
    UploadRecord u;
    u.upload_id = ups.Text(i, 1);
    u.src_etag = ups.Text(i, 2);
    u.part_size = static_cast<uint64_t>(ups.Int(i, 3));
    uploads.emplace_back(ups.Text(i, 0), std::move(u));
  }
  size_t at = 0;
  for (int i = 0; i < parts.size(); ++i) {
    std::string key = parts.Text(i, 0);
    while (at < uploads.size() && uploads[at].first < key) ++at;
    if (at == uploads.size() || uploads[at].first != key) continue;  // orphan: cannot happen
    UploadRecord::Part p;
    p.number = static_cast<int>(parts.Int(i, 1));
    p.etag = parts.Text(i, 2);
    p.size = static_cast<uint64_t>(parts.Int(i, 3));
    uploads[at].second.parts.push_back(std::move(p));
  }
  return uploads;
}

}  // namespace

Status PgStateStore::SaveUpload(const std::string& job, const std::string& key,
                                const UploadRecord& upload) {
  return RunTxn([&](Conn& c) -> Status {
    FERRY_RETURN_IF_ERROR(DeleteUploadRows(c, job, key));
    FERRY_RETURN_IF_ERROR(c.Exec("INSERT INTO uploads(job, key, upload_id, src_etag, part_size) "
                                 "VALUES($1, $2, $3, $4, $5)",
                                 {job, key, upload.upload_id, upload.src_etag,
                                  pg::IntText(static_cast<int64_t>(upload.part_size))})
                              .status());
    return UpsertParts(c, job, key, upload.parts);
  });
}

Status PgStateStore::AddPart(const std::string& job, const std::string& key,
                             const UploadRecord::Part& part) {
  return RunTxn([&](Conn& c) -> Status {
    // A part without its upload would never be cleaned up. FOR SHARE keeps
    // the upload from being deleted until this part is in.
    FERRY_ASSIGN_OR_RETURN(
        Rows up, c.Exec("SELECT 1 FROM uploads WHERE job = $1 AND key = $2 FOR SHARE", {job, key}));
    if (up.size() == 0) return Status::NotFound("no upload recorded for " + key + " in job " + job);
    return UpsertParts(c, job, key, {part});
  });
}

Result<std::optional<UploadRecord>> PgStateStore::GetUpload(const std::string& job,
                                                            const std::string& key) {
  return RunTxn(
      [&](Conn& c) -> Result<std::optional<UploadRecord>> {
        FERRY_ASSIGN_OR_RETURN(Rows ups, c.Exec("SELECT key, upload_id, src_etag, part_size "
                                                "FROM uploads WHERE job = $1 AND key = $2",
                                                {job, key}));
        if (ups.size() == 0) return std::optional<UploadRecord>();
        FERRY_ASSIGN_OR_RETURN(Rows parts, c.Exec("SELECT key, number, etag, size FROM parts "
                                                  "WHERE job = $1 AND key = $2 ORDER BY number",
                                                  {job, key}));
        return std::optional<UploadRecord>(std::move(ReadUploads(ups, parts).front().second));
      },
      kSnapshot);
}

Status PgStateStore::DeleteUpload(const std::string& job, const std::string& key) {
  return RunTxn([&](Conn& c) { return DeleteUploadRows(c, job, key); });
}

Result<std::vector<std::pair<std::string, UploadRecord>>> PgStateStore::ListUploads(
    const std::string& job) {
  return RunTxn(
      [&](Conn& c) -> Result<std::vector<std::pair<std::string, UploadRecord>>> {
        FERRY_ASSIGN_OR_RETURN(Rows ups, c.Exec("SELECT key, upload_id, src_etag, part_size "
                                                "FROM uploads WHERE job = $1 ORDER BY key",
                                                {job}));
        FERRY_ASSIGN_OR_RETURN(Rows parts, c.Exec("SELECT key, number, etag, size FROM parts "
                                                  "WHERE job = $1 ORDER BY key, number",
                                                  {job}));
        return ReadUploads(ups, parts);
      },
      kSnapshot);
}

Result<int64_t> PgStateStore::CountRows(const std::string& job) {
  return Run([&](Conn& c) -> Result<int64_t> {
    FERRY_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT (SELECT COUNT(*) FROM objects WHERE job = $1) + "
                                          "(SELECT COUNT(*) FROM dlq WHERE job = $1) + "
                                          "(SELECT COUNT(*) FROM uploads WHERE job = $1) + "
                                          "(SELECT COUNT(*) FROM parts WHERE job = $1) + "
                                          "(SELECT COUNT(*) FROM gateway_keys WHERE job = $1)",
                                          {job}));
    return r.Int(0, 0);
  });
}

Status PgStateStore::SetJobLive(const std::string& job, const JobLive& live) {
  return Run([&](Conn& c) -> Status {
    return c
        .Exec(
            "INSERT INTO job_live(job, at_ms, live) "
            "SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1) "
            "ON CONFLICT(job) DO UPDATE SET at_ms = excluded.at_ms, live = excluded.live",
            {job, std::to_string(live.at_ms), live.json})
        .status();
  });
}

Result<std::map<std::string, JobLive>> PgStateStore::ListJobLive() {
  return Run([&](Conn& c) -> Result<std::map<std::string, JobLive>> {
    FERRY_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT job, at_ms, live FROM job_live"));
    std::map<std::string, JobLive> out;
    for (int i = 0; i < r.size(); ++i) out[r.Text(i, 0)] = JobLive{r.Int(i, 1), r.Text(i, 2)};
    return out;
  });
}

}  // namespace ferry::state
