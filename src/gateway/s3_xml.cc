#include "gateway/s3_xml.h"

#include <algorithm>
#include <boost/property_tree/ptree.hpp>
#include <charconv>

#include "base/unix_time.h"
#include "crypto/digest.h"
#include "s3/flexible_checksum.h"
#include "s3/sigv4.h"
#include "s3/xml.h"
#include "s3/xml_tree.h"

namespace ferry::gateway {
namespace {

namespace pt = boost::property_tree;

constexpr std::string_view kDecl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
constexpr std::string_view kNs = " xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"";

void Element(std::string& out, std::string_view name, std::string_view text) {
  out += '<';
  out += name;
  out += '>';
  out += s3::XmlEscape(text);
  out += "</";
  out += name;
  out += '>';
}

// The declaration and `root`'s opening tag in S3's namespace.
std::string Begin(std::string_view root) {
  std::string out(kDecl);
  out += '<';
  out += root;
  out += kNs;
  out += '>';
  return out;
}

std::string Quoted(std::string_view etag) { return "\"" + std::string(etag) + "\""; }

std::string Iso(TimePoint t) { return Rfc3339Utc(UnixMs(t)); }

std::string Text(const pt::ptree& node, const char* name) {
  auto it = node.find(name);
  return it == node.not_found() ? "" : it->second.data();
}

}  // namespace

std::string ErrorXml(std::string_view code, std::string_view message, std::string_view resource) {
  std::string out(kDecl);
  out += "<Error>";
  Element(out, "Code", code);
  Element(out, "Message", message);
  Element(out, "Resource", resource);
  out += "</Error>";
  return out;
}

std::string ListXml(const ListParams& params, const MergedListing& page,
                    std::string_view next_token) {
  auto enc = [&](std::string_view v) {
    return params.url_encoding ? s3::UriEncode(v, false) : std::string(v);
  };
  std::string out = Begin("ListBucketResult");
  Element(out, "Name", params.bucket);
  Element(out, "Prefix", enc(params.prefix));
  if (!params.delimiter.empty()) Element(out, "Delimiter", enc(params.delimiter));
  Element(out, "MaxKeys", std::to_string(params.max_keys));
  if (params.url_encoding) Element(out, "EncodingType", "url");
  Element(out, "IsTruncated", page.truncated ? "true" : "false");
  if (params.v2) {
    Element(out, "KeyCount", std::to_string(page.objects.size() + page.prefixes.size()));
    if (!params.start_after.empty()) Element(out, "StartAfter", enc(params.start_after));
    if (!params.continuation_token.empty()) {
      Element(out, "ContinuationToken", params.continuation_token);
    }
    if (page.truncated) Element(out, "NextContinuationToken", next_token);
  } else {
    Element(out, "Marker", enc(params.start_after));
    std::string next = page.next_after;
    if (!next.empty() && next.back() == '\xff') next.pop_back();  // a prefix's
    if (page.truncated) Element(out, "NextMarker", enc(next));
  }
  for (const ObjectInfo& o : page.objects) {
    out += "<Contents>";
    Element(out, "Key", enc(o.key));
    Element(out, "LastModified", Iso(o.last_modified));
    Element(out, "ETag", Quoted(o.etag));
    Element(out, "Size", std::to_string(o.size));
    Element(out, "StorageClass", "STANDARD");
    out += "</Contents>";
  }
  for (const std::string& p : page.prefixes) {
    out += "<CommonPrefixes>";
    Element(out, "Prefix", enc(p));
    out += "</CommonPrefixes>";
  }
  out += "</ListBucketResult>";
  return out;
}

std::string ListBucketsXml(std::string_view bucket) {
  std::string out = Begin("ListAllMyBucketsResult");
  out += "<Owner><ID>ferry</ID><DisplayName>ferry</DisplayName></Owner><Buckets><Bucket>";
  Element(out, "Name", bucket);
  Element(out, "CreationDate", Rfc3339Utc(0));
  out += "</Bucket></Buckets></ListAllMyBucketsResult>";
  return out;
}

std::string LocationXml(std::string_view region) {
  std::string out = Begin("LocationConstraint");
  if (region != "us-east-1") out += s3::XmlEscape(region);
  out += "</LocationConstraint>";
  return out;
}

std::string InitiateMultipartXml(std::string_view bucket, std::string_view key,
                                 std::string_view upload_id) {
  std::string out = Begin("InitiateMultipartUploadResult");
  Element(out, "Bucket", bucket);
  Element(out, "Key", key);
  Element(out, "UploadId", upload_id);
  out += "</InitiateMultipartUploadResult>";
  return out;
}

std::string CompleteMultipartXml(std::string_view bucket, std::string_view key,
                                 std::string_view etag,
                                 const std::optional<ObjectChecksum>& checksum) {
  std::string out = Begin("CompleteMultipartUploadResult");
  Element(out, "Bucket", bucket);
  Element(out, "Key", key);
  Element(out, "ETag", Quoted(etag));
  if (checksum) {  // with its "-N" here, as S3 sends it
    Element(out, "Checksum" + std::string(ChecksumAlgorithmName(checksum->algorithm)),
            checksum->value);
    Element(out, "ChecksumType", s3::ChecksumTypeName(checksum->type));
  }
  out += "</CompleteMultipartUploadResult>";
  return out;
}

std::string CopyObjectXml(std::string_view etag, TimePoint last_modified) {
  std::string out = Begin("CopyObjectResult");
  Element(out, "LastModified", Iso(last_modified));
  Element(out, "ETag", Quoted(etag));
  out += "</CopyObjectResult>";
  return out;
}

std::string DeleteResultXml(const std::vector<DeleteOutcome>& outcomes, bool quiet) {
  std::string out = Begin("DeleteResult");
  for (const DeleteOutcome& o : outcomes) {
    if (o.error_code.empty()) {
      if (quiet) continue;
      out += "<Deleted>";
      Element(out, "Key", o.key);
      out += "</Deleted>";
    } else {
      out += "<Error>";
      Element(out, "Key", o.key);
      Element(out, "Code", o.error_code);
      Element(out, "Message", o.error_message);
      out += "</Error>";
    }
  }
  out += "</DeleteResult>";
  return out;
}

Result<std::vector<PartInfo>> ParseCompleteParts(std::string_view xml) {
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(s3::ParseXmlTree(xml, "CompleteMultipartUpload", &tree));
  FERRY_ASSIGN_OR_RETURN(const pt::ptree* root,
                         s3::XmlRoot(tree, "CompleteMultipartUpload", "CompleteMultipartUpload"));
  std::vector<PartInfo> parts;
  for (const auto& [name, child] : *root) {
    if (name != "Part") continue;
    PartInfo p;
    std::string n = Text(child, "PartNumber");
    auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), p.number);
    if (ec != std::errc() || end != n.data() + n.size() || p.number < 1 || p.number > 10000) {
      return Status::InvalidArgument("CompleteMultipartUpload: bad PartNumber '" + n + "'");
    }
    p.etag = s3::Unquote(Text(child, "ETag"));
    for (ChecksumAlgorithm a : kChecksumAlgorithms) {
      const std::string tag = "Checksum" + std::string(ChecksumAlgorithmName(a));
      std::string v = Text(child, tag.c_str());
      if (!v.empty()) p.checksum = ObjectChecksum{a, std::move(v), ChecksumType::kComposite};
    }
    parts.push_back(std::move(p));
  }
  if (parts.empty()) return Status::InvalidArgument("CompleteMultipartUpload: no parts");
  return parts;
}

namespace {

void ChecksumElement(std::string& out, const ObjectChecksum& c) {
  std::string value = c.value;
  if (c.type == ChecksumType::kComposite) value = value.substr(0, value.find('-'));
  Element(out, "Checksum" + std::string(ChecksumAlgorithmName(c.algorithm)), value);
}

// The parts after `marker` (at most `max_parts`), with the elements that
// say where that page stands appended to `out`: PartNumberMarker,
// NextPartNumberMarker, MaxParts, IsTruncated.
std::vector<const PartInfo*> PartsPage(std::string& out, const std::vector<PartInfo>& parts,
                                       int max_parts, int marker) {
  std::vector<const PartInfo*> page;
  for (const PartInfo& p : parts) {
    if (p.number > marker && static_cast<int>(page.size()) < max_parts) page.push_back(&p);
  }
  const int next = page.empty() ? marker : page.back()->number;
  Element(out, "PartNumberMarker", std::to_string(marker));
  Element(out, "NextPartNumberMarker", std::to_string(next));
  Element(out, "MaxParts", std::to_string(max_parts));
  Element(out, "IsTruncated", !parts.empty() && parts.back().number > next ? "true" : "false");
  return page;
}

}  // namespace

std::string ListPartsXml(std::string_view bucket, std::string_view key, std::string_view upload_id,
                         const std::vector<PartInfo>& parts, int max_parts, int marker) {
  std::string out = Begin("ListPartsResult");
  Element(out, "Bucket", bucket);
  Element(out, "Key", key);
  Element(out, "UploadId", upload_id);
  const std::vector<const PartInfo*> page = PartsPage(out, parts, max_parts, marker);
  Element(out, "StorageClass", "STANDARD");
  if (!parts.empty() && parts.front().checksum) {
    Element(out, "ChecksumAlgorithm", ChecksumAlgorithmName(parts.front().checksum->algorithm));
  }
  for (const PartInfo* p : page) {
    out += "<Part>";
    Element(out, "PartNumber", std::to_string(p->number));
    Element(out, "ETag", Quoted(p->etag));
    Element(out, "Size", std::to_string(p->size));
    if (p->checksum) ChecksumElement(out, *p->checksum);
    out += "</Part>";
  }
  out += "</ListPartsResult>";
  return out;
}

std::string ObjectAttributesXml(const ObjectAttributes& a, const std::vector<std::string>& wanted,
                                int max_parts, int marker) {
  auto wants = [&](std::string_view n) {
    return std::find(wanted.begin(), wanted.end(), n) != wanted.end();
  };
  std::string out = Begin("GetObjectAttributesResponse");
  if (wants("ETag")) Element(out, "ETag", a.info.etag);
  if (wants("Checksum") && a.info.checksum) {
    out += "<Checksum>";
    ChecksumElement(out, *a.info.checksum);
    Element(out, "ChecksumType", s3::ChecksumTypeName(a.info.checksum->type));
    out += "</Checksum>";
  }
  if (wants("ObjectParts") && a.parts_count > 0) {
    out += "<ObjectParts>";
    Element(out, "PartsCount", std::to_string(a.parts_count));
    for (const PartInfo* p : PartsPage(out, a.parts, max_parts, marker)) {
      out += "<Part>";
      Element(out, "PartNumber", std::to_string(p->number));
      Element(out, "Size", std::to_string(p->size));
      if (p->checksum) ChecksumElement(out, *p->checksum);
      out += "</Part>";
    }
    out += "</ObjectParts>";
  }
  if (wants("StorageClass")) Element(out, "StorageClass", "STANDARD");
  if (wants("ObjectSize")) Element(out, "ObjectSize", std::to_string(a.info.size));
  out += "</GetObjectAttributesResponse>";
  return out;
}

Result<DeleteRequest> ParseDeleteRequest(std::string_view xml) {
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(s3::ParseXmlTree(xml, "Delete", &tree));
  FERRY_ASSIGN_OR_RETURN(const pt::ptree* root, s3::XmlRoot(tree, "Delete", "Delete"));
  DeleteRequest req;
  req.quiet = Text(*root, "Quiet") == "true";
  for (const auto& [name, child] : *root) {
    if (name == "Object") req.keys.push_back(Text(child, "Key"));
  }
  if (req.keys.empty() || req.keys.size() > 1000) {
    return Status::InvalidArgument("Delete: 1 to 1000 objects, not " +
                                   std::to_string(req.keys.size()));
  }
  return req;
}

std::string EncodeToken(std::string_view after) { return Base64Encode(after); }

Result<std::string> DecodeToken(std::string_view token) {
  std::string out;
  if (!Base64Decode(token, &out)) {
    return Status::InvalidArgument("The continuation token provided is incorrect");
  }
  return out;
}

}  // namespace ferry::gateway
