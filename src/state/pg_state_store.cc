// The PostgreSQL state store: opening, the connection pool, jobs and list
// pages. Work on object rows is in pg_state_store_work.cc; the tables are
// pg_schema.cc's (the same layout as the SQLite store's, described at the
// top of sqlite_state_store.cc, with BOOLEAN flags and COLLATE "C" keys).

#include "state/pg_state_store.h"

#include "state/job_table.h"
#include "state/pg_schema.h"

namespace ferry::state {

using pg::Conn;
using pg::Rows;

// ---- Opening and the pool ----

PgStateStore::PgStateStore(std::string conninfo, std::unique_ptr<Conn> first)
    : conninfo_(std::move(conninfo)) {
  idle_.push_back(std::move(first));
}

namespace {

// Every statement the store runs has an index path by job, and a queue's
// statistics are always stale (a job's objects table goes from empty to
// millions of rows and back within one autovacuum period). With the
// statistics of an empty table the planner picked sequential scans for
// Finish, and for Claim a bitmap scan of every unowned row followed by a
// sort (spilling to disk) to keep 256 of them: both grew with the job.
// Without sequential and bitmap scans, each plan walks its index in order
// and stops at the LIMIT.
Status ConfigureSession(Conn& c) {
  return c.ExecScript("SET enable_seqscan = off; SET enable_bitmapscan = off");
}

}  // namespace

Result<std::unique_ptr<StateStore>> PgStateStore::Open(const std::string& conninfo) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Conn> c, Conn::Open(conninfo));
  FERRY_RETURN_IF_ERROR(pg::MigrateSchema(*c).status());
  FERRY_RETURN_IF_ERROR(ConfigureSession(*c));
  return std::unique_ptr<StateStore>(new PgStateStore(conninfo, std::move(c)));
}

PgStateStore::Lease::~Lease() {
  if (store_ == nullptr) return;  // moved from
  const bool usable = conn_ != nullptr && conn_->healthy() && conn_->idle();
  {
    std::lock_guard lock(store_->mu_);
    --store_->in_use_;
    if (usable) store_->idle_.push_back(std::move(conn_));
  }
  store_->freed_.notify_one();
}

Result<PgStateStore::Lease> PgStateStore::Take() {
  std::unique_ptr<Conn> c;
  {
    std::unique_lock lock(mu_);
    freed_.wait(lock, [&] { return !idle_.empty() || in_use_ + idle_.size() < kMaxOpen; });
    ++in_use_;
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  Lease lease(this);  // holds the slot from here, given back on every path
  if (c != nullptr && !c->CheckAlive()) {
    // The server went away while this connection sat idle (a restart):
    // connect again, or report the outage as a retryable error.
    FERRY_RETURN_IF_ERROR(c->Reset());
    FERRY_RETURN_IF_ERROR(ConfigureSession(*c));
  }
  if (c == nullptr) {
    auto opened = Conn::Open(conninfo_);
    if (!opened.ok()) return opened.status();
    c = std::move(*opened);
    FERRY_RETURN_IF_ERROR(ConfigureSession(*c));
  }
  lease.set(std::move(c));
  return lease;
}

// ---- Jobs ----

namespace {

const JobStatements& kPgJobSql = JobSql(SqlDialect::kPostgres);

// Row i of a result, as JobFromRow reads it.
struct ResultRow {
  const Rows& r;
  int i;
  std::string Text(int c) const { return r.Text(i, c); }
  int64_t Int(int c) const { return r.Int(i, c); }
  double Double(int c) const { return r.Double(i, c); }
  bool Bool(int c) const { return r.Bool(i, c); }
};

Result<JobRecord> JobFromRow(const Rows& r, int i) {
  return state::JobFromRow(ResultRow{r, i}, "PostgreSQL state");
}

}  // namespace

Result<JobRecord> PgStateStore::ReadJob(Conn& c, const std::string& id) {
  FERRY_ASSIGN_OR_RETURN(Rows r, c.Exec(kPgJobSql.select, {id}));
  if (r.size() == 0) return Status::NotFound("no job " + id);
  return JobFromRow(r, 0);
}

Status PgStateStore::CreateJob(const JobRecord& job, const std::vector<ShardRecord>& shards) {
  if (job.id.empty()) return Status::InvalidArgument("job id is empty");
  std::vector<ShardRecord> all = shards;
  if (all.empty()) all.emplace_back();  // shard 0 always exists
  bool listing_done = true;
  for (const ShardRecord& s : all) listing_done = listing_done && s.done;
  return RunTxn([&](Conn& c) -> Status {
    FERRY_ASSIGN_OR_RETURN(Rows old, c.Exec("SELECT 1 FROM archived_jobs WHERE id = $1", {job.id}));
    if (old.size() > 0)
      return Status::AlreadyExists("job " + job.id + " already exists (archived)");
    // Counters start at zero: they count what this store saw happen.
    FERRY_ASSIGN_OR_RETURN(
        Rows ins,
        c.Exec(kPgJobSql.insert,
               {job.id, job.src, job.dst, job.spec, ToString(job.state),
                pg::IntText(job.created_ms), pg::IntText(job.started_ms),
                pg::IntText(job.finished_ms), std::to_string(job.run_seconds),
                pg::BoolText(listing_done), job.runner, pg::IntText(job.runner_until_ms)}));
    if (ins.affected() == 0) return Status::AlreadyExists("job " + job.id + " already exists");
    return InsertShards(c, job.id, all);
  });
}

namespace {

Result<std::vector<JobRecord>> JobsFromRows(const Rows& r, bool archived) {
  std::vector<JobRecord> jobs;
  for (int i = 0; i < r.size(); ++i) {
    FERRY_ASSIGN_OR_RETURN(JobRecord j, JobFromRow(r, i));
    j.archived = archived;
    if (archived) j.archived_ms = r.Int(i, 18);
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace

Result<JobRecord> PgStateStore::GetJob(const std::string& id) {
  // A live job is one read. Otherwise both tables are read again in one
  // snapshot: a job moving between them meanwhile is found in one of them.
  auto live = Run([&](Conn& c) { return ReadJob(c, id); });
  if (live.ok() || live.status().code() != ErrorCode::kNotFound) return live;
  return RunTxn(
      [&](Conn& c) -> Result<JobRecord> {
        auto again = ReadJob(c, id);
        if (again.ok() || again.status().code() != ErrorCode::kNotFound) return again;
        FERRY_ASSIGN_OR_RETURN(Rows r, c.Exec(kPgJobSql.select_archived, {id}));
        if (r.size() == 0) return Status::NotFound("no job " + id);
        FERRY_ASSIGN_OR_RETURN(std::vector<JobRecord> jobs, JobsFromRows(r, true));
        return std::move(jobs.front());
      },
      kSnapshot);
}

Result<std::vector<JobRecord>> PgStateStore::ListJobs() {
  return Run([&](Conn& c) -> Result<std::vector<JobRecord>> {
    FERRY_ASSIGN_OR_RETURN(Rows r, c.Exec(kPgJobSql.list));
    return JobsFromRows(r, false);
  });
}

Result<std::vector<JobRecord>> PgStateStore::ListArchivedJobs() {
  return Run([&](Conn& c) -> Result<std::vector<JobRecord>> {
    FERRY_ASSIGN_OR_RETURN(Rows r, c.Exec(kPgJobSql.list_archived));
    return JobsFromRows(r, true);
  });
}

Status PgStateStore::ArchiveJob(const std::string& id, int64_t now_ms) {
  return RunTxn([&](Conn& c) -> Status {
    // The row locks keep runners and gateways from changing the job while
    // it moves, taken in the order every writer takes them: the job's
    // shard rows, its object rows, then its jobs row (a Finish or a
    // gateway's mark racing the archive waits, never deadlocks).
    FERRY_RETURN_IF_ERROR(
        c.Exec("SELECT 1 FROM shards WHERE job = $1 ORDER BY shard FOR UPDATE", {id}).status());
    FERRY_RETURN_IF_ERROR(
        c.Exec("SELECT 1 FROM objects WHERE job = $1 ORDER BY key FOR UPDATE", {id}).status());
    FERRY_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT state FROM jobs WHERE id = $1 FOR UPDATE", {id}));
    if (r.size() == 0) {
      FERRY_ASSIGN_OR_RETURN(Rows a, c.Exec("SELECT 1 FROM archived_jobs WHERE id = $1", {id}));
      return a.size() > 0 ? Status::Ok() : Status::NotFound("no job " + id);  // archived already
    }
    auto state = JobStateFromString(r.Text(0, 0));
    if (!state || !IsFinal(*state)) {
      return Status(ErrorCode::kPreconditionFailed,
                    "job " + id + " is " + r.Text(0, 0) + ", not finished");
    }
    FERRY_RETURN_IF_ERROR(c.Exec(kPgJobSql.archive, {id, pg::IntText(now_ms)}).status());
    FERRY_RETURN_IF_ERROR(c.Exec(kPgJobSql.clear_archived_dlq, {id}).status());
    FERRY_RETURN_IF_ERROR(c.Exec(kPgJobSql.archive_dlq, {id}).status());
    for (const char* sql :
         {"DELETE FROM dlq WHERE job = $1", "DELETE FROM objects WHERE job = $1",
          "DELETE FROM shards WHERE job = $1", "DELETE FROM uploads WHERE job = $1",
          "DELETE FROM parts WHERE job = $1", "DELETE FROM job_live WHERE job = $1",
          // A gateway's writes and deletes outlive the job: what runs on it
          // later (--delete, verify --fix, dlq --retry, a gateway after a
          // failed job) must still leave them alone. Claims and copies are
          // done with.
          "DELETE FROM gateway_keys WHERE job = $1 AND key IN (SELECT key FROM gateway_keys "
          "WHERE job = $1 AND mark IN ('claimed', 'copied') ORDER BY key FOR UPDATE)",
          "DELETE FROM jobs WHERE id = $1"}) {
      FERRY_RETURN_IF_ERROR(c.Exec(sql, {id}).status());
    }
    return Status::Ok();
  });
}

Status PgStateStore::RestoreJob(const std::string& id) {
  return RunTxn([&](Conn& c) -> Status {
    FERRY_ASSIGN_OR_RETURN(
        Rows r, c.Exec("SELECT pending FROM archived_jobs WHERE id = $1 FOR UPDATE", {id}));
    if (r.size() == 0) return ReadJob(c, id).status();  // live already, or no such job
    if (r.Int(0, 0) > 0) {
      return Status(ErrorCode::kPreconditionFailed,
                    "job " + id + " was archived with keys pending; they are gone");
    }
    FERRY_RETURN_IF_ERROR(c.Exec(kPgJobSql.restore, {id}).status());
    for (const char* sql :
         {"INSERT INTO dlq SELECT * FROM archived_dlq WHERE job = $1",
          "DELETE FROM archived_dlq WHERE job = $1", "DELETE FROM archived_jobs WHERE id = $1"}) {
      FERRY_RETURN_IF_ERROR(c.Exec(sql, {id}).status());
    }
    return Status::Ok();
  });
}

Status PgStateStore::AcquireJob(const std::string& id, const std::string& runner, int64_t now_ms,
                                int64_t until_ms, bool force) {
  if (runner.empty()) return Status::InvalidArgument("runner is empty");
  return Run([&](Conn& c) -> Status {
    // One statement: the holder test runs under the row lock, on the
    // newest version of the row. A new run is not finished (any more);
    // started_ms is kept from the first run.
    FERRY_ASSIGN_OR_RETURN(Rows r,
                           c.Exec("UPDATE jobs SET runner = $2, runner_until_ms = $3, state = $4, "
                                  "finished_ms = 0, started_ms = CASE WHEN started_ms = 0 THEN $5 "
                                  "ELSE started_ms END WHERE id = $1 AND ($6 OR runner = '' OR "
                                  "runner = $2 OR runner_until_ms <= $5)",
                                  {id, runner, pg::IntText(until_ms), ToString(JobState::kRunning),
                                   pg::IntText(now_ms), pg::BoolText(force)}));
    if (r.affected() == 1) return Status::Ok();
    FERRY_ASSIGN_OR_RETURN(JobRecord job, ReadJob(c, id));
    return JobHeldError(id, job.runner, job.runner_until_ms, now_ms);
  });
}

Status PgStateStore::RenewJob(const std::string& id, const std::string& runner, int64_t until_ms) {
  return Run([&](Conn& c) -> Status {
    FERRY_ASSIGN_OR_RETURN(
        Rows r, c.Exec("UPDATE jobs SET runner_until_ms = $3 WHERE id = $1 AND runner = $2 "
                       "AND runner <> ''",
                       {id, runner, pg::IntText(until_ms)}));
    if (r.affected() == 1) return Status::Ok();
    FERRY_ASSIGN_OR_RETURN(JobRecord job, ReadJob(c, id));
    if (job.runner.empty()) {
      return Status(ErrorCode::kPreconditionFailed, "job " + id + " has no runner any more");
    }
    return JobHeldError(id, job.runner, job.runner_until_ms, 0);
  });
}

Status PgStateStore::SetJobState(const std::string& id, JobState state, int64_t now_ms,
                                 double add_run_seconds, bool release) {
  const bool final = IsFinal(state);
  return RunTxn([&](Conn& c) -> Status {
    FERRY_ASSIGN_OR_RETURN(Rows r,
                           c.Exec("UPDATE jobs SET state = $2, "
                                  "finished_ms = CASE WHEN $3 THEN $4 ELSE finished_ms END, "
                                  "run_seconds = run_seconds + $5, "
                                  "runner = CASE WHEN $6 THEN '' ELSE runner END, "
                                  "runner_until_ms = CASE WHEN $6 THEN 0 ELSE runner_until_ms END "
                                  "WHERE id = $1",
                                  {id, ToString(state), pg::BoolText(final), pg::IntText(now_ms),
                                   std::to_string(add_run_seconds), pg::BoolText(release)}));
    if (r.affected() == 0) return Status::NotFound("no job " + id);
    if (state != JobState::kCompleted) return Status::Ok();
    // A completed job lists nothing again: its shards' tokens are of no
    // more use.
    return c.Exec("DELETE FROM shards WHERE job = $1", {id}).status();
  });
}

}  // namespace ferry::state
