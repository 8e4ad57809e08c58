#include "s3/sigv4.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <memory>

#include "base/strings.h"
#include "crypto/digest.h"

namespace ferry::s3 {

const std::string* FindValue(const KeyValues& values, std::string_view name) {
  for (const auto& [k, v] : values) {
    if (k == name) return &v;
  }
  return nullptr;
}
namespace {

bool IsUnreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

// Trims and folds inner runs of spaces, as SigV4 requires of header values.
std::string FoldSpaces(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string UriEncode(std::string_view in, bool encode_slash) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size() * 3 / 2);
  for (unsigned char c : in) {
    if (IsUnreserved(c) || (c == '/' && !encode_slash)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

bool UriDecode(std::string_view in, std::string* out) {
  std::string r;
  r.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      r += in[i];
      continue;
    }
    if (i + 2 >= in.size()) return false;
    int hi = HexVal(in[i + 1]), lo = HexVal(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    r += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  *out = std::move(r);
  return true;
}

std::string CanonicalQuery(const KeyValues& query) {
  std::vector<std::pair<std::string, std::string>> enc;
  enc.reserve(query.size());
  for (const auto& [k, v] : query) enc.emplace_back(UriEncode(k, true), UriEncode(v, true));
  std::sort(enc.begin(), enc.end());
  std::string out;
  for (const auto& [k, v] : enc) {
    if (!out.empty()) out += '&';
    out += k;
    out += '=';
    out += v;
  }
  return out;
}

std::string CanonicalRequest(const RequestToSign& req,
                             const std::vector<std::string>& signed_headers) {
  std::string out;
  out.reserve(512);
  out += req.method;
  out += '\n';
  out += UriEncode(req.path.empty() ? "/" : req.path, false);
  out += '\n';
  out += CanonicalQuery(req.query);
  out += '\n';
  std::string names;
  for (const auto& name : signed_headers) {
    std::string value;
    bool first = true;
    for (const auto& [k, v] : req.headers) {
      if (!EqualsIgnoreCase(k, name)) continue;
      if (!first) value += ',';
      value += FoldSpaces(v);
      first = false;
    }
    out += name;
    out += ':';
    out += value;
    out += '\n';
    if (!names.empty()) names += ';';
    names += name;
  }
  out += '\n';
  out += names;
  out += '\n';
  out += req.payload_hash;
  return out;
}

std::string CredentialScope(std::string_view date, std::string_view region,
                            std::string_view service) {
  std::string s(date);
  s += '/';
  s += region;
  s += '/';
  s += service;
  s += "/aws4_request";
  return s;
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  std::string s = "AWS4-HMAC-SHA256\n";
  s += amz_date;
  s += '\n';
  s += scope;
  s += '\n';
  s += HexLower(Sha256(canonical_request));
  return s;
}

std::string SigningKey(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service) {
  std::string k = "AWS4";
  k += secret;
  std::string k_date = AsBytes(HmacSha256(k, date));
  std::string k_region = AsBytes(HmacSha256(k_date, region));
  std::string k_service = AsBytes(HmacSha256(k_region, service));
  return AsBytes(HmacSha256(k_service, "aws4_request"));
}

std::string ComputeSignature(std::string_view secret, std::string_view date,
                             std::string_view region, std::string_view service,
                             std::string_view string_to_sign) {
  // The derived key changes once a day per credential: keep the last one
  // per thread (four HMACs saved on every request).
  struct Cached {
    std::string secret, date, region, service;
    std::unique_ptr<HmacSha256Key> key;
  };
  thread_local Cached cache;
  if (!cache.key || cache.secret != secret || cache.date != date || cache.region != region ||
      cache.service != service) {
    // The key first: if making it throws, the cache still describes the
    // key it holds.
    auto key = std::make_unique<HmacSha256Key>(SigningKey(secret, date, region, service));
    cache.key.reset();
    cache.secret = secret;
    cache.date = date;
    cache.region = region;
    cache.service = service;
    cache.key = std::move(key);
  }
  return HexLower(cache.key->Mac(string_to_sign));
}

void SignRequest(RequestToSign& req, const Credentials& creds, std::string_view region,
                 std::string_view amz_date, std::string_view service) {
  auto set = [&req](std::string_view name, std::string value) {
    for (auto& [k, v] : req.headers) {
      if (EqualsIgnoreCase(k, name)) {
        v = std::move(value);
        return;
      }
    }
    req.headers.emplace_back(std::string(name), std::move(value));
  };
  set("x-amz-date", std::string(amz_date));
  set("x-amz-content-sha256", req.payload_hash);
  if (!creds.session_token.empty()) set("x-amz-security-token", creds.session_token);

  std::vector<std::string> names;
  for (const auto& [k, v] : req.headers) {
    std::string n = AsciiLower(k);
    if (n == "authorization") continue;
    names.push_back(std::move(n));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());

  std::string date(amz_date.substr(0, 8));
  std::string scope = CredentialScope(date, region, service);
  std::string sts = StringToSign(amz_date, scope, CanonicalRequest(req, names));
  std::string sig = ComputeSignature(creds.secret_access_key, date, region, service, sts);

  std::string auth = "AWS4-HMAC-SHA256 Credential=";
  auth += creds.access_key_id;
  auth += '/';
  auth += scope;
  auth += ", SignedHeaders=";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) auth += ';';
    auth += names[i];
  }
  auth += ", Signature=";
  auth += sig;
  set("authorization", std::move(auth));
}

Result<AuthorizationHeader> ParseAuthorization(std::string_view value) {
  constexpr std::string_view kAlgo = "AWS4-HMAC-SHA256";
  if (value.substr(0, kAlgo.size()) != kAlgo) {
    return Status::AccessDenied("unsupported authorization scheme");
  }
  AuthorizationHeader h;
  std::string_view rest = value.substr(kAlgo.size());
  std::string credential, signed_headers;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    size_t eq = part.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view k = part.substr(0, eq), v = part.substr(eq + 1);
    if (k == "Credential")
      credential = v;
    else if (k == "SignedHeaders")
      signed_headers = v;
    else if (k == "Signature")
      h.signature = v;
  }
  // Credential=AKID/date/region/service/aws4_request
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t slash = credential.find('/', start);
    parts.push_back(credential.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 5 || parts[4] != "aws4_request" || h.signature.empty() ||
      signed_headers.empty()) {
    return Status::AccessDenied("malformed authorization header");
  }
  h.access_key_id = parts[0];
  h.date = parts[1];
  h.region = parts[2];
  h.service = parts[3];
  start = 0;
  for (;;) {
    size_t semi = signed_headers.find(';', start);
    h.signed_headers.push_back(signed_headers.substr(start, semi - start));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return h;
}

std::string AmzDateNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace ferry::s3
