#include "state/pg_db.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace ferry::state::pg {
namespace {

// libpq's messages end with a newline and may run over several lines (a
// DETAIL, a caret under the SQL): a Status message is one line.
std::string OneLine(const char* m) {
  std::string s = m ? m : "";
  size_t nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s.empty() ? "unknown error" : s;
}

// The password a connection string gives, "" when none (or unparsable).
std::string PasswordOf(const std::string& conninfo) {
  PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), nullptr);
  if (opts == nullptr) return "";
  std::string pw;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (std::strcmp(o->keyword, "password") == 0 && o->val != nullptr) pw = o->val;
  }
  PQconninfoFree(opts);
  return pw;
}

}  // namespace

std::string HideSecrets(std::string message, const std::string& conninfo,
                        const std::string& password) {
  const bool uri = conninfo.find("://") != std::string::npos;
  const bool has_secret = !password.empty() || conninfo.find("password") != std::string::npos ||
                          (uri && conninfo.find('@') != std::string::npos);
  if (!has_secret) return message;
  constexpr std::string_view kHidden = "(hidden)";
  if (!password.empty()) {
    for (size_t at = message.find(password); at != std::string::npos;
         at = message.find(password, at + kHidden.size())) {
      message.replace(at, password.size(), kHidden);
    }
  }
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    size_t open = message.find('"', i);
    size_t close = open == std::string::npos ? open : message.find('"', open + 1);
    if (close == std::string::npos) break;
    std::string quoted = message.substr(open + 1, close - open - 1);
    out.append(message, i, open + 1 - i);
    // One character ("=", ":") says where the parse stopped, not a secret.
    out += quoted.size() > 1 && conninfo.find(quoted) != std::string::npos ? std::string(kHidden)
                                                                           : quoted;
    out += '"';
    i = close + 1;
  }
  out.append(message, std::min(i, message.size()), std::string::npos);
  return out;
}

Status ClassifySqlState(std::string_view state, std::string message) {
  auto starts = [&](std::string_view p) { return state.substr(0, p.size()) == p; };
  if (starts("08") || state == "57P01" || state == "57P02" || state == "57P03") {
    return Status::Network(std::move(message));
  }
  if (state == "40001" || state == "40P01" || starts("53")) {
    return Status(ErrorCode::kServerError, std::move(message));
  }
  if (state == "23505") return Status::AlreadyExists(std::move(message));
  if (starts("28")) return Status::AccessDenied(std::move(message));
  if (state == "3D000") return Status::NotFound(std::move(message));
  return Status::Internal(std::move(message));
}

namespace {

// "{a,b,c}" with `text(item)` for each item.
template <class T, class F>
std::string Braced(const std::vector<T>& items, F text) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += text(items[i]);
  }
  out += '}';
  return out;
}

}  // namespace

std::string TextArray(const std::vector<std::string>& items) {
  return Braced(items, [](const std::string& item) {
    std::string quoted = "\"";
    for (char ch : item) {
      if (ch == '"' || ch == '\\') quoted += '\\';
      quoted += ch;
    }
    return quoted + '"';
  });
}

std::string IntArray(const std::vector<int64_t>& items) {
  return Braced(items, [](int64_t v) { return std::to_string(v); });
}

std::string BoolArray(const std::vector<bool>& items) {
  return Braced(items, [](bool v) { return std::string(v ? "t" : "f"); });
}

Rows::Rows(pg_result* r) : r_(r) {}
Rows::~Rows() {
  if (r_) PQclear(r_);
}
Rows::Rows(Rows&& other) noexcept : r_(other.r_) { other.r_ = nullptr; }
Rows& Rows::operator=(Rows&& other) noexcept {
  if (this != &other) {
    if (r_) PQclear(r_);
    r_ = other.r_;
    other.r_ = nullptr;
  }
  return *this;
}
int Rows::size() const { return r_ ? PQntuples(r_) : 0; }
bool Rows::IsNull(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }
std::string Rows::Text(int row, int col) const {
  return std::string(PQgetvalue(r_, row, col), static_cast<size_t>(PQgetlength(r_, row, col)));
}
int64_t Rows::Int(int row, int col) const {
  return IsNull(row, col) ? 0 : std::strtoll(PQgetvalue(r_, row, col), nullptr, 10);
}
double Rows::Double(int row, int col) const {
  return IsNull(row, col) ? 0 : std::strtod(PQgetvalue(r_, row, col), nullptr);
}
bool Rows::Bool(int row, int col) const {
  return !IsNull(row, col) && PQgetvalue(r_, row, col)[0] == 't';
}
int64_t Rows::affected() const {
  const char* n = r_ ? PQcmdTuples(r_) : "";
  return *n ? std::strtoll(n, nullptr, 10) : 0;
}

Result<std::unique_ptr<Conn>> Conn::Open(const std::string& conninfo) {
  // Parse first: a malformed string is the caller's error. libpq's parser
  // quotes the piece it could not take, which may be a password: hidden.
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
  if (opts == nullptr) {
    std::string m = HideSecrets(OneLine(err), conninfo, "");
    if (err) PQfreemem(err);
    return Status::InvalidArgument("bad PostgreSQL connection string: " + m);
  }
  PQconninfoFree(opts);
  // A default connect timeout, so an address that drops packets fails in
  // bounded time; the caller's own connect_timeout (later in the string,
  // which is expanded in place of dbname) wins over it.
  const char* keys[] = {"connect_timeout", "dbname", nullptr};
  const char* values[] = {"10", conninfo.c_str(), nullptr};
  pg_conn* c = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (c == nullptr) return Status::Internal("libpq could not allocate a connection");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string m = HideSecrets(OneLine(PQerrorMessage(c)), conninfo, PasswordOf(conninfo));
    PQfinish(c);
    // libpq gives no SQLSTATE for a failed connection: tell the permanent
    // refusals (authentication, a missing database or role) from a server
    // that is down or unreachable by their text.
    std::string text = "cannot connect to PostgreSQL: " + m;
    if (m.find("authentication failed") != std::string::npos ||
        m.find("password") != std::string::npos || m.find("role \"") != std::string::npos) {
      return Status::AccessDenied(text);
    }
    if (m.find("database \"") != std::string::npos && m.find("does not exist") != std::string::npos) {
      return Status::NotFound(text);
    }
    return Status::Network(text);
  }
  // Quiet: NOTICEs (e.g. "relation already exists, skipping") are not errors.
  PQsetNoticeProcessor(c, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<Conn>(new Conn(c));
}

Conn::~Conn() { PQfinish(c_); }

bool Conn::healthy() const { return PQstatus(c_) == CONNECTION_OK; }

bool Conn::idle() const { return PQtransactionStatus(c_) == PQTRANS_IDLE; }

bool Conn::CheckAlive() {
  if (!healthy()) return false;
  pollfd p{PQsocket(c_), POLLIN, 0};
  if (p.fd < 0) return false;
  // A connection with no statement running hears from the server only when
  // something happened to it: a shutdown or crash notice, or the socket
  // closing (ferry never LISTENs). Either way it is not to be trusted.
  return ::poll(&p, 1, 0) == 0;
}

Status Conn::Reset() {
  PQreset(c_);
  if (!healthy()) return Status::Network("cannot reconnect to PostgreSQL: " + OneLine(PQerrorMessage(c_)));
  return Status::Ok();
}

Status Conn::ErrorOf(pg_result* r, std::string_view what) const {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string m = std::string(what) + ": " + OneLine(r ? PQresultErrorMessage(r) : PQerrorMessage(c_));
  if (state == nullptr) {
    // No answer from the server at all: the connection is gone.
    return Status::Network(std::string(what) + ": " + OneLine(PQerrorMessage(c_)));
  }
  return ClassifySqlState(state, std::move(m));
}

Result<Rows> Conn::Exec(std::string_view sql, const std::vector<Param>& params) {
  std::string text(sql);
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Param& p : params) values.push_back(p ? p->c_str() : nullptr);
  pg_result* r = PQexecParams(c_, text.c_str(), static_cast<int>(values.size()), nullptr,
                              values.data(), nullptr, nullptr, /*resultFormat=*/0);
  ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return Rows(r);
  Status s = ErrorOf(r, "PostgreSQL");
  if (r) PQclear(r);
  return s;
}

Status Conn::ExecScript(std::string_view sql) {
  std::string text(sql);
  pg_result* r = PQexec(c_, text.c_str());
  ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
    PQclear(r);
    return Status::Ok();
  }
  Status s = ErrorOf(r, "PostgreSQL");
  if (r) PQclear(r);
  return s;
}

}  // namespace ferry::state::pg
