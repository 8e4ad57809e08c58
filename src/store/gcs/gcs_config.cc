#include "store/gcs/gcs_config.h"

namespace ferry::gcs {

Result<s3::S3Config> ResolveGcsConfig(const s3::EnvLookup& env) {
  s3::S3Config c;
  c.credentials.access_key_id = env("GS_ACCESS_KEY_ID").value_or("");
  c.credentials.secret_access_key = env("GS_SECRET_ACCESS_KEY").value_or("");
  if (c.credentials.access_key_id.empty() || c.credentials.secret_access_key.empty()) {
    return Status::AccessDenied(
        "no GCS credentials: set GS_ACCESS_KEY_ID and GS_SECRET_ACCESS_KEY (an HMAC key)");
  }
  c.region = kRegion;
  c.endpoint_url = env("GS_ENDPOINT_URL").value_or("");
  if (c.endpoint_url.empty()) c.endpoint_url = kDefaultEndpoint;
  return c;
}

}  // namespace ferry::gcs
