#pragma once
// `ferry server`'s API: the control plane of migrations over the state
// store the CLI and the workers use, versioned JSON under /v1.
//
//   POST /v1/jobs                             a new job for the worker pool:
//        {"src", "dst", "options": {FLAG: VALUE}} with `ferry migrate`'s flags
//   GET  /v1/jobs[?all=true][&state=running]  the jobs, newest first
//   GET  /v1/jobs/ID                          one job: counts, state, rates,
//        ETA, its last hour, and, while it runs, what its runner last
//        reported (circuits, pacing, retries: state::JobLive)
//   POST /v1/jobs/ID/cancel                   cancel (its runner stops)
//   POST /v1/jobs/ID/resume                   hand a stopped job back to the pool
//   GET  /v1/jobs/ID/dlq                      its dead letters
//   POST /v1/jobs/ID/dlq/retry                requeue them for the pool
//   POST /v1/verify                           check a migration (server_verify.h)
//   GET  /v1/verify/ID                        that check's state and result
//   GET  /v1/overview                         the dashboard's figures: the
//        pool's last hour, and the volumes and cache it was pointed at
//   GET  /v1/openapi.json                     this API, as OpenAPI 3.0
//   GET  /, /ui/*                             the dashboard (static, built in)
//   GET  /metrics                             Prometheus: jobs by state, the
//        live jobs' keys and bytes, requests by status, state-store latency
//
// Errors are JSON, {"error": {"code": "not_found", "message": "..."}}, with
// the HTTP status of their class. Authentication: a bearer token from the
// tokens given (compared in constant time); with none given, only loopback
// clients are answered. Bodies over max_body are refused (413) unread.
// Credentials for the stores are named by profile (the job's), never sent
// or shown. Thread-safe as the store is.

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cli/dashboard_sampler.h"
#include "cli/server_verify.h"
#include "http/api_server.h"
#include "state/metered_state_store.h"
#include "store/open/open.h"

namespace ferry::cli {

struct ServerApiOptions {
  std::vector<std::string> tokens;  // empty: loopback clients only, no token
  size_t max_body = 64 * 1024;
  std::function<OpenOptions(const std::string& profile)> open;  // for cancel's cleanup
  const DashboardSampler* sampler = nullptr;                    // rates, ETAs, charts; may be null
  VerifyRuns* verify = nullptr;                                 // POST /v1/verify; null: 503
};

class ServerApi {
 public:
  // `store` is timed (the metrics' state-store latency).
  ServerApi(state::MeteredStateStore& store, ServerApiOptions o)
      : store_(store), o_(std::move(o)) {}
  http::ApiResponse Handle(const http::ServerRequest& r);

  // The OpenAPI document served at /v1/openapi.json; its paths are the
  // routes Handle answers (a test checks them against each other).
  static std::string OpenApi();

 private:
  // Who may ask: "" when allowed, else why not.
  std::string Refusal(const http::ServerRequest& r) const;
  http::ApiResponse ListJobs(const std::string& query);
  http::ApiResponse CreateJob(const std::string& body);
  http::ApiResponse GetJob(const std::string& id);
  http::ApiResponse Cancel(const std::string& id);
  http::ApiResponse Resume(const std::string& id);
  // A job as the API shows it: JobJson with rates, ETA and, while it runs,
  // its runner's latest report (`live`, may be null).
  nlohmann::json JobView(const state::JobRecord& job, const state::JobLive* live) const;
  http::ApiResponse DeadLetters(const std::string& id);
  http::ApiResponse RetryDeadLetters(const std::string& id);
  http::ApiResponse Route(const http::ServerRequest& r);
  std::string Metrics();

  state::MeteredStateStore& store_;
  ServerApiOptions o_;
  std::mutex mu_;
  std::map<int, uint64_t> answers_;  // by HTTP status; guarded by mu_
};

// A new job's spec from {"src", "dst", "options": {FLAG: VALUE}}: the
// options are `ferry migrate`'s flags without dashes, parsed by the same
// parser (an array for a repeatable flag, true for a flag).
Result<migrate::JobSpec> SpecFromBody(const std::string& body);

// Tokens from a file: one per line, blank lines and # comments skipped.
Result<std::vector<std::string>> ReadTokens(const std::string& path);

}  // namespace ferry::cli
