#include "volume/http_chunk_source.h"

#include "http/client.h"
#include "store/stream.h"

namespace ferry::volume {

struct HttpChunkSource::Impl {
  http::Endpoint endpoint;
  std::string base;  // "" or "/path"
  std::unique_ptr<http::Client> client;
};

HttpChunkSource::~HttpChunkSource() = default;

Result<std::unique_ptr<HttpChunkSource>> HttpChunkSource::Create(const std::string& url,
                                                                 RepositorySourceOptions options) {
  std::string path;
  FERRY_ASSIGN_OR_RETURN(http::Endpoint ep, http::ParseEndpoint(url, &path));
  while (!path.empty() && path.back() == '/') path.pop_back();
  std::unique_ptr<HttpChunkSource> s(new HttpChunkSource());
  s->impl_ = std::make_unique<Impl>();
  s->impl_->endpoint = ep;
  s->impl_->base = path.empty() || path.front() == '/' ? path : "/" + path;
  http::ClientOptions co;
  co.io_timeout = std::chrono::milliseconds(std::min<int64_t>(options.deadline.count(), 60'000));
  s->impl_->client = std::make_unique<http::Client>(co);
  s->options_ = options;
  return s;
}

Result<std::string> HttpChunkSource::Fetch(const std::string& hash, bool) {
  return FetchChecked(
      [&]() -> Result<std::string> {
        http::Request r;
        r.target = impl_->base + "/chunks/" + hash.substr(0, 2) + "/" + hash;
        StringSink sink;
        auto resp = impl_->client->Send(impl_->endpoint, r, &sink);
        if (!resp.ok()) return resp.status();
        if (resp->status == 404) return Status(ErrorCode::kNotFound, "chunk " + hash.substr(0, 12) + ": 404 from the cache");
        if (resp->status == 429 || resp->status == 503) return Status(ErrorCode::kThrottled, "cache answered " + std::to_string(resp->status));
        if (resp->status >= 500) return Status(ErrorCode::kServerError, "cache answered " + std::to_string(resp->status));
        if (resp->status != 200) {
          return Status(ErrorCode::kProtocol, "cache answered " + std::to_string(resp->status));
        }
        return std::move(sink.data());
      },
      hash, options_, &fetches_);
}


}  // namespace ferry::volume
