#include "admin.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "populate.h"

namespace ferry::s3server {
namespace {

HttpResponse Json(int status, const nlohmann::json& j) {
  HttpResponse res;
  res.status = status;
  res.body = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  res.SetHeader("Content-Type", "application/json");
  return res;
}

HttpResponse JsonError(int status, std::string_view message) {
  return Json(status, {{"error", message}});
}

// Per-rule counters in evaluation order; the top-level single-fault rule,
// when active, comes first with "implicit": true.
nlohmann::json RuleStats(const FaultPolicy& faults) {
  nlohmann::json rules = nlohmann::json::array();
  for (const FaultRuleStats& r : faults.rule_stats()) {
    rules.push_back({{"kind", FaultKindName(r.kind)},
                     {"implicit", r.implicit},
                     {"candidates", r.candidates},
                     {"injected", r.injected}});
  }
  return rules;
}

nlohmann::json Stats(Service& service) {
  nlohmann::json j = service.counters().ToJson();
  j["faults"] = {{"config", FaultConfigToJson(service.faults().config())},
                 {"injected", service.faults().injected()},
                 {"rules", RuleStats(service.faults())}};
  j["storage"] = {{"buckets", service.storage().ListBuckets().size()},
                  {"objects", service.storage().object_count()},
                  {"multipart_uploads", service.storage().upload_count()}};
  return j;
}

}  // namespace

bool IsAdminTarget(std::string_view target) {
  return target.substr(0, kAdminPrefix.size()) == kAdminPrefix;
}

HttpResponse HandleAdmin(Service& service, const HttpRequest& req, const std::string& body) {
  std::string_view path = req.target;
  path = path.substr(0, path.find('?'));
  path.remove_prefix(kAdminPrefix.size());
  const std::string& m = req.method;

  if (path == "health" && m == "GET") return Json(200, {{"ok", true}});
  if (path == "stats" && m == "GET") return Json(200, Stats(service));
  if (path == "reset" && m == "POST") {
    service.counters().Reset();
    service.faults().ResetCounters();
    return Json(200, {{"ok", true}});
  }
  if (path == "faults" && m == "GET") return Json(200, FaultConfigToJson(service.faults().config()));
  if (path == "faults" && m == "POST") {
    nlohmann::json j = nlohmann::json::parse(body.empty() ? "{}" : body, nullptr, false);
    if (j.is_discarded()) return JsonError(400, "body is not JSON");
    auto config = FaultConfigFromJson(j);
    if (!config.ok()) return JsonError(400, config.status().message());
    Status st = service.faults().Configure(*config);
    if (!st.ok()) return JsonError(400, st.message());
    return Json(200, FaultConfigToJson(service.faults().config()));
  }
  if (path == "clear" && m == "POST") {
    Status st = service.ClearData();
    if (!st.ok()) return JsonError(500, st.ToString());
    return Json(200, {{"ok", true}});
  }
  if (path == "populate" && m == "POST") {
    nlohmann::json j = nlohmann::json::parse(body.empty() ? "{}" : body, nullptr, false);
    if (j.is_discarded()) return JsonError(400, "body is not JSON");
    auto spec = PopulateSpecFromJson(j);
    if (!spec.ok()) return JsonError(400, spec.status().message());
    auto start = std::chrono::steady_clock::now();
    auto done = Populate(service.storage(), *spec);
    if (!done.ok()) {
      int status = done.status().http_status();
      return JsonError(status >= 400 ? status : 500, done.status().ToString());
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return Json(200, {{"created", done->created}, {"bytes", done->bytes}, {"seconds", seconds}});
  }
  return JsonError(404, "no such admin endpoint: " + req.method + " " + req.target);
}

}  // namespace ferry::s3server
