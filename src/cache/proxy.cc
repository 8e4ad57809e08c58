#include "cache/proxy.h"

#include <utility>

#include "base/strings.h"
#include "cache/fill.h"
#include "cache/proxy_internal.h"

namespace ferry::cache {

using namespace proxy_detail;  // NOLINT: the Proxy's own helpers

namespace proxy_detail {

int UpstreamErrorStatus(const Status& st) {
  if (st.code() == ErrorCode::kTimeout) return 504;
  if (st.code() == ErrorCode::kThrottled) return 503;
  return 502;
}

ProxyResponse Simple(int status, std::string_view message, CacheStatus x_cache) {
  ProxyResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "text/plain; charset=utf-8"}, {"X-Cache", std::string(CacheStatusName(x_cache))}};
  if (status == 503) r.headers.emplace_back("Retry-After", "1");
  r.SetBody(std::string(message) + "\n");
  return r;
}

}  // namespace proxy_detail

Proxy::Proxy(ProxyOptions options, DiskStore* store, Upstream* upstream)
    : options_(std::move(options)),
      store_(store),
      upstream_(upstream),
      hot_(options_.memory_bytes / 2),
      decoded_(options_.memory_bytes / 2),
      big_fill_pool_(options_.big_fill_threads, options_.big_fill_queue),
      exchange_pool_(options_.upstream_threads, options_.upstream_queue) {
  for (const auto& p : options_.parents) parent_names_.push_back(p.host + ":" + std::to_string(p.port));
  small_transcode_ = options_.transcode;
  small_transcode_.min_size = 0;
  if (options_.trained.enabled && options_.transcode.min_size > 0) {
    TrainedSettings t = options_.trained;
    t.level = options_.level;
    TrainedDictionaries::Storage storage;
    storage.put = [this](const std::string& key, const std::string& bytes) {
      EntryMeta meta;
      meta.key = key;
      meta.logical_length = bytes.size();
      return store_->Put(meta, bytes, /*sync=*/true);
    };
    storage.get = [this](const std::string& key) -> std::optional<std::string> {
      auto got = store_->Get(key);
      if (!got.ok() || !*got) return std::nullopt;
      return std::move((*got)->body);
    };
    trained_ = std::make_unique<TrainedDictionaries>(t, std::move(storage));
  }
  if (options_.encode_behind_max > 0) {
    FillEncoderOptions e = options_.encode_behind;
    e.level = options_.level;
    encoder_ = std::make_unique<FillEncoder>(
        e, [this](std::vector<FillEncoder::Done> turn) { FinishEncode(std::move(turn)); });
  }
}

void Proxy::WaitForEncodes() {
  if (encoder_) encoder_->Drain();
}

bool Proxy::Forget(const std::string& key) {
  bool behind = DropPending(key);
  hot_.Remove(key);
  decoded_.Remove(key);
  return behind;
}

void Proxy::CountRequest(const ProxyRequest& req) {
  (req.version >= 20 ? counters_.requests_h2 : counters_.requests_h1)++;
}

MetricsSnapshot Proxy::Metrics() const {
  MetricsSnapshot m = Snapshot(counters_);
  if (encoder_) m.encode_batches = encoder_->batches();
  DiskStoreStats d = store_->stats();
  m.disk_entries = d.entries;
  m.disk_bytes = d.bytes;
  m.disk_logical_bytes = d.logical_bytes;
  m.disk_allocated_bytes = d.allocated_bytes;
  m.disk_big_entries = d.big_entries;
  m.disk_segments = d.segments;
  m.disk_segment_bytes = d.segment_bytes;
  m.evictions = d.evictions;
  m.corrupt = d.corrupt;
  m.torn = d.torn;
  m.torn_bytes = d.torn_bytes;
  m.compactions = d.compactions;
  m.compacted_bytes = d.compacted_bytes;
  m.refreshes = d.refreshes;
  if (trained_) {
    TrainedStats t = trained_->stats();
    m.trained_dictionaries = t.trained;
    m.trained_entries = t.compressed;
  }
  {
    std::lock_guard lock(dict_mu_);
    m.dictionaries = dictionaries_.size();
  }
  m.refresh_bytes = d.refresh_bytes;
  m.memory_entries = hot_.entries();
  m.memory_bytes = hot_.bytes() + decoded_.bytes();
  engine::BoundedPoolStats p = exchange_pool_.Stats();
  m.upstream_threads = p.threads;
  m.upstream_running = p.running;
  m.upstream_queued = p.queued;
  m.upstream_rejected = p.rejected;
  return m;
}

ProxyResponse Proxy::Admin(const ProxyRequest& req) {
  if (!Allowed(options_.admin_allow, req.peer)) {
    return Simple(403, "forbidden: " + req.method + " " + req.target + " is not allowed from " + req.peer,
                  CacheStatus::kBypass);
  }
  if (req.method != "PURGE") {
    ProxyResponse r;
    r.headers = {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"}, {"Cache-Control", "no-store"}};
    r.SetBody(RenderMetrics(Metrics()));
    if (req.method == "HEAD") {
      r.head_length = r.body.size();
      r.body = {};
    }
    return r;
  }
  auto route = RouteRequest(options_.routing, HeaderValue(req.headers, "host"), req.target);
  if (!route.ok()) {
    return Simple(route.status().code() == ErrorCode::kNotFound ? 421 : 400, route.status().message(), CacheStatus::kBypass);
  }
  bool behind = Forget(route->cache_key);  // one in memory, to be stored once compressed, is not stored
  bool filling = AbandonBigFill(route->cache_key);  // not kept when it ends
  Status st = store_->Remove(route->cache_key);
  if (st.code() == ErrorCode::kNotFound && (filling || behind)) st = Status::Ok();
  if (st.code() == ErrorCode::kNotFound) return Simple(404, "not cached: " + route->path, CacheStatus::kBypass);
  if (!st.ok()) {
    counters_.errors++;
    return Simple(500, "purge: " + st.ToString(), CacheStatus::kBypass);
  }
  counters_.purges++;
  return Simple(200, "purged: " + route->path, CacheStatus::kBypass);
}

// The one request of a flight: a hit on what a fill that ended since the
// lookup stored (not a second origin fetch), the spool of a big object
// being cached now (read from its first byte), or a fill.
std::shared_ptr<const Proxy::Fill> Proxy::LeadFill(const ProxyRequest& req, const Route& route,
                                                   const std::shared_ptr<const CachedObject>& entry,
                                                   const CacheControl& req_cc) {
  auto now = InMemory(route.cache_key);
  if (now && now != entry && ServableWithoutRevalidation(req_cc, now->cache_control, now->lifetime, now->AgeAt(Now()))) {
    auto hit = std::make_shared<Fill>();
    hit->share = Fill::Share::kObject;
    hit->object = std::move(now);
    hit->status = CacheStatus::kHit;
    counters_.hits++;
    if (hit->object->heuristic) counters_.heuristic_hits++;
    return hit;
  }
  if (auto filling = BigFillFor(route.cache_key)) {
    auto joined = std::make_shared<Fill>();
    joined->share = Fill::Share::kStreamed;
    joined->streamed = std::move(filling);
    joined->status = CacheStatus::kHit;
    counters_.coalesced++;
    return joined;
  }
  return FillFromUpstream(req, route, entry, req_cc);
}

std::optional<ProxyResponse> Proxy::Run(const ProxyRequest& req, bool may_block) {
  std::string_view path = std::string_view(req.target).substr(0, req.target.find('?'));
  if (req.method == "PURGE" || ((req.method == "GET" || req.method == "HEAD") && path == kMetricsPath)) {
    if (!may_block) return std::nullopt;
    return Admin(req);
  }
  if (req.method == "GET" && IsDictionaryExport(path)) {
    if (!may_block) return std::nullopt;
    return ExportDictionary(req);
  }
  auto route = RouteRequest(options_.routing, HeaderValue(req.headers, "host"), req.target);
  if (!route.ok()) {
    if (route.status().code() == ErrorCode::kNotFound) {
      return Simple(421, route.status().message(), CacheStatus::kBypass);
    }
    return Simple(400, route.status().message(), CacheStatus::kBypass);
  }
  if (req.method != "GET" && req.method != "HEAD") {
    if (!may_block) return std::nullopt;
    return PassThrough(req, *route);
  }

  CacheControl req_cc = ParseCacheControl(HeaderValue(req.headers, "cache-control"));
  if (EqualsIgnoreCase(TrimOws(HeaderValue(req.headers, "pragma")), "no-cache")) req_cc.no_cache = true;
  std::shared_ptr<const CachedObject> entry;
  if (!req_cc.no_store) {
    entry = InMemory(route->cache_key);
    if (!entry) {
      if (!may_block) return std::nullopt;
      entry = FromDisk(route->cache_key);
    }
  }
  if (entry) {
    if (ServableWithoutRevalidation(req_cc, entry->cache_control, entry->lifetime, entry->AgeAt(Now()))) {
      // The event loop decodes small bodies only; a worker does the rest.
      constexpr uint64_t kLoopDecodeLimit = 256 << 10;
      // Hashing a dictionary or making a dcz answer: a worker.
      if (!may_block && ((entry->meta.logical_length > kLoopDecodeLimit && NeedsDecode(req, *entry)) ||
                         DictionaryWork(req, *entry))) {
        return std::nullopt;
      }
      counters_.hits++;
      if (entry->heuristic) counters_.heuristic_hits++;
      return Serve(req, entry, CacheStatus::kHit, may_block);
    }
  }
  if (!may_block) return std::nullopt;

  auto answer = [&](const Fill& fill, CacheStatus x_cache) {
    if (fill.share == Fill::Share::kError) return Simple(fill.error_status, fill.error, x_cache);
    if (fill.streamed) return Streamed(req, *fill.streamed, x_cache);
    return Serve(req, fill.object, x_cache);
  };
  // A request of its own (no-store, credentials) is not shared.
  if (req_cc.no_store || !HeaderValue(req.headers, "authorization").empty()) {
    auto fill = FillFromUpstream(req, *route, entry, req_cc);
    return answer(*fill, fill->status);
  }
  auto [fill, led] = flights_.Do(route->cache_key, [&] { return LeadFill(req, *route, entry, req_cc); });
  if (led) return answer(*fill, fill->status);
  if (fill && fill->share != Fill::Share::kNone) {
    counters_.coalesced++;
    bool shared = fill->share == Fill::Share::kObject || fill->share == Fill::Share::kStreamed;
    return answer(*fill, shared && fill->status != CacheStatus::kStale ? CacheStatus::kHit : fill->status);
  }
  // The leader's answer was not kept (private, no-store...): ask on our own.
  fill = FillFromUpstream(req, *route, entry, req_cc);
  return answer(*fill, fill->status);
}

ProxyResponse Proxy::Handle(const ProxyRequest& req) { return *Run(req, true); }

std::optional<ProxyResponse> Proxy::HandleFromMemory(const ProxyRequest& req) { return Run(req, false); }

}  // namespace ferry::cache
