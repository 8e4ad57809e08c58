#pragma once
// The S3 backend: ObjectStore over the S3 REST API with Signature V4.
//
// Addressing: path-style (http(s)://endpoint/bucket/key) for a custom
// endpoint, virtual-hosted style (https://bucket.s3.REGION.amazonaws.com/key)
// for AWS itself. Every call is retried under RetryPolicy when its error is
// retryable; bodies are rewound for the retry, and an interrupted GET resumes
// from the last byte delivered (If-Match on the ETag, so a changed object is
// an error, not a splice). Uploaded bodies are hashed as they stream and the
// returned ETag is checked against the MD5 when it is one.

#include <memory>
#include <string>

#include "engine/retry.h"
#include "http/client.h"
#include "s3/config.h"
#include "store/object_store.h"
#include "store/request_hooks.h"

namespace ferry {

struct S3StoreOptions {
  std::string bucket;
  std::string scheme = "s3";  // how Describe() names the store: "s3", or "gs" for GCS
  s3::S3Config config;
  RetryPolicy retry;
  http::ClientOptions http;  // ca_file defaults to config.ca_bundle
  // Shared connection pool; one is created when null.
  std::shared_ptr<http::Client> client;
  // Called around every attempt of every request; may be null.
  std::shared_ptr<RequestHooks> hooks;
};

Result<std::unique_ptr<ObjectStore>> OpenS3Store(S3StoreOptions options);

}  // namespace ferry
