#pragma once
// One container's requests to the Blob service: builds the URL (path-style
// under the endpoint's path, e.g. Azurite's /devstoreaccount1), stamps
// x-ms-date and x-ms-version, authorizes (Shared Key signature, or the SAS
// appended to the query), sends through http::Client, classifies any error
// (azure_errors.h) and retries what is retryable under the RetryPolicy,
// rewinding the body. RequestHooks are called around every attempt.
// Thread-safe; blocking.

#include <functional>
#include <memory>
#include <string>

#include "engine/retry.h"
#include "http/client.h"
#include "s3/sigv4.h"
#include "store/azure/azure_config.h"
#include "store/request_hooks.h"

namespace ferry::azure {

// The Blob service REST version ferry speaks (Azurite 3.35 accepts it).
inline constexpr char kApiVersion[] = "2021-08-06";

struct AzureCall {
  std::string method;
  std::string blob;  // "" for a container request
  s3::KeyValues query;
  http::Headers headers;
  ByteSource* body = nullptr;
  uint64_t body_size = 0;
  std::function<Status(const http::Response&)> check_headers;  // see http::Request
};

class AzureRequester {
 public:
  static Result<std::unique_ptr<AzureRequester>> Make(AzureConfig config, std::string container,
                                                      std::shared_ptr<http::Client> client,
                                                      std::shared_ptr<RequestHooks> hooks,
                                                      RetryPolicy retry);

  // One attempt. A non-2xx answer becomes its classified Status. `seen`,
  // when given, keeps the answer's headers even if its body fails.
  Result<http::Response> Once(const AzureCall& c, ByteSink* sink, http::Response* seen = nullptr);
  // Once() under the retry policy (calls with a sink are not retried here).
  Result<http::Response> Run(const AzureCall& c, ByteSink* sink = nullptr);
  // Waits out the backoff after failed attempt `attempt` (cut short by
  // CancelRequested()).
  void Backoff(const Status& s, int attempt) const;

  const RetryPolicy& retry() const { return retry_; }
  const std::string& container() const { return container_; }
  const AzureConfig& config() const { return config_; }
  // The URL path of `blob` in this container, decoded ("/acct/c/a b" for a
  // path-style endpoint): what x-ms-copy-source names.
  std::string BlobUrl(std::string_view blob) const;

 private:
  AzureRequester() = default;
  http::Request Prepare(const AzureCall& c) const;

  AzureConfig config_;
  std::string container_;
  http::Endpoint endpoint_;
  std::string base_path_;  // the endpoint's path without a trailing '/'
  std::string raw_key_;    // decoded account key; "" with a SAS
  std::shared_ptr<http::Client> client_;
  std::shared_ptr<RequestHooks> hooks_;
  RetryPolicy retry_;
};

}  // namespace ferry::azure
