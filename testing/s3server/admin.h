#pragma once
// The admin API under /_admin/ (never S3: bucket names cannot start with
// '_'). No authentication. JSON in and out:
//   GET  /_admin/health  -> {"ok": true}
//   GET  /_admin/stats   -> counters (counters.h), faults, storage sizes
//   POST /_admin/reset   -> zero counters and fault-selection counters
//   GET  /_admin/faults  -> the fault config (faults.h FaultConfigToJson)
//   POST /_admin/faults  -> replace the fault config with the JSON body
//   POST /_admin/clear   -> drop all data, re-create the --bucket buckets
//   POST /_admin/populate -> create many deterministic objects (populate.h)

#include <string>
#include <string_view>

#include "http_types.h"
#include "service.h"

namespace ferry::s3server {

constexpr std::string_view kAdminPrefix = "/_admin/";

bool IsAdminTarget(std::string_view target);

HttpResponse HandleAdmin(Service& service, const HttpRequest& req, const std::string& body);

}  // namespace ferry::s3server
