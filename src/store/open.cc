#include "store/open.h"

#include "store/local/local_store.h"
#include "store/s3/s3_store.h"

namespace ferry {

Result<std::unique_ptr<ObjectStore>> OpenStore(const Location& loc, const OpenOptions& o) {
  if (!loc.is_s3()) {
    LocalStoreOptions lo;
    lo.create_if_missing = o.create_local;
    return OpenLocalStore(loc.path, lo);
  }
  FERRY_ASSIGN_OR_RETURN(s3::S3Config cfg, s3::ResolveS3Config(o.profile, o.env));
  S3StoreOptions so;
  so.bucket = loc.bucket;
  so.config = std::move(cfg);
  so.http = o.http;
  so.retry = o.retry;
  so.hooks = o.hooks;
  return OpenS3Store(std::move(so));
}

std::string StoreIdentity(const Location& loc, const OpenOptions& o) {
  if (!loc.is_s3()) return "file:" + loc.path;
  auto cfg = s3::ResolveS3Config(o.profile, o.env);
  std::string endpoint = cfg.ok() ? cfg->endpoint_url + "|" + cfg->region : "?";
  return "s3:" + endpoint + "|" + loc.bucket;
}

}  // namespace ferry
