#include "store/azure/azure_config.h"

#include "base/strings.h"
#include "crypto/digest.h"
#include "http/endpoint.h"

namespace ferry::azure {
namespace {

constexpr char kConnVar[] = "AZURE_STORAGE_CONNECTION_STRING";

// A one-line error about the connection string (append, not operator+:
// GCC 12 warns falsely about the latter).
Status BadConn(std::string_view what) {
  std::string m = kConnVar;
  m += ": ";
  m += what;
  return Status::InvalidArgument(m);
}

std::string Get(const std::map<std::string, std::string>& kv, const char* key) {
  auto it = kv.find(key);
  return it == kv.end() ? "" : it->second;
}

std::string StripQuestionMark(std::string sas) {
  if (!sas.empty() && sas.front() == '?') sas.erase(0, 1);
  return sas;
}

// A usable account key is non-empty base64 (the message never shows it).
Status CheckKey(const std::string& key, const char* where) {
  std::string raw;
  if (!Base64Decode(key, &raw) || raw.empty()) {
    std::string m = where;
    m += ": the account key is not valid base64";
    return Status::InvalidArgument(m);
  }
  return Status::Ok();
}

Status CheckEndpoint(const std::string& url, const char* where) {
  auto e = http::ParseEndpoint(url);
  if (!e.ok()) {
    std::string context = where;
    context += ": BlobEndpoint";
    return e.status().WithContext(context);
  }
  return Status::Ok();
}

// The default endpoint of `account` from the protocol and suffix keys.
Result<std::string> DefaultEndpoint(const std::map<std::string, std::string>& kv,
                                    const std::string& account) {
  std::string protocol = AsciiLower(Get(kv, "defaultendpointsprotocol"));
  if (protocol.empty()) protocol = "https";
  if (protocol != "https" && protocol != "http") {
    return BadConn("DefaultEndpointsProtocol must be http or https");
  }
  std::string suffix = Get(kv, "endpointsuffix");
  if (suffix.empty()) suffix = "core.windows.net";
  return protocol + "://" + account + ".blob." + suffix;
}

}  // namespace

Result<std::map<std::string, std::string>> SplitConnectionString(std::string_view text) {
  std::map<std::string, std::string> kv;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view seg = TrimOws(text.substr(pos, end - pos));
    pos = end + 1;
    if (seg.empty()) continue;
    size_t eq = seg.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      // Only the part before any '=' could be shown safely; show neither.
      return BadConn("malformed (expected Key=Value pairs separated by ';')");
    }
    kv[AsciiLower(TrimOws(seg.substr(0, eq)))] = std::string(TrimOws(seg.substr(eq + 1)));
  }
  return kv;
}

Result<AzureConfig> ParseConnectionString(std::string_view text) {
  FERRY_ASSIGN_OR_RETURN(auto kv, SplitConnectionString(text));
  AzureConfig c;
  c.source = kConnVar;
  if (AsciiLower(Get(kv, "usedevelopmentstorage")) == "true") {
    c.account = kDevAccount;
    c.key = kDevAccountKey;
    c.endpoint_url = Get(kv, "blobendpoint");
    if (c.endpoint_url.empty()) c.endpoint_url = kDevBlobEndpoint;
    FERRY_RETURN_IF_ERROR(CheckEndpoint(c.endpoint_url, kConnVar));
    return c;
  }
  c.account = Get(kv, "accountname");
  c.key = Get(kv, "accountkey");
  if (c.key.empty()) c.sas = StripQuestionMark(Get(kv, "sharedaccesssignature"));
  c.endpoint_url = Get(kv, "blobendpoint");
  if (c.key.empty() && c.sas.empty()) {
    return BadConn("neither AccountKey nor SharedAccessSignature is set");
  }
  if (!c.key.empty()) {
    if (c.account.empty()) {
      return BadConn("AccountKey needs AccountName");
    }
    FERRY_RETURN_IF_ERROR(CheckKey(c.key, kConnVar));
  }
  if (c.endpoint_url.empty()) {
    if (c.account.empty()) {
      return BadConn("needs AccountName or BlobEndpoint");
    }
    FERRY_ASSIGN_OR_RETURN(c.endpoint_url, DefaultEndpoint(kv, c.account));
  }
  FERRY_RETURN_IF_ERROR(CheckEndpoint(c.endpoint_url, kConnVar));
  return c;
}

Result<AzureConfig> ResolveAzureConfig(const std::string& account, const s3::EnvLookup& env) {
  AzureConfig c;
  if (auto conn = env(kConnVar); conn && !conn->empty()) {
    FERRY_ASSIGN_OR_RETURN(c, ParseConnectionString(*conn));
    if (c.account.empty()) c.account = account;  // a SAS with a BlobEndpoint
  } else {
    c.account = env("AZURE_STORAGE_ACCOUNT").value_or("");
    if (c.account.empty()) c.account = account;
    std::string sas = StripQuestionMark(env("AZURE_STORAGE_SAS_TOKEN").value_or(""));
    std::string key = env("AZURE_STORAGE_KEY").value_or("");
    if (!sas.empty()) {
      c.sas = sas;
      c.source = "AZURE_STORAGE_SAS_TOKEN";
    } else if (!key.empty()) {
      c.key = key;
      c.source = "AZURE_STORAGE_KEY";
      FERRY_RETURN_IF_ERROR(CheckKey(c.key, "AZURE_STORAGE_KEY"));
    } else {
      return Status::AccessDenied(
          "no Azure credentials: set AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT "
          "with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN");
    }
    c.endpoint_url = "https://" + c.account + ".blob.core.windows.net";
  }
  if (!account.empty() && c.account != account) {
    return Status::InvalidArgument("the credentials (" + c.source + ") are for account " +
                                   c.account + ", not " + account);
  }
  return c;
}

}  // namespace ferry::azure
