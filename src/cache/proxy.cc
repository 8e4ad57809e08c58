#include "cache/proxy.h"

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "base/strings.h"
#include "cache/negotiation.h"
#include "cache/range.h"
#include "codec/zstd_codec.h"
#include "http/date.h"

namespace ferry::cache {

struct Proxy::Fetched {
  http::Response response;
  SysSeconds request_time;
  SysSeconds response_time;
  // Set when the body outgrew max_object: the rest of it arrives here (and
  // response.body is empty).
  std::shared_ptr<Spool> spool;
};

// One upstream exchange, run on a thread of its own so that the request
// waiting for it can go on as soon as the body turns out too large to
// hold: from then on the exchange writes into a spool the client reads.
struct Proxy::Exchange {
  http::Request request;
  std::string request_body;
  std::unique_ptr<StringSource> source;
  const http::Endpoint* endpoint = nullptr;
  uint64_t cap = 0;
  std::string spool_dir;

  std::mutex mu;
  std::condition_variable cv;
  bool done = false;                 // guarded by mu
  bool spilled = false;              // guarded by mu
  Status status;                     // guarded by mu; when done
  http::Response response;           // written by the exchange thread; read once done or spilled
  http::Response head;               // status and headers of a 2xx, before its body
  std::string body;                  // up to cap bytes
  std::shared_ptr<Spool> spool;      // once spilled
};

// One upstream fill, shared with the requests that waited for it.
struct Proxy::Fill {
  enum class Share { kObject, kError, kNone };
  Share share = Share::kNone;  // what a waiting request may take from it
  std::shared_ptr<const CachedObject> object;  // the answer (stored or not)
  std::shared_ptr<Fetched> streamed;           // or: an answer too large to hold
  const char* x_cache = "MISS";
  int error_status = 0;
  std::string error;
};

namespace {

using SteadyClock = std::chrono::steady_clock;

SysSeconds Now() { return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()); }

uint64_t NanosSince(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t).count();
}

bool IEq(std::string_view a, std::string_view b) { return EqualsIgnoreCase(a, b); }


ProxyResponse Simple(int status, std::string_view message, const char* x_cache) {
  ProxyResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "text/plain; charset=utf-8"}, {"X-Cache", x_cache}};
  r.SetBody(std::string(message) + "\n");
  return r;
}

void SetHeader(http::Headers* h, std::string_view name, std::string value) {
  for (auto it = h->begin(); it != h->end();) {
    it = IEq(it->first, name) ? h->erase(it) : it + 1;
  }
  h->emplace_back(std::string(name), std::move(value));
}

void RemoveHeader(http::Headers* h, std::string_view name) {
  for (auto it = h->begin(); it != h->end();) it = IEq(it->first, name) ? h->erase(it) : it + 1;
}

std::optional<SysSeconds> DateHeader(const http::Headers& h, std::string_view name) {
  std::string v = HeaderValue(h, name);
  if (v.empty()) return std::nullopt;
  return http::ParseHttpDate(v);
}

// Gives a new object its id and what hits need from its headers, parsed once.
void Prepare(CachedObject* o, const CacheSettings& s) {
  const EntryMeta& m = o->meta;
  o->id = NextObjectId();
  o->cache_control = ParseCacheControl(HeaderValue(m.headers, "cache-control"));
  bool has_expires = !HeaderValue(m.headers, "expires").empty();
  SysSeconds resp(Seconds(m.response_time)), req(Seconds(m.request_time));
  auto date = DateHeader(m.headers, "date");
  o->lifetime = FreshnessLifetime(o->cache_control, DateHeader(m.headers, "expires"), has_expires, date, resp, s);
  o->initial_age = CurrentAge(ParseAge(HeaderValue(m.headers, "age")), date, req, resp, resp);
  o->last_modified = DateHeader(m.headers, "last-modified");
}

// "zstd; length=N" -> N; nullopt for anything else.
std::optional<uint64_t> ParseStoredMarker(std::string_view v) {
  v = TrimOws(v);
  constexpr std::string_view kPrefix = "zstd; length=";
  if (v.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view n = v.substr(kPrefix.size());
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), out);
  if (ec != std::errc() || p != n.data() + n.size()) return std::nullopt;
  return out;
}

}  // namespace

std::string HeaderValue(const http::Headers& h, std::string_view name) {
  for (const auto& [k, v] : h) {
    if (IEq(k, name)) return v;
  }
  return "";
}

http::Headers EndToEnd(const http::Headers& h) {
  static const char* kHopByHop[] = {"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
                                    "proxy-authorization", "te", "trailer", "transfer-encoding",
                                    "upgrade", "content-length"};
  std::vector<std::string> named;  // fields the Connection header names
  std::string conn = HeaderValue(h, "connection");
  for (size_t at = 0; at <= conn.size();) {
    size_t comma = conn.find(',', at);
    if (comma == std::string::npos) comma = conn.size();
    std::string n = AsciiLower(TrimOws(std::string_view(conn).substr(at, comma - at)));
    if (!n.empty()) named.push_back(n);
    at = comma + 1;
  }
  http::Headers out;
  for (const auto& [k, v] : h) {
    std::string lk = AsciiLower(k);
    bool drop = false;
    for (const char* hop : kHopByHop) drop = drop || lk == hop;
    for (const auto& n : named) drop = drop || lk == n;
    if (!drop) out.emplace_back(k, v);
  }
  return out;
}

Proxy::Proxy(ProxyOptions options, DiskStore* store, Upstream* upstream)
    : options_(std::move(options)),
      store_(store),
      upstream_(upstream),
      hot_(options_.memory_bytes / 2),
      decoded_(options_.memory_bytes / 2) {}

void Proxy::Forget(const std::string& key) {
  hot_.Remove(key);
  decoded_.Remove(key);
}

MetricsSnapshot Proxy::Metrics() const {
  MetricsSnapshot m = Snapshot(counters_);
  DiskStoreStats d = store_->stats();
  m.disk_entries = d.entries;
  m.disk_bytes = d.bytes;
  m.evictions = d.evictions;
  m.corrupt = d.corrupt;
  m.memory_entries = hot_.entries();
  m.memory_bytes = hot_.bytes() + decoded_.bytes();
  return m;
}

namespace {

// Holds a body in memory up to the exchange's cap, then moves it to a
// spool and tells the waiting request.
class SpillingSink : public ByteSink {
 public:
  explicit SpillingSink(Proxy::Exchange* x) : x_(x) {}
  Status Write(std::string_view d) override {
    if (!x_->spool) {
      if (x_->body.size() + d.size() <= x_->cap) {
        x_->body.append(d);
        return Status::Ok();
      }
      if (x_->spool_dir.empty()) {
        return Status::InvalidArgument("upstream body larger than " + std::to_string(x_->cap) + " bytes");
      }
      FERRY_ASSIGN_OR_RETURN(auto spool, Spool::Create(x_->spool_dir));
      FERRY_RETURN_IF_ERROR(spool->Write(x_->body));
      x_->body.clear();
      std::lock_guard lock(x_->mu);
      x_->spool = std::move(spool);
      x_->spilled = true;
      x_->cv.notify_all();
    }
    return x_->spool->Write(d);
  }

 private:
  Proxy::Exchange* x_;
};

}  // namespace

Proxy::~Proxy() {
  // Exchanges still running (a client that left a spool) use this proxy.
  std::unique_lock lock(exchanges_mu_);
  exchanges_cv_.wait(lock, [&] { return exchanges_ == 0; });
}

Result<Proxy::Fetched> Proxy::Fetch(const Route& route, const std::string& method, http::Headers headers,
                                    const std::string& body) {
  auto x = std::make_shared<Exchange>();
  http::Request& r = x->request;
  r.method = method;
  RemoveHeader(&headers, "host");
  RemoveHeader(&headers, kTierHeader);
  x->endpoint = &route.origin->endpoint;
  if (options_.parent) {
    // The parent routes by the client's host and path, as this tier did.
    x->endpoint = &*options_.parent;
    r.target = route.path;
    if (!route.host.empty()) headers.emplace_back("Host", route.host);
    headers.emplace_back(std::string(kTierHeader), "stored");
  } else {
    r.target = route.target;
  }
  r.headers = std::move(headers);
  x->request_body = body;
  if (!body.empty()) {
    x->source = std::make_unique<StringSource>(x->request_body);
    r.body = x->source.get();
    r.body_size = body.size();
  }
  Exchange* raw = x.get();
  r.check_headers = [raw](const http::Response& head) {
    raw->head.status = head.status;
    raw->head.headers = head.headers;
    return Status::Ok();
  };
  x->cap = options_.max_object;
  x->spool_dir = options_.spool_dir;
  Fetched f;
  f.request_time = Now();
  counters_.origin_fetches++;
  {
    std::lock_guard lock(exchanges_mu_);
    ++exchanges_;
  }
  std::thread([this, x] {
    SpillingSink sink(x.get());
    Status st = upstream_->Send(*x->endpoint, x->request, &sink, &x->response);
    counters_.upstream_bytes += x->spool ? x->spool->written() : x->body.size();
    if (x->spool) x->spool->Finish(st);
    {
      std::lock_guard lock(x->mu);
      x->done = true;
      x->status = st;
      x->cv.notify_all();
    }
    std::lock_guard lock(exchanges_mu_);
    --exchanges_;
    exchanges_cv_.notify_all();
  }).detach();
  {
    std::unique_lock lock(x->mu);
    x->cv.wait(lock, [&] { return x->done || x->spilled; });
    if (x->spilled) {
      f.response = x->head;
      f.spool = x->spool;
    } else {
      if (!x->status.ok()) return x->status;
      f.response = std::move(x->response);
      if (f.response.status >= 200 && f.response.status < 300) f.response.body = std::move(x->body);
    }
  }
  f.response_time = Now();
  // Only a configured parent may say what its bytes are.
  if (!options_.parent) RemoveHeader(&f.response.headers, kStoredHeader);
  RemoveHeader(&f.response.headers, "x-cache");
  return f;
}

ProxyResponse Proxy::Streamed(const ProxyRequest& req, const Fetched& f, const char* x_cache) {
  ProxyResponse r;
  r.status = f.response.status;
  r.headers = EndToEnd(f.response.headers);
  RemoveHeader(&r.headers, kStoredHeader);
  SetHeader(&r.headers, "X-Cache", x_cache);
  std::optional<uint64_t> length;
  std::string cl = HeaderValue(f.response.headers, "content-length");
  uint64_t n = 0;
  auto [p, ec] = std::from_chars(cl.data(), cl.data() + cl.size(), n);
  if (!cl.empty() && ec == std::errc() && p == cl.data() + cl.size()) length = n;
  if (req.method == "HEAD") {
    f.spool->Cancel();
    r.head_length = length;
    r.head_chunked = !length;
    return r;
  }
  r.stream = f.spool;
  r.stream_length = length;
  return r;
}

ProxyResponse Proxy::PassThrough(const ProxyRequest& req, const Route& route) {
  counters_.bypass++;
  auto f = Fetch(route, req.method, EndToEnd(req.headers), req.body);
  if (!f.ok()) {
    counters_.errors++;
    return Simple(502, "upstream: " + f.status().ToString(), "BYPASS");
  }
  if (f->spool) return Streamed(req, *f, "BYPASS");
  ProxyResponse r;
  r.status = f->response.status;
  r.headers = EndToEnd(f->response.headers);
  RemoveHeader(&r.headers, kStoredHeader);
  SetHeader(&r.headers, "X-Cache", "BYPASS");
  if (req.method == "HEAD") {
    r.head_length = f->response.body.size();
  } else {
    r.SetBody(std::move(f->response.body));
  }
  return r;
}

std::shared_ptr<const CachedObject> Proxy::FromDisk(const std::string& key) {
  auto got = store_->Get(key);
  if (!got.ok() || !*got) return nullptr;
  auto object = std::make_shared<CachedObject>();
  object->meta = (*got)->entry.meta;
  object->body.assign((*got)->entry.body);
  Prepare(object.get(), options_.cache);
  std::shared_ptr<const CachedObject> shared = std::move(object);
  hot_.Put(shared);
  return shared;
}

// Writes an object to disk and the memory tier; false when the disk
// refused it (a full disk, an object over --max-size): it is served anyway.
bool Proxy::Keep(const std::shared_ptr<const CachedObject>& object) {
  Status st = store_->Put(object->meta, object->body);
  if (!st.ok()) {
    counters_.store_failures++;
    spdlog::warn("cache: not stored ({} bytes), served anyway: {}", object->body.size(), st.ToString());
    Forget(object->meta.key);  // the disk no longer has what memory had
    return false;
  }
  decoded_.Remove(object->meta.key);
  hot_.Put(object);
  return true;
}

ProxyResponse Proxy::Serve(const ProxyRequest& req, const std::shared_ptr<const CachedObject>& object,
                           const char* x_cache) {
  const EntryMeta& m = object->meta;
  std::string_view stored = object->body;
  ProxyResponse r;
  r.status = m.status;
  r.headers = m.headers;
  r.keep = object;
  bool zstd_stored = m.encoding == StoredEncoding::kZstd;
  SetHeader(&r.headers, "Age", std::to_string(object->AgeAt(Now()).count()));
  SetHeader(&r.headers, "X-Cache", x_cache);
  std::string etag = HeaderValue(m.headers, "etag");
  auto not_modified = [&](const std::string& tag) {
    return m.status == 200 && NotModified(HeaderValue(req.headers, "if-none-match"),
                                          HeaderValue(req.headers, "if-modified-since"), tag,
                                          object->last_modified);
  };
  auto answer_304 = [&] {
    r.status = 304;
    static constexpr std::string_view kBodyFields[] = {"Content-Type", "Content-Encoding", "Content-Language",
                                                       "Accept-Ranges", kStoredHeader};
    for (std::string_view h : kBodyFields) {
      RemoveHeader(&r.headers, h);
    }
    r.keep.reset();
    return r;
  };

  if (HeaderValue(req.headers, kTierHeader) == "stored") {
    // A lower tier: the stored bytes as they are, marked, under the
    // original validators.
    if (zstd_stored) {
      SetHeader(&r.headers, "Content-Encoding", "zstd");
      SetHeader(&r.headers, kStoredHeader, "zstd; length=" + std::to_string(m.logical_length));
    }
    if (not_modified(etag)) return answer_304();
    if (req.method == "HEAD") {
      r.head_length = stored.size();
    } else {
      r.body = stored;
    }
    return r;
  }

  // A Range is answered from the identity representation.
  std::string range = HeaderValue(req.headers, "range");
  bool send_zstd = zstd_stored && range.empty() &&
                   AcceptsCoding(HeaderValue(req.headers, "accept-encoding"), "zstd");
  if (zstd_stored) SetHeader(&r.headers, "Vary", "Accept-Encoding");
  if (send_zstd) {
    SetHeader(&r.headers, "Content-Encoding", "zstd");
    RemoveHeader(&r.headers, "Accept-Ranges");
    if (!etag.empty()) {
      etag = ZstdEtag(etag);
      SetHeader(&r.headers, "ETag", etag);
    }
  }
  if (not_modified(etag)) return answer_304();

  uint64_t length = send_zstd || !zstd_stored ? stored.size() : m.logical_length;
  RangeDecision rd;
  if (!send_zstd && m.status == 200) {
    SetHeader(&r.headers, "Accept-Ranges", "bytes");
    rd = DecideRange(range, HeaderValue(req.headers, "if-range"), etag,
                     HeaderValue(m.headers, "last-modified"), length);
  }
  if (rd.kind == RangeDecision::Kind::kUnsatisfiable) {
    r.status = 416;
    SetHeader(&r.headers, "Content-Range", "bytes */" + std::to_string(length));
    RemoveHeader(&r.headers, "Content-Type");
    r.body = {};
    r.keep.reset();
    return r;
  }
  uint64_t first = 0, count = length;
  if (rd.kind == RangeDecision::Kind::kPartial) {
    r.status = 206;
    first = rd.first;
    count = rd.last - rd.first + 1;
    SetHeader(&r.headers, "Content-Range", "bytes " + std::to_string(rd.first) + "-" + std::to_string(rd.last) +
                                               "/" + std::to_string(length));
  }
  if (req.method == "HEAD") {
    r.head_length = count;
    r.keep.reset();
    return r;
  }
  if (!zstd_stored || send_zstd) {
    r.body = stored.substr(first, count);
    return r;
  }
  std::shared_ptr<const CachedObject> plain = decoded_.Get(m.key);
  if (!plain || plain->id != object->id) {
    auto start = SteadyClock::now();
    auto decoded = codec::ZstdDecompress(stored);
    if (!decoded.ok() || decoded->size() != m.logical_length) {
      counters_.errors++;
      spdlog::warn("cache: a stored entry failed to decode; removed");
      (void)store_->Remove(m.key);
      Forget(m.key);
      return Simple(502, "cache: a stored entry failed to decode", x_cache);
    }
    counters_.decode_ns += NanosSince(start);
    counters_.decode_bytes += decoded->size();
    auto copy = std::make_shared<CachedObject>();
    copy->meta.key = m.key;
    copy->id = object->id;
    copy->body = std::move(decoded).value();
    plain = std::move(copy);
    decoded_.Put(plain);
  }
  r.body = std::string_view(plain->body).substr(first, count);
  r.keep = std::move(plain);
  return r;
}

bool Proxy::NeedsDecode(const ProxyRequest& req, const CachedObject& object) {
  if (object.meta.encoding != StoredEncoding::kZstd || req.method == "HEAD") return false;
  if (HeaderValue(req.headers, kTierHeader) == "stored") return false;
  if (HeaderValue(req.headers, "range").empty() &&
      AcceptsCoding(HeaderValue(req.headers, "accept-encoding"), "zstd")) {
    return false;
  }
  auto plain = decoded_.Get(object.meta.key);
  return !plain || plain->id != object.id;
}

ProxyResponse Proxy::Admin(const ProxyRequest& req) {
  if (!Allowed(options_.admin_allow, req.peer)) {
    return Simple(403, "forbidden: " + req.method + " " + req.target + " is not allowed from " + req.peer,
                  "BYPASS");
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
    return Simple(route.status().code() == ErrorCode::kNotFound ? 421 : 400, route.status().message(), "BYPASS");
  }
  Forget(route->cache_key);
  Status st = store_->Remove(route->cache_key);
  if (st.code() == ErrorCode::kNotFound) return Simple(404, "not cached: " + route->path, "BYPASS");
  if (!st.ok()) {
    counters_.errors++;
    return Simple(500, "purge: " + st.ToString(), "BYPASS");
  }
  counters_.purges++;
  return Simple(200, "purged: " + route->path, "BYPASS");
}

std::shared_ptr<const Proxy::Fill> Proxy::FillFromUpstream(const ProxyRequest& req, const Route& route,
                                                           const std::shared_ptr<const CachedObject>& stale,
                                                           const CacheControl& req_cc) {
  auto fill = std::make_shared<Fill>();
  http::Headers to_upstream = EndToEnd(req.headers);
  // The cache wants the identity representation, whole, to transcode it once.
  for (const char* h : {"accept-encoding", "if-none-match", "if-modified-since", "range", "if-range"}) {
    RemoveHeader(&to_upstream, h);
  }
  if (stale) {
    fill->x_cache = "EXPIRED";
    std::string etag = HeaderValue(stale->meta.headers, "etag");
    std::string lm = HeaderValue(stale->meta.headers, "last-modified");
    if (!etag.empty()) to_upstream.emplace_back("If-None-Match", etag);
    if (!lm.empty()) to_upstream.emplace_back("If-Modified-Since", lm);
  } else if (req_cc.no_store) {
    fill->x_cache = "BYPASS";
  }
  auto f = Fetch(route, "GET", std::move(to_upstream), "");
  bool failed = !f.ok() || f->response.status >= 500;
  if (failed && stale) {
    if (!stale->cache_control.must_revalidate && !stale->cache_control.no_cache) {
      counters_.stale++;
      fill->share = Fill::Share::kObject;
      fill->object = stale;
      fill->x_cache = "STALE";
      return fill;
    }
  }
  if (!f.ok()) {
    counters_.errors++;
    fill->share = Fill::Share::kError;
    fill->error_status = f.status().code() == ErrorCode::kTimeout ? 504 : 502;
    fill->error = "upstream: " + f.status().ToString();
    // The path without its query: a query may carry credentials.
    spdlog::warn("cache: {} {}: {}", fill->error_status, route.path.substr(0, route.path.find('?')),
                 fill->error);
    return fill;
  }
  if (f->spool) {
    // Too large to hold: streamed to this client, not stored, not shared.
    (stale ? counters_.expired : req_cc.no_store ? counters_.bypass : counters_.misses)++;
    if (!HeaderValue(f->response.headers, kStoredHeader).empty()) {
      f->spool->Cancel();
      counters_.errors++;
      fill->share = Fill::Share::kError;
      fill->error_status = 502;
      fill->error = "parent tier: a stored body larger than --max-object";
      return fill;
    }
    if (stale) {
      Forget(route.cache_key);
      (void)store_->Remove(route.cache_key);
    }
    fill->streamed = std::make_shared<Fetched>(std::move(f).value());
    return fill;
  }
  http::Response& o = f->response;
  if (o.status == 304 && stale) {
    // Still valid: the stored body under the upstream's updated fields.
    auto updated = std::make_shared<CachedObject>(*stale);
    for (const auto& [k, v] : EndToEnd(o.headers)) {
      if (!IEq(k, "content-encoding") && !IEq(k, "content-type") && !IEq(k, kStoredHeader)) {
        SetHeader(&updated->meta.headers, k, v);
      }
    }
    updated->meta.request_time = f->request_time.time_since_epoch().count();
    updated->meta.response_time = f->response_time.time_since_epoch().count();
    Prepare(updated.get(), options_.cache);
    std::shared_ptr<const CachedObject> shared = std::move(updated);
    Keep(shared);
    counters_.expired++;
    fill->share = Fill::Share::kObject;
    fill->object = std::move(shared);
    return fill;
  }
  (stale ? counters_.expired : req_cc.no_store ? counters_.bypass : counters_.misses)++;

  auto object = std::make_shared<CachedObject>();
  EntryMeta& m = object->meta;
  m.key = route.cache_key;
  m.status = o.status;
  m.headers = EndToEnd(o.headers);
  m.logical_length = o.body.size();
  m.request_time = f->request_time.time_since_epoch().count();
  m.response_time = f->response_time.time_since_epoch().count();
  std::string marker = HeaderValue(o.headers, kStoredHeader);
  RemoveHeader(&m.headers, kStoredHeader);
  if (!marker.empty()) {
    // From the parent tier: its stored zstd bytes, kept as they are.
    auto length = ParseStoredMarker(marker);
    if (!length || codec::ZstdFrameContentSize(o.body) != length) {
      counters_.errors++;
      fill->share = Fill::Share::kError;
      fill->error_status = 502;
      fill->error = "parent tier: a body that does not match its " + std::string(kStoredHeader) + " marker";
      return fill;
    }
    RemoveHeader(&m.headers, "content-encoding");
    m.encoding = StoredEncoding::kZstd;
    m.logical_length = *length;
  }

  StoreFacts facts;
  facts.method = "GET";
  facts.request = req_cc;
  facts.authorization = !HeaderValue(req.headers, "authorization").empty();
  facts.status = o.status;
  facts.response = ParseCacheControl(HeaderValue(m.headers, "cache-control"));
  facts.has_expires = !HeaderValue(m.headers, "expires").empty();
  facts.has_validator = !HeaderValue(m.headers, "etag").empty() || !HeaderValue(m.headers, "last-modified").empty();
  facts.set_cookie = !HeaderValue(m.headers, "set-cookie").empty();
  facts.vary = HeaderValue(m.headers, "vary");
  bool storable = DecideStore(facts, options_.cache).store && o.status >= 200 && o.status < 300;
  std::shared_ptr<CachedObject> plain;  // the original of a body compressed here
  if (storable && m.encoding == StoredEncoding::kIdentity) {
    ResponseFacts rf;
    rf.status = o.status;
    rf.content_encoding = HeaderValue(m.headers, "content-encoding");
    rf.content_type = HeaderValue(m.headers, "content-type");
    rf.content_length = o.body.size();
    rf.cache_control = HeaderValue(m.headers, "cache-control");
    if (DecideTranscode(rf, options_.transcode).action == Transcode::kZstd) {
      auto start = SteadyClock::now();
      auto z = codec::ZstdCompress(o.body, options_.level);
      if (z.ok()) {
        counters_.encode_ns += NanosSince(start);
        counters_.encode_bytes += o.body.size();
        // The original is the decoded copy identity clients are sent.
        auto copy = std::make_shared<CachedObject>();
        copy->meta.key = m.key;
        copy->body = std::move(o.body);
        plain = std::move(copy);
        o.body = std::move(z).value();
        m.encoding = StoredEncoding::kZstd;
      }
    }
  }
  object->body = std::move(o.body);
  Prepare(object.get(), options_.cache);
  m.stored_length = object->body.size();
  std::shared_ptr<const CachedObject> shared = std::move(object);
  if (storable) {
    if (Keep(shared)) {
      counters_.logical_bytes += shared->meta.logical_length;
      counters_.stored_bytes += shared->body.size();
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

std::optional<ProxyResponse> Proxy::Run(const ProxyRequest& req, bool may_block) {
  std::string_view path = std::string_view(req.target).substr(0, req.target.find('?'));
  if (req.method == "PURGE" || ((req.method == "GET" || req.method == "HEAD") && path == kMetricsPath)) {
    if (!may_block) return std::nullopt;
    return Admin(req);
  }
  auto route = RouteRequest(options_.routing, HeaderValue(req.headers, "host"), req.target);
  if (!route.ok()) {
    if (route.status().code() == ErrorCode::kNotFound) {
      return Simple(421, route.status().message(), "BYPASS");
    }
    return Simple(400, route.status().message(), "BYPASS");
  }
  if (req.method != "GET" && req.method != "HEAD") {
    if (!may_block) return std::nullopt;
    return PassThrough(req, *route);
  }

  CacheControl req_cc = ParseCacheControl(HeaderValue(req.headers, "cache-control"));
  if (IEq(TrimOws(HeaderValue(req.headers, "pragma")), "no-cache")) req_cc.no_cache = true;
  std::shared_ptr<const CachedObject> entry;
  if (!req_cc.no_store) {
    entry = hot_.Get(route->cache_key);
    if (!entry) {
      if (!may_block) return std::nullopt;
      entry = FromDisk(route->cache_key);
    }
  }
  if (entry) {
    if (ServableWithoutRevalidation(req_cc, entry->cache_control, entry->lifetime, entry->AgeAt(Now()))) {
      // The event loop decodes small bodies only; a worker does the rest.
      constexpr uint64_t kLoopDecodeLimit = 256 << 10;
      if (!may_block && entry->meta.logical_length > kLoopDecodeLimit && NeedsDecode(req, *entry)) {
        return std::nullopt;
      }
      counters_.hits++;
      return Serve(req, entry, "HIT");
    }
  }
  if (!may_block) return std::nullopt;

  auto answer = [&](const Fill& fill, const char* x_cache) {
    if (fill.share == Fill::Share::kError) return Simple(fill.error_status, fill.error, x_cache);
    if (fill.streamed) return Streamed(req, *fill.streamed, x_cache);
    return Serve(req, fill.object, x_cache);
  };
  // A request of its own (no-store, credentials) is not shared.
  if (req_cc.no_store || !HeaderValue(req.headers, "authorization").empty()) {
    auto fill = FillFromUpstream(req, *route, entry, req_cc);
    return answer(*fill, fill->x_cache);
  }
  auto [fill, led] = flights_.Do(route->cache_key, [&]() -> std::shared_ptr<const Fill> {
    // A fill for this key may have ended since the lookup above: what it
    // stored, if fresh, is a hit (not a second origin fetch).
    auto now = hot_.Get(route->cache_key);
    if (now && now != entry &&
        ServableWithoutRevalidation(req_cc, now->cache_control, now->lifetime, now->AgeAt(Now()))) {
      auto hit = std::make_shared<Fill>();
      hit->share = Fill::Share::kObject;
      hit->object = std::move(now);
      hit->x_cache = "HIT";
      counters_.hits++;
      return hit;
    }
    return FillFromUpstream(req, *route, entry, req_cc);
  });
  if (led) return answer(*fill, fill->x_cache);
  if (fill && fill->share != Fill::Share::kNone) {
    counters_.coalesced++;
    return answer(*fill, fill->share == Fill::Share::kObject && std::string_view(fill->x_cache) != "STALE"
                             ? "HIT"
                             : fill->x_cache);
  }
  // The leader's answer was not kept (private, no-store...): ask on our own.
  fill = FillFromUpstream(req, *route, entry, req_cc);
  return answer(*fill, fill->x_cache);
}

ProxyResponse Proxy::Handle(const ProxyRequest& req) { return *Run(req, true); }

std::optional<ProxyResponse> Proxy::HandleFromMemory(const ProxyRequest& req) { return Run(req, false); }

}  // namespace ferry::cache
