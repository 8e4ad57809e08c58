#pragma once
// The jobs table, described once. Both state stores render from this their
// jobs and archived_jobs DDL and every statement that reads or moves a
// whole job row, and read a row into a JobRecord with one function; a
// column added here reaches both dialects or neither. The other tables are
// written out in each dialect's schema (sqlite_state_store.cc,
// pg_schema.cc): their statements differ in more than placeholders.

#include <string>
#include <string_view>

#include "base/status.h"
#include "state/state_store.h"

namespace ferry::state {

enum class SqlDialect { kSqlite, kPostgres };

struct JobColumn {
  enum class Type { kId, kText, kInt, kReal, kBool };
  const char* name;
  Type type;
};

// In JobRecord order; a row read by JobFromRow has these first.
inline constexpr JobColumn kJobColumns[] = {
    {"id", JobColumn::Type::kId},           {"src", JobColumn::Type::kText},
    {"dst", JobColumn::Type::kText},        {"spec", JobColumn::Type::kText},
    {"state", JobColumn::Type::kText},      {"created_ms", JobColumn::Type::kInt},
    {"started_ms", JobColumn::Type::kInt},  {"finished_ms", JobColumn::Type::kInt},
    {"run_seconds", JobColumn::Type::kReal}, {"listing_done", JobColumn::Type::kBool},
    {"runner", JobColumn::Type::kText},     {"runner_until_ms", JobColumn::Type::kInt},
    {"listed", JobColumn::Type::kInt},      {"transferred", JobColumn::Type::kInt},
    {"skipped", JobColumn::Type::kInt},     {"failed", JobColumn::Type::kInt},
    {"bytes", JobColumn::Type::kInt},       {"pending", JobColumn::Type::kInt},
};
inline constexpr int kJobColumnCount = static_cast<int>(std::size(kJobColumns));

// "CREATE TABLE jobs(...);" or, archived, "CREATE TABLE archived_jobs(...,
// archived_ms BIGINT NOT NULL);".
std::string JobTableDdl(SqlDialect d, bool archived);

// Every statement over whole job rows, with the dialect's placeholders.
// Parameters in order: select, select_archived, restore: id; archive:
// archived_ms, id (SQLite) / id, archived_ms (PostgreSQL: $1 id, $2 ms);
// insert: the first 12 columns (counters start at 0). The archived
// statements read archived_ms as column kJobColumnCount.
struct JobStatements {
  std::string select, list, select_archived, list_archived, archive, restore, insert;
  // Moving a job's dead letters to the archive and back, after the
  // archive's own rows for the job are deleted (so the newest win, in both
  // dialects).
  std::string archive_dlq, clear_archived_dlq;
};
const JobStatements& JobSql(SqlDialect d);

// kPreconditionFailed: job `id` is leased to `holder` until `until_ms`
// (with how long is left when `now_ms` > 0). Both stores' error for a
// lease they cannot take or renew.
Status JobHeldError(const std::string& id, const std::string& holder, int64_t until_ms, int64_t now_ms);

// A job from a row whose columns start with kJobColumns. `Row` has
// Text(c), Int(c), Double(c) and Bool(c). A state that is not one of
// JobState's names is kCorruption, naming `source`.
template <class Row>
Result<JobRecord> JobFromRow(const Row& row, std::string_view source) {
  JobRecord j;
  j.id = row.Text(0);
  j.src = row.Text(1);
  j.dst = row.Text(2);
  j.spec = row.Text(3);
  auto state = JobStateFromString(row.Text(4));
  if (!state) {
    return Status::Corruption(std::string(source) + ": job " + j.id + " has unknown state '" + row.Text(4) + "'")
        .set_retryable(false);
  }
  j.state = *state;
  j.created_ms = row.Int(5);
  j.started_ms = row.Int(6);
  j.finished_ms = row.Int(7);
  j.run_seconds = row.Double(8);
  j.listing_done = row.Bool(9);
  j.runner = row.Text(10);
  j.runner_until_ms = row.Int(11);
  j.counters.listed = row.Int(12);
  j.counters.transferred = row.Int(13);
  j.counters.skipped = row.Int(14);
  j.counters.failed = row.Int(15);
  j.counters.bytes = row.Int(16);
  j.counters.pending = row.Int(17);
  return j;
}

}  // namespace ferry::state
