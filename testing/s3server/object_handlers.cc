// PutObject, CopyObject, GetObject / HeadObject, DeleteObject.

#include <algorithm>

#include "base/strings.h"
#include "handlers.h"
#include "range.h"
#include "s3/xml.h"
#include "time_format.h"
#include "xml.h"

namespace ferry::s3server {
namespace {

void AddObjectHeaders(const ObjectRecord& rec, const HandlerContext& ctx, HttpResponse* res) {
  const ObjectMeta& m = rec.meta;
  res->SetHeader("Content-Type", m.content_type.empty() ? "binary/octet-stream" : m.content_type);
  if (!m.content_encoding.empty()) res->SetHeader("Content-Encoding", m.content_encoding);
  if (!m.content_disposition.empty()) {
    res->SetHeader("Content-Disposition", m.content_disposition);
  }
  if (!m.cache_control.empty()) res->SetHeader("Cache-Control", m.cache_control);
  if (!m.content_language.empty()) res->SetHeader("Content-Language", m.content_language);
  if (!m.expires.empty()) res->SetHeader("Expires", m.expires);
  for (const auto& [name, value] : m.user) res->SetHeader("x-amz-meta-" + name, value);
  res->SetHeader("ETag", ResponseEtag(ctx, rec.etag));
  res->SetHeader("Last-Modified", HttpDate(rec.last_modified));
  res->SetHeader("Accept-Ranges", "bytes");

  // response-* query parameters override the stored headers (GET only).
  static constexpr std::pair<std::string_view, std::string_view> kOverrides[] = {
      {"response-content-type", "Content-Type"},
      {"response-content-language", "Content-Language"},
      {"response-expires", "Expires"},
      {"response-cache-control", "Cache-Control"},
      {"response-content-disposition", "Content-Disposition"},
      {"response-content-encoding", "Content-Encoding"},
  };
  for (const auto& [param, header] : kOverrides) {
    if (const std::string* v = ctx.target.Query(param)) res->SetHeader(header, *v);
  }
}

// If-Match / If-None-Match on GET and HEAD. Returns a response to send
// instead of the object, or nullopt to go on.
std::optional<HttpResponse> CheckConditions(const ObjectRecord& rec, const HandlerContext& ctx) {
  auto matches = [&rec](std::string_view list) {
    if (list == "*") return true;
    while (!list.empty()) {
      size_t comma = list.find(',');
      std::string_view item = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      if (StripQuotes(item) == rec.etag) return true;
    }
    return false;
  };
  if (const std::string* im = ctx.req.Header("if-match"); im && !matches(*im)) {
    return ErrorResponse(S3Error(412, "PreconditionFailed",
                                 "At least one of the pre-conditions you specified did not hold"),
                         ctx);
  }
  if (const std::string* inm = ctx.req.Header("if-none-match"); inm && matches(*inm)) {
    HttpResponse res;
    res.status = 304;
    res.head = true;
    res.SetHeader("ETag", QuotedEtag(rec.etag));
    return res;
  }
  return std::nullopt;
}

// x-amz-checksum-mode: ENABLED asks for the stored checksum; S3 gives it
// only with the whole object.
bool WantsChecksum(const HandlerContext& ctx) {
  return EqualsIgnoreCase(ctx.req.HeaderOr("x-amz-checksum-mode"), "ENABLED");
}

}  // namespace

HttpResponse HandlePutObject(HandlerContext& ctx) {
  ObjectRecord rec;
  rec.key = ctx.target.key;
  rec.blob = ctx.upload;
  rec.size = ctx.upload->size();
  rec.etag = ctx.upload_md5_hex;
  rec.last_modified = std::chrono::system_clock::now();
  rec.meta = MetaFromHeaders(ctx.req);
  rec.checksum = ctx.upload_checksum;
  rec.checksum_deferred = !rec.checksum;
  Status st = ctx.service.storage().PutObject(ctx.target.bucket, rec);
  if (!st.ok()) return ErrorResponse(st, ctx);
  HttpResponse res;
  res.SetHeader("ETag", ResponseEtag(ctx, rec.etag));
  if (rec.checksum) s3::AddChecksumHeaders(*rec.checksum, &res.headers);
  return res;
}

HttpResponse HandleCopyObject(HandlerContext& ctx) {
  // x-amz-copy-source: [/]bucket/key[?versionId=...], URL-encoded.
  std::string source = ctx.req.HeaderOr("x-amz-copy-source");
  source = source.substr(0, source.find('?'));
  std::string decoded;
  if (!s3::UriDecode(source, &decoded)) {
    return ErrorResponse(S3Error(400, "InvalidArgument", "Invalid copy source encoding"), ctx);
  }
  std::string_view src = decoded;
  if (!src.empty() && src.front() == '/') src.remove_prefix(1);
  size_t slash = src.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == src.size()) {
    return ErrorResponse(S3Error(400, "InvalidArgument",
                                 "Copy Source must mention the source bucket and key: "
                                 "sourcebucket/sourcekey"),
                         ctx);
  }
  std::string src_bucket(src.substr(0, slash)), src_key(src.substr(slash + 1));

  std::string directive = ctx.req.HeaderOr("x-amz-metadata-directive", "COPY");
  if (directive != "COPY" && directive != "REPLACE") {
    return ErrorResponse(S3Error(400, "InvalidArgument", "Unknown metadata directive " + directive),
                         ctx);
  }
  Storage& storage = ctx.service.storage();
  auto found = storage.GetObject(src_bucket, src_key);
  if (!found.ok()) return ErrorResponse(found.status(), ctx);
  if (src_bucket == ctx.target.bucket && src_key == ctx.target.key && directive == "COPY") {
    return ErrorResponse(S3Error(400, "InvalidRequest",
                                 "This copy request is illegal because it is trying to copy an "
                                 "object to itself without changing the object's metadata, "
                                 "storage class, website redirect location or encryption "
                                 "attributes."),
                         ctx);
  }
  // Blobs are immutable, so the copy shares the source's bytes. The ETag is
  // the source's (a multipart source keeps its "-N" ETag).
  ObjectRecord rec = std::move(found).value();
  rec.key = ctx.target.key;
  rec.last_modified = std::chrono::system_clock::now();
  if (directive == "REPLACE") rec.meta = MetaFromHeaders(ctx.req);
  Status st = storage.PutObject(ctx.target.bucket, rec);
  if (!st.ok()) return ErrorResponse(st, ctx);

  XmlWriter w("CopyObjectResult");
  w.Element("LastModified", IsoDate(rec.last_modified));
  w.Element("ETag", ResponseEtag(ctx, rec.etag));
  return XmlResponse(std::move(w).Finish());
}

HttpResponse HandleGetObject(HandlerContext& ctx) {
  bool head = ctx.req.method == "HEAD";
  Storage& storage = ctx.service.storage();
  auto found = WantsChecksum(ctx) && ctx.req.Header("range") == nullptr
                   ? storage.WithChecksum(ctx.target.bucket, ctx.target.key)
                   : storage.GetObject(ctx.target.bucket, ctx.target.key);
  if (!found.ok()) return ErrorResponse(found.status(), ctx);
  const ObjectRecord& rec = *found;
  if (auto early = CheckConditions(rec, ctx)) return std::move(*early);

  RangeSpec range = ParseRange(ctx.req.HeaderOr("range"), rec.size);
  if (range.kind == RangeSpec::Kind::kUnsatisfiable) {
    HttpResponse res =
        ErrorResponse(S3Error(416, "InvalidRange", "The requested range is not satisfiable"), ctx);
    res.SetHeader("Content-Range", "bytes */" + std::to_string(rec.size));
    return res;
  }
  HttpResponse res;
  res.head = head;
  AddObjectHeaders(rec, ctx, &res);
  res.blob = rec.blob;
  res.blob_offset = 0;
  res.blob_length = rec.size;
  if (rec.checksum && WantsChecksum(ctx) && range.kind != RangeSpec::Kind::kPartial) {
    s3::AddChecksumHeaders(*rec.checksum, &res.headers);
  }
  if (range.kind == RangeSpec::Kind::kPartial) {
    res.status = 206;
    res.blob_offset = range.first;
    res.blob_length = range.length();
    res.SetHeader("Content-Range", "bytes " + std::to_string(range.first) + "-" +
                                       std::to_string(range.last) + "/" + std::to_string(rec.size));
  }
  return res;
}

// GetObjectAttributes: the attributes x-amz-object-attributes names (ETag,
// Checksum, ObjectParts, StorageClass, ObjectSize), without the body.
HttpResponse HandleGetObjectAttributes(HandlerContext& ctx) {
  auto parsed = s3::ParseObjectAttributeNames(ctx.req.HeaderOr("x-amz-object-attributes"));
  if (!parsed.ok()) return ErrorResponse(parsed.status(), ctx);
  const std::vector<std::string>& wanted = *parsed;
  auto wants = [&](std::string_view a) {
    return std::find(wanted.begin(), wanted.end(), a) != wanted.end();
  };
  Storage& storage = ctx.service.storage();
  auto found = wants("Checksum") ? storage.WithChecksum(ctx.target.bucket, ctx.target.key)
                                 : storage.GetObject(ctx.target.bucket, ctx.target.key);
  if (!found.ok()) return ErrorResponse(found.status(), ctx);
  const ObjectRecord& rec = *found;
  const std::string tag =
      rec.checksum ? "Checksum" + std::string(ChecksumAlgorithmName(rec.checksum->algorithm)) : "";
  XmlWriter w("GetObjectAttributesResponse");
  if (wants("ETag")) w.Element("ETag", rec.etag);
  if (wants("Checksum") && rec.checksum) {
    w.Open("Checksum");
    // The composite value goes without its "-N" here, as S3 sends it.
    std::string value = rec.checksum->value;
    if (rec.checksum->type == s3::ChecksumType::kComposite)
      value = value.substr(0, value.find('-'));
    w.Element(tag, value);
    w.Element("ChecksumType", std::string(s3::ChecksumTypeName(rec.checksum->type)));
    w.Close();
  }
  if (wants("ObjectParts") && !rec.parts.empty()) {
    auto max_parts = QueryInt(ctx.target, "max-parts", 1000);
    auto marker = QueryInt(ctx.target, "part-number-marker", 0);
    if (!max_parts.ok()) return ErrorResponse(max_parts.status(), ctx);
    if (!marker.ok()) return ErrorResponse(marker.status(), ctx);
    const int64_t total = static_cast<int64_t>(rec.parts.size());
    const int64_t first = std::clamp<int64_t>(*marker, 0, total);
    const int64_t last = std::min(total, first + std::min<int64_t>(*max_parts, 1000));
    w.Open("ObjectParts");
    w.Element("PartsCount", std::to_string(total));  // TotalPartsCount in the SDKs
    w.Element("PartNumberMarker", std::to_string(first));
    w.Element("NextPartNumberMarker", std::to_string(last));
    w.Element("MaxParts", std::to_string(std::min<int64_t>(*max_parts, 1000)));
    w.Element("IsTruncated", last < total ? "true" : "false");
    // Parts are listed (with their checksums) for composite checksums only.
    if (rec.checksum && rec.checksum->type == s3::ChecksumType::kComposite) {
      for (int64_t i = first; i < last; ++i) {
        w.Open("Part");
        w.Element("PartNumber", std::to_string(i + 1));
        w.Element("Size", std::to_string(rec.parts[i].size));
        w.Element(tag, rec.parts[i].checksum);
        w.Close();
      }
    }
    w.Close();
  }
  if (wants("StorageClass")) w.Element("StorageClass", "STANDARD");
  if (wants("ObjectSize")) w.Element("ObjectSize", std::to_string(rec.size));
  HttpResponse res = XmlResponse(std::move(w).Finish());
  res.SetHeader("Last-Modified", HttpDate(rec.last_modified));
  return res;
}

HttpResponse HandleDeleteObject(HandlerContext& ctx) {
  Status st = ctx.service.storage().DeleteObject(ctx.target.bucket, ctx.target.key);
  if (!st.ok()) return ErrorResponse(st, ctx);
  HttpResponse res;
  res.status = 204;
  return res;
}

}  // namespace ferry::s3server
