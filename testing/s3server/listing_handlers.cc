// ListObjectsV2, ListObjects (V1) and ListMultipartUploads.

#include "handlers.h"
#include "listing.h"
#include "time_format.h"
#include "xml.h"

namespace ferry::s3server {

HttpResponse HandleListObjects(HandlerContext& ctx, bool v2) {
  const S3Target& t = ctx.target;
  auto q = [&t](std::string_view name) {
    const std::string* v = t.Query(name);
    return v ? *v : std::string();
  };
  std::string encoding = q("encoding-type");
  if (!encoding.empty() && encoding != "url") {
    return ErrorResponse(S3Error(400, "InvalidArgument", "Invalid Encoding Method specified in "
                                                         "Request"),
                         ctx);
  }
  bool url = encoding == "url";
  auto max_keys = QueryInt(t, "max-keys", 1000);
  if (!max_keys.ok()) return ErrorResponse(max_keys.status(), ctx);

  ListRequest request;
  request.prefix = q("prefix");
  request.delimiter = q("delimiter");
  request.max_keys = static_cast<int>(std::min<int64_t>(*max_keys, 1000));
  request.v2 = v2;
  std::string token = q("continuation-token");
  if (v2) {
    request.start_after = q("start-after");
    if (t.HasQuery("continuation-token")) {
      auto decoded = DecodeContinuationToken(token);
      if (!decoded.ok()) return ErrorResponse(decoded.status(), ctx);
      request.token = *std::move(decoded);
    }
  } else {
    request.start_after = q("marker");
  }
  auto listed =
      ctx.service.storage().ListObjects(t.bucket, request, ctx.service.faults().list_quirks());
  if (!listed.ok()) return ErrorResponse(listed.status(), ctx);
  const ListResult& r = *listed;

  XmlWriter w("ListBucketResult");
  w.Element("Name", t.bucket);
  w.Element("Prefix", ListingEncode(request.prefix, url));
  if (v2) {
    if (t.HasQuery("start-after")) w.Element("StartAfter", ListingEncode(q("start-after"), url));
    if (t.HasQuery("continuation-token")) w.Element("ContinuationToken", token);
    w.Element("KeyCount", std::to_string(r.objects.size() + r.common_prefixes.size()));
  } else {
    w.Element("Marker", ListingEncode(request.start_after, url));
    if (r.truncated) w.Element("NextMarker", ListingEncode(r.last_item, url));
  }
  w.Element("MaxKeys", std::to_string(*max_keys > 1000 ? 1000 : *max_keys));
  if (!request.delimiter.empty()) w.Element("Delimiter", ListingEncode(request.delimiter, url));
  if (url) w.Element("EncodingType", "url");
  w.Element("IsTruncated", r.truncated ? "true" : "false");
  if (v2 && r.truncated) {
    w.Element("NextContinuationToken", EncodeContinuationToken(r.resume_after));
  }
  bool owner = !v2 || q("fetch-owner") == "true";
  for (const auto& obj : r.objects) {
    w.Open("Contents");
    w.Element("Key", ListingEncode(obj.key, url));
    w.Element("LastModified", IsoDate(obj.last_modified));
    w.Element("ETag", QuotedEtag(obj.etag));
    w.Element("Size", std::to_string(obj.size));
    if (owner) {
      w.Open("Owner");
      w.Element("ID", "ferry-test-s3");
      w.Element("DisplayName", "ferry-test-s3");
      w.Close();
    }
    w.Element("StorageClass", "STANDARD");
    w.Close();
  }
  for (const auto& p : r.common_prefixes) {
    w.Open("CommonPrefixes");
    w.Element("Prefix", ListingEncode(p, url));
    w.Close();
  }
  return XmlResponse(std::move(w).Finish());
}

HttpResponse HandleListUploads(HandlerContext& ctx) {
  const S3Target& t = ctx.target;
  const std::string* prefix = t.Query("prefix");
  auto uploads = ctx.service.storage().ListUploads(t.bucket, prefix ? *prefix : "");
  if (!uploads.ok()) return ErrorResponse(uploads.status(), ctx);
  bool url = false;
  if (const std::string* enc = t.Query("encoding-type")) url = *enc == "url";

  XmlWriter w("ListMultipartUploadsResult");
  w.Element("Bucket", t.bucket);
  w.Element("KeyMarker", "");
  w.Element("UploadIdMarker", "");
  w.Element("Prefix", ListingEncode(prefix ? *prefix : "", url));
  w.Element("MaxUploads", "10000");
  if (url) w.Element("EncodingType", "url");
  w.Element("IsTruncated", "false");
  for (const auto& up : *uploads) {
    w.Open("Upload");
    w.Element("Key", ListingEncode(up.key, url));
    w.Element("UploadId", up.upload_id);
    w.Open("Initiator");
    w.Element("ID", "ferry-test-s3");
    w.Element("DisplayName", "ferry-test-s3");
    w.Close();
    w.Open("Owner");
    w.Element("ID", "ferry-test-s3");
    w.Element("DisplayName", "ferry-test-s3");
    w.Close();
    w.Element("StorageClass", "STANDARD");
    w.Element("Initiated", IsoDate(up.initiated));
    w.Close();
  }
  return XmlResponse(std::move(w).Finish());
}

}  // namespace ferry::s3server
