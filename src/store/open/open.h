#pragma once
// Opens the ObjectStore a Location names: an S3 bucket (configured from the
// environment and shared AWS files, see s3/config.h), a GCS bucket (the S3
// store on GCS's XML API, store/gcs/gcs_config.h), an Azure container
// (store/azure/azure_config.h) or a local directory.

#include <memory>
#include <string>

#include "base/status.h"
#include "engine/retry.h"
#include "http/client.h"
#include "s3/config.h"
#include "store/location.h"
#include "store/object_store.h"
#include "store/request_hooks.h"

namespace ferry {

struct OpenOptions {
  std::string profile;  // AWS profile for S3 locations; "" = environment/default
  s3::EnvLookup env = s3::ProcessEnv();
  http::ClientOptions http;
  RetryPolicy retry;
  bool create_local = false;  // create a missing local directory
  // Called around every request of an S3 store (pacing, health); may be null.
  std::shared_ptr<RequestHooks> hooks;
};

// For remote locations the store is the bucket or container (the location's
// key is left to the caller). For local ones it is the directory `loc.path`.
Result<std::unique_ptr<ObjectStore>> OpenStore(const Location& loc, const OpenOptions& o);

// Identifies a store's kind, endpoint and bucket (account and container), so
// two locations can tell whether a server-side copy between them is possible.
std::string StoreIdentity(const Location& loc, const OpenOptions& o);

}  // namespace ferry
