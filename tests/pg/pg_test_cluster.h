#pragma once
// Where the PostgreSQL tests find their server: the cluster the CTest
// fixture started (FERRY_PG_CONNINFO_FILE), or, when the binary runs by
// itself, one it starts on first use and stops at exit. Each test gets a
// database of its own.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "base/test_shell.h"
#include "state/pg_db.h"

// In a test: a fresh database's connection string in `var`, or the test
// skips (no PostgreSQL here; fails instead under FERRY_REQUIRE_PEERS=1).
#define FERRY_REQUIRE_PG(var)                              \
  std::string why_##var;                                   \
  std::string var = ferry::testing_pg::FreshDatabase(&why_##var); \
  if (var.empty()) FERRY_SKIP_WITHOUT_PEER(why_##var)

namespace ferry::testing_pg {

// Connects, failing the test (and returning null) when it cannot.
inline std::unique_ptr<state::pg::Conn> Connect(const std::string& conninfo) {
  auto c = state::pg::Conn::Open(conninfo);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(*c) : nullptr;
}

// The connection string of a fresh, empty database for one test; "" with
// `why` set when there is no PostgreSQL (the test then skips).
std::string FreshDatabase(std::string* why);

// The cluster's base connection string (database "ferry"); "" when none.
std::string ClusterConninfo(std::string* why);

// Runs testing/pg/pg_cluster.sh `command` `dir` (start, stop, restart):
// its exit status (77: no PostgreSQL), and its stdout in `*out` (the
// connection string for start and restart) when `out` is not null.
int RunClusterScript(const std::string& command, const std::string& dir, std::string* out);

// A cluster of a test's own, for tests that restart the server (restarting
// the shared one would break the other tests' connections): started in a
// temp directory, stopped and removed when it goes out of scope.
class PrivateCluster {
 public:
  PrivateCluster();
  ~PrivateCluster();
  PrivateCluster(const PrivateCluster&) = delete;
  PrivateCluster& operator=(const PrivateCluster&) = delete;

  // The connection string; "" when the cluster could not start, with
  // why() saying so (missing() when PostgreSQL is not installed).
  const std::string& conninfo() const { return conninfo_; }
  const std::string& why() const { return why_; }
  bool missing() const { return missing_; }
  // Fast shutdown and start again on the same port.
  bool Restart();

 private:
  std::string dir_, conninfo_, why_;
  bool missing_ = false;
};

// In a test: a PrivateCluster named `var`, or the test skips (no
// PostgreSQL here) or fails (it did not start).
#define FERRY_PRIVATE_PG(var)                                     ferry::testing_pg::PrivateCluster var;                          if (var.missing()) FERRY_SKIP_WITHOUT_PEER("PostgreSQL is not installed");   ASSERT_FALSE(var.conninfo().empty()) << var.why()

}  // namespace ferry::testing_pg
