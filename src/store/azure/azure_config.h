#pragma once
// Where an Azure Blob Storage client's account, credentials and endpoint come
// from, following the Azure CLI's and azcopy's environment conventions:
//   AZURE_STORAGE_CONNECTION_STRING  when set, the only source (the two
//       below are then ignored, as the Azure CLI does). Keys (case-blind):
//       AccountName, AccountKey, SharedAccessSignature, BlobEndpoint,
//       DefaultEndpointsProtocol (https), EndpointSuffix (core.windows.net),
//       UseDevelopmentStorage=true (Azurite's well-known account
//       devstoreaccount1 at http://127.0.0.1:10000/devstoreaccount1; a
//       BlobEndpoint beside it moves it). Other keys (TableEndpoint...) are
//       ignored. With both AccountKey and SharedAccessSignature the key wins.
//   AZURE_STORAGE_ACCOUNT + AZURE_STORAGE_KEY  Shared Key.
//   AZURE_STORAGE_SAS_TOKEN  a SAS (with or without the leading '?'); it is
//       used instead of AZURE_STORAGE_KEY when both are set, as the CLI does.
// The endpoint is https://ACCOUNT.blob.core.windows.net unless a connection
// string says otherwise. The account in the location (azure://ACCOUNT/...)
// must be the configured one when the configuration names one.
//
// Pure: the environment comes through an EnvLookup. No Status message ever
// carries a key or a SAS.

#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "s3/config.h"

namespace ferry::azure {

// The well-known Azurite (storage emulator) account.
inline constexpr char kDevAccount[] = "devstoreaccount1";
inline constexpr char kDevAccountKey[] =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
inline constexpr char kDevBlobEndpoint[] = "http://127.0.0.1:10000/devstoreaccount1";

struct AzureConfig {
  std::string account;
  std::string key;           // base64 account key; "" when a SAS is used
  std::string sas;           // SAS query, without '?'; "" with Shared Key
  std::string endpoint_url;  // "https://acct.blob.core.windows.net" or BlobEndpoint
  std::string source;        // which variable it came from, for messages
};

// Connection string "k1=v1;k2=v2": keys lower-cased, values as given (they
// may hold '='). kInvalidArgument for a segment without '=' or an empty key.
Result<std::map<std::string, std::string>> SplitConnectionString(std::string_view text);

// A whole connection string into a config (account, credentials, endpoint).
Result<AzureConfig> ParseConnectionString(std::string_view text);

// `account`: from the location (azure://ACCOUNT/...).
Result<AzureConfig> ResolveAzureConfig(const std::string& account, const s3::EnvLookup& env);

}  // namespace ferry::azure
