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
  auto plan = s3::MultipartChecksumPlan(ctx.req.headers);
  if (!plan.ok()) return ErrorResponse(plan.status(), ctx);
  const bool asked = ctx.req.Header("x-amz-checksum-algorithm") != nullptr ||
                     ctx.req.Header("x-amz-checksum-type") != nullptr;
  auto id = ctx.service.storage().CreateUpload(ctx.target.bucket, ctx.target.key,
                                               MetaFromHeaders(ctx.req),
                                               asked ? std::optional(*plan) : std::nullopt);
  if (!id.ok()) return ErrorResponse(id.status(), ctx);
  XmlWriter w("InitiateMultipartUploadResult");
  w.Element("Bucket", ctx.target.bucket);
  w.Element("Key", ctx.target.key);
  w.Element("UploadId", *id);
  HttpResponse res = XmlResponse(std::move(w).Finish());
  if (ctx.req.Header("x-amz-checksum-algorithm") != nullptr) {
    res.SetHeader("x-amz-checksum-algorithm", std::string(ChecksumAlgorithmName(plan->algorithm)));
    res.SetHeader("x-amz-checksum-type", std::string(s3::ChecksumTypeName(plan->type)));
  }
  return res;
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
  if (ctx.upload_checksum) part.checksum = ctx.upload_checksum->value;
  Status st = ctx.service.storage().PutPart(ctx.target.bucket, ctx.target.key, UploadId(ctx),
                                            std::move(part));
  if (!st.ok()) return ErrorResponse(st, ctx);
  HttpResponse res;
  res.SetHeader("ETag", ResponseEtag(ctx, ctx.upload_md5_hex));
  if (ctx.upload_checksum) {
    res.SetHeader(std::string(ChecksumHeaderName(ctx.upload_checksum->algorithm)),
                  ctx.upload_checksum->value);
  }
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
    for (ChecksumAlgorithm a : kChecksumAlgorithms) {
      std::string sent = FirstElementText(p, "Checksum" + std::string(ChecksumAlgorithmName(a)));
      if (!sent.empty()) part.checksum = std::move(sent);
    }
    if (part.number < 1 || part.number > kMaxPartNumber) {
      return ErrorResponse(S3Error(400, "InvalidPart", "Invalid part number " + number), ctx);
    }
    parts.push_back(std::move(part));
  }
  // A full-object checksum may come with the Complete (x-amz-checksum-*).
  std::string full_object;
  for (ChecksumAlgorithm a : kChecksumAlgorithms) {
    if (const std::string* v = ctx.req.Header(ChecksumHeaderName(a))) full_object = *v;
  }
  auto rec =
      ctx.service.storage().CompleteUpload(ctx.target.bucket, ctx.target.key, UploadId(ctx), parts,
                                           ctx.service.options().min_part_size, full_object);
  if (!rec.ok()) return ErrorResponse(rec.status(), ctx);
  XmlWriter w("CompleteMultipartUploadResult");
  w.Element("Location", "/" + ctx.target.bucket + "/" + s3::UriEncode(ctx.target.key, false));
  w.Element("Bucket", ctx.target.bucket);
  w.Element("Key", ctx.target.key);
  w.Element("ETag", QuotedEtag(rec->etag));
  if (rec->checksum) {
    w.Element("Checksum" + std::string(ChecksumAlgorithmName(rec->checksum->algorithm)),
              rec->checksum->value);
    w.Element("ChecksumType", std::string(s3::ChecksumTypeName(rec->checksum->type)));
  }
  return XmlResponse(std::move(w).Finish());
}

HttpResponse HandleAbortMultipart(HandlerContext& ctx) {
  Status st = ctx.service.storage().AbortUpload(ctx.target.bucket, ctx.target.key, UploadId(ctx));
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
  auto plan =
      ctx.service.storage().UploadChecksumPlan(ctx.target.bucket, ctx.target.key, UploadId(ctx));
  if (!plan.ok()) return ErrorResponse(plan.status(), ctx);
  const s3::ObjectChecksum shown = plan->value_or(UploadInfo{}.checksum_plan);
  const std::string tag = "Checksum" + std::string(ChecksumAlgorithmName(shown.algorithm));

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
  w.Element("ChecksumAlgorithm", std::string(ChecksumAlgorithmName(shown.algorithm)));
  w.Element("ChecksumType", std::string(s3::ChecksumTypeName(shown.type)));
  for (const PartRecord* p : page) {
    w.Open("Part");
    w.Element("PartNumber", std::to_string(p->number));
    w.Element("LastModified", IsoDate(p->last_modified));
    w.Element("ETag", QuotedEtag(p->etag));
    w.Element("Size", std::to_string(p->size));
    if (!p->checksum.empty()) w.Element(tag, p->checksum);
    w.Close();
  }
  return XmlResponse(std::move(w).Finish());
}

}  // namespace ferry::s3server
