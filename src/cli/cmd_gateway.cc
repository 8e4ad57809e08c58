// ferry gateway: an S3 endpoint in front of a running migration
// (gateway/gateway.h) until interrupted. The job's stores are opened from
// its record in the shared --state, with the credentials the environment
// gives ferry for them; clients sign with the gateway's own keys
// (--credentials), never with those.

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "base/cancel.h"
#include "base/reload.h"
#include "cli/cli_util.h"
#include "cli/config_file.h"
#include "cli/migrate_args.h"
#include "cli/registry.h"
#include "gateway/gateway.h"
#include "http/server.h"
#include "migrate/job_spec.h"
#include "migrate/policy.h"
#include "store/location.h"

namespace ferry::cli {
namespace {

struct GatewayArgs {
  MigrateArgs migrate;  // --state and the network settings of the stores
  std::string job;
  std::string listen = "127.0.0.1:7480";
  std::string listen_tls;
  std::vector<std::string> tls_certs, tls_keys;
  std::string port_file, tls_port_file;
  std::string credentials;
  std::string bucket;
  std::string region = "us-east-1";
  double lease_s = 60;
  double busy_wait_s = 30;
  std::string inline_limit = "64M";
  std::string max_body = "512M";
  int threads = 2;
  int workers = 32;
  double client_timeout_s = 60;
};

// --credentials: one "ACCESS_KEY_ID SECRET_ACCESS_KEY" per line; blank
// lines and lines starting with # are skipped.
Result<std::map<std::string, std::string>> ReadCredentials(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("--credentials " + path + ": cannot be read");
  std::map<std::string, std::string> keys;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::istringstream words(line);
    std::string id, secret, extra;
    if (!(words >> id) || id[0] == '#') continue;
    if (!(words >> secret) || (words >> extra)) {
      return Status::InvalidArgument("--credentials " + path + " line " + std::to_string(n) +
                                     ": expected ACCESS_KEY_ID SECRET_ACCESS_KEY");
    }
    keys[id] = secret;
  }
  if (keys.empty()) {
    return Status::InvalidArgument("--credentials " + path + " holds no key");
  }
  return keys;
}

// The bucket name clients use: the destination's bucket, or a local
// directory's name.
std::string DefaultBucket(const Location& dst) {
  if (dst.is_remote()) return dst.bucket;
  std::string p = dst.path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  std::string name = p.substr(p.rfind('/') + 1);
  return name.empty() ? "ferry" : name;
}

Result<uint64_t> SizeFlag(const std::string& flag, const std::string& text) {
  auto v = ParseSize(text);
  if (!v.ok()) return Status::InvalidArgument(flag + " " + text + ": " + v.status().message());
  return *v;
}

// The job's state, stores and key map.
struct JobStores {
  std::unique_ptr<state::StateStore> state;
  std::unique_ptr<ObjectStore> src, dst;
  Location dst_loc;
  migrate::KeyMap map;
  std::string src_text, dst_text;
};

Result<JobStores> OpenJob(const GatewayArgs& a) {
  if (state::IsPostgresLocation(a.migrate.state_location)) {
    return Status::Unsupported(
        "the gateway keeps its marks in the SQLite state only for now (--state DIR)");
  }
  JobStores js;
  FERRY_ASSIGN_OR_RETURN(js.state, OpenState(a.migrate));
  FERRY_ASSIGN_OR_RETURN(state::JobRecord job, js.state->GetJob(a.job));
  // A finished (even archived) job is served too: the destination alone.
  FERRY_ASSIGN_OR_RETURN(migrate::JobSpec spec, migrate::SpecFromJson(job.spec));
  FERRY_ASSIGN_OR_RETURN(Location src_loc, ParseLocation(spec.src));
  FERRY_ASSIGN_OR_RETURN(js.dst_loc, ParseLocation(spec.dst));
  auto src = OpenStore(src_loc, a.migrate.global.ToOpenOptions(spec.src_profile));
  if (!src.ok()) return src.status().WithContext("source " + spec.src);
  OpenOptions dopt = a.migrate.global.ToOpenOptions(spec.dst_profile);
  dopt.create_local = true;
  auto dst = OpenStore(js.dst_loc, dopt);
  if (!dst.ok()) return dst.status().WithContext("destination " + spec.dst);
  js.src = std::move(*src);
  js.dst = std::move(*dst);
  js.map = migrate::KeyMapFor(src_loc, js.dst_loc);
  js.src_text = spec.src;
  js.dst_text = spec.dst;
  return js;
}

http::ServerOptions ServerOptionsOf(const GatewayArgs& a, uint64_t max_body) {
  http::ServerOptions so;
  so.net.listen = a.listen;
  so.net.port_file = a.port_file;
  so.net.io_threads = a.threads;
  so.net.worker_threads = a.workers;
  for (size_t i = 0; i < a.tls_certs.size(); ++i) {
    so.net.tls.certificates.push_back({a.tls_certs[i], a.tls_keys[i]});
  }
  so.net.tls_listen = a.listen_tls;
  so.net.tls_port_file = a.tls_port_file;
  so.limits.body_limit = max_body;
  so.client_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.client_timeout_s * 1000));
  return so;
}

// Until SIGINT or SIGTERM; SIGHUP reloads the TLS certificates.
void ServeUntilInterrupted(http::Server& server, bool tls) {
  SetReloadOnHangup(true);
  uint64_t reloads = ReloadRequests();
  while (!CancelRequested()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (ReloadRequests() == reloads) continue;
    reloads = ReloadRequests();
    Status st =
        !tls ? Status::InvalidArgument("no TLS certificates to reload") : server.ReloadTls();
    if (st.ok()) {
      spdlog::info("ferry gateway: TLS certificates reloaded");
    } else {
      spdlog::error("ferry gateway: reload failed, the certificates in use stay: {}", st.message());
    }
  }
}

int RunGateway(GatewayArgs& a) {
  if (a.credentials.empty()) {
    return Fail("gateway", Status::InvalidArgument(
                               "--credentials FILE is required: clients sign with the gateway's "
                               "own keys"));
  }
  auto keys = ReadCredentials(a.credentials);
  if (!keys.ok()) return Fail("gateway", keys.status());
  auto inline_limit = SizeFlag("--inline-limit", a.inline_limit);
  if (!inline_limit.ok()) return Fail("gateway", inline_limit.status());
  auto max_body = SizeFlag("--max-body", a.max_body);
  if (!max_body.ok()) return Fail("gateway", max_body.status());
  if (a.tls_certs.size() != a.tls_keys.size()) {
    return Fail("gateway", Status::InvalidArgument("--tls-cert and --tls-key come in pairs"));
  }
  if (!a.listen_tls.empty() && a.tls_certs.empty()) {
    return Fail("gateway", Status::InvalidArgument("--listen-tls needs --tls-cert and --tls-key"));
  }
  auto opened = OpenJob(a);
  if (!opened.ok()) return Fail("gateway --job " + a.job, opened.status());
  JobStores& js = *opened;
  gateway::GatewayOptions go;
  go.job = a.job;
  go.bucket = a.bucket.empty() ? DefaultBucket(js.dst_loc) : a.bucket;
  go.region = a.region;
  go.keys.secrets = std::move(*keys);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  go.owner = "gateway:" + std::string(host) + ":" + std::to_string(getpid());
  go.lease = std::chrono::milliseconds(static_cast<int64_t>(a.lease_s * 1000));
  go.busy_wait = std::chrono::milliseconds(static_cast<int64_t>(a.busy_wait_s * 1000));
  go.inline_limit = *inline_limit;
  gateway::GatewayStores gs{js.state.get(), js.src.get(), js.dst.get(), js.map.src_prefix,
                            js.map.dst_prefix};
  gateway::Gateway gw(go, gs);

  http::Server server(ServerOptionsOf(a, *max_body), &gw);
  if (Status st = server.Start(); !st.ok()) return Fail("gateway", st);
  spdlog::info("ferry gateway: job {} ({} -> {}) as bucket {} on {}{}", a.job, js.src_text,
               js.dst_text, go.bucket, server.address(),
               a.listen_tls.empty() ? "" : " and https://" + server.tls_address());
  ServeUntilInterrupted(server, !a.tls_certs.empty());
  server.Stop();
  gw.Drain();
  return 130;
}

}  // namespace

void AddGatewayCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<GatewayArgs>();
  auto* g = app.add_subcommand(
      "gateway",
      "An S3 endpoint in front of a running migration: answers from the destination, copies on "
      "demand what the job has not copied yet, records writes so the job never overwrites them");
  g->add_option("--job", a->job, "The migration job to serve (its id)")->required();
  AddStateOption(g, &a->migrate);
  g->add_option("--listen", a->listen, "HOST:PORT to serve S3 on (port 0: pick one)")
      ->capture_default_str();
  g->add_option("--listen-tls", a->listen_tls, "HOST:PORT to serve HTTPS on, beside --listen");
  g->add_option("--tls-cert", a->tls_certs, "Certificate chain (PEM) for HTTPS; SIGHUP reloads");
  g->add_option("--tls-key", a->tls_keys,
                "The private key (PEM) of the --tls-cert in the same place");
  g->add_option("--port-file", a->port_file, "Write the bound --listen port here");
  g->add_option("--tls-port-file", a->tls_port_file, "Write the bound --listen-tls port here");
  g->add_option("--credentials", a->credentials,
                "File of the gateway's own access keys: \"ACCESS_KEY_ID SECRET\" per line");
  g->add_option("--bucket", a->bucket,
                "The bucket name clients use (default: the destination's bucket or directory)");
  g->add_option("--region", a->region, "The region clients sign for")->capture_default_str();
  g->add_option("--lease", a->lease_s,
                "Seconds an on-demand copy's claim lasts without a result (then the job takes "
                "the key back)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  g->add_option("--busy-wait", a->busy_wait_s,
                "Seconds a read waits for the job's copy of its key before reading the source "
                "as it is")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 600.0));
  g->add_option("--inline-limit", a->inline_limit,
                "Objects up to this size are copied on demand through memory and answered at once; "
                "larger ones are copied store to store first")
      ->capture_default_str();
  g->add_option("--max-body", a->max_body, "Largest request body (a PUT or a part)")
      ->capture_default_str();
  g->add_option("--threads", a->threads, "Event loops")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  g->add_option("--workers", a->workers, "Threads for requests that wait on the stores")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  g->add_option("--client-timeout", a->client_timeout_s,
                "Seconds to wait for a request or for a client to take an answer")
      ->capture_default_str();
  AddGlobalOptions(*g, &a->migrate.global);
  AddDaemonOptions(g, "gateway");
  g->callback([a, exit_code] { *exit_code = RunGateway(*a); });
}

}  // namespace ferry::cli
