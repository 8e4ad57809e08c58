// The PostgreSQL state store: listing shards and list pages (state_store.h
// "Listing"). The tables: pg_schema.cc.

#include <algorithm>
#include <set>

#include "state/pg_state_store.h"

namespace ferry::state {

using pg::Conn;
using pg::Rows;

namespace {

// The shards columns in ShardFromRow's order, spliced into the statements
// at compile time.
#define FERRY_SHARD_COLUMNS \
  "shard, prefix, delimiter, seq, token, done, ranged, lower, upper, cursor, relist"

ShardRecord ShardFromRow(const Rows& r, int i) {
  ShardRecord s;
  s.shard = static_cast<int>(r.Int(i, 0));
  s.prefix = r.Text(i, 1);
  s.delimiter = r.Text(i, 2);
  s.seq = r.Int(i, 3);
  s.token = r.Text(i, 4);
  s.done = r.Bool(i, 5);
  s.ranged = r.Bool(i, 6);
  s.lower = r.Text(i, 7);
  s.upper = r.Text(i, 8);
  s.cursor = r.Text(i, 9);
  s.relist = r.Bool(i, 10);
  return s;
}

}  // namespace

ListedColumns::ListedColumns(const std::vector<ListedObject>& objects) {
  for (const ListedObject& o : objects) {
    keys.push_back(o.key);
    etags.push_back(o.etag);
    sizes.push_back(static_cast<int64_t>(o.size));
    times.push_back(o.last_modified_ms);
  }
}

void ListedColumns::Drop(const std::function<bool(const std::string&)>& drop) {
  size_t kept = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (drop(keys[i])) continue;
    if (kept != i) {
      keys[kept] = std::move(keys[i]);
      etags[kept] = std::move(etags[i]);
      sizes[kept] = sizes[i];
      times[kept] = times[i];
    }
    ++kept;
  }
  keys.resize(kept);
  etags.resize(kept);
  sizes.resize(kept);
  times.resize(kept);
}

Status PgStateStore::InsertShards(Conn& c, const std::string& job,
                                  const std::vector<ShardRecord>& shards) {
  std::vector<int64_t> number, seq;
  std::vector<std::string> prefix, delimiter, token, lower, upper, cursor;
  std::vector<bool> done, ranged, relist;
  for (const ShardRecord& s : shards) {
    number.push_back(s.shard);
    prefix.push_back(s.prefix);
    delimiter.push_back(s.delimiter);
    seq.push_back(s.seq);
    token.push_back(s.token);
    done.push_back(s.done);
    ranged.push_back(s.ranged);
    lower.push_back(s.lower);
    upper.push_back(s.upper);
    cursor.push_back(s.cursor);
    relist.push_back(s.relist);
  }
  return c
      .Exec("INSERT INTO shards(job, " FERRY_SHARD_COLUMNS
            ") SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::bigint[], "
            "$6::text[], $7::boolean[], $8::boolean[], $9::text[], $10::text[], $11::text[], "
            "$12::boolean[])",
            {job, pg::IntArray(number), pg::TextArray(prefix), pg::TextArray(delimiter),
             pg::IntArray(seq), pg::TextArray(token), pg::BoolArray(done), pg::BoolArray(ranged),
             pg::TextArray(lower), pg::TextArray(upper), pg::TextArray(cursor),
             pg::BoolArray(relist)})
      .status();
}

Result<std::vector<ShardRecord>> PgStateStore::ReadShards(Conn& c, const std::string& job,
                                                          bool lock) {
  FERRY_ASSIGN_OR_RETURN(
      Rows r,
      c.Exec(lock ? "SELECT " FERRY_SHARD_COLUMNS
                    " FROM shards WHERE job = $1 ORDER BY shard FOR UPDATE"
                  : "SELECT " FERRY_SHARD_COLUMNS " FROM shards WHERE job = $1 ORDER BY shard",
             {job}));
  std::vector<ShardRecord> shards;
  for (int i = 0; i < r.size(); ++i) shards.push_back(ShardFromRow(r, i));
  if (shards.empty()) FERRY_RETURN_IF_ERROR(ReadJob(c, job).status());
  return shards;
}

Result<std::vector<ShardRecord>> PgStateStore::GetShards(const std::string& job) {
  return Run([&](Conn& c) { return ReadShards(c, job, false); });
}

Result<ListPageResult> PgStateStore::CommitListPage(const std::string& job,
                                                    const ListPageCommit& page) {
  ListedColumns cols(page.objects);
  return RunTxn([&](Conn& c) -> Result<ListPageResult> {
    ListPageResult result;
    // The sequence and bounds test and the shard's advance are one statement
    // under the shard's row lock: two listers committing the same page, or
    // a page and a split, apply one.
    FERRY_ASSIGN_OR_RETURN(
        Rows adv, c.Exec("UPDATE shards SET seq = $3, token = $4, done = $5, "
                         "cursor = CASE WHEN $7 = '' THEN cursor ELSE $7 END "
                         "WHERE job = $1 AND shard = $2 AND seq = $3 - 1 AND upper = $6 "
                         "RETURNING relist",
                         {job, pg::IntText(page.shard), pg::IntText(page.seq),
                          page.done ? "" : page.next_token, pg::BoolText(page.done), page.upper,
                          page.cursor}));
    if (adv.size() == 0) {
      FERRY_ASSIGN_OR_RETURN(Rows has, c.Exec("SELECT 1 FROM shards WHERE job = $1 AND shard = $2",
                                              {job, pg::IntText(page.shard)}));
      if (has.size() > 0) return result;  // a replay, a gap or a split: nothing changes
      FERRY_RETURN_IF_ERROR(ReadJob(c, job).status());
      return result;  // gone: replaced by a fallback
    }
    const bool relist = adv.Bool(0, 0);
    FERRY_ASSIGN_OR_RETURN(ListedMarkCounts marked, ApplyListedMarks(c, job, cols));
    if (!cols.keys.empty()) {
      // A relisting shard's keys count as claimed once: their transfer asks
      // the destination first (policy.h NeedDestinationCheck); and a key it
      // finds in the dead-letter queue stays there.
      FERRY_ASSIGN_OR_RETURN(
          Rows ins,
          c.Exec("INSERT INTO objects(job, key, size, etag, last_modified_ms, owner, "
                 "lease_until_ms, not_before_ms, attempts, claims, last_error) "
                 "SELECT $1, k, s, e, m, '', 0, 0, 0, $6, '' "
                 "FROM unnest($2::text[], $3::bigint[], $4::text[], $5::bigint[]) AS u(k, s, e, m) "
                 "WHERE $6 = 0 OR NOT EXISTS(SELECT 1 FROM dlq WHERE job = $1 AND key = u.k) "
                 "ON CONFLICT(job, key) DO NOTHING",
                 {job, pg::TextArray(cols.keys), pg::IntArray(cols.sizes),
                  pg::TextArray(cols.etags), pg::IntArray(cols.times), relist ? "1" : "0"}));
      result.enqueued = ins.affected();
    }
    if (!page.new_shards.empty()) {
      FERRY_RETURN_IF_ERROR(
          c.Exec("INSERT INTO shards(job, shard, prefix, delimiter, seq, token, done, relist) "
                 "SELECT $1, last.n + u.i, u.p, '', 0, '', false, $3 "
                 "FROM unnest($2::text[]) WITH ORDINALITY AS u(p, i), "
                 "(SELECT COALESCE(MAX(shard), -1) AS n FROM shards WHERE job = $1) AS last",
                 {job, pg::TextArray(page.new_shards), pg::BoolText(relist)})
              .status());
    }
    // listing_done asks about every shard, and other listers may be ending
    // theirs right now: in READ COMMITTED each would see the others' shards
    // as still listing, and the last to commit would leave the job waiting
    // for ever. Taking the job's row lock first (after the shard and object
    // rows, the order Finish uses too) makes those ends take turns, and the
    // next statement's snapshot sees every shard that ended before.
    FERRY_RETURN_IF_ERROR(c.Exec("SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE", {job}).status());
    result.enqueued += marked.enqueued;
    FERRY_RETURN_IF_ERROR(
        c.Exec("UPDATE jobs SET listed = listed + $2 + $3 + $4, pending = pending + $2, "
               "skipped = skipped + $3 + $5, transferred = transferred + $6, bytes = bytes + $7, "
               "listing_done = NOT EXISTS(SELECT 1 FROM shards WHERE job = $1 AND NOT done) "
               "WHERE id = $1",
               {job, pg::IntText(result.enqueued), pg::IntText(page.unchanged),
                pg::IntText(marked.listed), pg::IntText(marked.skipped),
                pg::IntText(marked.transferred), pg::IntText(marked.bytes)})
            .status());
    result.applied = true;
    return result;
  });
}

Result<std::vector<ShardRecord>> PgStateStore::SplitShard(const std::string& job, int shard,
                                                          const std::string& expect_upper,
                                                          const std::vector<std::string>& bounds) {
  return RunTxn([&](Conn& c) -> Result<std::vector<ShardRecord>> {
    // Every shard row locked: the new shards' numbers come from them.
    FERRY_ASSIGN_OR_RETURN(std::vector<ShardRecord> all, ReadShards(c, job, true));
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
    FERRY_RETURN_IF_ERROR(c.Exec("UPDATE shards SET upper = $3 WHERE job = $1 AND shard = $2",
                                 {job, pg::IntText(shard), bounds.front()})
                              .status());
    FERRY_RETURN_IF_ERROR(InsertShards(c, job, made));
    return made;
  });
}

Result<ShardRecord> PgStateStore::FallBackToFlatListing(const std::string& job,
                                                        const std::string& prefix,
                                                        const std::string& lower,
                                                        const std::string& upper) {
  return RunTxn([&](Conn& c) -> Result<ShardRecord> {
    FERRY_ASSIGN_OR_RETURN(std::vector<ShardRecord> all, ReadShards(c, job, true));
    FERRY_RETURN_IF_ERROR(c.Exec("SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE", {job}).status());
    FERRY_ASSIGN_OR_RETURN(JobRecord j, ReadJob(c, job));
    FERRY_RETURN_IF_ERROR(CheckFallBack(j));
    ShardRecord flat;
    flat.prefix = prefix;
    flat.lower = lower;
    flat.upper = upper;
    flat.relist = j.counters.listed > 0;
    for (const ShardRecord& s : all) flat.shard = std::max(flat.shard, s.shard + 1);
    FERRY_RETURN_IF_ERROR(c.Exec("DELETE FROM shards WHERE job = $1", {job}).status());
    FERRY_RETURN_IF_ERROR(InsertShards(c, job, {flat}));
    // What finished before is listed again: the counters start over from
    // what is left (state_store.h).
    FERRY_RETURN_IF_ERROR(c.Exec(flat.relist
                                     ? "UPDATE jobs SET listing_done = false, listed = failed, "
                                       "transferred = 0, skipped = 0, bytes = 0 WHERE id = $1"
                                     : "UPDATE jobs SET listing_done = false WHERE id = $1",
                                 {job})
                              .status());
    if (flat.relist) {
      // Marked keys are counted again when the relisting meets them.
      FERRY_RETURN_IF_ERROR(
          c.Exec("UPDATE gateway_keys SET counted = false WHERE job = $1 AND key IN "
                 "(SELECT key FROM gateway_keys WHERE job = $1 ORDER BY key FOR UPDATE)",
                 {job})
              .status());
    }
    return flat;
  });
}

Result<int64_t> PgStateStore::RequeueKeys(const std::string& job,
                                          const std::vector<ListedObject>& objects) {
  ListedColumns cols(objects);
  return RunTxn([&](Conn& c) -> Result<int64_t> {
    FERRY_RETURN_IF_ERROR(ReadJob(c, job).status());
    // The shards first: a gateway's mark of one of these keys waits, and
    // is seen below.
    FERRY_RETURN_IF_ERROR(LockShards(c, job, nullptr, true));
    // A key written or deleted through a gateway differs from the source
    // on purpose: it is never requeued over.
    FERRY_ASSIGN_OR_RETURN(
        Rows users, c.Exec("SELECT key FROM gateway_keys WHERE job = $1 AND key = ANY($2::text[]) "
                           "AND mark IN ('written', 'deleted')",
                           {job, pg::TextArray(cols.keys)}));
    if (users.size() > 0) {
      std::set<std::string> theirs;
      for (int i = 0; i < users.size(); ++i) theirs.insert(users.Text(i, 0));
      cols.Drop([&](const std::string& key) { return theirs.count(key) != 0; });
    }
    // Object and dead-letter rows first, the job's row last: the order
    // Finish takes its locks in.
    FERRY_ASSIGN_OR_RETURN(
        Rows moved,
        c.Exec("WITH d AS (DELETE FROM dlq WHERE job = $1 AND key = ANY($2::text[]) "
               "  RETURNING key, size, etag, last_modified_ms), "
               "i AS (INSERT INTO objects(job, key, size, etag, last_modified_ms, owner, "
               "  lease_until_ms, not_before_ms, attempts, claims, last_error, force) "
               "  SELECT $1, key, size, etag, last_modified_ms, '', 0, 0, 0, 0, '', true FROM d "
               "  ON CONFLICT(job, key) DO UPDATE SET force = true) "
               "SELECT COUNT(*) FROM d",
               {job, pg::TextArray(cols.keys)}));
    FERRY_RETURN_IF_ERROR(c.Exec("UPDATE objects SET force = true WHERE job = $1 AND "
                                 "key = ANY($2::text[])",
                                 {job, pg::TextArray(cols.keys)})
                              .status());
    FERRY_ASSIGN_OR_RETURN(
        Rows ins,
        c.Exec("INSERT INTO objects(job, key, size, etag, last_modified_ms, owner, "
               "lease_until_ms, not_before_ms, attempts, claims, last_error, force) "
               "SELECT $1, k, s, e, m, '', 0, 0, 0, 0, '', true "
               "FROM unnest($2::text[], $3::bigint[], $4::text[], $5::bigint[]) AS u(k, s, e, m) "
               "ON CONFLICT(job, key) DO NOTHING",
               {job, pg::TextArray(cols.keys), pg::IntArray(cols.sizes), pg::TextArray(cols.etags),
                pg::IntArray(cols.times)}));
    const int64_t back = moved.Int(0, 0), added = ins.affected();
    FERRY_RETURN_IF_ERROR(
        c.Exec("UPDATE jobs SET listed = listed + $2, pending = pending + $3, "
               "failed = failed - $4 WHERE id = $1",
               {job, pg::IntText(added), pg::IntText(added + back), pg::IntText(back)})
            .status());
    return added + back;
  });
}

}  // namespace ferry::state
