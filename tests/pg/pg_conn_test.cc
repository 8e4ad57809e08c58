// state/pg_db.h against a real PostgreSQL: parameters travel as text and
// come back byte for byte, errors are classified, connection failures are
// one-line errors that never show a password, and a connection broken by a
// server restart fails retryably and recovers with Reset().

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "pg/pg_test_cluster.h"
#include "state/pg_db.h"

namespace ferry::state::pg {
namespace {

using testing_pg::Connect;

TEST(PgConn, ParametersRoundTripAsTextInByteOrder) {
  FERRY_REQUIRE_PG(db);
  auto c = Connect(db);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->ExecScript("CREATE TABLE t(k TEXT COLLATE \"C\" PRIMARY KEY, v BIGINT)").ok());
  const std::vector<std::string> keys = {"b", "a b", "a", "é", "z'; DROP TABLE t; --", "$1",
                                         "back\\slash", "日本", "Z", "a/b//c"};
  for (size_t i = 0; i < keys.size(); ++i) {
    auto r = c->Exec("INSERT INTO t(k, v) VALUES($1, $2)", {keys[i], std::to_string(i)});
    ASSERT_TRUE(r.ok()) << keys[i] << ": " << r.status().ToString();
    EXPECT_EQ(r->affected(), 1);
  }
  auto rows = c->Exec("SELECT k, v FROM t ORDER BY k");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());  // bytes, as S3 orders keys
  ASSERT_EQ(rows->size(), static_cast<int>(keys.size()));
  for (int i = 0; i < rows->size(); ++i) {
    EXPECT_EQ(rows->Text(i, 0), sorted[static_cast<size_t>(i)]);
    EXPECT_EQ(keys[static_cast<size_t>(rows->Int(i, 1))], rows->Text(i, 0));
  }
  auto null = c->Exec("SELECT $1::TEXT IS NULL, $1::TEXT", {std::nullopt});
  ASSERT_TRUE(null.ok());
  EXPECT_EQ(null->Text(0, 0), "t");
  EXPECT_TRUE(null->IsNull(0, 1));
  auto upd = c->Exec("UPDATE t SET v = v + 1 WHERE k >= $1", {"a"});
  ASSERT_TRUE(upd.ok());
  EXPECT_EQ(upd->affected(), 8) << "all but \"$1\" and \"Z\"";
}

TEST(PgConn, ErrorsAreClassifiedAndOneLine) {
  FERRY_REQUIRE_PG(db);
  auto c = Connect(db);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->ExecScript("CREATE TABLE u(k TEXT PRIMARY KEY)").ok());
  ASSERT_TRUE(c->Exec("INSERT INTO u VALUES($1)", {"x"}).ok());
  auto dup = c->Exec("INSERT INTO u VALUES($1)", {"x"});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), ErrorCode::kAlreadyExists) << dup.status().ToString();
  auto bad = c->Exec("SELEKT 1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInternal);
  EXPECT_FALSE(bad.status().retryable());
  EXPECT_EQ(bad.status().ToString().find('\n'), std::string::npos) << bad.status().ToString();
  EXPECT_TRUE(c->healthy()) << "a failed statement leaves the connection usable";
  EXPECT_TRUE(c->Exec("SELECT 1").ok());
}

TEST(PgConn, ConnectFailuresSayWhyAndNeverShowThePassword) {
  std::string why;
  std::string base = testing_pg::ClusterConninfo(&why);
  if (base.empty()) FERRY_SKIP_WITHOUT_PEER(why);
  auto malformed = Conn::Open("host=127.0.0.1 port");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().code(), ErrorCode::kInvalidArgument) << malformed.status().ToString();

  auto no_db = Conn::Open(base + " dbname=no_such_database");
  ASSERT_FALSE(no_db.ok());
  EXPECT_EQ(no_db.status().code(), ErrorCode::kNotFound) << no_db.status().ToString();

  auto no_role = Conn::Open(base + " user=no_such_role");
  ASSERT_FALSE(no_role.ok());
  EXPECT_EQ(no_role.status().code(), ErrorCode::kAccessDenied) << no_role.status().ToString();

  // Nothing listens on port 1 of loopback: refused at once, retryable.
  auto down = Conn::Open("host=127.0.0.1 port=1 dbname=x user=y password=s3cr3t-do-not-log");
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), ErrorCode::kNetwork) << down.status().ToString();
  EXPECT_TRUE(down.status().retryable());
  EXPECT_EQ(down.status().ToString().find("s3cr3t"), std::string::npos) << down.status().ToString();
  EXPECT_EQ(down.status().ToString().find('\n'), std::string::npos);
}

TEST(PgConn, MalformedStringsWithAPasswordQuoteNoneOfIt) {
  // Each is refused by libpq's own parser, which quotes the piece it could
  // not take; with a password in the string, that piece is hidden.
  for (const std::string bad : {"postgres://u:50%zzoff@127.0.0.1:1/db",
                                "host=127.0.0.1 password=two words",
                                "postgresql://u:pa/ss@127.0.0.1/db?sslmode=s3cretish"}) {
    auto c = Conn::Open(bad);
    ASSERT_FALSE(c.ok()) << bad;
    const std::string m = c.status().ToString();
    for (const char* secret : {"50%zz", "zzoff", "words", "ss@127", "s3cretish"}) {
      EXPECT_EQ(m.find(secret), std::string::npos) << bad << " -> " << m;
    }
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(PgConn, HideSecretsKeepsWhatCarriesNoPassword) {
  EXPECT_EQ(HideSecrets("could not translate host name \"nohost\"", "host=nohost dbname=x", ""),
            "could not translate host name \"nohost\"");
  EXPECT_EQ(HideSecrets("invalid integer value \"pa\" for connection option \"port\"",
                        "postgres://u:pa:ss@h/db", ""),
            "invalid integer value \"(hidden)\" for connection option \"port\"");
  EXPECT_EQ(HideSecrets("auth for hunter2 failed", "host=h password=hunter2", "hunter2"),
            "auth for (hidden) failed");
}

TEST(PgConn, ARestartBreaksTheConnectionRetryablyAndResetRecovers) {
  FERRY_PRIVATE_PG(cluster);
  auto c = Connect(cluster.conninfo());
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->Exec("SELECT 1").ok());
  EXPECT_TRUE(c->CheckAlive()) << "an idle connection to a running server";
  ASSERT_TRUE(cluster.Restart());
  EXPECT_FALSE(c->CheckAlive()) << "the server's goodbye is seen without a statement";
  auto broken = c->Exec("SELECT 1");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), ErrorCode::kNetwork) << broken.status().ToString();
  EXPECT_TRUE(broken.status().retryable());
  EXPECT_FALSE(c->healthy());
  ASSERT_TRUE(c->Reset().ok());
  auto again = c->Exec("SELECT 41 + 1");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->Int(0, 0), 42);
}

}  // namespace
}  // namespace ferry::state::pg
