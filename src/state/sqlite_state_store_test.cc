// The SQLite state store: the conformance suite, plus what is SQLite's own —
// refusing files that are not ferry state databases without writing to
// them, WAL mode, directories.

#include "state/sqlite_state_store.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "state/state_store.h"
#include "state/state_store_conformance_test.h"

namespace ferry::state {
namespace {

namespace fs = std::filesystem;

Result<std::unique_ptr<StateStore>> MakeSqlite(const std::string& dir) {
  return OpenSqliteStateStore(dir + "/state.db");
}

INSTANTIATE_TEST_SUITE_P(Sqlite, StateStoreConformanceTest,
                         ::testing::Values(StateStoreParam{"Sqlite", MakeSqlite}),
                         StateStoreParamName);

// Takes a current database's shards back to schema version 2.
// What versions 3, 4 and 5 added, taken away again (an older ferry's file).
constexpr const char* kDropV3 =
    "DROP TABLE gateway_keys; DROP TABLE job_live; ALTER TABLE objects DROP COLUMN force; ALTER TABLE shards DROP COLUMN ranged; ALTER TABLE shards DROP COLUMN lower; "
    "ALTER TABLE shards DROP COLUMN upper; ALTER TABLE shards DROP COLUMN cursor; "
    "ALTER TABLE shards DROP COLUMN relist; ";

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Runs `sql` on the file with SQLite directly (another application).
void ExecRaw(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

class SqliteStateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ferry-sqlite-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // A ferry state database with a job and `keys` pending objects, closed.
  void MakeFerryDb(const std::string& path, int keys) {
    auto store = OpenSqliteStateStore(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    JobRecord job;
    job.id = "j";
    ASSERT_TRUE((*store)->CreateJob(job, {}).ok());
    ListPageCommit page;
    page.seq = 1;
    for (int i = 0; i < keys; ++i) {
      page.objects.push_back({"some/key/number-" + std::to_string(i), 1, "etag", 0});
    }
    ASSERT_TRUE((*store)->CommitListPage("j", page).ok());
  }

  std::string dir_;
};

// Every refusal is one line that names the file, and is not retryable.
void ExpectRefusal(const Status& s, const std::string& path, ErrorCode code) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_FALSE(s.retryable());
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
}

TEST_F(SqliteStateStoreTest, RefusesFilesThatAreNotFerryStateDatabasesAndLeavesThemAlone) {
  std::mt19937 rng(7);
  std::string random_bytes(8192, '\0');
  for (char& c : random_bytes) c = static_cast<char>(rng());

  const struct {
    const char* name;
    std::function<void(const std::string&)> make;
    const char* reason;
  } cases[] = {
      {"random bytes", [&](const std::string& p) { WriteBytes(p, random_bytes); },
       "file is not a database"},
      {"header overwritten",
       [&](const std::string& p) {
         MakeFerryDb(p, 10);
         std::string b = ReadBytes(p);
         b.replace(0, 16, std::string(16, 'X'));
         WriteBytes(p, b);
       },
       "file is not a database"},
      {"truncated to 100 bytes",
       [&](const std::string& p) {
         MakeFerryDb(p, 10);
         WriteBytes(p, ReadBytes(p).substr(0, 100));
       },
       "file is truncated"},
      {"meta page damaged",  // found by SQLite itself while reading it
       [&](const std::string& p) {
         MakeFerryDb(p, 10);
         std::string b = ReadBytes(p);
         ASSERT_GE(b.size(), 8192u);
         b.replace(4096, 4096, std::string(4096, '\xee'));
         WriteBytes(p, b);
       },
       "database disk image is malformed"},
      {"another application's database",
       [&](const std::string& p) {
         ExecRaw(p, "CREATE TABLE foo(a, b); INSERT INTO foo VALUES(1, 'x');");
       },
       "it has no ferry meta table"},
      {"another application's meta table",
       [&](const std::string& p) {
         ExecRaw(p,
                 "CREATE TABLE meta(key TEXT, value TEXT); INSERT INTO meta VALUES('app', 'x');");
       },
       "its meta table names no ferry state"},
  };
  int i = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = Path("case" + std::to_string(i++) + "/state.db");
    fs::create_directories(fs::path(path).parent_path());
    c.make(path);
    const std::string before = ReadBytes(path);
    ASSERT_FALSE(before.empty());
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto store = OpenSqliteStateStore(path);
      ASSERT_FALSE(store.ok());
      ExpectRefusal(store.status(), path, ErrorCode::kCorruption);
      EXPECT_NE(store.status().message().find(c.reason), std::string::npos)
          << store.status().message();
      EXPECT_NE(store.status().message().find("refusing to touch it"), std::string::npos);
    }
    EXPECT_EQ(ReadBytes(path), before) << "the file was modified";
  }
}

TEST_F(SqliteStateStoreTest, DamageFoundAfterOpeningIsCorruption) {
  const std::string path = Path("state.db");
  MakeFerryDb(path, 20000);
  std::string b = ReadBytes(path);
  ASSERT_GT(b.size(), 40u * 4096);
  // The last pages hold object rows and their indexes.
  b.replace(b.size() - 8 * 4096, 8 * 4096, std::string(8 * 4096, '\xee'));
  WriteBytes(path, b);
  auto store = OpenSqliteStateStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();  // the schema pages are intact
  auto rows = (*store)->CountRows("j");
  ASSERT_FALSE(rows.ok());
  ExpectRefusal(rows.status(), path, ErrorCode::kCorruption);
}

TEST_F(SqliteStateStoreTest, AZeroLengthFileIsANewDatabase) {
  const std::string path = Path("empty.db");
  WriteBytes(path, "");
  auto store = OpenSqliteStateStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  JobRecord job;
  job.id = "j";
  EXPECT_TRUE((*store)->CreateJob(job, {}).ok());
  EXPECT_EQ((*store)->ListJobs()->size(), 1u);
}

TEST_F(SqliteStateStoreTest, CreatesMissingDirectoriesAndUsesWal) {
  const std::string path = Path("a/b/c/state.db");
  auto store = OpenSqliteStateStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE(fs::is_regular_file(path));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(SqliteStateStoreTest, PathsThatCannotBeUsedAreClearErrors) {
  WriteBytes(Path("plain-file"), "x");
  const std::string under_file = Path("plain-file/sub/state.db");
  auto store = OpenSqliteStateStore(under_file);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(store.status().message().find("cannot create directory"), std::string::npos)
      << store.status().message();
  EXPECT_NE(store.status().message().find(under_file), std::string::npos);

  store = OpenSqliteStateStore(dir_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), ErrorCode::kInvalidArgument) << store.status().ToString();
  EXPECT_EQ(OpenSqliteStateStore("").status().code(), ErrorCode::kInvalidArgument);
}

// A state file from the ferry before the archive (schema version 1) is
// upgraded in place when opened: its jobs and keys stay, the archive
// tables appear.
TEST_F(SqliteStateStoreTest, AVersionOneFileIsUpgradedWithItsJobsKept) {
  const std::string path = Path("v1.db");
  MakeFerryDb(path, 5);
  ExecRaw(path, std::string(kDropV3) +
                    "DROP TABLE archived_jobs; DROP TABLE archived_dlq; "
                    "UPDATE meta SET value = '1' WHERE key = 'schema_version'");
  auto store = OpenSqliteStateStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto job = (*store)->GetJob("j");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->counters.pending, 5);
  ASSERT_TRUE((*store)->SetJobState("j", JobState::kCancelled, 1, 0, true).ok());
  ASSERT_TRUE((*store)->ArchiveJob("j", 2).ok()) << "the archive tables exist now";
  store->reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st,
                               nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "5");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// A state file from the ferry before range shards (schema version 2) gets
// the shards' new columns; a job listing by prefixes goes on as it was.
TEST_F(SqliteStateStoreTest, AVersionTwoFileIsUpgradedWithItsShardsKept) {
  const std::string path = Path("v2.db");
  MakeFerryDb(path, 5);
  ExecRaw(path, std::string(kDropV3) + "UPDATE meta SET value = '2' WHERE key = 'schema_version'");
  auto store = OpenSqliteStateStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto shards = (*store)->GetShards("j");
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  ASSERT_EQ(shards->size(), 1u);
  EXPECT_FALSE(shards->front().ranged);
  EXPECT_EQ(shards->front().seq, 1);
  // The new columns are there: a range shard keeps its bounds.
  JobRecord job;
  job.id = "ranged";
  ShardRecord s;
  s.ranged = true;
  s.lower = "a/";
  s.upper = "m/";
  ASSERT_TRUE((*store)->CreateJob(job, {s}).ok());
  auto back = (*store)->GetShards("ranged");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->front().ranged);
  EXPECT_EQ(back->front().upper, "m/");
}

TEST_F(SqliteStateStoreTest, ANewerSchemaIsRefusedUnchanged) {
  const std::string path = Path("state.db");
  MakeFerryDb(path, 1);
  ExecRaw(path,
          "PRAGMA journal_mode = DELETE; UPDATE meta SET value = '6' "
          "WHERE key = 'schema_version';");
  const std::string before = ReadBytes(path);
  auto store = OpenSqliteStateStore(path);
  ASSERT_FALSE(store.ok());
  ExpectRefusal(store.status(), path, ErrorCode::kUnsupported);
  EXPECT_EQ(ReadBytes(path), before);
}

// The claim queries must stay on objects_by_lease: a plan that walks the
// primary key instead is correct but scans past every in-flight row on
// every claim, and a 2M-object job slows to a crawl.
TEST_F(SqliteStateStoreTest, ClaimQueriesUseTheLeaseIndex) {
  const std::string path = Path("state.db");
  MakeFerryDb(path, 100);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  for (const char* sql : {SqliteStateStore::kClaimUnownedSql, SqliteStateStore::kClaimExpiredSql}) {
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, (std::string("EXPLAIN QUERY PLAN ") + sql).c_str(), -1, &st,
                                 nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    std::string plan;
    while (sqlite3_step(st) == SQLITE_ROW) {
      plan += reinterpret_cast<const char*>(sqlite3_column_text(st, 3));
      plan += "; ";
    }
    sqlite3_finalize(st);
    EXPECT_NE(plan.find("SEARCH objects USING INDEX objects_by_lease (job=? AND lease_until_ms"),
              std::string::npos)
        << sql << "\n"
        << plan;
  }
  sqlite3_close(db);
}

}  // namespace
}  // namespace ferry::state
