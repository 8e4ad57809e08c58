// Proxy's fill path: one upstream exchange per key at a time, its answer
// turned into a stored object by the pure functions of fill.h.
#include <spdlog/spdlog.h>

#include "cache/fill.h"
#include "cache/proxy_internal.h"
#include "codec/zstd_codec.h"

namespace ferry::cache {

using namespace proxy_detail;  // NOLINT: the Proxy's own helpers

namespace {

int64_t Epoch(SysSeconds t) { return t.time_since_epoch().count(); }

}  // namespace

std::shared_ptr<const CachedObject> Proxy::FromDisk(const std::string& key) {
  auto got = store_->Get(key);
  if (!got.ok() || !*got) return nullptr;
  // An entry whose trained dictionary is gone (evicted; trained dictionaries
  // turned off) is a miss.
  if ((*got)->meta.encoding == StoredEncoding::kZstdDict && !(trained_ && trained_->Knows((*got)->body))) {
    (void)store_->Remove(key);
    return nullptr;
  }
  auto object = std::make_shared<CachedObject>();
  object->shareable = true;
  object->meta = std::move((*got)->meta);
  object->body = std::move((*got)->body);
  object->big = std::move((*got)->big);
  Prepare(object.get(), options_.cache);
  std::shared_ptr<const CachedObject> shared = std::move(object);
  hot_.Put(shared);
  return shared;
}

// Writes an object to disk and the memory tier; false when the disk
// refused it (a full disk, an object over --max-size): it is served anyway.
// A compression behind an older fill of its key is given up.
bool Proxy::Keep(const std::shared_ptr<const CachedObject>& object) {
  DropPending(object->meta.key);
  return Store(object);
}

bool Proxy::KeepRefreshed(const std::shared_ptr<const CachedObject>& object) {
  if (object->big) return Keep(object);
  DropPending(object->meta.key);
  if (!store_->Refresh(object->meta).ok()) return Store(object);
  decoded_.Remove(object->meta.key);
  hot_.Put(object);
  return true;
}

bool Proxy::Store(const std::shared_ptr<const CachedObject>& object, bool sync) {
  if (object->big) {  // refreshed by a 304: its file keeps the headers it had
    hot_.Put(object);
    return true;
  }
  Status st = store_->Put(object->meta, object->body, sync);
  if (!st.ok()) {
    counters_.store_failures++;
    spdlog::warn("cache: not stored ({} bytes), served anyway: {}", object->body.size(), st.ToString());
    hot_.Remove(object->meta.key);  // the disk no longer has what memory had
    decoded_.Remove(object->meta.key);
    return false;
  }
  decoded_.Remove(object->meta.key);
  hot_.Put(object);
  return true;
}

std::shared_ptr<const Proxy::Fill> Proxy::FillFromUpstream(const ProxyRequest& req, const Route& route,
                                                           const std::shared_ptr<const CachedObject>& stale,
                                                           const CacheControl& req_cc) {
  auto fill = std::make_shared<Fill>();
  fill->status = stale ? CacheStatus::kExpired : req_cc.no_store ? CacheStatus::kBypass : CacheStatus::kMiss;
  auto f = Fetch(route, "GET", UpstreamRequestHeaders(req.headers, stale ? &stale->meta : nullptr), "");
  bool failed = !f.ok() || f->response.status >= 500;
  if (failed && stale && MayServeStale(*stale)) {
    counters_.stale++;
    fill->share = Fill::Share::kObject;
    fill->object = stale;
    fill->status = CacheStatus::kStale;
    return fill;
  }
  if (!f.ok()) {
    FailFill(fill.get(), UpstreamErrorStatus(f.status()), "upstream: " + f.status().ToString());
    // The path without its query: a query may carry credentials. A full
    // pool is counted (ferry_cache_upstream_rejected_total), not logged.
    if (fill->error_status != 503) {
      spdlog::warn("cache: {} {}: {}", fill->error_status, route.path.substr(0, route.path.find('?')), fill->error);
    }
    return fill;
  }
  if (f->spool) {
    // What it would be stored as, from its head (its body streams on).
    auto head = ObjectFromResponse(route.cache_key, f->response.status, f->response.headers, "",
                                   Epoch(f->request_time), Epoch(f->response_time));
    bool storable = head.ok() && MayStore(req.headers, req_cc, head->meta, options_.cache);
    return StreamFill(std::move(fill), route, stale, std::move(f).value(), storable ? &head->meta : nullptr);
  }
  if (f->response.status == 304 && stale) {
    auto updated = std::make_shared<CachedObject>(MergeNotModified(
        *stale, f->response.headers, Epoch(f->request_time), Epoch(f->response_time)));
    counters_.expired++;
    fill->share = Fill::Share::kObject;
    // The stale entry may be one still waiting for its compression.
    const bool eligible = ShouldCompress(updated->meta, updated->body.size(), options_.transcode);
    if (eligible && EncodeBehind(updated)) {
      fill->object = std::move(updated);
      return fill;
    }
    std::shared_ptr<CachedObject> plain = eligible ? CompressInline(updated.get()) : nullptr;
    Prepare(updated.get(), options_.cache);
    std::shared_ptr<const CachedObject> shared = std::move(updated);
    // Compressed only now: the body changed. Otherwise only its metadata did.
    if ((plain ? Keep(shared) : KeepRefreshed(shared)) && plain) {
      plain->id = shared->id;
      decoded_.Put(std::move(plain));
    }
    fill->object = std::move(shared);
    return fill;
  }
  CountFill(*fill);
  http::Response& o = f->response;
  auto object = ObjectFromResponse(route.cache_key, o.status, o.headers, std::move(o.body),
                                   Epoch(f->request_time), Epoch(f->response_time));
  if (!object.ok()) {
    FailFill(fill.get(), 502, object.status().message());
    return fill;
  }
  bool storable = MayStore(req.headers, req_cc, object->meta, options_.cache);
  const bool behind = HeaderValue(req.headers, kTierHeader) != "stored";
  return StoreFill(std::move(fill), route, stale, std::make_shared<CachedObject>(std::move(object).value()),
                   storable, behind);
}

void Proxy::CountFill(const Fill& fill) {
  switch (fill.status) {
    case CacheStatus::kExpired: counters_.expired++; break;
    case CacheStatus::kBypass: counters_.bypass++; break;
    default: counters_.misses++; break;
  }
}

void Proxy::FailFill(Fill* fill, int status, std::string error) {
  counters_.errors++;
  fill->share = Fill::Share::kError;
  fill->error_status = status;
  fill->error = std::move(error);
}

// Too large to hold: streamed to this client and, when `storable`, cached
// as it streams and shared with the requests that wait for it; otherwise
// not stored, not shared, and a stale entry it replaces is dropped.
std::shared_ptr<const Proxy::Fill> Proxy::StreamFill(std::shared_ptr<Fill> fill, const Route& route,
                                                     const std::shared_ptr<const CachedObject>& stale,
                                                     Fetched fetched, const EntryMeta* storable) {
  CountFill(*fill);
  if (!http::HeaderValue(fetched.response.headers, kStoredHeader).empty()) {
    fetched.spool->AbandonIfUnread();
    FailFill(fill.get(), 502, "parent tier: a stored body larger than --max-object");
    return fill;
  }
  auto shared = std::make_shared<Fetched>(std::move(fetched));
  if (storable && StartBigFill(*storable, shared)) {
    fill->share = Fill::Share::kStreamed;
  } else if (stale) {
    Forget(route.cache_key);
    (void)store_->Remove(route.cache_key);
  }
  fill->streamed = std::move(shared);
  return fill;
}

std::shared_ptr<CachedObject> Proxy::CompressInline(CachedObject* object) {
  const uint64_t cpu_start = ThreadCpuNanos();
  auto z = codec::ZstdCompress(object->body, options_.level);
  if (!z.ok()) return nullptr;  // stored as it came
  counters_.encode_ns += ThreadCpuNanos() - cpu_start;
  counters_.encode_bytes += object->body.size();
  // The original is the decoded copy identity clients are sent.
  auto plain = std::make_shared<CachedObject>();
  plain->meta.key = object->meta.key;
  plain->body = std::move(object->body);
  object->body = std::move(z).value();
  object->meta.encoding = StoredEncoding::kZstd;
  object->meta.stored_length = object->body.size();
  return plain;
}

// Compresses what is eligible, stores what may be stored (sharing it with
// the requests that waited), and answers with it either way.
std::shared_ptr<CachedObject> Proxy::CompressSmall(CachedObject* object) {
  if (!trained_ || !ShouldCompress(object->meta, object->body.size(), small_transcode_)) return nullptr;
  const uint64_t cpu_start = ThreadCpuNanos();
  auto frame = trained_->Offer(HeaderValue(object->meta.headers, "content-type"), object->body);
  if (!frame) return nullptr;  // no dictionary yet, or too little saved: stored as it came
  counters_.encode_ns += ThreadCpuNanos() - cpu_start;
  counters_.encode_bytes += object->body.size();
  auto plain = std::make_shared<CachedObject>();
  plain->meta.key = object->meta.key;
  plain->body = std::move(object->body);
  object->body = std::move(*frame);
  object->meta.encoding = StoredEncoding::kZstdDict;
  object->meta.stored_length = object->body.size();
  return plain;
}

std::shared_ptr<const Proxy::Fill> Proxy::StoreFill(std::shared_ptr<Fill> fill, const Route& route,
                                                    const std::shared_ptr<const CachedObject>& stale,
                                                    std::shared_ptr<CachedObject> object, bool storable,
                                                    bool behind) {
  std::shared_ptr<CachedObject> plain;  // the original of a body compressed here
  object->shareable = storable;
  if (storable && ShouldCompress(object->meta, object->body.size(), options_.transcode)) {
    if (behind && EncodeBehind(object)) {
      fill->share = Fill::Share::kObject;
      fill->object = std::move(object);
      return fill;
    }
    plain = CompressInline(object.get());
  } else if (storable) {
    plain = CompressSmall(object.get());
  }
  Prepare(object.get(), options_.cache);
  std::shared_ptr<const CachedObject> shared = std::move(object);
  if (storable) {
    if (Keep(shared)) {
      counters_.logical_bytes += shared->meta.logical_length;
      counters_.stored_bytes += shared->body.size();
      if (shared->heuristic) counters_.heuristic_entries++;
      fill->share = Fill::Share::kObject;
      if (plain) {
        plain->id = shared->id;
        decoded_.Put(std::move(plain));
      }
    }
  } else if (stale) {
    // Replaced by an answer that is not kept.
    Forget(route.cache_key);
    (void)store_->Remove(route.cache_key);
  }
  fill->object = std::move(shared);
  return fill;
}

}  // namespace ferry::cache
