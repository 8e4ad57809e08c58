#pragma once
// A small RAII layer over the SQLite C API for the state store: a connection
// (Db) that caches every prepared statement by its SQL text, a borrowed
// statement handle (Stmt) that is reset when it goes out of scope, and a
// transaction guard (Txn) that rolls back unless committed.
//
// Errors are Status values, classified from the SQLite result code:
//   SQLITE_CORRUPT, SQLITE_NOTADB  -> kCorruption, not retryable ("state file
//                                     X is damaged (...); refusing to touch it")
//   SQLITE_BUSY, SQLITE_LOCKED     -> kTimeout (retryable: another process
//                                     held the lock past the busy timeout)
//   SQLITE_FULL, SQLITE_IOERR,
//   SQLITE_CANTOPEN                -> kIoError
//   SQLITE_READONLY, SQLITE_PERM   -> kAccessDenied
//   SQLITE_CONSTRAINT              -> kAlreadyExists
//   anything else                  -> kInternal
//
// Threading: none of these classes is thread-safe; the owner serialises
// every use of one Db (the state store holds a mutex).

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "base/status.h"

namespace ferry::state::sqlite {

class Db;

// A prepared statement borrowed from a Db's cache. Binds are 1-based and
// chainable; the statement is reset and its bindings cleared on destruction,
// so the next Prepare of the same SQL starts clean. Never use two Stmt for
// the same SQL at once.
class Stmt {
 public:
  Stmt(Db* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Stmt();
  Stmt(Stmt&& other) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& operator=(Stmt&&) = delete;

  // Binds `values` to parameters 1..n (integers and bools as INTEGER,
  // floating point as REAL, anything convertible to string_view as TEXT).
  template <typename... Ts>
  Stmt& Bind(const Ts&... values) {
    int i = 0;
    (BindOne(++i, values), ...);
    return *this;
  }
  Stmt& BindInt(int i, int64_t v);
  Stmt& BindDouble(int i, double v);
  Stmt& BindText(int i, std::string_view v);

  // Advances: true with a row to read, false when done. When done (or on
  // error) the statement is reset, ready to be bound and run again.
  Result<bool> Step();
  // Steps to completion, ignoring rows.
  Status Run();
  // Rows changed by the last Run()/Step() of this connection.
  int64_t Changes() const;

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const;

 private:
  template <typename T>
  void BindOne(int i, const T& v) {
    if constexpr (std::is_integral_v<T>) {
      BindInt(i, static_cast<int64_t>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      BindDouble(i, static_cast<double>(v));
    } else {
      BindText(i, std::string_view(v));
    }
  }
  void NoteBind(int rc);

  Db* db_;
  sqlite3_stmt* stmt_;
  int bind_rc_ = SQLITE_OK;
};

class Db {
 public:
  // Opens (creating when absent) the file read-write, with `busy_timeout_ms`
  // of waiting for locks. Reads nothing yet.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, int busy_timeout_ms);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  const std::string& path() const { return path_; }

  // The cached statement for `sql`, preparing it on first use.
  Result<Stmt> Prepare(const std::string& sql);
  // Runs one or more statements (DDL, pragmas), uncached.
  Status Exec(const std::string& sql);
  int64_t Changes() const { return sqlite3_changes64(db_); }
  bool InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }
  // Skips the checkpoint sqlite3_close would otherwise run, so closing a
  // file we refused to use writes nothing to it.
  void DisableCheckpointOnClose();

  // The Status for result code `rc` (see the table at the top of the file);
  // `what` names the operation. Remembers `rc` for last_error_rc().
  Status Error(int rc, std::string_view what) const;
  // The result code of the last Error() (SQLITE_OK if none).
  int last_error_rc() const { return last_error_rc_; }

 private:
  Db(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  // The busy handler (sqlite3_busy_handler): short sleeps, then gives up
  // after busy_timeout_ms_ in all.
  static int OnBusy(void* self, int count);

  const std::string path_;
  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
  mutable int last_error_rc_ = SQLITE_OK;
  int busy_timeout_ms_ = 0;
};

// A transaction; rolls back on destruction unless Commit() succeeded.
// kWrite takes the write lock at BEGIN (BEGIN IMMEDIATE), so two processes
// never deadlock upgrading a read lock; kRead sees one consistent snapshot.
class Txn {
 public:
  enum Mode { kRead, kWrite };
  explicit Txn(Db& db) : db_(db) {}
  ~Txn();
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  Status Begin(Mode mode);
  Status Commit();

 private:
  Db& db_;
  bool open_ = false;
};

}  // namespace ferry::state::sqlite
