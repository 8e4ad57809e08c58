#include "state/pg_schema.h"

#include <chrono>
#include <cstdlib>

#include "state/job_table.h"

namespace ferry::state::pg {
namespace {

// pg_advisory_xact_lock key: "ferr" as an int, so unrelated users of
// advisory locks on the same server are unlikely to collide.
constexpr const char* kLockSql = "SELECT pg_advisory_xact_lock(1718026866)";

// Version 1: the tables of state_store.h, as the SQLite store has them
// (the jobs table from job_table.h before these).
constexpr const char* kV1Rest = R"sql(
CREATE TABLE shards(
  job TEXT COLLATE "C" NOT NULL, shard INTEGER NOT NULL, prefix TEXT COLLATE "C" NOT NULL,
  delimiter TEXT NOT NULL, seq BIGINT NOT NULL, token TEXT NOT NULL, done BOOLEAN NOT NULL,
  PRIMARY KEY(job, shard));
CREATE TABLE objects(
  job TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL, size BIGINT NOT NULL,
  etag TEXT NOT NULL, last_modified_ms BIGINT NOT NULL, owner TEXT NOT NULL,
  lease_until_ms BIGINT NOT NULL, not_before_ms BIGINT NOT NULL, attempts INTEGER NOT NULL,
  claims INTEGER NOT NULL, last_error TEXT NOT NULL, PRIMARY KEY(job, key));
CREATE INDEX objects_by_lease ON objects(job, lease_until_ms, key);
CREATE TABLE dlq(
  job TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL, size BIGINT NOT NULL,
  etag TEXT NOT NULL, last_modified_ms BIGINT NOT NULL, reason TEXT NOT NULL,
  attempts INTEGER NOT NULL, last_error TEXT NOT NULL, at_ms BIGINT NOT NULL,
  PRIMARY KEY(job, key));
CREATE TABLE uploads(
  job TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL, upload_id TEXT NOT NULL,
  src_etag TEXT NOT NULL, part_size BIGINT NOT NULL, PRIMARY KEY(job, key));
CREATE TABLE parts(
  job TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL, number INTEGER NOT NULL,
  etag TEXT NOT NULL, size BIGINT NOT NULL, PRIMARY KEY(job, key, number));
)sql";

// Version 2: the archive (state_store.h ArchiveJob): finished jobs and
// their dead letters, out of the live tables.
constexpr const char* kV2Rest = R"sql(
CREATE INDEX archived_jobs_by_created ON archived_jobs(created_ms);
CREATE TABLE archived_dlq(
  job TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL, size BIGINT NOT NULL,
  etag TEXT NOT NULL, last_modified_ms BIGINT NOT NULL, reason TEXT NOT NULL,
  attempts INTEGER NOT NULL, last_error TEXT NOT NULL, at_ms BIGINT NOT NULL,
  PRIMARY KEY(job, key));
)sql";

// Version 3: Claim's unowned rows in key order from an index that holds
// only them. The rows a claim takes leave it, so the next claim does not
// step over them (in objects_by_lease their old entries stay until vacuum).
constexpr const char* kV3 = R"sql(
CREATE INDEX objects_unowned ON objects(job, key) WHERE lease_until_ms = 0;
)sql";

// Version 4: range shards (state_store.h ShardRecord): the bounds of a
// shard's key range, the last key it committed, and whether it relists;
// objects requeued to be copied whatever the destination holds (force).
constexpr const char* kV4 = R"sql(
ALTER TABLE objects ADD COLUMN force BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE shards ADD COLUMN ranged BOOLEAN NOT NULL DEFAULT false,
  ADD COLUMN lower TEXT COLLATE "C" NOT NULL DEFAULT '',
  ADD COLUMN upper TEXT COLLATE "C" NOT NULL DEFAULT '',
  ADD COLUMN cursor TEXT COLLATE "C" NOT NULL DEFAULT '',
  ADD COLUMN relist BOOLEAN NOT NULL DEFAULT false;
)sql";

// Version 5: what each running job's runner last reported (JobLive).
constexpr const char* kV5 = R"sql(
CREATE TABLE job_live(job TEXT COLLATE "C" PRIMARY KEY, at_ms BIGINT NOT NULL, live TEXT NOT NULL);
)sql";

// Version 6: what a gateway in front of a job recorded per key (KeyMark),
// as the SQLite store's gateway_keys; the listing looks its page's keys up
// by primary key.
constexpr const char* kV6 = R"sql(
CREATE TABLE gateway_keys(
  job TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL, mark TEXT NOT NULL,
  owner TEXT NOT NULL, lease_until_ms BIGINT NOT NULL, size BIGINT NOT NULL, etag TEXT NOT NULL,
  counted BOOLEAN NOT NULL, at_ms BIGINT NOT NULL, PRIMARY KEY(job, key));
)sql";

Status NotOurs(const std::string& why) {
  return Status::Corruption("the PostgreSQL database is not a ferry state database (" + why +
                            "); refusing to touch it")
      .set_retryable(false);
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Inside the migration transaction: the version the database is at, 0 for
// an empty one.
Result<int> CurrentVersion(Conn& c) {
  FERRY_ASSIGN_OR_RETURN(
      Rows tables, c.Exec("SELECT COUNT(*) FROM information_schema.tables "
                          "WHERE table_schema = current_schema()"));
  if (tables.Int(0, 0) == 0) return 0;
  FERRY_ASSIGN_OR_RETURN(Rows has_meta,
                         c.Exec("SELECT COUNT(*) FROM information_schema.tables WHERE "
                                "table_schema = current_schema() AND table_name = 'ferry_meta'"));
  if (has_meta.Int(0, 0) == 0) return NotOurs("it has tables but no ferry_meta");
  FERRY_ASSIGN_OR_RETURN(Rows meta, c.Exec("SELECT key, value FROM ferry_meta"));
  std::string app, version;
  for (int i = 0; i < meta.size(); ++i) {
    if (meta.Text(i, 0) == "app") app = meta.Text(i, 1);
    if (meta.Text(i, 0) == "schema_version") version = meta.Text(i, 1);
  }
  if (app != "ferry-state") return NotOurs("its ferry_meta names no ferry state");
  char* end = nullptr;
  long v = std::strtol(version.c_str(), &end, 10);
  if (version.empty() || *end != '\0' || v < 1) return NotOurs("bad schema version '" + version + "'");
  if (v > kPgSchemaVersion) {
    return Status::Unsupported("the PostgreSQL state database has schema version " + version +
                               "; this ferry reads up to " + std::to_string(kPgSchemaVersion))
        .set_retryable(false);
  }
  return static_cast<int>(v);
}

}  // namespace

const std::vector<Migration>& Migrations() {
  // The jobs tables come from job_table.h, as the SQLite store's do.
  static const std::vector<Migration> all = {
      {1, JobTableDdl(SqlDialect::kPostgres, false) + kV1Rest},
      {2, JobTableDdl(SqlDialect::kPostgres, true) + kV2Rest},
      {3, kV3},
      {4, kV4},
      {5, kV5},
      {6, kV6}};
  return all;
}

Result<int> MigrateSchema(Conn& c) {
  FERRY_RETURN_IF_ERROR(c.ExecScript("BEGIN"));
  auto body = [&]() -> Result<int> {
    FERRY_RETURN_IF_ERROR(c.Exec(kLockSql).status());
    FERRY_ASSIGN_OR_RETURN(int found, CurrentVersion(c));
    if (found == 0) {
      FERRY_RETURN_IF_ERROR(c.ExecScript(
          "CREATE TABLE ferry_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
          "CREATE TABLE ferry_migrations(version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL);"
          "INSERT INTO ferry_meta VALUES('app', 'ferry-state'), ('schema_version', '0')"));
    }
    for (const Migration& m : Migrations()) {
      if (m.version <= found) continue;
      FERRY_RETURN_IF_ERROR(c.ExecScript(m.sql).WithContext(
          "schema migration " + std::to_string(m.version)));
      FERRY_RETURN_IF_ERROR(c.Exec("INSERT INTO ferry_migrations(version, applied_ms) VALUES($1, $2)",
                                   {std::to_string(m.version), std::to_string(NowMs())})
                                .status());
      FERRY_RETURN_IF_ERROR(c.Exec("UPDATE ferry_meta SET value = $1 WHERE key = 'schema_version'",
                                   {std::to_string(m.version)})
                                .status());
    }
    return found;
  };
  Result<int> r = body();
  if (!r.ok()) {
    (void)c.ExecScript("ROLLBACK");
    return r;
  }
  FERRY_RETURN_IF_ERROR(c.ExecScript("COMMIT"));
  return r;
}

}  // namespace ferry::state::pg
