#pragma once
// The S3 operation handlers, one function per operation (see router.h).
// Each returns the complete response; errors are S3 error documents.

#include "http_types.h"
#include "responses.h"

namespace ferry::s3server {

// bucket_handlers.cc
HttpResponse HandleListBuckets(HandlerContext& ctx);
HttpResponse HandleCreateBucket(HandlerContext& ctx);
HttpResponse HandleDeleteBucket(HandlerContext& ctx);
HttpResponse HandleHeadBucket(HandlerContext& ctx);
HttpResponse HandleBucketLocation(HandlerContext& ctx);
HttpResponse HandleDeleteObjects(HandlerContext& ctx);

// listing_handlers.cc
HttpResponse HandleListObjects(HandlerContext& ctx, bool v2);
HttpResponse HandleListUploads(HandlerContext& ctx);

// object_handlers.cc
HttpResponse HandlePutObject(HandlerContext& ctx);
HttpResponse HandleCopyObject(HandlerContext& ctx);
HttpResponse HandleGetObject(HandlerContext& ctx);  // also HEAD
HttpResponse HandleGetObjectAttributes(HandlerContext& ctx);
HttpResponse HandleDeleteObject(HandlerContext& ctx);

// multipart_handlers.cc
HttpResponse HandleCreateMultipart(HandlerContext& ctx);
HttpResponse HandleUploadPart(HandlerContext& ctx);
HttpResponse HandleCompleteMultipart(HandlerContext& ctx);
HttpResponse HandleAbortMultipart(HandlerContext& ctx);
HttpResponse HandleListParts(HandlerContext& ctx);

// Runs the handler for ctx.target.op.
HttpResponse Dispatch(HandlerContext& ctx);

// Parses a non-negative integer query parameter; `fallback` when absent.
Result<int64_t> QueryInt(const S3Target& target, std::string_view name, int64_t fallback);

}  // namespace ferry::s3server
