#include "store/open/open.h"

#include "store/azure/azure_config.h"
#include "store/azure/azure_store.h"
#include "store/gcs/gcs_config.h"
#include "store/local/local_store.h"
#include "store/s3/s3_store.h"

namespace ferry {
namespace {

Result<std::unique_ptr<ObjectStore>> OpenAzure(const Location& loc, const OpenOptions& o) {
  FERRY_ASSIGN_OR_RETURN(azure::AzureConfig cfg, azure::ResolveAzureConfig(loc.account, o.env));
  AzureStoreOptions ao;
  ao.container = loc.bucket;
  ao.config = std::move(cfg);
  ao.http = o.http;
  ao.retry = o.retry;
  ao.hooks = o.hooks;
  return OpenAzureStore(std::move(ao));
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenStore(const Location& loc, const OpenOptions& o) {
  switch (loc.kind) {
    case Location::Kind::kLocal: {
      LocalStoreOptions lo;
      lo.create_if_missing = o.create_local;
      return OpenLocalStore(loc.path, lo);
    }
    case Location::Kind::kAzure:
      return OpenAzure(loc, o);
    case Location::Kind::kS3:
    case Location::Kind::kGcs:
      break;
  }
  S3StoreOptions so;
  if (loc.is_gcs()) {
    FERRY_ASSIGN_OR_RETURN(so.config, gcs::ResolveGcsConfig(o.env));
    so.scheme = "gs";
  } else {
    FERRY_ASSIGN_OR_RETURN(so.config, s3::ResolveS3Config(o.profile, o.env));
  }
  so.bucket = loc.bucket;
  so.http = o.http;
  so.retry = o.retry;
  so.hooks = o.hooks;
  return OpenS3Store(std::move(so));
}

std::string StoreIdentity(const Location& loc, const OpenOptions& o) {
  switch (loc.kind) {
    case Location::Kind::kLocal:
      return "file:" + loc.path;
    case Location::Kind::kAzure: {
      auto cfg = azure::ResolveAzureConfig(loc.account, o.env);
      return "azure:" + (cfg.ok() ? cfg->endpoint_url : "?") + "|" + loc.account + "|" + loc.bucket;
    }
    case Location::Kind::kGcs: {
      auto cfg = gcs::ResolveGcsConfig(o.env);
      return "gs:" + (cfg.ok() ? cfg->endpoint_url : "?") + "|" + loc.bucket;
    }
    case Location::Kind::kS3:
      break;
  }
  auto cfg = s3::ResolveS3Config(o.profile, o.env);
  std::string endpoint = cfg.ok() ? cfg->endpoint_url + "|" + cfg->region : "?";
  return "s3:" + endpoint + "|" + loc.bucket;
}

}  // namespace ferry
