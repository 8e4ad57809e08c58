#include "s3/xml.h"

#include <algorithm>
#include <boost/property_tree/ptree.hpp>
#include <charconv>
#include <cstdio>
#include <ctime>

#include "base/strings.h"
#include "base/unix_time.h"
#include "crypto/checksum.h"
#include "s3/flexible_checksum.h"
#include "s3/sigv4.h"
#include "s3/sigv4_verify.h"
#include "s3/xml_tree.h"

namespace ferry::s3 {
namespace {

namespace pt = boost::property_tree;

std::string Text(const pt::ptree& node, const char* name) {
  return node.get<std::string>(name, "");
}

// Decodes encoding-type=url values: %XX escapes, '+' for space.
std::string UrlDecodeValue(const std::string& v) {
  std::string plus = v;
  for (auto& c : plus)
    if (c == '+') c = ' ';
  std::string out;
  if (!UriDecode(plus, &out)) return v;
  return out;
}

// An <Error> inside a 200 answer (the server failed after its status line):
// retryable for the transient codes, permanent otherwise.
Status EmbeddedError(const ErrorDocument& err, const std::string& what) {
  bool transient = err.code == "InternalError" || err.code == "SlowDown" ||
                   err.code == "ServiceUnavailable" || err.code == "RequestTimeout";
  Status s(transient ? ErrorCode::kServerError : ErrorCode::kInvalidArgument,
           what + " failed: " + (err.message.empty() ? err.code : err.message));
  s.set_remote(200, err.code);
  s.set_retryable(transient);
  return s;
}

}  // namespace

bool ParseIso8601(std::string_view s, TimePoint* out) {
  std::tm tm{};
  int frac_ms = 0;
  if (s.size() < 19) return false;
  std::string str(s);
  if (std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6) {
    return false;
  }
  if (s.size() > 20 && s[19] == '.') {
    std::from_chars(str.data() + 20, str.data() + std::min<size_t>(23, str.size()), frac_ms);
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::time_t t = timegm(&tm);
  if (frac_ms < 0 || frac_ms > 999) frac_ms = 0;
  using std::chrono::seconds;
  *out = ClampedTimePoint(std::chrono::sys_seconds(seconds(t)));
  if (*out < TimePoint::max() - seconds(2)) *out += std::chrono::milliseconds(frac_ms);
  return true;
}

std::string Unquote(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

std::string XmlEscape(std::string_view in) {
  std::string out;
  out.reserve(in.size() + in.size() / 8);
  for (char ch : in) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "&#x%X;", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

bool ParseError(std::string_view xml, ErrorDocument* out) {
  if (xml.find("<Error") == std::string_view::npos) return false;
  pt::ptree tree;
  if (!ParseXmlTree(xml, "error", &tree).ok()) return false;
  auto root = tree.find("Error");
  if (root == tree.not_found()) return false;
  out->code = Text(root->second, "Code");
  out->message = Text(root->second, "Message");
  return !out->code.empty();
}

Result<ListPage> ParseListObjectsV2(std::string_view xml) {
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(ParseXmlTree(xml, "ListObjectsV2", &tree));
  FERRY_ASSIGN_OR_RETURN(const pt::ptree* root, XmlRoot(tree, "ListBucketResult", "ListObjectsV2"));
  bool url = Text(*root, "EncodingType") == "url";
  auto decode = [url](std::string v) { return url ? UrlDecodeValue(v) : v; };
  ListPage page;
  page.truncated = Text(*root, "IsTruncated") == "true";
  page.next_continuation_token = Text(*root, "NextContinuationToken");
  for (const auto& [name, child] : *root) {
    if (name == "Contents") {
      ObjectInfo info;
      info.key = decode(Text(child, "Key"));
      info.etag = Unquote(Text(child, "ETag"));
      std::string size = Text(child, "Size");
      auto [p, ec] = std::from_chars(size.data(), size.data() + size.size(), info.size);
      if (ec != std::errc()) return Status::Protocol("ListObjectsV2: bad <Size> for " + info.key);
      ParseIso8601(Text(child, "LastModified"), &info.last_modified);
      page.objects.push_back(std::move(info));
    } else if (name == "CommonPrefixes") {
      page.common_prefixes.push_back(decode(Text(child, "Prefix")));
    }
  }
  if (page.truncated && page.next_continuation_token.empty()) {
    return Status::Protocol("ListObjectsV2: truncated page without NextContinuationToken");
  }
  return page;
}

Result<std::string> ParseInitiateMultipartUpload(std::string_view xml) {
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(ParseXmlTree(xml, "InitiateMultipartUpload", &tree));
  FERRY_ASSIGN_OR_RETURN(const pt::ptree* root,
                         XmlRoot(tree, "InitiateMultipartUploadResult", "CreateMultipartUpload"));
  std::string id = Text(*root, "UploadId");
  if (id.empty()) return Status::Protocol("CreateMultipartUpload: no UploadId");
  return id;
}

Result<std::string> ParseCompleteMultipartUpload(std::string_view xml) {
  ErrorDocument err;
  if (ParseError(xml, &err)) return EmbeddedError(err, "complete multipart upload");
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(ParseXmlTree(xml, "CompleteMultipartUpload", &tree));
  FERRY_ASSIGN_OR_RETURN(const pt::ptree* root,
                         XmlRoot(tree, "CompleteMultipartUploadResult", "CompleteMultipartUpload"));
  return Unquote(Text(*root, "ETag"));
}

namespace {

// The Checksum<ALG> element of `node`, if any.
std::optional<ObjectChecksum> ChecksumElement(const pt::ptree& node, ChecksumType type) {
  for (ChecksumAlgorithm a : kChecksumAlgorithms) {
    const std::string tag = "Checksum" + std::string(ChecksumAlgorithmName(a));
    if (std::string v = Text(node, tag.c_str()); !v.empty())
      return ObjectChecksum{a, std::move(v), type};
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<PartInfo>> ParseListParts(std::string_view xml, bool* truncated,
                                             int* next_marker) {
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(ParseXmlTree(xml, "ListParts", &tree));
  FERRY_ASSIGN_OR_RETURN(const pt::ptree* root, XmlRoot(tree, "ListPartsResult", "ListParts"));
  *truncated = Text(*root, "IsTruncated") == "true";
  *next_marker = root->get<int>("NextPartNumberMarker", 0);
  std::vector<PartInfo> parts;
  for (const auto& [name, child] : *root) {
    if (name != "Part") continue;
    PartInfo p;
    p.number = child.get<int>("PartNumber", 0);
    if (p.number < 1 || p.number > 10000) {
      return Status::Corruption("ListParts: part number '" + Text(child, "PartNumber") +
                                "' is not 1..10000");
    }
    p.etag = Unquote(Text(child, "ETag"));
    p.size = child.get<uint64_t>("Size", 0);
    p.checksum = ChecksumElement(child, ChecksumType::kComposite);
    parts.push_back(std::move(p));
  }
  return parts;
}

Result<std::vector<std::string>> ParseObjectAttributeNames(std::string_view list) {
  static constexpr std::string_view kKnown[] = {"ETag", "Checksum", "ObjectParts", "StorageClass",
                                                "ObjectSize"};
  std::vector<std::string> wanted;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = TrimOws(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty()) continue;
    if (std::find(std::begin(kKnown), std::end(kKnown), item) == std::end(kKnown)) {
      return S3ErrorStatus(400, "InvalidArgument",
                           "Invalid attribute name specified: " + std::string(item));
    }
    wanted.emplace_back(item);
  }
  if (wanted.empty()) {
    return S3ErrorStatus(400, "InvalidRequest",
                         "The x-amz-object-attributes header specifying the attributes to be "
                         "retrieved is either missing or empty");
  }
  return wanted;
}

Status ParseObjectAttributes(std::string_view xml, ObjectAttributes* out, bool* truncated,
                             int* next_marker) {
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(ParseXmlTree(xml, "GetObjectAttributes", &tree));
  FERRY_ASSIGN_OR_RETURN(const pt::ptree* root,
                         XmlRoot(tree, "GetObjectAttributesResponse", "GetObjectAttributes"));
  if (auto etag = root->get_optional<std::string>("ETag")) out->info.etag = Unquote(*etag);
  out->info.size = root->get<uint64_t>("ObjectSize", out->info.size);
  if (const auto sum = root->get_child_optional("Checksum")) {
    const auto type =
        ParseChecksumType(Text(*sum, "ChecksumType")).value_or(ChecksumType::kFullObject);
    out->info.checksum = ChecksumElement(*sum, type);
  }
  *truncated = false;
  const auto parts = root->get_child_optional("ObjectParts");
  if (!parts) return Status::Ok();
  out->parts_count = parts->get<int>("PartsCount", parts->get<int>("TotalPartsCount", 0));
  *truncated = Text(*parts, "IsTruncated") == "true";
  *next_marker = parts->get<int>("NextPartNumberMarker", 0);
  for (const auto& [name, child] : *parts) {
    if (name != "Part") continue;
    PartInfo p;
    p.number = child.get<int>("PartNumber", 0);
    p.size = child.get<uint64_t>("Size", 0);
    p.checksum = ChecksumElement(child, ChecksumType::kComposite);
    out->parts.push_back(std::move(p));
  }
  return Status::Ok();
}

Result<std::vector<UploadInfo>> ParseListMultipartUploads(std::string_view xml, bool* truncated,
                                                          std::string* next_key_marker,
                                                          std::string* next_upload_id_marker) {
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(ParseXmlTree(xml, "ListMultipartUploads", &tree));
  FERRY_ASSIGN_OR_RETURN(const pt::ptree* root,
                         XmlRoot(tree, "ListMultipartUploadsResult", "ListMultipartUploads"));
  bool url = Text(*root, "EncodingType") == "url";
  auto decode = [url](std::string v) { return url ? UrlDecodeValue(v) : v; };
  *truncated = Text(*root, "IsTruncated") == "true";
  *next_key_marker = decode(Text(*root, "NextKeyMarker"));
  *next_upload_id_marker = Text(*root, "NextUploadIdMarker");
  std::vector<UploadInfo> uploads;
  for (const auto& [name, child] : *root) {
    if (name != "Upload") continue;
    UploadInfo u;
    u.key = decode(Text(child, "Key"));
    u.upload_id = Text(child, "UploadId");
    ParseIso8601(Text(child, "Initiated"), &u.initiated);
    uploads.push_back(std::move(u));
  }
  if (*truncated && next_key_marker->empty() && next_upload_id_marker->empty()) {
    return Status::Protocol("ListMultipartUploads: truncated page without markers");
  }
  return uploads;
}

Result<std::string> ParseCopyResult(std::string_view xml) {
  ErrorDocument err;
  if (ParseError(xml, &err)) return EmbeddedError(err, "copy");
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(ParseXmlTree(xml, "CopyObject", &tree));
  for (const char* root : {"CopyObjectResult", "CopyPartResult"}) {
    auto it = tree.find(root);
    if (it != tree.not_found()) return Unquote(Text(it->second, "ETag"));
  }
  return Status::Protocol("CopyObject: expected <CopyObjectResult>");
}

std::string BuildCompleteMultipartUpload(const std::vector<PartInfo>& parts) {
  std::string out = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
  for (const auto& p : parts) {
    out += "<Part><PartNumber>" + std::to_string(p.number) + "</PartNumber><ETag>\"" +
           XmlEscape(p.etag) + "\"</ETag>";
    if (p.checksum) {
      const std::string tag =
          "Checksum" + std::string(ChecksumAlgorithmName(p.checksum->algorithm));
      out += "<" + tag + ">" + XmlEscape(p.checksum->value) + "</" + tag + ">";
    }
    out += "</Part>";
  }
  out += "</CompleteMultipartUpload>";
  return out;
}

}  // namespace ferry::s3
