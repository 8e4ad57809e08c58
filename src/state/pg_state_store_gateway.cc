// The PostgreSQL store's gateway marks (state_store.h KeyMark): the table
// gateway_keys (pg_schema.cc version 6), ClaimKey / MarkKey / ReleaseKey /
// KeyMarks / RecordKey, and what a listing page does with marked keys.
// The decisions are key_marks.h's, as the SQLite store's are.
//
// Several gateways and workers, in several processes, share the job here,
// so each decision is taken under row locks, always in one order: the
// shard rows that cover the key (FOR SHARE, LockShards: a list page's
// commit, which takes its shard FOR UPDATE, and a gateway's change of a
// key never interleave, so a key is either enqueued or marked, never both
// unseen), then the key's mark, then its object row, then the jobs row
// (the order Finish and CommitListPage take theirs in too). Statements
// that change several marks lock them in key order first.

#include <map>

#include "state/key_marks.h"
#include "state/pg_state_store.h"

namespace ferry::state {

using pg::Conn;
using pg::Rows;

namespace {

// " FOR UPDATE" when the caller decides under the rows' locks.
std::string Locked(const char* select, bool lock) {
  return std::string(select) + (lock ? " FOR UPDATE" : "");
}

// The columns mark, owner, lease_until_ms, size, etag, counted of row `i`,
// from column `first` on; a mark this ferry does not know is Corruption.
Result<StoredMark> MarkFromRow(const Rows& r, int i, int first, const std::string& job,
                               const std::string& key) {
  auto mark = KeyMarkFromString(r.Text(i, first));
  if (!mark) {
    return Status::Corruption("state: key " + key + " of job " + job + " has an unknown mark '" +
                              r.Text(i, first) + "'")
        .set_retryable(false);
  }
  StoredMark m;
  m.mark = *mark;
  m.owner = r.Text(i, first + 1);
  m.lease_until_ms = r.Int(i, first + 2);
  m.size = static_cast<uint64_t>(std::max<int64_t>(0, r.Int(i, first + 3)));
  m.etag = r.Text(i, first + 4);
  m.counted = r.Bool(i, first + 5);
  return m;
}

Result<std::optional<StoredMark>> ReadMark(Conn& c, const std::string& job, const std::string& key,
                                           bool lock) {
  FERRY_ASSIGN_OR_RETURN(Rows r, c.Exec(Locked("SELECT mark, owner, lease_until_ms, size, etag, "
                                               "counted FROM gateway_keys WHERE job = $1 AND "
                                               "key = $2",
                                               lock),
                                        {job, key}));
  if (r.size() == 0) return std::optional<StoredMark>();
  FERRY_ASSIGN_OR_RETURN(StoredMark m, MarkFromRow(r, 0, 0, job, key));
  return std::optional<StoredMark>(std::move(m));
}

Result<std::optional<KeyRow>> ReadRow(Conn& c, const std::string& job, const std::string& key,
                                      bool lock) {
  FERRY_ASSIGN_OR_RETURN(Rows r, c.Exec(Locked("SELECT size, etag, last_modified_ms, owner, "
                                               "lease_until_ms FROM objects WHERE job = $1 AND "
                                               "key = $2",
                                               lock),
                                        {job, key}));
  if (r.size() == 0) return std::optional<KeyRow>();
  KeyRow row;
  row.object.key = key;
  row.object.size = static_cast<uint64_t>(std::max<int64_t>(0, r.Int(0, 0)));
  row.object.etag = r.Text(0, 1);
  row.object.last_modified_ms = r.Int(0, 2);
  row.owner = r.Text(0, 3);
  row.lease_until_ms = r.Int(0, 4);
  return std::optional<KeyRow>(std::move(row));
}

// Sets the key's mark whatever it had (the caller holds its lock, or it
// had none).
Status UpsertMark(Conn& c, const std::string& job, const std::string& key, KeyMark mark,
                  const std::string& owner, int64_t lease_until_ms, uint64_t size,
                  const std::string& etag, bool counted, int64_t now_ms) {
  return c
      .Exec(
          "INSERT INTO gateway_keys(job, key, mark, owner, lease_until_ms, size, etag, counted, "
          "at_ms) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9) "
          "ON CONFLICT(job, key) DO UPDATE SET mark = excluded.mark, owner = excluded.owner, "
          "lease_until_ms = excluded.lease_until_ms, size = excluded.size, "
          "etag = excluded.etag, counted = excluded.counted, at_ms = excluded.at_ms",
          {job, key, ToString(mark), owner, pg::IntText(lease_until_ms),
           pg::IntText(static_cast<int64_t>(size)), etag, pg::BoolText(counted),
           pg::IntText(now_ms)})
      .status();
}

// The shards whose prefix `key` starts with (every shard without `key`).
std::vector<int64_t> Covering(const Rows& shards, const std::string* key) {
  std::vector<int64_t> ids;
  for (int i = 0; i < shards.size(); ++i) {
    const std::string prefix = shards.Text(i, 1);
    if (key == nullptr || key->compare(0, prefix.size(), prefix) == 0) {
      ids.push_back(shards.Int(i, 0));
    }
  }
  return ids;
}

}  // namespace

Status PgStateStore::LockShards(Conn& c, const std::string& job, const std::string* key,
                                bool exclusive) {
  constexpr const char* kShards = "SELECT shard, prefix FROM shards WHERE job = $1 ORDER BY shard";
  FERRY_ASSIGN_OR_RETURN(Rows first, c.Exec(kShards, {job}));
  std::vector<int64_t> ids = Covering(first, key);
  for (int attempt = 0; attempt < 10; ++attempt) {
    FERRY_RETURN_IF_ERROR(c.Exec(std::string("SELECT 1 FROM shards WHERE job = $1 AND "
                                             "shard = ANY($2::int[]) ORDER BY shard FOR ") +
                                     (exclusive ? "UPDATE" : "SHARE"),
                                 {job, pg::IntArray(ids)})
                              .status());
    // Waiting for a lock may have let a split, a page that adds prefix
    // shards, or a fallback commit: the shards that statement's snapshot
    // did not see are not locked. The same set read again means every
    // shard that covers the key is locked, and none can be added before
    // this transaction ends (adding one locks a shard held here).
    FERRY_ASSIGN_OR_RETURN(Rows again, c.Exec(kShards, {job}));
    std::vector<int64_t> now = Covering(again, key);
    if (now == ids) return Status::Ok();
    ids = std::move(now);
  }
  return Status::Timeout("state: the shards of job " + job + " kept changing").set_retryable(true);
}

// ClaimKey's decision, and with `lock` its changes, in the caller's
// transaction.
Result<KeyClaim> PgStateStore::ClaimKeyIn(Conn& c, const std::string& job, const std::string& key,
                                          const std::string& owner, int64_t now_ms,
                                          int64_t lease_until_ms, bool insert, bool lock) {
  if (lock) FERRY_RETURN_IF_ERROR(LockShards(c, job, &key, false));
  FERRY_ASSIGN_OR_RETURN(JobRecord rec, ReadJob(c, job));
  FERRY_ASSIGN_OR_RETURN(auto mark, ReadMark(c, job, key, lock));
  FERRY_ASSIGN_OR_RETURN(auto row, ReadRow(c, job, key, lock));
  KeyClaim claim = DecideKeyClaim(row, mark, owner, now_ms, insert);
  claim.listing_done = rec.listing_done;
  claim.state = rec.state;
  if (!rec.listing_done) {
    FERRY_ASSIGN_OR_RETURN(std::vector<ShardRecord> shards, ReadShards(c, job, false));
    claim.unlisted = KeyUnlisted(shards, key);
  }
  if (!lock || claim.kind != KeyClaim::Kind::kClaimed) return claim;
  if (claim.from_row) {
    FERRY_RETURN_IF_ERROR(c.Exec("UPDATE objects SET owner = $3, lease_until_ms = $4, "
                                 "claims = claims + 1 WHERE job = $1 AND key = $2",
                                 {job, key, owner, pg::IntText(lease_until_ms)})
                              .status());
    if (!mark || mark->mark != KeyMark::kClaimed) return claim;
  }
  if (mark) {  // locked above: taken over (or renewed) under its lock
    FERRY_RETURN_IF_ERROR(UpsertMark(c, job, key, KeyMark::kClaimed, owner, lease_until_ms, 0, "",
                                     mark->counted, now_ms));
    return claim;
  }
  // No mark to lock: another gateway may be making one right now, and only
  // one of the two inserts lands.
  FERRY_ASSIGN_OR_RETURN(
      Rows ins, c.Exec("INSERT INTO gateway_keys(job, key, mark, owner, lease_until_ms, size, "
                       "etag, counted, at_ms) VALUES($1, $2, 'claimed', $3, $4, 0, '', false, $5) "
                       "ON CONFLICT(job, key) DO NOTHING",
                       {job, key, owner, pg::IntText(lease_until_ms), pg::IntText(now_ms)}));
  if (ins.affected() == 0) claim.kind = KeyClaim::Kind::kBusy;
  return claim;
}

// Most answers change nothing (the key is finished, marked, or busy), so
// they are read from one snapshot without a lock; only a claim locks, and
// decides again under the locks.
Result<KeyClaim> PgStateStore::ClaimKey(const std::string& job, const std::string& key,
                                        const std::string& owner, int64_t now_ms,
                                        int64_t lease_until_ms, bool insert) {
  FERRY_RETURN_IF_ERROR(CheckClaimArguments(owner, now_ms, lease_until_ms));
  FERRY_ASSIGN_OR_RETURN(KeyClaim peek, RunTxn(
                                            [&](Conn& c) {
                                              return ClaimKeyIn(c, job, key, owner, now_ms,
                                                                lease_until_ms, insert, false);
                                            },
                                            kSnapshot));
  if (peek.kind != KeyClaim::Kind::kClaimed) return peek;
  return RunTxn([&](Conn& c) {
    return ClaimKeyIn(c, job, key, owner, now_ms, lease_until_ms, insert, true);
  });
}

Result<bool> PgStateStore::MarkKey(const std::string& job, const std::string& key,
                                   const std::string& owner, KeyMark mark, uint64_t size,
                                   const std::string& etag, int64_t now_ms) {
  if (mark == KeyMark::kClaimed) {
    return Status::InvalidArgument("MarkKey takes a final mark, not claimed");
  }
  return RunTxn([&](Conn& c) -> Result<bool> {
    FERRY_RETURN_IF_ERROR(LockShards(c, job, &key, false));
    FERRY_RETURN_IF_ERROR(ReadJob(c, job).status());
    FERRY_ASSIGN_OR_RETURN(auto old, ReadMark(c, job, key, true));
    FERRY_ASSIGN_OR_RETURN(auto row, ReadRow(c, job, key, true));
    if (!MayMarkKey(row, old, owner, mark, now_ms)) return false;
    bool counted = old && old->counted;
    if (row) {
      const bool copied = mark == KeyMark::kCopied;
      FERRY_RETURN_IF_ERROR(c.Exec("WITH d AS (DELETE FROM objects WHERE job = $1 AND key = $2), "
                                   "u AS (DELETE FROM uploads WHERE job = $1 AND key = $2) "
                                   "DELETE FROM parts WHERE job = $1 AND key = $2",
                                   {job, key})
                                .status());
      FERRY_RETURN_IF_ERROR(
          c.Exec("UPDATE jobs SET transferred = transferred + $2, skipped = skipped + $3, "
                 "bytes = bytes + $4, pending = pending - 1 WHERE id = $1",
                 {job, copied ? "1" : "0", copied ? "0" : "1",
                  pg::IntText(copied ? static_cast<int64_t>(size) : 0)})
              .status());
      counted = true;
    }
    FERRY_RETURN_IF_ERROR(UpsertMark(c, job, key, mark, "", 0, size, etag, counted, now_ms));
    return true;
  });
}

Status PgStateStore::ReleaseKey(const std::string& job, const std::string& key,
                                const std::string& owner) {
  return RunTxn([&](Conn& c) -> Status {
    FERRY_RETURN_IF_ERROR(LockShards(c, job, &key, false));
    // An uncounted claim goes; a counted one (its key was in the counters
    // before) stays, unowned.
    FERRY_RETURN_IF_ERROR(
        c.Exec("WITH d AS (DELETE FROM gateway_keys WHERE job = $1 AND key = $2 AND "
               "mark = 'claimed' AND owner = $3 AND NOT counted RETURNING 1) "
               "UPDATE gateway_keys SET owner = '', lease_until_ms = 0 "
               "WHERE job = $1 AND key = $2 AND mark = 'claimed' AND owner = $3 AND counted",
               {job, key, owner})
            .status());
    return c
        .Exec(
            "UPDATE objects SET owner = '', lease_until_ms = 0 "
            "WHERE job = $1 AND key = $2 AND owner = $3",
            {job, key, owner})
        .status();
  });
}

Result<std::map<std::string, KeyMark>> PgStateStore::KeyMarks(
    const std::string& job, const std::vector<std::string>& keys) {
  std::map<std::string, KeyMark> marks;
  if (keys.empty()) return marks;
  FERRY_ASSIGN_OR_RETURN(Rows r, Run([&](Conn& c) {
                           return c.Exec(
                               "SELECT key, mark FROM gateway_keys WHERE job = $1 AND "
                               "key = ANY($2::text[]) AND mark <> 'claimed'",
                               {job, pg::TextArray(keys)});
                         }));
  for (int i = 0; i < r.size(); ++i) {
    if (auto m = KeyMarkFromString(r.Text(i, 1))) marks[r.Text(i, 0)] = *m;
  }
  return marks;
}

Status PgStateStore::RecordKey(const std::string& job, const std::string& key, KeyMark mark,
                               int64_t now_ms) {
  if (mark != KeyMark::kWritten && mark != KeyMark::kDeleted) {
    return Status::InvalidArgument("RecordKey takes a client's write or delete");
  }
  return RunTxn([&](Conn& c) -> Status {
    // A requeue of the job's keys (dlq --retry, verify --fix) waits, and
    // sees this mark.
    FERRY_RETURN_IF_ERROR(LockShards(c, job, &key, false));
    return c
        .Exec(
            "INSERT INTO gateway_keys(job, key, mark, owner, lease_until_ms, size, etag, "
            "counted, at_ms) VALUES($1, $2, $3, '', 0, 0, '', true, $4) "
            "ON CONFLICT(job, key) DO UPDATE SET mark = excluded.mark, owner = '', "
            "lease_until_ms = 0, at_ms = excluded.at_ms",
            {job, key, ToString(mark), pg::IntText(now_ms)})
        .status();
  });
}

// Inside CommitListPage's transaction, after its shard's row lock: takes
// the page's marked keys out of `page`, enqueues the claimed ones under
// their owner's lease, and counts the final ones met for the first time.
Result<ListedMarkCounts> PgStateStore::ApplyListedMarks(Conn& c, const std::string& job,
                                                        ListedColumns& page) {
  ListedMarkCounts counts;
  // Most jobs have no marks: one probe spares a lookup per key.
  FERRY_ASSIGN_OR_RETURN(Rows any,
                         c.Exec("SELECT 1 FROM gateway_keys WHERE job = $1 LIMIT 1", {job}));
  if (any.size() == 0 || page.keys.empty()) return counts;
  FERRY_ASSIGN_OR_RETURN(Rows r,
                         c.Exec("SELECT key, mark, owner, lease_until_ms, size, etag, counted "
                                "FROM gateway_keys WHERE job = $1 AND key = ANY($2::text[]) "
                                "ORDER BY key FOR UPDATE",
                                {job, pg::TextArray(page.keys)}));
  std::map<std::string, StoredMark> marks;
  for (int i = 0; i < r.size(); ++i) {
    const std::string key = r.Text(i, 0);
    FERRY_ASSIGN_OR_RETURN(marks[key], MarkFromRow(r, i, 1, job, key));
  }
  if (marks.empty()) return counts;
  std::vector<ListedObject> claimed;
  std::vector<std::string> owners, newly_counted;
  std::vector<int64_t> leases;
  for (size_t i = 0; i < page.keys.size(); ++i) {
    auto it = marks.find(page.keys[i]);
    if (it == marks.end()) continue;
    const StoredMark& m = it->second;
    if (m.mark == KeyMark::kClaimed) {
      claimed.push_back(
          {page.keys[i], static_cast<uint64_t>(page.sizes[i]), page.etags[i], page.times[i]});
      owners.push_back(m.owner);
      leases.push_back(std::max<int64_t>(1, m.lease_until_ms));
    } else if (!m.counted) {
      counts.CountFinal(m);
      newly_counted.push_back(page.keys[i]);
    }
  }
  page.Drop([&](const std::string& key) { return marks.count(key) != 0; });
  if (!claimed.empty()) {
    // Enqueued under the gateway's lease: no worker takes it before the
    // lease ends, and one does when it ends without a result.
    const ListedColumns cols(claimed);
    FERRY_ASSIGN_OR_RETURN(
        Rows ins,
        c.Exec("INSERT INTO objects(job, key, size, etag, last_modified_ms, owner, "
               "lease_until_ms, not_before_ms, attempts, claims, last_error) "
               "SELECT $1, k, s, e, m, o, l, 0, 0, 1, '' FROM unnest($2::text[], $3::bigint[], "
               "$4::text[], $5::bigint[], $6::text[], $7::bigint[]) AS u(k, s, e, m, o, l) "
               "ON CONFLICT(job, key) DO NOTHING",
               {job, pg::TextArray(cols.keys), pg::IntArray(cols.sizes), pg::TextArray(cols.etags),
                pg::IntArray(cols.times), pg::TextArray(owners), pg::IntArray(leases)}));
    counts.enqueued = ins.affected();
  }
  if (!newly_counted.empty()) {
    FERRY_RETURN_IF_ERROR(c.Exec("UPDATE gateway_keys SET counted = true WHERE job = $1 AND "
                                 "key = ANY($2::text[])",
                                 {job, pg::TextArray(newly_counted)})
                              .status());
  }
  return counts;
}

}  // namespace ferry::state
