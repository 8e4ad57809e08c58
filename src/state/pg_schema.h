#pragma once
// The PostgreSQL state store's schema, created and upgraded by versioned
// migrations (issue 6: "the schema is created and migrated by ferry").
//
// ferry_meta(key PK, value) names the database ('app' = 'ferry-state') and
// its version ('schema_version'); ferry_migrations(version PK, applied_ms)
// records each migration applied. MigrateSchema():
//   - runs in one transaction under a transaction-level advisory lock, so
//     any number of workers starting at once migrate a database once;
//   - an empty database (no tables in its schema) gets every migration;
//   - a ferry database at version v gets migrations v+1 .. kPgSchemaVersion;
//   - a newer version is kUnsupported (this build cannot read it), and a
//     database with tables but no ferry_meta is not ferry's (kCorruption,
//     not retryable): neither is ever written.
// Keys are TEXT COLLATE "C" (byte order, as S3 and the SQLite store).

#include <string>
#include <vector>

#include "base/status.h"
#include "state/pg_db.h"

namespace ferry::state::pg {

inline constexpr int kPgSchemaVersion = 6;

struct Migration {
  int version;      // 1, 2, ... in order
  std::string sql;  // statements run in the migration's transaction
};
// Every migration, in order.
const std::vector<Migration>& Migrations();

// Brings the connected database to kPgSchemaVersion; returns the version it
// found (0 for an empty database).
Result<int> MigrateSchema(Conn& conn);

}  // namespace ferry::state::pg
