#include "store/azure/azure_requester.h"

#include <chrono>
#include <random>
#include <thread>

#include "base/cancel.h"
#include "crypto/digest.h"
#include "http/date.h"
#include "store/azure/azure_errors.h"
#include "store/azure/shared_key.h"

namespace ferry::azure {

Result<std::unique_ptr<AzureRequester>> AzureRequester::Make(AzureConfig config,
                                                             std::string container,
                                                             std::shared_ptr<http::Client> client,
                                                             std::shared_ptr<RequestHooks> hooks,
                                                             RetryPolicy retry) {
  std::unique_ptr<AzureRequester> r(new AzureRequester());
  FERRY_ASSIGN_OR_RETURN(r->endpoint_, http::ParseEndpoint(config.endpoint_url, &r->base_path_));
  while (!r->base_path_.empty() && r->base_path_.back() == '/') r->base_path_.pop_back();
  if (!config.key.empty() && (!Base64Decode(config.key, &r->raw_key_) || r->raw_key_.empty())) {
    return Status::InvalidArgument(config.source + ": the account key is not valid base64");
  }
  r->config_ = std::move(config);
  r->container_ = std::move(container);
  r->client_ = std::move(client);
  r->hooks_ = std::move(hooks);
  r->retry_ = retry;
  return r;
}

std::string AzureRequester::BlobUrl(std::string_view blob) const {
  std::string path = base_path_ + "/" + container_;
  if (!blob.empty()) path += "/" + std::string(blob);
  return path;
}

http::Request AzureRequester::Prepare(const AzureCall& c) const {
  std::string path = s3::UriEncode(BlobUrl(c.blob), false);
  http::Request hr;
  hr.method = c.method;
  hr.headers = c.headers;
  auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  hr.headers.emplace_back("x-ms-date", http::FormatHttpDate(now));
  hr.headers.emplace_back("x-ms-version", kApiVersion);
  // Azure wants a length on every PUT; the client sends it with a body.
  if (c.body == nullptr && c.method == "PUT") hr.headers.emplace_back("Content-Length", "0");
  hr.target = path;
  std::string q = s3::CanonicalQuery(c.query);
  if (!config_.sas.empty()) q += (q.empty() ? "" : "&") + config_.sas;
  if (!q.empty()) hr.target += "?" + q;
  if (!raw_key_.empty()) {
    SharedKeyRequest sk;
    sk.method = c.method;
    sk.path = path;
    sk.query = c.query;
    sk.headers = hr.headers;
    if (c.body != nullptr) sk.headers.emplace_back("Content-Length", std::to_string(c.body_size));
    hr.headers.emplace_back("Authorization",
                            SharedKeyAuthorization(config_.account, raw_key_, sk));
  }
  hr.body = c.body;
  hr.body_size = c.body_size;
  hr.check_headers = c.check_headers;
  return hr;
}

Result<http::Response> AzureRequester::Once(const AzureCall& c, ByteSink* sink,
                                            http::Response* seen) {
  if (hooks_) {
    auto delay = hooks_->BeforeRequest();
    if (delay > std::chrono::nanoseconds(0)) std::this_thread::sleep_for(delay);
  }
  http::Request req = Prepare(c);
  http::Response local;
  http::Response* resp = seen ? seen : &local;
  Status sent = client_->Send(endpoint_, req, sink, resp);
  Result<http::Response> r = sent.ok() ? Result<http::Response>(*resp) : Result<http::Response>(sent);
  if (r.ok() && (r->status < 200 || r->status >= 300)) r = ErrorFromResponse(*r);
  if (hooks_) hooks_->AfterRequest(r.status());
  return r;
}

Result<http::Response> AzureRequester::Run(const AzureCall& c, ByteSink* sink) {
  for (int attempt = 1;; ++attempt) {
    auto r = Once(c, sink);
    if (r.ok()) return r;
    // Rewound only for a retry, so a caller can still look at what was sent.
    if (sink != nullptr || !ShouldRetry(retry_, r.status(), attempt)) return r;
    if (c.body != nullptr && !c.body->Rewind().ok()) return r;
    Backoff(r.status(), attempt);
  }
}

void AzureRequester::Backoff(const Status& s, int attempt) const {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  auto until = std::chrono::steady_clock::now() + BackoffDelay(retry_, s, attempt, r);
  while (std::chrono::steady_clock::now() < until && !CancelRequested()) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(50), until - std::chrono::steady_clock::now()));
  }
}

}  // namespace ferry::azure
