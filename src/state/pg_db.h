#pragma once
// A small layer over libpq for the PostgreSQL state store: one connection
// (Conn), statements with $1..$n parameters sent as text (never spliced into
// the SQL), results as text (Rows), and errors as Status values classified
// by SQLSTATE (ClassifySqlState), so a caller knows what a retry may fix:
//
//   class 08 (connection), 57P01-57P03 (shutdown, crash, starting up)
//                                      -> kNetwork, retryable
//   40001, 40P01 (serialization failure, deadlock)
//                                      -> kServerError, retryable
//   class 53 (insufficient resources)  -> kServerError, retryable
//   23505 (unique violation)           -> kAlreadyExists
//   class 28 (authorization)           -> kAccessDenied
//   3D000 (no such database)           -> kNotFound
//   anything else (a bug: syntax, types, constraints)
//                                      -> kInternal, not retryable
//
// A connection that breaks stays broken: Exec fails with kNetwork until
// Reset() connects again. Threading: a Conn is used by one thread at a time.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct pg_conn;
struct pg_result;

namespace ferry::state::pg {

// The pure part: what an SQLSTATE means to a caller. `message` becomes the
// Status message.
Status ClassifySqlState(std::string_view sqlstate, std::string message);

// libpq's messages about a connection string quote pieces of it (a bad
// percent-escape, a word without "=", a host or port that took in part of
// a password holding an unescaped "@" or "/"). When `conninfo` carries a
// password (`password`, from parsing it, or any user-info or password=
// when it could not be parsed), every quoted piece of `message` taken from
// `conninfo`, and the password itself, is replaced by "(hidden)".
std::string HideSecrets(std::string message, const std::string& conninfo,
                        const std::string& password);

using Param = std::optional<std::string>;  // nullopt = SQL NULL

// An integer and a boolean in PostgreSQL's text format, as parameters.
inline std::string IntText(int64_t v) { return std::to_string(v); }
inline std::string BoolText(bool v) { return v ? "true" : "false"; }

// Array parameters, as PostgreSQL's text form of an array: a batch of keys
// goes to the server as one parameter ($3::text[]) and one statement, not
// one statement per key. Every text element is quoted, with '"' and '\\'
// escaped, so any key (commas, braces, quotes, spaces, "NULL") survives.
std::string TextArray(const std::vector<std::string>& items);
std::string IntArray(const std::vector<int64_t>& items);
std::string BoolArray(const std::vector<bool>& items);

// The rows of one statement's answer, as text.
class Rows {
 public:
  explicit Rows(pg_result* r);
  ~Rows();
  Rows(Rows&& other) noexcept;
  Rows& operator=(Rows&& other) noexcept;
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;

  int size() const;
  bool IsNull(int row, int col) const;
  std::string Text(int row, int col) const;  // "" for NULL
  int64_t Int(int row, int col) const;       // 0 for NULL or not a number
  double Double(int row, int col) const;
  bool Bool(int row, int col) const;         // PostgreSQL's 't'
  // Rows an INSERT, UPDATE or DELETE changed.
  int64_t affected() const;

 private:
  pg_result* r_;
};

class Conn {
 public:
  // Connects with a libpq connection string or URI ("postgres://..."); the
  // PG* environment variables fill what it leaves out. A refused or failed
  // connection is a one-line error that never shows a password.
  static Result<std::unique_ptr<Conn>> Open(const std::string& conninfo);
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Runs one statement. `params` bind to $1..$n.
  Result<Rows> Exec(std::string_view sql, const std::vector<Param>& params = {});
  // Runs SQL text without parameters (several statements allowed: a
  // migration, BEGIN, COMMIT).
  Status ExecScript(std::string_view sql);

  // True when no transaction is open (the connection may be reused).
  bool idle() const;
  // False once the connection broke.
  bool healthy() const;
  // For a connection that sat idle: false when it broke or the server sent
  // anything in the meantime (a shutdown notice, a closed socket), found
  // without waiting, so a restart costs a Reset() and not a failed
  // statement.
  bool CheckAlive();
  // Connects again with the same connection string.
  Status Reset();

 private:
  explicit Conn(pg_conn* c) : c_(c) {}
  Status ErrorOf(pg_result* r, std::string_view what) const;

  pg_conn* c_;
};

}  // namespace ferry::state::pg
