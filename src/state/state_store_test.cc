// state_store.h's pure parts: where `--state` points.

#include "state/state_store.h"

#include <gtest/gtest.h>

namespace ferry::state {
namespace {

TEST(StateLocation, PostgresUrisAndKeywordStringsAreDatabasesTheRestDirectories) {
  EXPECT_TRUE(IsPostgresLocation("postgres://u@h:5432/db"));
  EXPECT_TRUE(IsPostgresLocation("postgresql://"));
  EXPECT_TRUE(IsPostgresLocation("postgres:host=h dbname=d"));
  EXPECT_FALSE(IsPostgresLocation("/var/lib/ferry"));
  EXPECT_FALSE(IsPostgresLocation("./postgres"));
  EXPECT_FALSE(IsPostgresLocation("postgres"));
  EXPECT_FALSE(IsPostgresLocation("pg"));
  EXPECT_EQ(PostgresConninfo("postgres://u@h:5432/db"), "postgres://u@h:5432/db");
  EXPECT_EQ(PostgresConninfo("postgresql://u@h/db"), "postgresql://u@h/db");
  EXPECT_EQ(PostgresConninfo("postgres:host=h dbname=d"), "host=h dbname=d");
  EXPECT_EQ(PostgresConninfo("postgresql:dbname=d"), "dbname=d");
}

}  // namespace
}  // namespace ferry::state
