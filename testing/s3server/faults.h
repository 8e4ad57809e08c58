#pragma once
// Fault injection policy: which requests are slowed down or answered with a
// fault. Pure policy: it decides, the server acts (faults are applied by
// exchange.cc and server.cc). Configured from the command line and replaced
// at runtime through POST /_admin/faults, so one server process can be
// reconfigured between test cases.
//
// Rules. A config holds an ordered list of fault rules. The top-level
// kind/key_regex/op/every/count fields, when kind != none, form an implicit
// first rule (the single-fault form older configs use); `rules` follow it.
//
// Selection. For each request the rules are tried in order. A rule sees the
// request as a candidate when its kind applies to the operation
// (FaultApplies), its `op` matches and, if `key_regex` is set, the regex
// matches (std::regex_search, ECMAScript) the object key — for listings, the
// prefix parameter; for other bucket-level operations, "". Each rule counts
// its own candidates and injections. A candidate fires when: `every` = N > 0
// and it is the Nth, 2Nth... candidate of this rule; then fewer than `count`
// (if >= 0) faults of this rule have fired; then a draw from the policy's
// RNG falls below `probability` (no draw when it is 1). The first rule that
// fires decides the fault, and the rules after it do not see the request.
// Latency and bandwidth are global, not per rule.
//
// List quirks (listing_quirks.h) are part of the config too: listings that
// are wrong on purpose, for every ListObjects request while set.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "listing_quirks.h"
#include "pacer.h"

namespace ferry::s3server {

enum class FaultKind {
  kNone,
  kHttp403,           // 403 AccessDenied
  kHttp500,           // 500 InternalError
  kHttp503,           // 503 SlowDown with Retry-After: 1
  kReset,             // RST mid-body (response body, or request body for uploads)
  kTruncate,          // short body then FIN (uploads: no response at all)
  kWrongEtag,         // PUT/UploadPart/GET/HEAD/copy answer a wrong ETag
  kComplete200Error,  // CompleteMultipartUpload: 200 with an <Error> body
  kCorrupt,           // GET: the whole body with its first byte flipped, same headers
};

// "none", "403", "500", "503", "reset", "truncate", "wrong-etag",
// "complete-200-error", "corrupt".
std::string_view FaultKindName(FaultKind kind);
Result<FaultKind> ParseFaultKind(std::string_view name);

// Whether `kind` can apply to the operation named `op` (see router.h OpName).
bool FaultApplies(FaultKind kind, std::string_view op);

// One fault rule; see "Selection" above.
struct FaultRule {
  FaultKind kind = FaultKind::kNone;  // must not be kNone in `FaultConfig::rules`
  std::string key_regex;              // "" = any key
  std::string op = "any";             // an operation name (router.h) or "any"
  uint64_t every = 0;                 // 0 = every candidate
  int64_t count = -1;                 // faults this rule injects; -1 = unlimited
  double probability = 1.0;           // in (0, 1]; chance that a selected candidate faults
};

struct FaultConfig {
  int latency_ms = 0;            // added before every S3 request is handled
  int latency_jitter_ms = 0;     // plus uniform random 0..jitter
  uint64_t bandwidth = 0;        // bytes/s per connection, bodies both ways; 0 = unlimited
  uint64_t bandwidth_total = 0;  // bytes/s across all connections; 0 = unlimited
  // S3 requests started per second across all connections (a request
  // waits its turn on a virtual clock before the latency above, as an
  // origin's request-rate limit queues it); 0 = unlimited.
  uint64_t requests_per_second = 0;
  // The implicit first rule (used only when kind != kNone).
  FaultKind kind = FaultKind::kNone;
  std::string key_regex;         // "" = any key
  uint64_t every = 0;            // 0 = every candidate
  std::string op = "any";        // an operation name (router.h) or "any"
  int64_t count = -1;            // faults to inject; -1 = unlimited
  std::vector<FaultRule> rules;  // tried after the implicit rule, in order
  // When set, Configure and ResetCounters re-seed the RNG (probability draws
  // and latency jitter) with it, so a run with the same request order
  // repeats its faults. Unset: the RNG keeps its state (seeded at random).
  std::optional<uint64_t> seed;
  ListQuirks list_quirks;  // none by default
};

// JSON form, with the field names above ("rules" is an array of objects with
// the FaultRule field names; "seed" is omitted when unset; "list_quirks" is
// an array of quirk names, always present). FromJson starts
// from defaults, so absent fields reset to their default; unknown fields, in
// the config or in a rule, are an error, and so is a rule without "kind".
// Values are range-checked by FaultPolicy::Configure, not here.
nlohmann::json FaultConfigToJson(const FaultConfig& config);
Result<FaultConfig> FaultConfigFromJson(const nlohmann::json& j);
nlohmann::json FaultRuleToJson(const FaultRule& rule);
Result<FaultRule> FaultRuleFromJson(const nlohmann::json& j);
// FaultRuleFromJson of the JSON text `text` (the --fault-rule flag).
Result<FaultRule> ParseFaultRule(std::string_view text);

// Counters of one active rule, in evaluation order.
struct FaultRuleStats {
  FaultKind kind = FaultKind::kNone;
  bool implicit = false;  // the top-level single-fault rule
  uint64_t candidates = 0;
  uint64_t injected = 0;
};

// Thread-safe holder of the active configuration and its counters.
class FaultPolicy {
 public:
  // Validates (latency >= 0, every regex compiles, every op known, rule
  // kinds not none, probabilities in (0, 1]) and installs `config`, resetting
  // the candidate and injection counters and applying `seed`. On error the
  // active configuration is unchanged.
  Status Configure(FaultConfig config);
  FaultConfig config() const;
  // config().list_quirks, without copying the rest.
  ListQuirks list_quirks() const;

  // Counts this request as a candidate of each rule it reaches, and returns
  // the fault to inject (kNone for most requests).
  FaultKind Decide(std::string_view op, std::string_view key);
  // Latency to add to this request: its turn under requests_per_second,
  // then latency_ms + uniform(0, jitter).
  std::chrono::microseconds Latency();

  // Faults injected by all rules together.
  uint64_t injected() const;
  std::vector<FaultRuleStats> rule_stats() const;
  // Zeroes the candidate and injection counters and re-applies `seed` if
  // set (keeps the configuration).
  void ResetCounters();

 private:
  struct ActiveRule {
    FaultRule rule;
    bool implicit = false;
    std::optional<std::regex> regex;
    uint64_t candidates = 0;
    uint64_t injected = 0;
  };

  static Result<ActiveRule> Compile(FaultRule rule, bool implicit);
  // Whether `rule` fires for this request; updates its counters. Needs mu_.
  bool Fires(ActiveRule& rule, std::string_view op, std::string_view key);
  // Re-seeds rng_ from config_.seed, if set. Needs mu_.
  void SeedLocked();

  mutable std::mutex mu_;
  FaultConfig config_;                        // guarded by mu_
  std::vector<ActiveRule> rules_;             // guarded by mu_; evaluation order
  std::mt19937 rng_{std::random_device{}()};  // guarded by mu_
  Pacer request_pacer_;                       // requests_per_second's clock
};

}  // namespace ferry::s3server
