#include "faults.h"

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "router.h"

namespace ferry::s3server {
namespace {

constexpr std::array<std::pair<FaultKind, std::string_view>, 9> kKindNames = {{
    {FaultKind::kNone, "none"},
    {FaultKind::kHttp403, "403"},
    {FaultKind::kHttp500, "500"},
    {FaultKind::kHttp503, "503"},
    {FaultKind::kReset, "reset"},
    {FaultKind::kTruncate, "truncate"},
    {FaultKind::kWrongEtag, "wrong-etag"},
    {FaultKind::kCorrupt, "corrupt"},
    {FaultKind::kComplete200Error, "complete-200-error"},
}};

// A "kind" JSON value: a name, or one of the status codes as a number.
// Throws nlohmann::json::exception on a value of the wrong type.
Result<FaultKind> KindFromJson(const nlohmann::json& v) {
  if (v.is_number_integer()) return ParseFaultKind(std::to_string(v.get<int64_t>()));
  return ParseFaultKind(v.get<std::string>());
}

// Runs `parse`, turning a nlohmann type error into InvalidArgument.
template <typename Fn>
auto CatchJson(std::string_view what, Fn parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument("bad " + std::string(what) + ": " + e.what());
  }
}

// Draws from `rng` and returns true with chance `p`. Uses the raw 32-bit
// mt19937 output (whose sequence the standard fixes), so a seed gives the
// same faults with every standard library.
bool Draw(std::mt19937& rng, double p) {
  if (p >= 1.0) return true;
  return static_cast<double>(rng()) < p * 4294967296.0;
}

}  // namespace

std::string_view FaultKindName(FaultKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "none";
}

Result<FaultKind> ParseFaultKind(std::string_view name) {
  for (const auto& [k, n] : kKindNames) {
    if (n == name) return k;
  }
  return Status::InvalidArgument("unknown fault kind '" + std::string(name) +
                                 "' (none|403|500|503|reset|truncate|wrong-etag|"
                                 "complete-200-error|corrupt)");
}

bool FaultApplies(FaultKind kind, std::string_view op) {
  switch (kind) {
    case FaultKind::kNone:
      return false;
    case FaultKind::kWrongEtag:
      return op == "put" || op == "upload-part" || op == "get" || op == "head" || op == "copy";
    case FaultKind::kComplete200Error:
      return op == "complete";
    case FaultKind::kCorrupt:
      return op == "get";
    case FaultKind::kHttp403:
    case FaultKind::kHttp500:
    case FaultKind::kHttp503:
    case FaultKind::kReset:
    case FaultKind::kTruncate:
      return true;
  }
  return false;
}

nlohmann::json FaultRuleToJson(const FaultRule& r) {
  return {{"kind", FaultKindName(r.kind)},
          {"key_regex", r.key_regex},
          {"op", r.op},
          {"every", r.every},
          {"count", r.count},
          {"probability", r.probability}};
}

Result<FaultRule> FaultRuleFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a fault rule must be a JSON object");
  if (!j.contains("kind")) return Status::InvalidArgument("a fault rule needs a \"kind\"");
  return CatchJson("fault rule", [&]() -> Result<FaultRule> {
    FaultRule r;
    for (const auto& [name, v] : j.items()) {
      if (name == "kind") {
        FERRY_ASSIGN_OR_RETURN(r.kind, KindFromJson(v));
      } else if (name == "key_regex") {
        r.key_regex = v.get<std::string>();
      } else if (name == "op") {
        r.op = v.get<std::string>();
      } else if (name == "every") {
        r.every = v.get<uint64_t>();
      } else if (name == "count") {
        r.count = v.get<int64_t>();
      } else if (name == "probability") {
        if (!v.is_number()) return Status::InvalidArgument("probability must be a number");
        r.probability = v.get<double>();
      } else {
        return Status::InvalidArgument("unknown fault rule field '" + name + "'");
      }
    }
    return r;
  });
}

Result<FaultRule> ParseFaultRule(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::InvalidArgument("fault rule is not JSON: " + std::string(text));
  }
  return FaultRuleFromJson(j);
}

nlohmann::json FaultConfigToJson(const FaultConfig& c) {
  nlohmann::json rules = nlohmann::json::array();
  for (const FaultRule& r : c.rules) rules.push_back(FaultRuleToJson(r));
  nlohmann::json j = {{"latency_ms", c.latency_ms},
                      {"latency_jitter_ms", c.latency_jitter_ms},
                      {"bandwidth", c.bandwidth},
                      {"bandwidth_total", c.bandwidth_total},
                      {"requests_per_second", c.requests_per_second},
                      {"kind", FaultKindName(c.kind)},
                      {"key_regex", c.key_regex},
                      {"every", c.every},
                      {"op", c.op},
                      {"count", c.count},
                      {"rules", std::move(rules)}};
  if (c.seed) j["seed"] = *c.seed;
  j["list_quirks"] = ListQuirkNames(c.list_quirks);
  return j;
}

Result<FaultConfig> FaultConfigFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("fault config must be a JSON object");
  return CatchJson("fault config", [&]() -> Result<FaultConfig> {
    FaultConfig c;
    for (const auto& [name, v] : j.items()) {
      if (name == "latency_ms") c.latency_ms = v.get<int>();
      else if (name == "latency_jitter_ms") c.latency_jitter_ms = v.get<int>();
      else if (name == "bandwidth") c.bandwidth = v.get<uint64_t>();
      else if (name == "bandwidth_total") c.bandwidth_total = v.get<uint64_t>();
      else if (name == "requests_per_second") c.requests_per_second = v.get<uint64_t>();
      else if (name == "kind") {
        FERRY_ASSIGN_OR_RETURN(c.kind, KindFromJson(v));
      } else if (name == "key_regex") c.key_regex = v.get<std::string>();
      else if (name == "every") c.every = v.get<uint64_t>();
      else if (name == "op") c.op = v.get<std::string>();
      else if (name == "count") c.count = v.get<int64_t>();
      else if (name == "seed") {
        if (!v.is_null() && !v.is_number_unsigned()) {
          return Status::InvalidArgument("seed must be a non-negative integer");
        }
        if (!v.is_null()) c.seed = v.get<uint64_t>();
      } else if (name == "list_quirks") {
        if (!v.is_array()) return Status::InvalidArgument("\"list_quirks\" must be an array");
        for (const auto& item : v) {
          FERRY_RETURN_IF_ERROR(AddListQuirk(item.get<std::string>(), &c.list_quirks));
        }
      } else if (name == "rules") {
        if (!v.is_array()) return Status::InvalidArgument("\"rules\" must be an array");
        for (const auto& item : v) {
          auto rule = FaultRuleFromJson(item);
          if (!rule.ok()) {
            return Status::InvalidArgument("rules[" + std::to_string(c.rules.size()) +
                                           "]: " + rule.status().message());
          }
          c.rules.push_back(std::move(rule).value());
        }
      } else {
        return Status::InvalidArgument("unknown fault config field '" + name + "'");
      }
    }
    return c;
  });
}

Result<FaultPolicy::ActiveRule> FaultPolicy::Compile(FaultRule rule, bool implicit) {
  if (!implicit && rule.kind == FaultKind::kNone) {
    return Status::InvalidArgument("a fault rule's kind cannot be 'none'");
  }
  if (rule.op != "any" && !IsOpName(rule.op)) {
    return Status::InvalidArgument("unknown operation '" + rule.op + "'");
  }
  if (!(rule.probability > 0.0 && rule.probability <= 1.0)) {
    return Status::InvalidArgument("probability " + nlohmann::json(rule.probability).dump() +
                                   " is not in (0, 1]");
  }
  ActiveRule active;
  active.implicit = implicit;
  if (!rule.key_regex.empty()) {
    try {
      active.regex.emplace(rule.key_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument("bad key regex '" + rule.key_regex + "': " + e.what());
    }
  }
  active.rule = std::move(rule);
  return active;
}

Status FaultPolicy::Configure(FaultConfig config) {
  if (config.latency_ms < 0 || config.latency_jitter_ms < 0) {
    return Status::InvalidArgument("latency must be >= 0");
  }
  std::vector<ActiveRule> rules;
  // The top-level fields are validated even when kind is none, as they
  // always were.
  FaultRule top{config.kind, config.key_regex, config.op, config.every, config.count, 1.0};
  FERRY_ASSIGN_OR_RETURN(ActiveRule implicit, Compile(std::move(top), /*implicit=*/true));
  if (config.kind != FaultKind::kNone) rules.push_back(std::move(implicit));
  for (size_t i = 0; i < config.rules.size(); ++i) {
    auto rule = Compile(config.rules[i], /*implicit=*/false);
    if (!rule.ok()) {
      return Status::InvalidArgument("rules[" + std::to_string(i) +
                                     "]: " + rule.status().message());
    }
    rules.push_back(std::move(rule).value());
  }
  std::lock_guard lock(mu_);
  config_ = std::move(config);
  rules_ = std::move(rules);
  SeedLocked();
  return Status::Ok();
}

FaultConfig FaultPolicy::config() const {
  std::lock_guard lock(mu_);
  return config_;
}

ListQuirks FaultPolicy::list_quirks() const {
  std::lock_guard lock(mu_);
  return config_.list_quirks;
}

bool FaultPolicy::Fires(ActiveRule& r, std::string_view op, std::string_view key) {
  if (!FaultApplies(r.rule.kind, op)) return false;
  if (r.rule.op != "any" && r.rule.op != op) return false;
  if (r.regex && !std::regex_search(key.begin(), key.end(), *r.regex)) return false;
  ++r.candidates;
  if (r.rule.every > 0 && r.candidates % r.rule.every != 0) return false;
  if (r.rule.count >= 0 && r.injected >= static_cast<uint64_t>(r.rule.count)) return false;
  if (!Draw(rng_, r.rule.probability)) return false;
  ++r.injected;
  return true;
}

FaultKind FaultPolicy::Decide(std::string_view op, std::string_view key) {
  std::lock_guard lock(mu_);
  for (ActiveRule& r : rules_) {
    if (Fires(r, op, key)) return r.rule.kind;
  }
  return FaultKind::kNone;
}

std::chrono::microseconds FaultPolicy::Latency() {
  std::lock_guard lock(mu_);
  int ms = config_.latency_ms;
  if (config_.latency_jitter_ms > 0) {
    ms += std::uniform_int_distribution<int>(0, config_.latency_jitter_ms)(rng_);
  }
  // One request is one unit on the pacer's clock at `rate` units per second.
  auto turn = request_pacer_.Reserve(1, config_.requests_per_second, Pacer::Clock::now());
  return std::chrono::duration_cast<std::chrono::microseconds>(turn) + std::chrono::milliseconds(ms);
}

uint64_t FaultPolicy::injected() const {
  std::lock_guard lock(mu_);
  uint64_t total = 0;
  for (const ActiveRule& r : rules_) total += r.injected;
  return total;
}

std::vector<FaultRuleStats> FaultPolicy::rule_stats() const {
  std::lock_guard lock(mu_);
  std::vector<FaultRuleStats> out;
  out.reserve(rules_.size());
  for (const ActiveRule& r : rules_) {
    out.push_back({r.rule.kind, r.implicit, r.candidates, r.injected});
  }
  return out;
}

void FaultPolicy::ResetCounters() {
  std::lock_guard lock(mu_);
  for (ActiveRule& r : rules_) {
    r.candidates = 0;
    r.injected = 0;
  }
  SeedLocked();
}

void FaultPolicy::SeedLocked() {
  if (!config_.seed) return;
  std::seed_seq seq{static_cast<uint32_t>(*config_.seed),
                    static_cast<uint32_t>(*config_.seed >> 32)};
  rng_.seed(seq);
}

}  // namespace ferry::s3server
