// CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
// AbortMultipartUpload, ListParts.

#include "handlers.h"
#include "time_format.h"
#include "xml.h"

namespace ferry::s3server {
namespace {

constexpr int kMaxPartNumber = 10000;

Result<int> PartNumber(const HandlerContext& ctx) {
  auto n = QueryInt(ctx.target, "partNumber", 0);
  if (!n.ok() || *n < 1 || *n > kMaxPartNumber) {
    return S3Error(400, "InvalidArgument",
                   "Part number must be an integer between 1 and 10000, inclusive");
  }
  return static_cast<int>(*n);
}

const std::string& UploadId(const HandlerContext& ctx) { return *ctx.target.Query("uploadId"); }

}  // namespace

HttpResponse HandleCreateMultipart(HandlerContext& ctx) {
  auto id = ctx.service.storage().CreateUpload(ctx.target.bucket, ctx.target.key,
                                               MetaFromHeaders(ctx.req));
  if (!id.ok()) return ErrorResponse(id.status(), ctx);
  XmlWriter w("InitiateMultipartUploadResult");
  w.Element("Bucket", ctx.target.bucket);
  w.Element("Key", ctx.target.key);
  w.Element("UploadId", *id);
  return XmlResponse(std::move(w).Finish());
}

HttpResponse HandleUploadPart(HandlerContext& ctx) {
  auto number = PartNumber(ctx);
  if (!number.ok()) return ErrorResponse(number.status(), ctx);
  PartRecord part;
  part.number = *number;
  part.blob = ctx.upload;
  part.size = ctx.upload->size();
  part.etag = ctx.upload_md5_hex;
  part.last_modified = std::chrono::system_clock::now();
  Status st = ctx.service.storage().PutPart(ctx.target.bucket, ctx.target.key, UploadId(ctx),
                                            std::move(part));
  if (!st.ok()) return ErrorResponse(st, ctx);
  HttpResponse res;
  res.SetHeader("ETag", ResponseEtag(ctx, ctx.upload_md5_hex));
  return res;
}

HttpResponse HandleCompleteMultipart(HandlerContext& ctx) {
  if (ctx.fault == FaultKind::kComplete200Error) {
    // S3 can fail a Complete after it has sent the 200 status line; clients
    // must parse the body. The upload is left in place.
    return XmlResponse(ErrorXml("InternalError",
                                "We encountered an internal error. Please try again.",
                                ctx.target.canonical_path, ctx.request_id));
  }
  std::vector<CompletedPart> parts;
  for (std::string_view p : FindElements(ctx.body, "Part")) {
    CompletedPart part;
    std::string number = FirstElementText(p, "PartNumber");
    part.number = std::atoi(number.c_str());
    part.etag = FirstElementText(p, "ETag");
    if (part.number < 1 || part.number > kMaxPartNumber) {
      return ErrorResponse(S3Error(400, "InvalidPart", "Invalid part number " + number), ctx);
    }
    parts.push_back(std::move(part));
  }
  auto rec = ctx.service.storage().CompleteUpload(ctx.target.bucket, ctx.target.key,
                                                  UploadId(ctx), parts,
                                                  ctx.service.options().min_part_size);
  if (!rec.ok()) return ErrorResponse(rec.status(), ctx);
  XmlWriter w("CompleteMultipartUploadResult");
  w.Element("Location", "/" + ctx.target.bucket + "/" + s3::UriEncode(ctx.target.key, false));
  w.Element("Bucket", ctx.target.bucket);
  w.Element("Key", ctx.target.key);
  w.Element("ETag", QuotedEtag(rec->etag));
  return XmlResponse(std::move(w).Finish());
}

HttpResponse HandleAbortMultipart(HandlerContext& ctx) {
  Status st = ctx.service.storage().AbortUpload(ctx.target.bucket, ctx.target.key,
                                                UploadId(ctx));
  if (!st.ok()) return ErrorResponse(st, ctx);
  HttpResponse res;
  res.status = 204;
  return res;
}

HttpResponse HandleListParts(HandlerContext& ctx) {
  auto max_parts = QueryInt(ctx.target, "max-parts", 1000);
  auto marker = QueryInt(ctx.target, "part-number-marker", 0);
  if (!max_parts.ok()) return ErrorResponse(max_parts.status(), ctx);
  if (!marker.ok()) return ErrorResponse(marker.status(), ctx);
  auto parts = ctx.service.storage().ListParts(ctx.target.bucket, ctx.target.key, UploadId(ctx));
  if (!parts.ok()) return ErrorResponse(parts.status(), ctx);

  XmlWriter w("ListPartsResult");
  w.Element("Bucket", ctx.target.bucket);
  w.Element("Key", ctx.target.key);
  w.Element("UploadId", UploadId(ctx));
  w.Element("PartNumberMarker", std::to_string(*marker));
  int64_t limit = std::min<int64_t>(*max_parts, 1000);
  int64_t emitted = 0;
  int last = 0;
  bool truncated = false;
  std::vector<const PartRecord*> page;
  for (const auto& p : *parts) {
    if (p.number <= *marker) continue;
    if (emitted == limit) {
      truncated = true;
      break;
    }
    page.push_back(&p);
    last = p.number;
    ++emitted;
  }
  w.Element("NextPartNumberMarker", std::to_string(last));
  w.Element("MaxParts", std::to_string(limit));
  w.Element("IsTruncated", truncated ? "true" : "false");
  w.Element("StorageClass", "STANDARD");
  for (const PartRecord* p : page) {
    w.Open("Part");
    w.Element("PartNumber", std::to_string(p->number));
    w.Element("LastModified", IsoDate(p->last_modified));
    w.Element("ETag", QuotedEtag(p->etag));
    w.Element("Size", std::to_string(p->size));
    w.Close();
  }
  return XmlResponse(std::move(w).Finish());
}

}  // namespace ferry::s3server
