#include "cache/proxy.h"

#include <chrono>

#include "base/strings.h"
#include "cache/negotiation.h"
#include "codec/zstd_codec.h"
#include "http/date.h"

namespace ferry::cache {

struct Proxy::Fetched {
  http::Response response;
  SysSeconds request_time;
  SysSeconds response_time;
};

namespace {

SysSeconds Now() { return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()); }

bool IEq(std::string_view a, std::string_view b) { return AsciiLower(a) == AsciiLower(b); }

// A sink that refuses bodies past a cap.
class CappedSink : public ByteSink {
 public:
  explicit CappedSink(uint64_t cap) : cap_(cap) {}
  Status Write(std::string_view d) override {
    if (data_.size() + d.size() > cap_) {
      return Status::InvalidArgument("origin body larger than " + std::to_string(cap_) + " bytes");
    }
    data_.append(d);
    return Status::Ok();
  }
  std::string& data() { return data_; }

 private:
  uint64_t cap_;
  std::string data_;
};

ProxyResponse Simple(int status, std::string_view message, const char* x_cache) {
  ProxyResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "text/plain; charset=utf-8"}, {"X-Cache", x_cache}};
  r.body = std::string(message) + "\n";
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

// Freshness lifetime and current age of a stored response.
std::pair<Seconds, Seconds> LifetimeAndAge(const EntryMeta& m, const CacheSettings& s, SysSeconds now) {
  CacheControl cc = ParseCacheControl(HeaderValue(m.headers, "cache-control"));
  bool has_expires = !HeaderValue(m.headers, "expires").empty();
  SysSeconds resp(Seconds(m.response_time)), req(Seconds(m.request_time));
  Seconds life = FreshnessLifetime(cc, DateHeader(m.headers, "expires"), has_expires,
                                   DateHeader(m.headers, "date"), resp, s);
  Seconds age = CurrentAge(ParseAge(HeaderValue(m.headers, "age")), DateHeader(m.headers, "date"),
                           req, resp, now);
  return {life, age};
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

Proxy::Proxy(ProxyOptions options, DiskStore* store, http::Client* origin)
    : options_(std::move(options)), store_(store), origin_(origin) {}

Result<Proxy::Fetched> Proxy::Fetch(const Route& route, const std::string& method,
                                    const http::Headers& headers, const std::string& body) {
  http::Request r;
  r.method = method;
  r.target = route.target;
  r.headers = headers;
  RemoveHeader(&r.headers, "host");
  StringSource source(body);
  if (!body.empty()) {
    r.body = &source;
    r.body_size = body.size();
  }
  Fetched f;
  f.request_time = Now();
  CappedSink sink(options_.max_object);
  counters_.origin_fetches++;
  Status st = origin_->Send(route.origin->endpoint, r, &sink, &f.response);
  if (!st.ok()) return st;
  f.response_time = Now();
  if (f.response.status >= 200 && f.response.status < 300) f.response.body = std::move(sink.data());
  return f;
}

ProxyResponse Proxy::PassThrough(const ProxyRequest& req, const Route& route) {
  counters_.bypass++;
  auto f = Fetch(route, req.method, EndToEnd(req.headers), req.body);
  if (!f.ok()) {
    counters_.errors++;
    return Simple(502, "origin: " + f.status().ToString(), "BYPASS");
  }
  ProxyResponse r;
  r.status = f->response.status;
  r.headers = EndToEnd(f->response.headers);
  r.body = std::move(f->response.body);
  SetHeader(&r.headers, "X-Cache", "BYPASS");
  if (req.method == "HEAD") {
    r.head_length = r.body.size();
    r.body.clear();
  }
  return r;
}

ProxyResponse Proxy::Serve(const ProxyRequest& req, const EntryMeta& meta, std::string_view stored,
                           const char* x_cache, SysSeconds now) {
  ProxyResponse r;
  r.status = meta.status;
  r.headers = meta.headers;
  std::string etag = HeaderValue(meta.headers, "etag");
  bool zstd_stored = meta.encoding == StoredEncoding::kZstd;
  bool send_zstd = zstd_stored && AcceptsCoding(HeaderValue(req.headers, "accept-encoding"), "zstd");
  if (zstd_stored) {
    SetHeader(&r.headers, "Vary", "Accept-Encoding");
    if (send_zstd) {
      SetHeader(&r.headers, "Content-Encoding", "zstd");
      if (!etag.empty()) {
        etag = ZstdEtag(etag);
        SetHeader(&r.headers, "ETag", etag);
      }
    }
  }
  auto [life, age] = LifetimeAndAge(meta, options_.cache, now);
  (void)life;
  SetHeader(&r.headers, "Age", std::to_string(age.count()));
  SetHeader(&r.headers, "X-Cache", x_cache);
  if (meta.status == 200 &&
      NotModified(HeaderValue(req.headers, "if-none-match"), HeaderValue(req.headers, "if-modified-since"),
                  etag, DateHeader(meta.headers, "last-modified"))) {
    r.status = 304;
    for (const char* h : {"Content-Type", "Content-Encoding", "Content-Language"}) RemoveHeader(&r.headers, h);
    return r;
  }
  if (req.method == "HEAD") {
    r.head_length = send_zstd || !zstd_stored ? stored.size() : meta.logical_length;
    return r;
  }
  if (!zstd_stored || send_zstd) {
    r.body.assign(stored);
  } else {
    auto decoded = codec::ZstdDecompress(stored);
    if (!decoded.ok() || decoded->size() != meta.logical_length) {
      counters_.errors++;
      (void)store_->Remove(meta.key);
      return Simple(502, "cache: a stored entry failed to decode", x_cache);
    }
    r.body = std::move(decoded).value();
  }
  return r;
}

ProxyResponse Proxy::Handle(const ProxyRequest& req) {
  auto route = RouteRequest(options_.routing, HeaderValue(req.headers, "host"), req.target);
  if (!route.ok()) {
    if (route.status().code() == ErrorCode::kNotFound) {
      return Simple(421, route.status().message(), "BYPASS");
    }
    return Simple(400, route.status().message(), "BYPASS");
  }
  if (req.method != "GET" && req.method != "HEAD") return PassThrough(req, *route);

  CacheControl req_cc = ParseCacheControl(HeaderValue(req.headers, "cache-control"));
  if (IEq(TrimOws(HeaderValue(req.headers, "pragma")), "no-cache")) req_cc.no_cache = true;
  SysSeconds now = Now();
  std::optional<StoredEntry> entry;
  if (!req_cc.no_store) {
    auto got = store_->Get(route->cache_key);
    if (got.ok()) entry = std::move(*got);
  }
  http::Headers to_origin = EndToEnd(req.headers);
  // The cache wants the identity representation, to transcode it once.
  RemoveHeader(&to_origin, "accept-encoding");
  for (const char* h : {"if-none-match", "if-modified-since", "range", "if-range"}) RemoveHeader(&to_origin, h);
  const char* x_cache = req_cc.no_store ? "BYPASS" : "MISS";
  if (entry) {
    const EntryMeta& m = entry->entry.meta;
    CacheControl resp_cc = ParseCacheControl(HeaderValue(m.headers, "cache-control"));
    auto [life, age] = LifetimeAndAge(m, options_.cache, now);
    if (ServableWithoutRevalidation(req_cc, resp_cc, life, age)) {
      counters_.hits++;
      return Serve(req, m, entry->entry.body, "HIT", now);
    }
    x_cache = "EXPIRED";
    std::string etag = HeaderValue(m.headers, "etag"), lm = HeaderValue(m.headers, "last-modified");
    if (!etag.empty()) to_origin.emplace_back("If-None-Match", etag);
    if (!lm.empty()) to_origin.emplace_back("If-Modified-Since", lm);
  }
  auto f = Fetch(*route, "GET", to_origin, "");
  bool origin_failed = !f.ok() || f->response.status >= 500;
  if (origin_failed && entry) {
    CacheControl resp_cc = ParseCacheControl(HeaderValue(entry->entry.meta.headers, "cache-control"));
    if (!resp_cc.must_revalidate && !resp_cc.no_cache) {
      counters_.stale++;
      return Serve(req, entry->entry.meta, entry->entry.body, "STALE", now);
    }
  }
  if (!f.ok()) {
    counters_.errors++;
    return Simple(f.status().code() == ErrorCode::kTimeout ? 504 : 502,
                  "origin: " + f.status().ToString(), x_cache);
  }
  http::Response& o = f->response;
  if (o.status == 304 && entry) {
    // Still valid: the stored body with the origin's updated fields.
    EntryMeta m = entry->entry.meta;
    for (const auto& [k, v] : EndToEnd(o.headers)) {
      if (!IEq(k, "content-encoding") && !IEq(k, "content-type")) SetHeader(&m.headers, k, v);
    }
    m.request_time = f->request_time.time_since_epoch().count();
    m.response_time = f->response_time.time_since_epoch().count();
    (void)store_->Put(m, entry->entry.body);
    counters_.expired++;
    return Serve(req, m, entry->entry.body, "EXPIRED", now);
  }
  if (entry) {
    counters_.expired++;
  } else if (req_cc.no_store) {
    counters_.bypass++;
  } else {
    counters_.misses++;
  }

  EntryMeta m;
  m.key = route->cache_key;
  m.status = o.status;
  m.headers = EndToEnd(o.headers);
  m.logical_length = o.body.size();
  m.request_time = f->request_time.time_since_epoch().count();
  m.response_time = f->response_time.time_since_epoch().count();
  StoreFacts facts;
  facts.method = "GET";
  facts.request = req_cc;
  facts.authorization = !HeaderValue(req.headers, "authorization").empty();
  facts.status = o.status;
  facts.response = ParseCacheControl(HeaderValue(o.headers, "cache-control"));
  facts.has_expires = !HeaderValue(o.headers, "expires").empty();
  facts.has_validator = !HeaderValue(o.headers, "etag").empty() || !HeaderValue(o.headers, "last-modified").empty();
  facts.set_cookie = !HeaderValue(o.headers, "set-cookie").empty();
  facts.vary = HeaderValue(o.headers, "vary");
  std::string stored = o.body;
  bool storable = DecideStore(facts, options_.cache).store;
  if (storable && o.status >= 200 && o.status < 300) {
    ResponseFacts rf;
    rf.status = o.status;
    rf.content_encoding = HeaderValue(o.headers, "content-encoding");
    rf.content_type = HeaderValue(o.headers, "content-type");
    rf.content_length = o.body.size();
    rf.cache_control = HeaderValue(o.headers, "cache-control");
    if (DecideTranscode(rf, options_.transcode).action == Transcode::kZstd) {
      auto z = codec::ZstdCompress(o.body, options_.level);
      if (z.ok()) {
        stored = std::move(z).value();
        m.encoding = StoredEncoding::kZstd;
      }
    }
    if (store_->Put(m, stored).ok()) {  // a full disk: served, not stored
      counters_.logical_bytes += m.logical_length;
      counters_.stored_bytes += stored.size();
    }
  } else if (entry) {
    (void)store_->Remove(route->cache_key);  // replaced by an answer that is not kept
  }
  return Serve(req, m, stored, x_cache, now);
}

}  // namespace ferry::cache
