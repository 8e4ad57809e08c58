// The OpenAPI 3.0 document of `ferry server`'s API (server_api.h). A test
// sends every operation listed here and checks Handle answers it.
#include <nlohmann/json.hpp>

#include "base/version.h"
#include "cli/server_api.h"

namespace ferry::cli {

std::string ServerApi::OpenApi() {
  using json = nlohmann::json;
  const json error = {
      {"description", "an error"},
      {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}};
  const json job_id = {
      {"name", "id"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}};
  auto op = [&](const char* summary, json params = json::array()) {
    return json{{"summary", summary},
                {"parameters", params},
                {"responses", {{"200", {{"description", "OK"}}}, {"default", error}}},
                {"security", json::array({{{"bearer", json::array()}}})}};
  };
  json doc = {
      {"openapi", "3.0.3"},
      {"info", {{"title", "ferry server"}, {"version", kVersion}}},
      {"paths",
       {{"/v1/jobs",
         {{"post", op("A new job for the worker pool: {src, dst, options: {FLAG: VALUE}} with "
                      "ferry migrate's flags")},
          {"get",
           op("The jobs, newest first; ?all=true adds finished (archived) ones, ?state=NAME "
              "filters",
              json::array(
                  {{{"name", "all"}, {"in", "query"}, {"schema", {{"type", "boolean"}}}},
                   {{"name", "state"}, {"in", "query"}, {"schema", {{"type", "string"}}}}}))}}},
        {"/v1/jobs/{id}",
         {{"get", op("One job: its state, counts, bytes, rates, ETA and last hour; its runner's "
                     "circuits and pacing (live) when this server runs it",
                     json::array({job_id}))}}},
        {"/v1/jobs/{id}/cancel",
         {{"post",
           op("Cancel the job; its runner stops and aborts its uploads", json::array({job_id}))}}},
        {"/v1/jobs/{id}/dlq",
         {{"get", op("The job's dead letters with their reasons", json::array({job_id}))}}},
        {"/v1/jobs/{id}/dlq/retry",
         {{"post", op("Requeue the job's dead letters; the pool's workers run it again",
                      json::array({job_id}))}}},
        {"/v1/jobs/{id}/resume",
         {{"post", op("Hand a stopped pool job back to the workers (a failed one: its dead "
                      "letters requeued)",
                      json::array({job_id}))}}},
        {"/v1/verify",
         {{"post", op("Check a migration in the background: {job, fix?} or {src, dst, "
                      "options}, with checksum? and concurrency?; answers the check's id")}}},
        {"/v1/verify/{id}",
         {{"get", op("A check's state, counts and first differences", json::array({job_id}))}}},
        {"/v1/overview",
         {{"get", op("The dashboard's figures: the pool's rates over the last hour, and the "
                     "volumes and cache given by --volume-api and --cache-metrics")}}},
        {"/v1/openapi.json", {{"get", op("This document")}}}}},
      {"components",
       {{"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}},
        {"schemas",
         {{"Error",
           {{"type", "object"},
            {"properties",
             {{"error",
               {{"type", "object"},
                {"properties",
                 {{"code", {{"type", "string"}}}, {"message", {{"type", "string"}}}}}}}}}}}}}}}};
  return doc.dump(2) + "\n";
}

}  // namespace ferry::cli
