// Proxy's upstream exchanges: each runs on the bounded exchange pool and
// hands its request either the whole answer or, once the body outgrows
// max_object, a spool it goes on filling.
#include <charconv>

#include "cache/fill.h"
#include "cache/parent_choice.h"
#include "cache/proxy_internal.h"

namespace ferry::cache {

using namespace proxy_detail;  // NOLINT: the Proxy's own helpers

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

namespace proxy_detail {

std::optional<uint64_t> ContentLengthOf(const http::Headers& headers) {
  std::string cl = HeaderValue(headers, "content-length");
  uint64_t n = 0;
  auto [p, ec] = std::from_chars(cl.data(), cl.data() + cl.size(), n);
  if (cl.empty() || ec != std::errc() || p != cl.data() + cl.size()) return std::nullopt;
  return n;
}

}  // namespace proxy_detail

// Exchanges still running (a client that left a spool) use this proxy:
// exchange_pool_, its last member, runs what is queued and joins them
// before any other member goes.
Proxy::~Proxy() = default;

Result<Proxy::Fetched> Proxy::Fetch(const Route& route, const std::string& method, http::Headers headers,
                                    const std::string& body) {
  bool reached = false;
  if (options_.parents.empty()) return FetchFrom(nullptr, route, method, std::move(headers), body, &reached);
  // Only a request that may be sent twice goes on to the next parent: a
  // reset may come after the parent acted on it.
  const bool idempotent = method == "GET" || method == "HEAD";
  const std::vector<size_t> order = ParentOrder(route.cache_key, parent_names_);
  Result<Fetched> last = Status(ErrorCode::kNetwork, "no parent tier");
  for (size_t k = 0; k < order.size(); ++k) {
    last = FetchFrom(&options_.parents[order[k]], route, method, headers, body, &reached);
    bool next = !last.ok() && !reached && last.status().code() == ErrorCode::kNetwork && idempotent;
    if (!next || k + 1 == order.size()) return last;
    counters_.parent_failovers++;
  }
  return last;
}

Result<Proxy::Fetched> Proxy::FetchFrom(const http::Endpoint* parent, const Route& route, const std::string& method,
                                        http::Headers headers, const std::string& body, bool* reached) {
  auto x = std::make_shared<Exchange>();
  http::Request& r = x->request;
  r.method = method;
  RemoveHeader(&headers, "host");
  RemoveHeader(&headers, kTierHeader);
  x->endpoint = &route.origin->endpoint;
  if (parent) {
    // The parent routes by the client's host and path, as this tier did.
    x->endpoint = parent;
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
  bool submitted = exchange_pool_.TrySubmit([this, x] {
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
  });
  if (!submitted) {
    return Status(ErrorCode::kThrottled, "upstream busy: " + std::to_string(options_.upstream_threads) +
                                             " exchanges running and " + std::to_string(options_.upstream_queue) +
                                             " waiting");
  }
  counters_.origin_fetches++;
  {
    std::unique_lock lock(x->mu);
    x->cv.wait(lock, [&] { return x->done || x->spilled; });
    *reached = x->spilled || x->head.status != 0;
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
  if (!parent) RemoveHeader(&f.response.headers, kStoredHeader);
  RemoveHeader(&f.response.headers, "x-cache");
  return f;
}

ProxyResponse Proxy::Streamed(const ProxyRequest& req, const Fetched& f, CacheStatus x_cache) {
  ProxyResponse r;
  r.status = f.response.status;
  r.headers = EndToEnd(f.response.headers);
  RemoveHeader(&r.headers, kStoredHeader);
  SetHeader(&r.headers, "X-Cache", std::string(CacheStatusName(x_cache)));
  std::optional<uint64_t> length = ContentLengthOf(f.response.headers);
  if (req.method == "HEAD") {
    f.spool->AbandonIfUnread();
    r.head_length = length;
    r.head_chunked = !length;
    return r;
  }
  r.stream = f.spool->NewReader();
  r.stream_length = length;
  return r;
}

ProxyResponse Proxy::PassThrough(const ProxyRequest& req, const Route& route) {
  counters_.bypass++;
  auto f = Fetch(route, req.method, EndToEnd(req.headers), req.body);
  if (!f.ok()) {
    counters_.errors++;
    return Simple(UpstreamErrorStatus(f.status()), "upstream: " + f.status().ToString(),
                  CacheStatus::kBypass);
  }
  if (f->spool) return Streamed(req, *f, CacheStatus::kBypass);
  ProxyResponse r;
  r.status = f->response.status;
  r.headers = EndToEnd(f->response.headers);
  RemoveHeader(&r.headers, kStoredHeader);
  SetHeader(&r.headers, "X-Cache", std::string(CacheStatusName(CacheStatus::kBypass)));
  if (req.method == "HEAD") {
    r.head_length = f->response.body.size();
  } else {
    r.SetBody(std::move(f->response.body));
  }
  return r;
}

}  // namespace ferry::cache
