// Service- and bucket-level operations, and the dispatcher.

#include <charconv>

#include "handlers.h"
#include "time_format.h"
#include "xml.h"

namespace ferry::s3server {

Result<int64_t> QueryInt(const S3Target& target, std::string_view name, int64_t fallback) {
  const std::string* v = target.Query(name);
  if (v == nullptr) return fallback;
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (v->empty() || ec != std::errc() || ptr != v->data() + v->size() || n < 0) {
    return S3Error(400, "InvalidArgument",
                   "Provided " + std::string(name) + " not an integer or within integer range");
  }
  return n;
}

HttpResponse HandleListBuckets(HandlerContext& ctx) {
  XmlWriter w("ListAllMyBucketsResult");
  w.Open("Owner");
  w.Element("ID", "ferry-test-s3");
  w.Element("DisplayName", "ferry-test-s3");
  w.Close();
  w.Open("Buckets");
  for (const auto& b : ctx.service.storage().ListBuckets()) {
    w.Open("Bucket");
    w.Element("Name", b.name);
    w.Element("CreationDate", IsoDate(b.created));
    w.Close();
  }
  w.Close();
  return XmlResponse(std::move(w).Finish());
}

HttpResponse HandleCreateBucket(HandlerContext& ctx) {
  Status st = ctx.service.storage().CreateBucket(ctx.target.bucket);
  if (!st.ok()) return ErrorResponse(st, ctx);
  HttpResponse res;
  res.SetHeader("Location", "/" + ctx.target.bucket);
  return res;
}

HttpResponse HandleDeleteBucket(HandlerContext& ctx) {
  Status st = ctx.service.storage().DeleteBucket(ctx.target.bucket);
  if (!st.ok()) return ErrorResponse(st, ctx);
  HttpResponse res;
  res.status = 204;
  return res;
}

HttpResponse HandleHeadBucket(HandlerContext& ctx) {
  Status st = ctx.service.storage().CheckBucket(ctx.target.bucket);
  if (!st.ok()) return ErrorResponse(st, ctx);
  HttpResponse res;
  res.head = true;
  res.SetHeader("x-amz-bucket-region", ctx.service.options().region);
  return res;
}

HttpResponse HandleBucketLocation(HandlerContext& ctx) {
  Status st = ctx.service.storage().CheckBucket(ctx.target.bucket);
  if (!st.ok()) return ErrorResponse(st, ctx);
  const std::string& region = ctx.service.options().region;
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<LocationConstraint xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
  if (region != "us-east-1") xml += XmlEscape(region);
  xml += "</LocationConstraint>";
  return XmlResponse(std::move(xml));
}

HttpResponse HandleDeleteObjects(HandlerContext& ctx) {
  Storage& storage = ctx.service.storage();
  Status st = storage.CheckBucket(ctx.target.bucket);
  if (!st.ok()) return ErrorResponse(st, ctx);
  std::vector<std::string_view> objects = FindElements(ctx.body, "Object");
  if (objects.empty() || objects.size() > 1000) {
    return ErrorResponse(S3Error(400, "MalformedXML",
                                 "The XML you provided was not well-formed or did not validate "
                                 "against our published schema"),
                         ctx);
  }
  bool quiet = FirstElementText(ctx.body, "Quiet") == "true";
  XmlWriter w("DeleteResult");
  for (std::string_view obj : objects) {
    std::string key = FirstElementText(obj, "Key");
    Status del = key.size() > kMaxKeyBytes
                     ? S3Error(400, "KeyTooLongError", "Your key is too long")
                     : storage.DeleteObject(ctx.target.bucket, key);
    if (del.ok()) {
      if (quiet) continue;
      w.Open("Deleted");
      w.Element("Key", key);
      w.Close();
    } else {
      w.Open("Error");
      w.Element("Key", key);
      w.Element("Code", del.remote_code().empty() ? "InternalError" : del.remote_code());
      w.Element("Message", del.message());
      w.Close();
    }
  }
  return XmlResponse(std::move(w).Finish());
}

HttpResponse Dispatch(HandlerContext& ctx) {
  switch (ctx.target.op) {
    case Op::kListBuckets: return HandleListBuckets(ctx);
    case Op::kCreateBucket: return HandleCreateBucket(ctx);
    case Op::kDeleteBucket: return HandleDeleteBucket(ctx);
    case Op::kHeadBucket: return HandleHeadBucket(ctx);
    case Op::kListObjectsV2: return HandleListObjects(ctx, /*v2=*/true);
    case Op::kListObjectsV1: return HandleListObjects(ctx, /*v2=*/false);
    case Op::kListUploads: return HandleListUploads(ctx);
    case Op::kBucketLocation: return HandleBucketLocation(ctx);
    case Op::kDeleteObjects: return HandleDeleteObjects(ctx);
    case Op::kPutObject: return HandlePutObject(ctx);
    case Op::kCopyObject: return HandleCopyObject(ctx);
    case Op::kGetObject:
    case Op::kHeadObject: return HandleGetObject(ctx);
    case Op::kDeleteObject: return HandleDeleteObject(ctx);
    case Op::kCreateMultipart: return HandleCreateMultipart(ctx);
    case Op::kUploadPart: return HandleUploadPart(ctx);
    case Op::kCompleteMultipart: return HandleCompleteMultipart(ctx);
    case Op::kAbortMultipart: return HandleAbortMultipart(ctx);
    case Op::kListParts: return HandleListParts(ctx);
    case Op::kGetObjectAttributes: return HandleGetObjectAttributes(ctx);
    case Op::kUnsupported: break;
  }
  return ErrorResponse(S3Error(501, "NotImplemented",
                               "A header or query you provided implies functionality that is "
                               "not implemented"),
                       ctx);
}

}  // namespace ferry::s3server
