// ferry server: the control plane of migrations (server_api.h) and its
// dashboard on the state store the CLI and the workers share, until
// interrupted.
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/atomic_file.h"
#include "base/cancel.h"
#include "cli/config_file.h"
#include "cli/dashboard_sampler.h"
#include "cli/migrate_args.h"
#include "cli/registry.h"
#include "cli/server_api.h"
#include "cli/worker_metrics.h"
#include "http/api_server.h"

namespace ferry::cli {
namespace {

struct ServerArgs {
  MigrateArgs migrate;  // --state and the network settings of cancel's cleanup
  std::string listen = "127.0.0.1:7470";
  std::string tokens;
  std::string port_file;
  double client_timeout_s = 60;
  int run_jobs = 0;  // runners of pool jobs inside the server
  DashboardSources dashboard;
  double sample_interval_s = 5;
};

int RunServer(ServerArgs& a) {
  ServerApiOptions o;
  if (!a.tokens.empty()) {
    auto t = ReadTokens(a.tokens);
    if (!t.ok()) return Fail("", t.status());
    o.tokens = std::move(*t);
  }
  auto store = OpenState(a.migrate);
  if (!store.ok()) return Fail("", store.status());
  o.open = [&](const std::string& profile) { return a.migrate.global.ToOpenOptions(profile); };
  state::MeteredStateStore metered(**store);
  a.dashboard.interval_ms = static_cast<int64_t>(a.sample_interval_s * 1000);
  auto sampler = DashboardSampler::Make(metered, a.dashboard);
  if (!sampler.ok()) return Fail("", sampler.status());
  VerifyRuns verify(metered, a.migrate);
  o.verify = &verify;
  o.sampler = sampler->get();
  ServerApi api(metered, o);
  http::ApiServer server(
      a.listen, [&](const http::ServerRequest& r) { return api.Handle(r); },
      std::chrono::milliseconds(static_cast<int64_t>(a.client_timeout_s * 1000)));
  if (Status st = server.Start(); !st.ok()) return Fail("--listen " + a.listen, st);
  if (!a.port_file.empty()) {
    if (Status st = WriteFileAtomic(a.port_file, std::to_string(server.port()) + "\n"); !st.ok()) {
      return Fail("--port-file", st);
    }
  }
  (*sampler)->Start();
  spdlog::info("ferry server: API and dashboard on {}:{}{}",
               a.listen.substr(0, a.listen.rfind(':')), server.port(),
               o.tokens.empty() ? " (loopback clients only: no --tokens)" : "");
  // --run-jobs: the server is its own worker pool too (beside any
  // `ferry worker` sharing the state).
  std::mutex out_mu;
  std::vector<std::thread> runners;
  a.migrate.quiet = true;  // a daemon: its log, not a progress line
  for (int i = 0; i < a.run_jobs; ++i) {
    runners.emplace_back(
        [&] { (void)WorkerLoop(metered, a.migrate, false, 500, nullptr, &out_mu); });
  }
  while (!CancelRequested()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (auto& t : runners) t.join();
  server.Stop();
  return 130;
}

}  // namespace

void AddServerCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ServerArgs>();
  auto* s = app.add_subcommand(
      "server", "The control plane of migrations: a JSON API (/v1) over the shared --state");
  AddStateOption(s, &a->migrate);
  s->add_option("--listen", a->listen, "HOST:PORT of the API (port 0: pick one)")
      ->capture_default_str();
  s->add_option(
      "--tokens", a->tokens,
      "File of bearer tokens, one per line; without it only loopback clients are answered");
  s->add_option("--port-file", a->port_file, "Write the bound port here");
  s->add_option("--client-timeout", a->client_timeout_s,
                "Seconds to wait for a request or for a client to take an answer")
      ->capture_default_str();
  s->add_option("--run-jobs", a->run_jobs,
                "Run pool jobs in this process too, with this many runners (0: only `ferry worker` "
                "runs them)")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  s->add_option("--volume-api", a->dashboard.volume_api,
                "HOST:PORT of a volume daemon's API whose volumes the dashboard shows");
  s->add_option("--cache-metrics", a->dashboard.cache_metrics,
                "URL of a cache's metrics (ferry cache serve) the dashboard shows");
  s->add_option("--sample-interval", a->sample_interval_s,
                "Seconds between the dashboard's samples of jobs, volumes and cache")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  AddRunOptions(s, &a->migrate);
  AddDaemonOptions(s, "server");
  s->callback([a, exit_code] { *exit_code = RunServer(*a); });
}

}  // namespace ferry::cli
