// The SQLite state store: opening a state file, jobs and list pages. Work on
// object rows is in sqlite_state_store_work.cc.
//
// Table layout (schema version 1). Keys compare as bytes (SQLite's BINARY
// collation, S3's order; a PostgreSQL port needs COLLATE "C"). Times are Unix
// milliseconds; booleans are INTEGER 0/1.
//
//   meta(key PK, value)        ('app', 'ferry-state'), ('schema_version', '5').
//                              A database without this table is not ours.
//   jobs(id PK, src, dst, spec, state, created_ms, started_ms, finished_ms,
//        run_seconds, listing_done, runner, runner_until_ms,
//        listed, transferred, skipped, failed, bytes, pending)
//                              One row per job. The six counters are
//                              JobCounters; each changes in the transaction
//                              that changes the rows it counts, so
//                              transferred + skipped + failed + pending = listed.
//                              pending = the job's rows in objects.
//   shards(job, shard, prefix, delimiter, seq, token, done, ranged, lower,
//          upper, cursor, relist; PK(job, shard))
//                              One source listing each (ShardRecord); seq =
//                              pages committed, token = continuation for page
//                              seq + 1. (version 3) ranged/lower/upper/cursor:
//                              a range shard's bounds and last key; relist.
//   objects(job, key, size, etag, last_modified_ms, owner, lease_until_ms,
//           not_before_ms, attempts, claims, last_error, force; PK(job, key))
//                              Keys still to move. Unowned: owner '' and
//                              lease_until_ms 0. Owned: lease_until_ms > 0;
//                              the owner may act on it until someone else
//                              claims it after the lease expired. Finished
//                              rows are deleted (pruned).
//     INDEX objects_by_lease(job, lease_until_ms, key)
//                              Claim reads unowned rows (lease 0) in key
//                              order straight off it, and expired leases as
//                              a short range; owner-wide updates (RenewLeases,
//                              ReleaseOwner) scan only leased rows.
//   dlq(job, key, size, etag, last_modified_ms, reason, attempts, last_error,
//       at_ms; PK(job, key))   The dead-letter queue (failed = its rows).
//   uploads(job, key, upload_id, src_etag, part_size; PK(job, key))
//   job_live(job PK, at_ms, live)
//                              (version 4) A running job's latest report
//                              (JobLive); removed when the job is archived.
//   parts(job, key, number, etag, size; PK(job, key, number))
//                              Multipart progress; removed with the key's
//                              objects row by Finish and DeadLetterObject.
//   gateway_keys(job, key, mark, owner, lease_until_ms, size, etag, counted,
//                at_ms; PK(job, key))
//                              (version 5) What a gateway recorded of a key
//                              (state_store.h KeyMark; sqlite_state_store_
//                              gateway.cc); counted: the key is in the job's
//                              counters already. Removed when archived.
//   archived_jobs(the jobs columns, archived_ms; PK id)
//   archived_dlq(the dlq columns; PK(job, key))
//                              (version 2) The archive: ArchiveJob moves a
//                              finished job's row and dead letters here and
//                              deletes its other rows; RestoreJob moves
//                              them back.
//
// "Keys ever enqueued" is exact under one assumption the caller keeps: shard
// listings do not overlap. A key is counted when its INSERT ... ON CONFLICT DO
// NOTHING inserts a row; a key that was finished (pruned) or dead-lettered
// and then listed again by another shard would be counted twice.
//
// Opening: a non-empty file must start with SQLite's header and hold at
// least one page (checked by reading it, before SQLite touches it), and a
// database with any table must have ferry's meta rows. An empty database
// (no tables: a new or zero-length file) gets the schema, created under the
// write lock so that two processes opening a new file at once create it
// once; an older ferry's (version 1) is upgraded the same way. Only then is
// the journal switched to WAL. Anything else is kCorruption and the file is
// never written.

#include "state/sqlite_state_store.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "state/job_table.h"

namespace ferry::state {
namespace {

using sqlite::Db;
using sqlite::Stmt;
using sqlite::Txn;

constexpr const char* kApp = "ferry-state";
constexpr int kSchemaVersion = 5;

// Version 1: meta, the jobs table from job_table.h, then these (in that
// order, which fixes the pages they take in a new file).
constexpr const char* kSchemaMeta = "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n";
constexpr const char* kSchemaRest = R"sql(
CREATE TABLE shards(
  job TEXT NOT NULL, shard INTEGER NOT NULL, prefix TEXT NOT NULL, delimiter TEXT NOT NULL,
  seq BIGINT NOT NULL, token TEXT NOT NULL, done INTEGER NOT NULL,
  PRIMARY KEY(job, shard));
CREATE TABLE objects(
  job TEXT NOT NULL, key TEXT NOT NULL, size BIGINT NOT NULL, etag TEXT NOT NULL,
  last_modified_ms BIGINT NOT NULL, owner TEXT NOT NULL, lease_until_ms BIGINT NOT NULL,
  not_before_ms BIGINT NOT NULL, attempts INTEGER NOT NULL, claims INTEGER NOT NULL,
  last_error TEXT NOT NULL, PRIMARY KEY(job, key));
CREATE INDEX objects_by_lease ON objects(job, lease_until_ms, key);
CREATE TABLE dlq(
  job TEXT NOT NULL, key TEXT NOT NULL, size BIGINT NOT NULL, etag TEXT NOT NULL,
  last_modified_ms BIGINT NOT NULL, reason TEXT NOT NULL, attempts INTEGER NOT NULL,
  last_error TEXT NOT NULL, at_ms BIGINT NOT NULL, PRIMARY KEY(job, key));
CREATE TABLE uploads(
  job TEXT NOT NULL, key TEXT NOT NULL, upload_id TEXT NOT NULL, src_etag TEXT NOT NULL,
  part_size BIGINT NOT NULL, PRIMARY KEY(job, key));
CREATE TABLE parts(
  job TEXT NOT NULL, key TEXT NOT NULL, number INTEGER NOT NULL, etag TEXT NOT NULL,
  size BIGINT NOT NULL, PRIMARY KEY(job, key, number));
)sql";

// Version 2: the archive. Finished jobs move here with their summary and
// their dead-letter entries, so the tables above hold live jobs only.
constexpr const char* kSchemaV2Rest = R"sql(
CREATE TABLE archived_dlq(
  job TEXT NOT NULL, key TEXT NOT NULL, size BIGINT NOT NULL, etag TEXT NOT NULL,
  last_modified_ms BIGINT NOT NULL, reason TEXT NOT NULL, attempts INTEGER NOT NULL,
  last_error TEXT NOT NULL, at_ms BIGINT NOT NULL, PRIMARY KEY(job, key));
)sql";

// Version 3: range shards (state_store.h ShardRecord): the bounds of a
// shard's key range, the last key it committed, and whether it relists;
// objects requeued to be copied whatever the destination holds (force).
constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE objects ADD COLUMN force INTEGER NOT NULL DEFAULT 0;
ALTER TABLE shards ADD COLUMN ranged INTEGER NOT NULL DEFAULT 0;
ALTER TABLE shards ADD COLUMN lower TEXT NOT NULL DEFAULT '';
ALTER TABLE shards ADD COLUMN upper TEXT NOT NULL DEFAULT '';
ALTER TABLE shards ADD COLUMN cursor TEXT NOT NULL DEFAULT '';
ALTER TABLE shards ADD COLUMN relist INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 4: what each running job's runner last reported (JobLive).
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE job_live(job TEXT PRIMARY KEY, at_ms BIGINT NOT NULL, live TEXT NOT NULL);
)sql";

// Version 5: what a gateway in front of a job recorded per key (KeyMark).
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE gateway_keys(
  job TEXT NOT NULL, key TEXT NOT NULL, mark TEXT NOT NULL, owner TEXT NOT NULL,
  lease_until_ms BIGINT NOT NULL, size BIGINT NOT NULL, etag TEXT NOT NULL,
  counted INTEGER NOT NULL, at_ms BIGINT NOT NULL, PRIMARY KEY(job, key));
)sql";

Status NotOurs(const std::string& path, const std::string& reason) {
  return Status::Corruption("state file " + path + " is not a ferry state database (" + reason +
                            "); refusing to touch it")
      .set_retryable(false);
}

// Why a non-empty file cannot be an SQLite database, or "" if its header
// looks right. Reads the first 100 bytes only.
std::string HeaderProblem(const std::string& path, uintmax_t size) {
  unsigned char h[100] = {};
  std::ifstream in(path, std::ios::binary);
  if (size < sizeof(h) || !in.read(reinterpret_cast<char*>(h), sizeof(h))) {
    return "file is not a database";
  }
  static const char kMagic[16] = "SQLite format 3";  // with its NUL
  if (std::memcmp(h, kMagic, sizeof(kMagic)) != 0) return "file is not a database";
  uint32_t page = (uint32_t{h[16]} << 8) | h[17];
  if (page == 1) page = 65536;
  if (page < 512 || (page & (page - 1)) != 0) return "file is not a database";
  if (size < page) return "file is truncated";
  return "";
}

// The state files this process has open, by path, with how many stores
// hold each. Reading a file's header through a descriptor of our own and
// closing it would drop every POSIX lock the process holds on that file,
// SQLite's included (fcntl locks belong to the process, not the
// descriptor): a second store on a file open here (ferry migrate --serve:
// the job and its gateway) lost the first one's WAL locks, and other
// processes stopped seeing its commits. So a file already open here skips
// the header check (the first store made it).
class OpenFiles {
 public:
  static bool IsOpen(const std::string& path) {
    std::lock_guard lock(mu());
    return counts().count(path) > 0;
  }
  // Counts `path` open until the returned mark is dropped.
  static std::shared_ptr<void> Mark(const std::string& path) {
    std::lock_guard lock(mu());
    counts()[path]++;
    return std::shared_ptr<void>(nullptr, [path](void*) {
      std::lock_guard lock(mu());
      if (--counts()[path] == 0) counts().erase(path);
    });
  }

 private:
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  static std::map<std::string, int>& counts() {
    static std::map<std::string, int> c;
    return c;
  }
};

Result<int64_t> QueryInt(Db& db, const std::string& sql) {
  FERRY_ASSIGN_OR_RETURN(Stmt st, db.Prepare(sql));
  FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

// Checks that a database with tables is a ferry state database this build
// can read; returns its schema version (1 .. kSchemaVersion).
Result<int> VerifyMeta(Db& db) {
  FERRY_ASSIGN_OR_RETURN(
      int64_t has_meta,
      QueryInt(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'"));
  if (has_meta == 0) return NotOurs(db.path(), "it has no ferry meta table");
  auto st = db.Prepare("SELECT key, value FROM meta");
  if (!st.ok()) return NotOurs(db.path(), "its meta table is not ferry's");
  std::map<std::string, std::string> meta;
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    meta[st->Text(0)] = st->Text(1);
  }
  if (meta["app"] != kApp) return NotOurs(db.path(), "its meta table names no ferry state");
  const std::string& v = meta["schema_version"];
  int version = -1;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), version);
  if (ec != std::errc() || end != v.data() + v.size()) version = -1;
  if (version > kSchemaVersion) {
    return Status::Unsupported("state file " + db.path() + " has schema version " + v +
                               "; this ferry reads up to " + std::to_string(kSchemaVersion));
  }
  if (version < 1) return NotOurs(db.path(), "bad schema version '" + v + "'");
  return version;
}

std::string SchemaV1() { return kSchemaMeta + JobTableDdl(SqlDialect::kSqlite, false) + kSchemaRest; }
std::string SchemaV2() { return JobTableDdl(SqlDialect::kSqlite, true) + kSchemaV2Rest; }

// Brings a ferry database at `version` to kSchemaVersion, inside the
// caller's write transaction.
Status Upgrade(Db& db, int version) {
  if (version < 2) FERRY_RETURN_IF_ERROR(db.Exec(SchemaV2()));
  if (version < 3) FERRY_RETURN_IF_ERROR(db.Exec(kSchemaV3));
  if (version < 4) FERRY_RETURN_IF_ERROR(db.Exec(kSchemaV4));
  if (version < 5) FERRY_RETURN_IF_ERROR(db.Exec(kSchemaV5));
  FERRY_ASSIGN_OR_RETURN(Stmt st, db.Prepare("UPDATE meta SET value = ? WHERE key = ?"));
  return st.Bind(std::to_string(kSchemaVersion), "schema_version").Run();
}

Status InitOrVerify(Db& db) {
  {
    Txn txn(db);
    FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kRead));
    FERRY_ASSIGN_OR_RETURN(int64_t tables, QueryInt(db, "SELECT COUNT(*) FROM sqlite_master"));
    if (tables > 0) {
      FERRY_ASSIGN_OR_RETURN(int version, VerifyMeta(db));
      if (version == kSchemaVersion) return Status::Ok();
    }
  }
  // An empty database gets the schema, an older ferry's is upgraded: under
  // the write lock, looking again, since another process may have done it
  // while we waited.
  Txn txn(db);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  FERRY_ASSIGN_OR_RETURN(int64_t tables, QueryInt(db, "SELECT COUNT(*) FROM sqlite_master"));
  if (tables > 0) {
    FERRY_ASSIGN_OR_RETURN(int version, VerifyMeta(db));
    if (version == kSchemaVersion) return Status::Ok();
    FERRY_RETURN_IF_ERROR(Upgrade(db, version));
    return txn.Commit();
  }
  FERRY_RETURN_IF_ERROR(db.Exec(SchemaV1()));
  FERRY_RETURN_IF_ERROR(db.Exec(SchemaV2()));
  FERRY_RETURN_IF_ERROR(db.Exec(kSchemaV3));
  FERRY_RETURN_IF_ERROR(db.Exec(kSchemaV4));
  FERRY_RETURN_IF_ERROR(db.Exec(kSchemaV5));
  {
    FERRY_ASSIGN_OR_RETURN(Stmt st,
                           db.Prepare("INSERT INTO meta(key, value) VALUES(?, ?), (?, ?)"));
    FERRY_RETURN_IF_ERROR(
        st.Bind("app", kApp, "schema_version", std::to_string(kSchemaVersion)).Run());
  }
  return txn.Commit();
}

}  // namespace

Result<std::unique_ptr<StateStore>> OpenSqliteStateStore(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return Status::InvalidArgument("state file path is empty");
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) {
      return Status::FromErrno(
          ec.value(), "cannot create directory " + parent.string() + " for state file " + path);
    }
  }
  fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status)) {
    return Status::InvalidArgument("state file " + path + " is a directory");
  }
  std::error_code canon_ec;
  std::string canonical = fs::weakly_canonical(path, canon_ec).string();
  if (canon_ec || canonical.empty()) canonical = path;
  if (fs::exists(status) && !OpenFiles::IsOpen(canonical)) {
    uintmax_t size = fs::file_size(path, ec);
    if (ec) return Status::FromErrno(ec.value(), "state file " + path);
    if (size > 0) {
      std::string problem = HeaderProblem(path, size);
      if (!problem.empty()) return NotOurs(path, problem);
    }
  }

  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Db> db, Db::Open(path, SqliteStateStore::kBusyTimeoutMs));
  Status s = InitOrVerify(*db);
  if (!s.ok()) {
    db->DisableCheckpointOnClose();
    int rc = db->last_error_rc() & 0xff;
    if (s.code() == ErrorCode::kCorruption && (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)) {
      return NotOurs(path, sqlite3_errstr(rc));
    }
    return s;
  }
  // Ours: now it may be written. WAL lets readers run beside the writer;
  // synchronous=NORMAL in WAL keeps the database consistent on power loss
  // (the last commits may roll back) without an fsync per commit.
  FERRY_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode = WAL"));
  FERRY_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous = NORMAL"));
  FERRY_RETURN_IF_ERROR(db->Exec("PRAGMA cache_size = -32768"));  // 32 MiB
  return std::unique_ptr<StateStore>(new SqliteStateStore(std::move(db), OpenFiles::Mark(canonical)));
}

// ---- Jobs ----

namespace {

const JobStatements& kLiteJobSql = JobSql(SqlDialect::kSqlite);

// A statement's current row, as JobFromRow reads it.
struct StmtRow {
  const Stmt& st;
  std::string Text(int c) const { return st.Text(c); }
  int64_t Int(int c) const { return st.Int(c); }
  double Double(int c) const { return st.Double(c); }
  bool Bool(int c) const { return st.Int(c) != 0; }
};

Result<JobRecord> JobFromRow(const Db& db, const Stmt& st) {
  return state::JobFromRow(StmtRow{st}, "state file " + db.path());
}

Status JobNotFound(const std::string& id) { return Status::NotFound("no job " + id); }

}  // namespace

Result<JobRecord> SqliteStateStore::ReadJobLocked(const std::string& id) {
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare(kLiteJobSql.select));
  st.Bind(id);
  FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return JobNotFound(id);
  return JobFromRow(*db_, st);
}

Status SqliteStateStore::CreateJob(const JobRecord& job, const std::vector<ShardRecord>& shards) {
  if (job.id.empty()) return Status::InvalidArgument("job id is empty");
  std::vector<ShardRecord> all = shards;
  if (all.empty()) all.emplace_back();  // shard 0 always exists
  bool listing_done = true;
  for (const ShardRecord& s : all) listing_done = listing_done && s.done;

  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  {
    FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("SELECT 1 FROM archived_jobs WHERE id = ?"));
    FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(job.id).Step());
    if (row) return Status::AlreadyExists("job " + job.id + " already exists (archived)");
  }
  {
    // Counters start at zero: they count what this store saw happen.
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare(kLiteJobSql.insert));
    st.Bind(job.id, job.src, job.dst, job.spec, ToString(job.state), job.created_ms, job.started_ms,
            job.finished_ms, job.run_seconds, listing_done ? 1 : 0, job.runner,
            job.runner_until_ms);
    FERRY_RETURN_IF_ERROR(st.Run());
    if (st.Changes() == 0) return Status::AlreadyExists("job " + job.id + " already exists");
  }
  for (const ShardRecord& s : all) FERRY_RETURN_IF_ERROR(InsertShardLocked(job.id, s));
  return txn.Commit();
}

Result<JobRecord> SqliteStateStore::GetJob(const std::string& id) {
  std::lock_guard lock(mu_);
  auto live = ReadJobLocked(id);
  if (live.ok() || live.status().code() != ErrorCode::kNotFound) return live;
  FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(kLiteJobSql.select_archived));
  FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(id).Step());
  if (!row) return JobNotFound(id);
  FERRY_ASSIGN_OR_RETURN(JobRecord j, JobFromRow(*db_, st));
  j.archived = true;
  j.archived_ms = st.Int(18);
  return j;
}

namespace {

Result<std::vector<JobRecord>> ReadJobs(const Db& db, Stmt& st, bool archived) {
  std::vector<JobRecord> jobs;
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return jobs;
    FERRY_ASSIGN_OR_RETURN(JobRecord j, JobFromRow(db, st));
    j.archived = archived;
    if (archived) j.archived_ms = st.Int(18);
    jobs.push_back(std::move(j));
  }
}

}  // namespace

Result<std::vector<JobRecord>> SqliteStateStore::ListJobs() {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(kLiteJobSql.list));
  return ReadJobs(*db_, st, false);
}

Result<std::vector<JobRecord>> SqliteStateStore::ListArchivedJobs() {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare(kLiteJobSql.list_archived));
  return ReadJobs(*db_, st, true);
}

Status SqliteStateStore::ArchiveJob(const std::string& id, int64_t now_ms) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  auto job = ReadJobLocked(id);
  if (!job.ok() && job.status().code() == ErrorCode::kNotFound) {
    FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("SELECT 1 FROM archived_jobs WHERE id = ?"));
    FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(id).Step());
    return row ? Status::Ok() : JobNotFound(id);  // archived already
  }
  if (!job.ok()) return job.status();
  if (!IsFinal(job->state)) {
    return Status(ErrorCode::kPreconditionFailed,
                  "job " + id + " is " + ToString(job->state) + ", not finished");
  }
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare(kLiteJobSql.archive));
    FERRY_RETURN_IF_ERROR(st.Bind(now_ms, id).Run());
  }
  for (const std::string* sql : {&kLiteJobSql.clear_archived_dlq, &kLiteJobSql.archive_dlq}) {
    FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(*sql));
    FERRY_RETURN_IF_ERROR(st.Bind(id).Run());
  }
  for (const char* table : {"dlq", "objects", "shards", "uploads", "parts", "job_live"}) {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare(std::string("DELETE FROM ") + table + " WHERE job = ?"));
    FERRY_RETURN_IF_ERROR(st.Bind(id).Run());
  }
  {
    // A gateway's writes and deletes outlive the job: what runs on it later
    // (--delete, verify --fix, dlq --retry, a gateway after a failed job)
    // must still leave them alone. Claims and copies are done with.
    FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("DELETE FROM gateway_keys WHERE job = ? AND "
                                                 "mark IN ('claimed', 'copied')"));
    FERRY_RETURN_IF_ERROR(st.Bind(id).Run());
  }
  FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("DELETE FROM jobs WHERE id = ?"));
  FERRY_RETURN_IF_ERROR(st.Bind(id).Run());
  return txn.Commit();
}

Status SqliteStateStore::RestoreJob(const std::string& id) {
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  int64_t pending = 0;
  {
    FERRY_ASSIGN_OR_RETURN(Stmt st,
                           db_->Prepare("SELECT pending FROM archived_jobs WHERE id = ?"));
    FERRY_ASSIGN_OR_RETURN(bool row, st.Bind(id).Step());
    if (!row) return ReadJobLocked(id).status();  // live already, or no such job
    pending = st.Int(0);
    FERRY_RETURN_IF_ERROR(st.Run());
  }
  if (pending > 0) {
    return Status(ErrorCode::kPreconditionFailed,
                  "job " + id + " was archived with keys pending; they are gone");
  }
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare(kLiteJobSql.restore));
    FERRY_RETURN_IF_ERROR(st.Bind(id).Run());
  }
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare("INSERT INTO dlq SELECT * FROM archived_dlq WHERE job = ?"));
    FERRY_RETURN_IF_ERROR(st.Bind(id).Run());
  }
  for (const char* sql : {"DELETE FROM archived_dlq WHERE job = ?",
                          "DELETE FROM archived_jobs WHERE id = ?"}) {
    FERRY_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(sql));
    FERRY_RETURN_IF_ERROR(st.Bind(id).Run());
  }
  return txn.Commit();
}

Status SqliteStateStore::AcquireJob(const std::string& id, const std::string& runner,
                                    int64_t now_ms, int64_t until_ms, bool force) {
  if (runner.empty()) return Status::InvalidArgument("runner is empty");
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  {
    FERRY_ASSIGN_OR_RETURN(Stmt st,
                           db_->Prepare("SELECT runner, runner_until_ms FROM jobs WHERE id = ?"));
    st.Bind(id);
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return JobNotFound(id);
    std::string holder = st.Text(0);
    int64_t holder_until = st.Int(1);
    if (!force && !holder.empty() && holder != runner && holder_until > now_ms) {
      return JobHeldError(id, holder, holder_until, now_ms);
    }
  }
  // A new run: not finished (any more), started_ms kept from the first run.
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("UPDATE jobs SET runner = ?, runner_until_ms = ?, state = ?, "
                            "finished_ms = 0, started_ms = CASE WHEN started_ms = 0 THEN ? "
                            "ELSE started_ms END WHERE id = ?"));
  FERRY_RETURN_IF_ERROR(st.Bind(runner, until_ms, ToString(JobState::kRunning), now_ms, id).Run());
  return txn.Commit();
}

Status SqliteStateStore::RenewJob(const std::string& id, const std::string& runner,
                                  int64_t until_ms) {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("UPDATE jobs SET runner_until_ms = ? WHERE id = ? AND runner = ? "
                            "AND runner <> ''"));
  FERRY_RETURN_IF_ERROR(st.Bind(until_ms, id, runner).Run());
  if (st.Changes() == 1) return Status::Ok();
  FERRY_ASSIGN_OR_RETURN(JobRecord job, ReadJobLocked(id));
  if (job.runner.empty()) {
    return Status(ErrorCode::kPreconditionFailed, "job " + id + " has no runner any more");
  }
  return JobHeldError(id, job.runner, job.runner_until_ms, 0);
}

Status SqliteStateStore::SetJobState(const std::string& id, JobState state, int64_t now_ms,
                                     double add_run_seconds, bool release) {
  const bool final = IsFinal(state);
  std::lock_guard lock(mu_);
  Txn txn(*db_);
  FERRY_RETURN_IF_ERROR(txn.Begin(Txn::kWrite));
  FERRY_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("UPDATE jobs SET state = ?, "
                            "finished_ms = CASE WHEN ? = 1 THEN ? ELSE finished_ms END, "
                            "run_seconds = run_seconds + ?, "
                            "runner = CASE WHEN ? = 1 THEN '' ELSE runner END, "
                            "runner_until_ms = CASE WHEN ? = 1 THEN 0 ELSE runner_until_ms END "
                            "WHERE id = ?"));
  FERRY_RETURN_IF_ERROR(st.Bind(ToString(state), final ? 1 : 0, now_ms, add_run_seconds,
                                release ? 1 : 0, release ? 1 : 0, id)
                            .Run());
  if (st.Changes() == 0) return JobNotFound(id);
  if (state == JobState::kCompleted) {
    // A completed job lists nothing again (its listing_done stays set), so
    // its shards' tokens are of no more use: one row per listed prefix
    // would otherwise stay for ever.
    FERRY_ASSIGN_OR_RETURN(Stmt del, db_->Prepare("DELETE FROM shards WHERE job = ?"));
    FERRY_RETURN_IF_ERROR(del.Bind(id).Run());
  }
  return txn.Commit();
}

}  // namespace ferry::state
