#pragma once
// Where the PostgreSQL tests find their server: the cluster the CTest
// fixture started (FERRY_PG_CONNINFO_FILE), or, when the binary runs by
// itself, one it starts on first use and stops at exit. Each test gets a
// database of its own.

#include <string>

namespace ferry::testing_pg {

// The connection string of a fresh, empty database for one test; "" with
// `why` set when there is no PostgreSQL (the test then skips).
std::string FreshDatabase(std::string* why);

// The cluster's base connection string (database "ferry"); "" when none.
std::string ClusterConninfo(std::string* why);

// Restarts the cluster (fast shutdown, same port): for tests of a server
// that goes away and comes back. False when it could not.
bool RestartCluster();

}  // namespace ferry::testing_pg
