#pragma once
// Fault injection policy: which requests are slowed down or answered with a
// fault. Pure policy: it decides, the server acts (faults are applied by
// exchange.cc and server.cc). Configured from the command line and replaced
// at runtime through POST /_admin/faults, so one server process can be
// reconfigured between test cases.
//
// Selection. A request is a candidate when its operation matches `op` and,
// if `key_regex` is set, the regex matches (std::regex_search, ECMAScript)
// its object key — for listings, the prefix parameter; for other bucket-level
// operations, "". With `every` = N > 0 only every Nth candidate (N, 2N, ...)
// faults; with `count` = K >= 0 only the first K faults fire, so a client's
// retry succeeds. A kind that makes no sense for the operation (wrong-etag on
// a listing, complete-200-error on anything but complete) never selects it.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace ferry::s3server {

enum class FaultKind {
  kNone,
  kHttp500,           // 500 InternalError
  kHttp503,           // 503 SlowDown with Retry-After: 1
  kReset,             // RST mid-body (response body, or request body for uploads)
  kTruncate,          // short body then FIN (uploads: no response at all)
  kWrongEtag,         // PUT/UploadPart/GET/HEAD/copy answer a wrong ETag
  kComplete200Error,  // CompleteMultipartUpload: 200 with an <Error> body
};

// "none", "500", "503", "reset", "truncate", "wrong-etag", "complete-200-error".
std::string_view FaultKindName(FaultKind kind);
Result<FaultKind> ParseFaultKind(std::string_view name);

// Whether `kind` can apply to the operation named `op` (see router.h OpName).
bool FaultApplies(FaultKind kind, std::string_view op);

struct FaultConfig {
  int latency_ms = 0;          // added before every S3 request is handled
  int latency_jitter_ms = 0;   // plus uniform random 0..jitter
  uint64_t bandwidth = 0;      // bytes/s per connection, bodies both ways; 0 = unlimited
  uint64_t bandwidth_total = 0;  // bytes/s across all connections; 0 = unlimited
  FaultKind kind = FaultKind::kNone;
  std::string key_regex;       // "" = any key
  uint64_t every = 0;          // 0 = every candidate
  std::string op = "any";      // an operation name (router.h) or "any"
  int64_t count = -1;          // faults to inject; -1 = unlimited
};

// JSON form, with the field names above. FromJson starts from defaults, so
// absent fields reset to their default; unknown fields are an error.
nlohmann::json FaultConfigToJson(const FaultConfig& config);
Result<FaultConfig> FaultConfigFromJson(const nlohmann::json& j);

// Thread-safe holder of the active configuration and its counters.
class FaultPolicy {
 public:
  // Validates (regex compiles, op known) and installs `config`, resetting
  // the candidate and injection counters.
  Status Configure(FaultConfig config);
  FaultConfig config() const;

  // Counts this request as a candidate if it is one, and returns the fault
  // to inject (kNone for most requests).
  FaultKind Decide(std::string_view op, std::string_view key);
  // Latency to add to this request: latency_ms + uniform(0, jitter).
  std::chrono::milliseconds Latency();

  uint64_t injected() const;
  // Zeroes the candidate and injection counters (keeps the configuration).
  void ResetCounters();

 private:
  mutable std::mutex mu_;
  FaultConfig config_;              // guarded by mu_
  std::optional<std::regex> regex_;  // guarded by mu_
  uint64_t candidates_ = 0;          // guarded by mu_
  uint64_t injected_ = 0;            // guarded by mu_
  std::mt19937 rng_{std::random_device{}()};  // guarded by mu_
};

}  // namespace ferry::s3server
