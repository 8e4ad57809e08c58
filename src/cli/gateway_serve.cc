#include "cli/gateway_serve.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "base/cancel.h"
#include "base/reload.h"
#include "gateway/gateway.h"
#include "http/server.h"
#include "migrate/filter.h"
#include "migrate/job_spec.h"
#include "migrate/key_range.h"
#include "migrate/policy.h"
#include "store/location.h"

namespace ferry::cli {
namespace {

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
  migrate::JobSpec spec;
  std::string src_text, dst_text;
};

// The keys job `spec` copies, as the gateway asks (client keys: the source
// key is src_prefix + key, the filters see filter_prefix + key).
gateway::JobScope ScopeOf(const migrate::JobSpec& spec, const std::string& src_prefix) {
  gateway::JobScope scope;
  const bool by_name = !spec.filter.include.empty() || !spec.filter.exclude.empty() ||
                       !spec.range_after.empty() || !spec.range_upper.empty() ||
                       spec.top_level_only;
  if (by_name) {
    migrate::FilterSpec names;
    names.include = spec.filter.include;
    names.exclude = spec.filter.exclude;
    scope.by_name = [names, spec, src_prefix](const std::string& key) {
      if (spec.top_level_only && key.find('/') != std::string::npos) return false;
      if ((!spec.range_after.empty() || !spec.range_upper.empty()) &&
          !migrate::InRange(src_prefix + key, spec.range_after, spec.range_upper)) {
        return false;
      }
      return migrate::Admit(names, spec.filter_prefix + key, 0, 0);
    };
  }
  const migrate::FilterSpec& f = spec.filter;
  if (f.min_size || f.max_size || f.newer_than_ms || f.older_than_ms) {
    migrate::FilterSpec sizes = f;
    sizes.include.clear();
    sizes.exclude.clear();
    scope.by_object = [sizes, prefix = spec.filter_prefix](const std::string& key, uint64_t size,
                                                           int64_t last_modified_ms) {
      return migrate::Admit(sizes, prefix + key, size, last_modified_ms);
    };
  }
  return scope;
}

Result<JobStores> OpenJob(const GatewayArgs& a) {
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
  js.spec = spec;
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
void ServeUntilInterruptedOn(http::Server& server, bool tls) {
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

class Serving : public ServingGateway {
 public:
  Serving(JobStores js, gateway::GatewayOptions go, const http::ServerOptions& so, bool tls)
      : js_(std::move(js)),
        gateway_(std::move(go),
                 gateway::GatewayStores{js_.state.get(), js_.src.get(), js_.dst.get(),
                                        js_.map.src_prefix, js_.map.dst_prefix}),
        server_(so, &gateway_),
        tls_(tls) {}
  ~Serving() override {
    server_.Stop();
    gateway_.Drain();
  }
  Status Start() { return server_.Start(); }
  std::string address() const override { return server_.address(); }
  std::string bucket() const override { return bucket_; }
  std::string tls_address() const { return server_.tls_address(); }
  void ServeUntilInterrupted() override { ServeUntilInterruptedOn(server_, tls_); }

  const JobStores& stores() const { return js_; }
  std::string bucket_;

 private:
  JobStores js_;
  gateway::Gateway gateway_;
  http::Server server_;
  bool tls_;
};

}  // namespace

Result<std::unique_ptr<ServingGateway>> StartGateway(const GatewayArgs& a) {
  if (a.credentials.empty()) {
    return Status::InvalidArgument(
        "--credentials FILE is required: clients sign with the gateway's own keys");
  }
  FERRY_ASSIGN_OR_RETURN(auto keys, ReadCredentials(a.credentials));
  FERRY_ASSIGN_OR_RETURN(uint64_t inline_limit, SizeFlag("--inline-limit", a.inline_limit));
  FERRY_ASSIGN_OR_RETURN(uint64_t max_body, SizeFlag("--max-body", a.max_body));
  if (a.tls_certs.size() != a.tls_keys.size()) {
    return Status::InvalidArgument("--tls-cert and --tls-key come in pairs");
  }
  if (!a.listen_tls.empty() && a.tls_certs.empty()) {
    return Status::InvalidArgument("--listen-tls needs --tls-cert and --tls-key");
  }
  for (const std::string& origin : a.cors_origins) {
    if (auto problem = gateway::CorsOriginProblem(origin)) {
      return Status::InvalidArgument(*problem);
    }
  }
  auto opened = OpenJob(a);
  if (!opened.ok()) return opened.status().WithContext("--job " + a.job);
  gateway::GatewayOptions go;
  go.job = a.job;
  go.bucket = a.bucket.empty() ? DefaultBucket(opened->dst_loc) : a.bucket;
  go.region = a.region;
  go.keys.secrets = std::move(keys);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  go.owner = "gateway:" + std::string(host) + ":" + std::to_string(getpid());
  go.lease = std::chrono::milliseconds(static_cast<int64_t>(a.lease_s * 1000));
  go.busy_wait = std::chrono::milliseconds(static_cast<int64_t>(a.busy_wait_s * 1000));
  go.inline_limit = inline_limit;
  go.max_held_body = max_body;
  go.cors.origins = a.cors_origins;
  go.cors.max_age = std::chrono::seconds(static_cast<int64_t>(a.cors_max_age_s));
  go.scope = ScopeOf(opened->spec, opened->map.src_prefix);
  go.look_before_copy =
      opened->spec.overwrite == migrate::Overwrite::kNever || !opened->spec.since_job.empty();
  const std::string from = opened->src_text + " -> " + opened->dst_text;
  auto serving = std::make_unique<Serving>(std::move(*opened), go, ServerOptionsOf(a, max_body),
                                           !a.tls_certs.empty());
  serving->bucket_ = go.bucket;
  FERRY_RETURN_IF_ERROR(serving->Start());
  spdlog::info("ferry gateway: job {} ({}) as bucket {} on {}{}", a.job, from, go.bucket,
               serving->address(),
               a.listen_tls.empty() ? "" : " and https://" + serving->tls_address());
  return std::unique_ptr<ServingGateway>(std::move(serving));
}

}  // namespace ferry::cli
