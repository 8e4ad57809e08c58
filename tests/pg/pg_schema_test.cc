// state/pg_schema.h against a real PostgreSQL: a new database gets every
// migration once, however many openers race; a newer or foreign database
// is refused and left untouched.

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "pg/pg_test_cluster.h"
#include "state/pg_schema.h"

namespace ferry::state::pg {
namespace {

using testing_pg::Connect;

int64_t Count(Conn& c, const std::string& sql) {
  auto r = c.Exec(sql);
  EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
  return r.ok() ? r->Int(0, 0) : -1;
}

TEST(PgSchema, ANewDatabaseGetsEveryMigrationOnceWhoeverRaces) {
  FERRY_REQUIRE_PG(db);
  constexpr int kOpeners = 4;
  std::atomic<int> ok{0}, found_empty{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kOpeners; ++i) {
    threads.emplace_back([&] {
      auto c = Conn::Open(db);
      if (!c.ok()) return;
      auto v = MigrateSchema(**c);
      if (!v.ok()) {
        ADD_FAILURE() << v.status().ToString();
        return;
      }
      ++ok;
      if (*v == 0) ++found_empty;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kOpeners);
  EXPECT_EQ(found_empty.load(), 1) << "exactly one opener created the schema";
  auto c = Connect(db);
  ASSERT_TRUE(c);
  EXPECT_EQ(Count(*c, "SELECT COUNT(*) FROM ferry_migrations"),
            static_cast<int64_t>(Migrations().size()));
  auto v = c->Exec("SELECT value FROM ferry_meta WHERE key = 'schema_version'");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->Text(0, 0), std::to_string(kPgSchemaVersion));
  for (const char* table : {"jobs", "shards", "objects", "dlq", "uploads", "parts"}) {
    EXPECT_EQ(Count(*c, std::string("SELECT COUNT(*) FROM ") + table), 0) << table;
  }
  // Keys sort as bytes, whatever the database's locale.
  ASSERT_TRUE(c->Exec("INSERT INTO dlq VALUES('j', $1, 0, '', 0, '', 0, '', 0), "
                      "('j', $2, 0, '', 0, '', 0, '', 0), ('j', $3, 0, '', 0, '', 0, '', 0)",
                      {"b", "B", "a"})
                  .ok());
  auto keys = c->Exec("SELECT key FROM dlq ORDER BY key");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->Text(0, 0) + keys->Text(1, 0) + keys->Text(2, 0), "Bab");
  auto again = MigrateSchema(*c);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, kPgSchemaVersion);
}

// A database an older ferry made (version 1, before the archive) gets the
// migrations after 1 only, and keeps its rows.
TEST(PgSchema, AnOlderDatabaseGetsOnlyTheMissingMigrations) {
  FERRY_REQUIRE_PG(db);
  auto c = Connect(db);
  ASSERT_TRUE(c);
  ASSERT_TRUE(MigrateSchema(*c).ok());
  ASSERT_TRUE(c->ExecScript("DROP TABLE gateway_keys; DROP TABLE job_live; "
                            "DROP TABLE archived_jobs; DROP TABLE archived_dlq; "
                            "DROP INDEX objects_unowned; ALTER TABLE objects DROP COLUMN force; "
                            "ALTER TABLE shards DROP COLUMN ranged, DROP COLUMN lower, "
                            "DROP COLUMN upper, DROP COLUMN cursor, DROP COLUMN relist; "
                            "DELETE FROM ferry_migrations WHERE version > 1; "
                            "UPDATE ferry_meta SET value = '1' WHERE key = 'schema_version'; "
                            "INSERT INTO dlq VALUES('j', 'k', 0, '', 0, '', 0, '', 0)")
                  .ok());
  auto found = MigrateSchema(*c);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, 1);
  EXPECT_EQ(Count(*c, "SELECT COUNT(*) FROM ferry_migrations"),
            static_cast<int64_t>(Migrations().size()));
  EXPECT_EQ(Count(*c, "SELECT COUNT(*) FROM archived_jobs"), 0);
  EXPECT_EQ(Count(*c, "SELECT COUNT(*) FROM dlq"), 1) << "rows are kept";
}

TEST(PgSchema, ANewerOrForeignDatabaseIsRefusedAndLeftAlone) {
  FERRY_REQUIRE_PG(newer);
  auto c = Connect(newer);
  ASSERT_TRUE(c);
  ASSERT_TRUE(MigrateSchema(*c).ok());
  ASSERT_TRUE(c->Exec("UPDATE ferry_meta SET value = '99' WHERE key = 'schema_version'").ok());
  auto v = MigrateSchema(*c);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), ErrorCode::kUnsupported) << v.status().ToString();
  EXPECT_NE(v.status().message().find("schema version 99"), std::string::npos);
  EXPECT_TRUE(c->Exec("SELECT 1").ok()) << "the failed migration was rolled back";

  FERRY_REQUIRE_PG(foreign);
  auto f = Connect(foreign);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->ExecScript("CREATE TABLE invoices(id INTEGER)").ok());
  auto refused = MigrateSchema(*f);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kCorruption) << refused.status().ToString();
  EXPECT_FALSE(refused.status().retryable());
  EXPECT_EQ(Count(*f, "SELECT COUNT(*) FROM information_schema.tables "
                      "WHERE table_schema = current_schema()"),
            1)
      << "nothing was created beside the foreign table";
}

}  // namespace
}  // namespace ferry::state::pg
