#include "state/job_table.h"

namespace ferry::state {
namespace {

std::string ColumnList() {
  std::string out;
  for (const JobColumn& c : kJobColumns) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

const char* TypeSql(SqlDialect d, JobColumn::Type t) {
  const bool pg = d == SqlDialect::kPostgres;
  switch (t) {
    case JobColumn::Type::kId: return pg ? "TEXT COLLATE \"C\" PRIMARY KEY" : "TEXT PRIMARY KEY";
    case JobColumn::Type::kText: return "TEXT NOT NULL";
    case JobColumn::Type::kInt: return "BIGINT NOT NULL";
    case JobColumn::Type::kReal: return "DOUBLE PRECISION NOT NULL";
    case JobColumn::Type::kBool: return pg ? "BOOLEAN NOT NULL" : "INTEGER NOT NULL";
  }
  return "";
}

// "?" or "$n".
std::string Param(SqlDialect d, int n) { return d == SqlDialect::kPostgres ? "$" + std::to_string(n) : "?"; }

JobStatements Render(SqlDialect d) {
  const std::string cols = ColumnList();
  JobStatements s;
  s.select = "SELECT " + cols + " FROM jobs WHERE id = " + Param(d, 1);
  s.list = "SELECT " + cols + " FROM jobs ORDER BY created_ms DESC, id";
  s.select_archived = "SELECT " + cols + ", archived_ms FROM archived_jobs WHERE id = " + Param(d, 1);
  s.list_archived = "SELECT " + cols + ", archived_ms FROM archived_jobs ORDER BY created_ms DESC, id";
  s.archive = "INSERT INTO archived_jobs(" + cols + ", archived_ms) SELECT " + cols + ", " +
              (d == SqlDialect::kPostgres ? "$2 FROM jobs WHERE id = $1" : "? FROM jobs WHERE id = ?");
  s.restore = "INSERT INTO jobs(" + cols + ") SELECT " + cols + " FROM archived_jobs WHERE id = " + Param(d, 1);
  std::string values;
  for (int i = 1; i <= 12; ++i) values += Param(d, i) + ", ";
  s.insert = "INSERT INTO jobs(" + cols + ") VALUES(" + values + "0, 0, 0, 0, 0, 0) ON CONFLICT(id) DO NOTHING";
  s.clear_archived_dlq = "DELETE FROM archived_dlq WHERE job = " + Param(d, 1);
  s.archive_dlq = "INSERT INTO archived_dlq SELECT * FROM dlq WHERE job = " + Param(d, 1);
  return s;
}

}  // namespace

std::string JobTableDdl(SqlDialect d, bool archived) {
  std::string out = archived ? "CREATE TABLE archived_jobs(\n  " : "CREATE TABLE jobs(\n  ";
  bool first = true;
  for (const JobColumn& c : kJobColumns) {
    if (!first) out += ", ";
    first = false;
    out += std::string(c.name) + " " + TypeSql(d, c.type);
  }
  if (archived) out += ", archived_ms BIGINT NOT NULL";
  return out + ");\n";
}

Status JobHeldError(const std::string& id, const std::string& holder, int64_t until_ms, int64_t now_ms) {
  std::string msg = "job " + id + " is held by runner '" + holder + "'";
  if (now_ms > 0) msg += " for another " + std::to_string((until_ms - now_ms + 999) / 1000) + " s";
  return Status(ErrorCode::kPreconditionFailed, msg);
}

const JobStatements& JobSql(SqlDialect d) {
  static const JobStatements sqlite = Render(SqlDialect::kSqlite);
  static const JobStatements pg = Render(SqlDialect::kPostgres);
  return d == SqlDialect::kPostgres ? pg : sqlite;
}

}  // namespace ferry::state
