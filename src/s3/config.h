#pragma once
// Where an S3 client's credentials, region and endpoint come from, following
// the AWS CLI's conventions:
//   credentials: an explicit profile's keys; else AWS_ACCESS_KEY_ID /
//     AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN; else the profile named by
//     AWS_PROFILE (or "default") in the shared credentials file, then in the
//     config file.
//   region: AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`, else
//     us-east-1.
//   endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's
//     `endpoint_url` (top level or in an `s3 =` block); "" means AWS.
//   CA bundle: AWS_CA_BUNDLE, else the profile's `ca_bundle`.
// Files: AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials) and
// AWS_CONFIG_FILE (default ~/.aws/config, sections "[profile NAME]").
//
// The environment is read through a lookup function so tests supply their
// own. Secrets are never put into a Status message.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "s3/sigv4.h"

namespace ferry::s3 {

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup ProcessEnv();  // getenv

struct S3Config {
  Credentials credentials;
  std::string region;
  std::string endpoint_url;  // "" = AWS public endpoints
  std::string ca_bundle;     // "" = system trust store
  std::string profile;       // the profile that was used, for messages
};

// `profile`: "" unless the user chose one on the command line.
Result<S3Config> ResolveS3Config(const std::string& profile, const EnvLookup& env);

// INI sections of an AWS shared file: section -> key -> value. Nested
// blocks ("s3 =" followed by indented lines) become "s3.key". Exposed for tests.
using IniFile = std::map<std::string, std::map<std::string, std::string>>;
IniFile ParseIni(std::string_view text);

}  // namespace ferry::s3
