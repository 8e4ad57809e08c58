#include "state/job_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace ferry::state {
namespace {

std::string Squeeze(const std::string& s) {
  std::istringstream in(s);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

// The DDL the stores wrote before job_table.h existed: what databases in
// the field hold, which the rendering must not change.
TEST(JobTable, RendersTheDdlBothStoresAlwaysHad) {
  EXPECT_EQ(Squeeze(JobTableDdl(SqlDialect::kSqlite, false)),
            Squeeze("CREATE TABLE jobs(\n"
                    "  id TEXT PRIMARY KEY, src TEXT NOT NULL, dst TEXT NOT NULL, spec TEXT NOT NULL,\n"
                    "  state TEXT NOT NULL, created_ms BIGINT NOT NULL, started_ms BIGINT NOT NULL,\n"
                    "  finished_ms BIGINT NOT NULL, run_seconds DOUBLE PRECISION NOT NULL,\n"
                    "  listing_done INTEGER NOT NULL, runner TEXT NOT NULL, runner_until_ms BIGINT NOT NULL,\n"
                    "  listed BIGINT NOT NULL, transferred BIGINT NOT NULL, skipped BIGINT NOT NULL,\n"
                    "  failed BIGINT NOT NULL, bytes BIGINT NOT NULL, pending BIGINT NOT NULL);"));
  EXPECT_EQ(Squeeze(JobTableDdl(SqlDialect::kPostgres, true)),
            Squeeze("CREATE TABLE archived_jobs(\n"
                    "  id TEXT COLLATE \"C\" PRIMARY KEY, src TEXT NOT NULL, dst TEXT NOT NULL, spec TEXT NOT NULL,\n"
                    "  state TEXT NOT NULL, created_ms BIGINT NOT NULL, started_ms BIGINT NOT NULL,\n"
                    "  finished_ms BIGINT NOT NULL, run_seconds DOUBLE PRECISION NOT NULL,\n"
                    "  listing_done BOOLEAN NOT NULL, runner TEXT NOT NULL, runner_until_ms BIGINT NOT NULL,\n"
                    "  listed BIGINT NOT NULL, transferred BIGINT NOT NULL, skipped BIGINT NOT NULL,\n"
                    "  failed BIGINT NOT NULL, bytes BIGINT NOT NULL, pending BIGINT NOT NULL,\n"
                    "  archived_ms BIGINT NOT NULL);"));
}

TEST(JobTable, StatementsDifferOnlyInPlaceholders) {
  const JobStatements& lite = JobSql(SqlDialect::kSqlite);
  const JobStatements& pg = JobSql(SqlDialect::kPostgres);
  EXPECT_EQ(lite.select.substr(0, lite.select.find('?')), pg.select.substr(0, pg.select.find('$')));
  EXPECT_EQ(lite.list, pg.list);
  EXPECT_EQ(lite.list_archived, pg.list_archived);
  EXPECT_EQ(lite.insert.find("?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, 0, 0)") != std::string::npos, true)
      << lite.insert;
  EXPECT_NE(pg.insert.find("$12, 0, 0, 0, 0, 0, 0)"), std::string::npos) << pg.insert;
  EXPECT_NE(pg.archive.find("$2 FROM jobs WHERE id = $1"), std::string::npos) << pg.archive;
  EXPECT_EQ(lite.archive_dlq, "INSERT INTO archived_dlq SELECT * FROM dlq WHERE job = ?");
  EXPECT_EQ(pg.clear_archived_dlq, "DELETE FROM archived_dlq WHERE job = $1");
}

struct FakeRow {
  std::vector<std::string> cells;
  std::string Text(int c) const { return cells[static_cast<size_t>(c)]; }
  int64_t Int(int c) const { return std::stoll(cells[static_cast<size_t>(c)]); }
  double Double(int c) const { return std::stod(cells[static_cast<size_t>(c)]); }
  bool Bool(int c) const { return cells[static_cast<size_t>(c)] == "1"; }
};

TEST(JobTable, ReadsARowAndRefusesAnUnknownState) {
  FakeRow row{{"j1", "s3://a", "s3://b", "{}", "failed", "1", "2", "3", "1.5", "1", "r", "4", "10", "7", "1",
               "2", "99", "0"}};
  ASSERT_EQ(row.cells.size(), static_cast<size_t>(kJobColumnCount));
  auto j = JobFromRow(row, "test");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->id, "j1");
  EXPECT_EQ(j->state, JobState::kFailed);
  EXPECT_DOUBLE_EQ(j->run_seconds, 1.5);
  EXPECT_TRUE(j->listing_done);
  EXPECT_EQ(j->counters.transferred, 7);
  EXPECT_EQ(j->counters.bytes, 99);
  row.cells[4] = "exploded";
  auto bad = JobFromRow(row, "state file x.db");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(bad.status().message().find("state file x.db: job j1 has unknown state 'exploded'"), std::string::npos);
}

TEST(JobTable, FinalStates) {
  EXPECT_TRUE(IsFinal(JobState::kCompleted));
  EXPECT_TRUE(IsFinal(JobState::kFailed));
  EXPECT_TRUE(IsFinal(JobState::kCancelled));
  for (JobState s : {JobState::kCreated, JobState::kRunning, JobState::kCancelling, JobState::kInterrupted}) {
    EXPECT_FALSE(IsFinal(s)) << ToString(s);
    EXPECT_FALSE(RanToTheEnd(s)) << ToString(s);
  }
  EXPECT_FALSE(RanToTheEnd(JobState::kCancelled));
}

}  // namespace
}  // namespace ferry::state
