#include "cli/dashboard_sampler.h"

#include <chrono>

#include "base/json_text.h"
#include "base/prom_parse.h"
#include "base/unix_time.h"
#include "http/client.h"
#include "http/endpoint.h"

namespace ferry::cli {

using json = nlohmann::json;

Result<std::unique_ptr<DashboardSampler>> DashboardSampler::Make(state::StateStore& store,
                                                                 DashboardSources s) {
  std::unique_ptr<DashboardSampler> d(new DashboardSampler(store, s));
  if (!s.volume_api.empty()) {
    auto ep = http::ParseEndpoint("http://" + s.volume_api);
    if (!ep.ok())
      return Status::InvalidArgument("--volume-api " + s.volume_api + ": " + ep.status().message());
    d->volume_ep_ = std::make_unique<http::Endpoint>(*ep);
  }
  if (!s.cache_metrics.empty()) {
    std::string path;
    auto ep = http::ParseEndpoint(s.cache_metrics, &path);
    if (!ep.ok())
      return Status::InvalidArgument("--cache-metrics " + s.cache_metrics + ": " +
                                     ep.status().message());
    d->cache_ep_ = std::make_unique<http::Endpoint>(*ep);
    d->cache_path_ = path.empty() ? "/" : path;
  }
  if (d->volume_ep_ || d->cache_ep_) {
    http::ClientOptions co;
    co.io_threads = 1;
    co.connect_timeout = std::chrono::milliseconds(2000);
    co.io_timeout = std::chrono::milliseconds(5000);
    d->client_ = std::make_unique<http::Client>(co);
  }
  return d;
}

DashboardSampler::DashboardSampler(state::StateStore& store, DashboardSources s)
    : store_(store), s_(std::move(s)), rates_(30'000, s_.interval_ms, s_.history_ms) {}

DashboardSampler::~DashboardSampler() {
  {
    std::lock_guard lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DashboardSampler::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(stop_mu_);
    while (!stop_) {
      lock.unlock();
      SampleNow(NowUnixMs());
      lock.lock();
      stop_cv_.wait_for(lock, std::chrono::milliseconds(s_.interval_ms), [this] { return stop_; });
    }
  });
}

void DashboardSampler::SampleNow(int64_t now_ms) {
  if (auto jobs = store_.ListJobs(); jobs.ok()) rates_.Observe(*jobs, now_ms);
  if (volume_ep_) SampleVolumes(now_ms);
  if (cache_ep_) SampleCache(now_ms);
  Trim(now_ms);
}

std::string DashboardSampler::Get(const http::Endpoint& ep, const std::string& target,
                                  std::string* body) const {
  http::Request r;
  r.target = target;
  auto resp = client_->Send(ep, r, nullptr);
  if (!resp.ok()) return resp.status().message();
  if (resp->status != 200) return "GET " + target + ": HTTP " + std::to_string(resp->status);
  *body = std::move(resp->body);
  return "";
}

void DashboardSampler::SampleVolumes(int64_t now_ms) {
  std::string body;
  std::string error = Get(*volume_ep_, "/volumes", &body);
  json list;
  if (error.empty()) {
    list = json::parse(body, nullptr, false);
    if (list.is_discarded() || !list.is_array()) error = "GET /volumes: not a JSON array";
  }
  std::lock_guard lock(mu_);
  volumes_error_ = error;
  if (!error.empty()) return;
  uint64_t hydrated = 0, origin = 0, cache = 0;
  json shown = json::array();
  for (const auto& v : list) {
    if (!v.is_object()) continue;
    hydrated += v.value("hydrated", uint64_t{0});
    origin += v.value("bytes_from_origin", uint64_t{0});
    cache += v.value("bytes_from_cache", uint64_t{0});
    json one;
    for (const char* k : {"name", "state", "hydrated", "chunks", "size", "triggers",
                          "bytes_from_origin", "bytes_from_cache", "from", "pool"}) {
      if (v.contains(k)) one[k] = v[k];
    }
    shown.push_back(std::move(one));
  }
  volumes_ = std::move(shown);
  volume_points_.push_back(json::array({now_ms, hydrated, origin, cache}));
}

void DashboardSampler::SampleCache(int64_t now_ms) {
  std::string body;
  std::string error = Get(*cache_ep_, cache_path_, &body);
  std::vector<PromSample> m;
  if (error.empty()) {
    m = ParsePromText(body);
    if (m.empty()) error = "no metrics in the answer";
  }
  std::lock_guard lock(mu_);
  cache_error_ = error;
  if (!error.empty()) return;
  json c;
  json requests = json::object();
  for (const char* result : {"hit", "miss", "expired", "stale", "bypass"})
    requests[result] = PromSum(m, "ferry_cache_requests_total", "result", result);
  const double hits = requests["hit"].get<double>() + requests["stale"].get<double>();
  const double lookups = hits + requests["miss"].get<double>() + requests["expired"].get<double>();
  c["requests"] = requests;
  c["hit_ratio"] = lookups > 0 ? json(hits / lookups) : json(nullptr);
  const double logical = PromSum(m, "ferry_cache_disk_logical_bytes");
  const double allocated = PromSum(m, "ferry_cache_disk_allocated_bytes");
  c["disk_logical_bytes"] = logical;
  c["disk_allocated_bytes"] = allocated;
  c["logical_per_allocated"] = allocated > 0 ? json(logical / allocated) : json(nullptr);
  c["entries"] = PromSum(m, "ferry_cache_disk_entries");
  json by_encoding = json::object();
  double sent = 0;
  for (const auto& s : m) {
    if (s.name != "ferry_cache_response_bytes_total" || !s.labels.count("encoding")) continue;
    by_encoding[s.labels.at("encoding")] = s.value;
    sent += s.value;
  }
  c["response_bytes"] = by_encoding;
  cache_ = std::move(c);
  cache_points_.push_back(json::array({now_ms, hits, lookups, sent}));
}

void DashboardSampler::Trim(int64_t now_ms) {
  std::lock_guard lock(mu_);
  for (auto* d : {&volume_points_, &cache_points_}) {
    while (!d->empty() && (*d)[0][0].get<int64_t>() <= now_ms - s_.history_ms) d->pop_front();
  }
}

json RatePointsJson(const std::vector<RatePoint>& points) {
  json out = json::array();
  for (const auto& p : points) out.push_back(json::array({p.t_ms, p.objects_per_s, p.bytes_per_s}));
  return out;
}

std::string DashboardSampler::OverviewJson() const {
  json o;
  o["interval_s"] = static_cast<double>(s_.interval_ms) / 1000.0;
  o["pool"] = RatePointsJson(rates_.Total());
  std::lock_guard lock(mu_);
  if (volume_ep_) {
    json v;
    v["source"] = s_.volume_api;
    if (!volumes_error_.empty()) v["error"] = volumes_error_;
    v["list"] = volumes_.is_null() ? json::array() : volumes_;
    v["history"] = json(volume_points_);
    o["volumes"] = std::move(v);
  }
  if (cache_ep_) {
    json c = cache_.is_null() ? json::object() : cache_;
    c["source"] = s_.cache_metrics;
    if (!cache_error_.empty()) c["error"] = cache_error_;
    c["history"] = json(cache_points_);
    o["cache"] = std::move(c);
  }
  return DumpJson(o);
}

}  // namespace ferry::cli
