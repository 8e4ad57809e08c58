#include "faults.h"

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "router.h"

namespace ferry::s3server {
namespace {

constexpr std::array<std::pair<FaultKind, std::string_view>, 7> kKindNames = {{
    {FaultKind::kNone, "none"},
    {FaultKind::kHttp500, "500"},
    {FaultKind::kHttp503, "503"},
    {FaultKind::kReset, "reset"},
    {FaultKind::kTruncate, "truncate"},
    {FaultKind::kWrongEtag, "wrong-etag"},
    {FaultKind::kComplete200Error, "complete-200-error"},
}};

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
                                 "' (none|500|503|reset|truncate|wrong-etag|"
                                 "complete-200-error)");
}

bool FaultApplies(FaultKind kind, std::string_view op) {
  switch (kind) {
    case FaultKind::kNone:
      return false;
    case FaultKind::kWrongEtag:
      return op == "put" || op == "upload-part" || op == "get" || op == "head" || op == "copy";
    case FaultKind::kComplete200Error:
      return op == "complete";
    default:
      return true;
  }
}

nlohmann::json FaultConfigToJson(const FaultConfig& c) {
  return {{"latency_ms", c.latency_ms},
          {"latency_jitter_ms", c.latency_jitter_ms},
          {"bandwidth", c.bandwidth},
          {"bandwidth_total", c.bandwidth_total},
          {"kind", FaultKindName(c.kind)},
          {"key_regex", c.key_regex},
          {"every", c.every},
          {"op", c.op},
          {"count", c.count}};
}

Result<FaultConfig> FaultConfigFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("fault config must be a JSON object");
  FaultConfig c;
  try {
    for (const auto& [name, v] : j.items()) {
      if (name == "latency_ms") c.latency_ms = v.get<int>();
      else if (name == "latency_jitter_ms") c.latency_jitter_ms = v.get<int>();
      else if (name == "bandwidth") c.bandwidth = v.get<uint64_t>();
      else if (name == "bandwidth_total") c.bandwidth_total = v.get<uint64_t>();
      else if (name == "kind") {
        // Accept 500 and 503 as numbers too.
        std::string kind = v.is_number() ? std::to_string(v.get<int>()) : v.get<std::string>();
        FERRY_ASSIGN_OR_RETURN(c.kind, ParseFaultKind(kind));
      } else if (name == "key_regex") c.key_regex = v.get<std::string>();
      else if (name == "every") c.every = v.get<uint64_t>();
      else if (name == "op") c.op = v.get<std::string>();
      else if (name == "count") c.count = v.get<int64_t>();
      else return Status::InvalidArgument("unknown fault config field '" + name + "'");
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("bad fault config: ") + e.what());
  }
  return c;
}

Status FaultPolicy::Configure(FaultConfig config) {
  if (config.latency_ms < 0 || config.latency_jitter_ms < 0) {
    return Status::InvalidArgument("latency must be >= 0");
  }
  if (config.op != "any" && !IsOpName(config.op)) {
    return Status::InvalidArgument("unknown operation '" + config.op + "'");
  }
  std::optional<std::regex> regex;
  if (!config.key_regex.empty()) {
    try {
      regex.emplace(config.key_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return Status::InvalidArgument("bad key regex '" + config.key_regex + "': " + e.what());
    }
  }
  std::lock_guard lock(mu_);
  config_ = std::move(config);
  regex_ = std::move(regex);
  candidates_ = 0;
  injected_ = 0;
  return Status::Ok();
}

FaultConfig FaultPolicy::config() const {
  std::lock_guard lock(mu_);
  return config_;
}

FaultKind FaultPolicy::Decide(std::string_view op, std::string_view key) {
  std::lock_guard lock(mu_);
  if (!FaultApplies(config_.kind, op)) return FaultKind::kNone;
  if (config_.op != "any" && config_.op != op) return FaultKind::kNone;
  if (regex_ && !std::regex_search(key.begin(), key.end(), *regex_)) return FaultKind::kNone;
  ++candidates_;
  if (config_.every > 0 && candidates_ % config_.every != 0) return FaultKind::kNone;
  if (config_.count >= 0 && injected_ >= static_cast<uint64_t>(config_.count)) {
    return FaultKind::kNone;
  }
  ++injected_;
  return config_.kind;
}

std::chrono::milliseconds FaultPolicy::Latency() {
  std::lock_guard lock(mu_);
  int ms = config_.latency_ms;
  if (config_.latency_jitter_ms > 0) {
    ms += std::uniform_int_distribution<int>(0, config_.latency_jitter_ms)(rng_);
  }
  return std::chrono::milliseconds(ms);
}

uint64_t FaultPolicy::injected() const {
  std::lock_guard lock(mu_);
  return injected_;
}

void FaultPolicy::ResetCounters() {
  std::lock_guard lock(mu_);
  candidates_ = 0;
  injected_ = 0;
}

}  // namespace ferry::s3server
