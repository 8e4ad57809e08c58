#include "state/sqlite_db.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace ferry::state::sqlite {
namespace {

// SQLite messages are one line in practice; make sure of it.
std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

// ---- Stmt ----

Stmt::~Stmt() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

Stmt::Stmt(Stmt&& other) noexcept : db_(other.db_), stmt_(other.stmt_), bind_rc_(other.bind_rc_) {
  other.stmt_ = nullptr;
}

void Stmt::NoteBind(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

Stmt& Stmt::BindInt(int i, int64_t v) {
  NoteBind(sqlite3_bind_int64(stmt_, i, v));
  return *this;
}

Stmt& Stmt::BindDouble(int i, double v) {
  NoteBind(sqlite3_bind_double(stmt_, i, v));
  return *this;
}

Stmt& Stmt::BindText(int i, std::string_view v) {
  NoteBind(sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Result<bool> Stmt::Step() {
  if (bind_rc_ != SQLITE_OK) return db_->Error(bind_rc_, "binding parameters");
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  // Reset at once, so the statement can be bound again in a loop.
  sqlite3_reset(stmt_);
  if (rc == SQLITE_DONE) return false;
  // Since 3.7.15 (v2 prepare) sqlite3_step returns the specific code itself.
  return db_->Error(rc, sqlite3_sql(stmt_));
}

Status Stmt::Run() {
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

int64_t Stmt::Changes() const { return db_->Changes(); }

std::string Stmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

// ---- Db ----

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<Db> db(new Db(path, raw));  // closes `raw` on every path
  if (raw == nullptr) return Status::Internal("sqlite3_open_v2: out of memory");
  if (rc != SQLITE_OK) return db->Error(rc, "opening");
  sqlite3_extended_result_codes(raw, 1);
  db->busy_timeout_ms_ = busy_timeout_ms;
  sqlite3_busy_handler(raw, &Db::OnBusy, db.get());
  return db;
}

// SQLite's own busy handler sleeps 1, 2, 5, 10, 15, 20, 25 ms... between
// looks, so a writer that waits for another process's short transaction
// (a worker's group commit, a gateway's claim) often sleeps well past its
// end. Looks here come 0.1, 0.2, 0.4, 0.8, 1.6 ms apart, then every 2 ms,
// until `busy_timeout_ms` in all.
int Db::OnBusy(void* self, int count) {
  const int64_t step_us = std::min<int64_t>(100ll << std::min(count, 5), 2000);
  int64_t waited_us = 0;
  for (int i = 0; i < count; ++i) waited_us += std::min<int64_t>(100ll << std::min(i, 5), 2000);
  if (waited_us >= static_cast<Db*>(self)->busy_timeout_ms_ * 1000ll) return 0;
  std::this_thread::sleep_for(std::chrono::microseconds(step_us));
  return 1;
}

Db::~Db() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

void Db::DisableCheckpointOnClose() {
  sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
}

Result<Stmt> Db::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return Error(rc, sql);
    it = cache_.emplace(sql, stmt).first;
  }
  return Stmt(this, it->second);
}

Status Db::Exec(const std::string& sql) {
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Error(rc, sql);
  return Status::Ok();
}

Status Db::Error(int rc, std::string_view what) const {
  last_error_rc_ = rc;
  const std::string file = "state file " + path_;
  std::string context(what);
  if (context.size() > 80) context = context.substr(0, 77) + "...";
  context = OneLine(std::move(context));
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(file + " is damaged (" + sqlite3_errstr(rc) + ", while " + context +
                                "); refusing to touch it")
          .set_retryable(false);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Timeout(file + " is locked by another process (" +
                             OneLine(sqlite3_errmsg(db_)) + ", while " + context + ")");
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
      return Status::IoError(file + ": " + OneLine(sqlite3_errmsg(db_)) + " (while " + context +
                             ")");
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return Status::AccessDenied(file + ": " + OneLine(sqlite3_errmsg(db_)) + " (while " +
                                  context + ")");
    case SQLITE_CONSTRAINT:
      return Status::AlreadyExists(file + ": " + OneLine(sqlite3_errmsg(db_)) + " (while " +
                                   context + ")");
    default:
      return Status::Internal(file + ": " + OneLine(sqlite3_errmsg(db_)) + " (while " + context +
                              ")");
  }
}

// ---- Txn ----

Status Txn::Begin(Mode mode) {
  FERRY_ASSIGN_OR_RETURN(Stmt begin, db_.Prepare(mode == kWrite ? "BEGIN IMMEDIATE" : "BEGIN"));
  FERRY_RETURN_IF_ERROR(begin.Run());
  open_ = true;
  return Status::Ok();
}

Status Txn::Commit() {
  FERRY_ASSIGN_OR_RETURN(Stmt commit, db_.Prepare("COMMIT"));
  Status s = commit.Run();
  // A failed COMMIT may leave the transaction open (SQLITE_BUSY); the
  // destructor then rolls it back.
  if (s.ok()) open_ = false;
  return s;
}

Txn::~Txn() {
  // SQLite rolls back by itself after some errors (SQLITE_FULL, IOERR...);
  // only roll back what is still open.
  if (open_ && db_.InTransaction()) (void)db_.Exec("ROLLBACK");
}

}  // namespace ferry::state::sqlite
