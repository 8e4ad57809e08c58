#pragma once
// Google Cloud Storage through its XML API, which speaks S3's protocol to
// clients signing with an HMAC key (SigV4, region "auto"): a gs:// store is
// an S3Store with this configuration. Following boto's and gsutil's names:
//   GS_ACCESS_KEY_ID, GS_SECRET_ACCESS_KEY  the HMAC key (required; the
//       AWS_* variables are never used, so AWS keys are not sent to Google)
//   GS_ENDPOINT_URL  another endpoint (tests, a private endpoint); default
//       https://storage.googleapis.com. Requests are always path-style.
// Pure: the environment comes through an EnvLookup.

#include <string>

#include "base/status.h"
#include "s3/config.h"

namespace ferry::gcs {

inline constexpr char kDefaultEndpoint[] = "https://storage.googleapis.com";
inline constexpr char kRegion[] = "auto";

Result<s3::S3Config> ResolveGcsConfig(const s3::EnvLookup& env);

}  // namespace ferry::gcs
