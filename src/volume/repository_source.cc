#include "volume/repository_source.h"

#include <random>
#include <thread>

#include "crypto/digest.h"
#include "http/client.h"
#include "store/stream.h"

namespace ferry::volume {

Result<std::string> FetchChecked(const std::function<Result<std::string>()>& once, const std::string& hash,
                                 const RepositorySourceOptions& options, std::atomic<uint64_t>* attempts,
                                 bool once_verifies) {
  auto until = std::chrono::steady_clock::now() + options.deadline;
  auto backoff = options.first_backoff;
  thread_local std::mt19937_64 rng(std::random_device{}());
  int corrupt = 0;
  for (;;) {
    (*attempts)++;
    auto got = once();
    if (got.ok() && !once_verifies && HexLower(Sha256(*got)) != hash) {
      got = Status::Corruption("chunk " + hash.substr(0, 12) + " does not hash to its name");
    }
    if (got.ok()) return got;
    Status st = got.status();
    if (st.code() == ErrorCode::kCorruption) {
      if (++corrupt >= 2) return st;
      continue;  // refetch once at once
    }
    if (!st.retryable()) return st;
    auto wait = std::chrono::milliseconds(
        std::uniform_int_distribution<int64_t>(0, backoff.count())(rng));  // full jitter
    if (std::chrono::steady_clock::now() + wait >= until) {
      return Status(ErrorCode::kTimeout, "chunk " + hash.substr(0, 12) + ": " + st.ToString());
    }
    std::this_thread::sleep_for(wait);
    backoff = std::min(backoff * 2, options.max_backoff);
  }
}

Result<std::string> RepositorySource::Fetch(const std::string& hash, bool) {
  // GetChunk checks the hash itself.
  return FetchChecked([&] { return repo_->GetChunk(hash); }, hash, options_, &fetches_, true);
}


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
