#include "exchange.h"

#include "admin.h"
#include "base/strings.h"
#include "handlers.h"
#include "responses.h"

namespace ferry::s3server {
namespace {

constexpr size_t kMaxBufferedBody = 16u << 20;

bool IsLowerHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsUpload(Op op) { return op == Op::kPutObject || op == Op::kUploadPart; }

bool IsObjectOp(Op op) {
  switch (op) {
    case Op::kPutObject:
    case Op::kCopyObject:
    case Op::kGetObject:
    case Op::kHeadObject:
    case Op::kDeleteObject:
    case Op::kCreateMultipart:
    case Op::kUploadPart:
    case Op::kCompleteMultipart:
    case Op::kAbortMultipart:
    case Op::kListParts:
    case Op::kGetObjectAttributes:
      return true;
    default:
      return false;
  }
}

std::string HexOf(const std::string& raw) {
  return HexLower(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
}

}  // namespace

Exchange::Exchange(Service& service, HttpRequest req, std::optional<uint64_t> content_length)
    : service_(service), req_(std::move(req)), content_length_(content_length) {}

void Exchange::Fail(const Status& st) {
  early_ = ErrorResponse(st, target_.canonical_path.empty() ? req_.target : target_.canonical_path,
                         request_id_, IsHead());
  mode_ = BodyMode::kDiscard;
  writer_.reset();
  buffer_.clear();
}

void Exchange::Begin(std::chrono::system_clock::time_point now) {
  request_id_ = service_.NextRequestId();
  if (IsAdminTarget(req_.target)) {
    admin_ = true;
    op_name_ = "admin";
    return;
  }
  auto routed = Route(req_);
  if (!routed.ok()) return Fail(routed.status());
  target_ = std::move(routed).value();
  op_name_ = std::string(OpName(target_.op));

  auto auth = service_.auth().Verify(req_, target_, now);
  if (!auth.ok()) return Fail(auth.status());
  auth_ = *auth;

  if (IsObjectOp(target_.op) && target_.key.size() > kMaxKeyBytes) {
    return Fail(S3Error(400, "KeyTooLongError", "Your key is too long"));
  }

  FaultPolicy& faults = service_.faults();
  latency_ = faults.Latency();
  const std::string* prefix = target_.Query("prefix");
  std::string_view fault_key = target_.op == Op::kListObjectsV1 || target_.op == Op::kListObjectsV2
                                   ? std::string_view(prefix ? *prefix : "")
                                   : std::string_view(target_.key);
  fault_ = faults.Decide(op_name_, fault_key);
  bool upload = IsUpload(target_.op);
  switch (fault_) {
    case FaultKind::kHttp403:
      return Fail(S3Error(403, "AccessDenied", "Access Denied"));
    case FaultKind::kHttp500:
      return Fail(
          S3Error(500, "InternalError", "We encountered an internal error. Please try again."));
    case FaultKind::kHttp503:
      return Fail(S3Error(503, "SlowDown", "Please reduce your request rate."));
    case FaultKind::kReset:
      if (upload) reset_after_ = content_length_.value_or(0) / 2;
      break;
    case FaultKind::kTruncate:
      if (upload) drop_after_body_ = true;
      break;
    default:
      break;
  }

  const std::string* sha = req_.Header("x-amz-content-sha256");
  if (sha && IsLowerHex64(*sha)) expected_sha256_ = *sha;
  auto streaming = s3::StreamingOptions(req_.headers, auth_.chain);
  if (!streaming.ok()) return Fail(streaming.status());
  if (*streaming) chunked_.emplace(std::move(**streaming));
  if (!expected_sha256_.empty() || auth_.deferred) {
    sha256_ = std::make_unique<StreamingDigest>(StreamingDigest::Kind::kSha256);
  }
  md5_ = std::make_unique<StreamingDigest>(StreamingDigest::Kind::kMd5);
  if (upload) {
    Status st = PrepareUpload();
    if (!st.ok()) return Fail(st);
    mode_ = BodyMode::kStream;
  }
}

Status Exchange::PrepareUpload() {
  Storage& storage = service_.storage();
  // The checksum named is verified and kept; a part of a composite upload
  // gets one of its upload's algorithm; else S3's default is deferred.
  std::optional<ChecksumAlgorithm> algorithm, computed;
  if (target_.op == Op::kUploadPart) {
    auto n = QueryInt(target_, "partNumber", 0);
    if (!n.ok() || *n < 1 || *n > 10000) {
      return S3Error(400, "InvalidArgument",
                     "Part number must be an integer between 1 and 10000, inclusive");
    }
    FERRY_ASSIGN_OR_RETURN(
        std::optional<s3::ObjectChecksum> plan,
        storage.UploadChecksumPlan(target_.bucket, target_.key, *target_.Query("uploadId")));
    if (plan) algorithm = plan->algorithm;
    if (plan && plan->type == s3::ChecksumType::kComposite) computed = plan->algorithm;
  } else {
    FERRY_RETURN_IF_ERROR(storage.CheckBucket(target_.bucket));
  }
  FERRY_ASSIGN_OR_RETURN(s3::ChecksumCheck check,
                         s3::ChecksumCheck::FromHeaders(req_.headers, computed));
  if (algorithm && check.active() && check.algorithm() != algorithm) {
    return S3Error(400, "InvalidRequest",
                   "Checksum Type mismatch occurred, expected checksum Type: " +
                       AsciiLower(ChecksumAlgorithmName(*algorithm)) + ", actual checksum Type: " +
                       AsciiLower(ChecksumAlgorithmName(*check.algorithm())));
  }
  if (check.active()) checksum_ = std::move(check);
  uint64_t hint = content_length_.value_or(0);
  if (const std::string* decoded = req_.Header("x-amz-decoded-content-length")) {
    hint = std::strtoull(decoded->c_str(), nullptr, 10);
  }
  FERRY_ASSIGN_OR_RETURN(writer_, storage.blobs().NewWriter(hint));
  return Status::Ok();
}

Status Exchange::Consume(std::string_view decoded) {
  decoded_bytes_ += decoded.size();
  md5_->Update(decoded);
  if (sha256_) sha256_->Update(decoded);
  if (checksum_) checksum_->Update(decoded);
  if (mode_ == BodyMode::kStream) return writer_->Append(decoded);
  if (buffer_.size() + decoded.size() > kMaxBufferedBody) {
    return S3Error(400, "MaxMessageLengthExceeded", "Your request was too big.");
  }
  buffer_.append(decoded);
  return Status::Ok();
}

void Exchange::OnBody(std::string_view raw) {
  bytes_in_ += raw.size();
  if (mode_ == BodyMode::kDiscard || admin_) {
    if (admin_ && buffer_.size() + raw.size() <= kMaxBufferedBody) buffer_.append(raw);
    return;
  }
  Status st = chunked_ ? chunked_->Feed(raw, [this](std::string_view d) { return Consume(d); })
                       : Consume(raw);
  if (!st.ok()) {
    Fail(st.remote_code().empty() ? S3Error(400, "IncompleteBody", st.message()) : st);
  }
}

Status Exchange::CheckIntegrity() {
  if (chunked_) FERRY_RETURN_IF_ERROR(chunked_->Finish());
  if (checksum_) {
    FERRY_ASSIGN_OR_RETURN(checksum_value_,
                           checksum_->Finish(chunked_ ? chunked_->trailers() : s3::KeyValues{}));
  }
  md5_hex_ = HexOf(md5_->Finish());
  if (sha256_) {
    std::string got = HexOf(sha256_->Finish());
    if (!expected_sha256_.empty() && got != expected_sha256_) {
      return S3Error(400, "XAmzContentSHA256Mismatch",
                     "The provided 'x-amz-content-sha256' header does not match what was "
                     "computed.");
    }
    if (auth_.deferred) FERRY_RETURN_IF_ERROR(service_.auth().VerifyDeferred(req_, target_, got));
  }
  if (const std::string* want = req_.Header("content-md5")) {
    std::string raw;
    if (!Base64Decode(*want, &raw) || raw.size() != 16) {
      return S3Error(400, "InvalidDigest", "The Content-MD5 you specified was invalid.");
    }
    if (HexOf(raw) != md5_hex_) {
      return S3Error(400, "BadDigest",
                     "The Content-MD5 you specified did not match what we received.");
    }
  }
  return Status::Ok();
}

HttpResponse Exchange::Handle() {
  Status st = CheckIntegrity();
  std::shared_ptr<const Blob> blob;
  if (st.ok() && writer_) {
    auto finished = writer_->Finish();
    writer_.reset();
    if (finished.ok()) {
      blob = std::move(finished).value();
    } else {
      st = finished.status();
    }
  }
  if (!st.ok()) return ErrorResponse(st, target_.canonical_path, request_id_, IsHead());
  if (drop_after_body_) {
    HttpResponse res;
    res.delivery = Delivery::kDropConnection;
    return res;
  }
  HandlerContext ctx{service_,        req_,     target_,
                     request_id_,     fault_,   std::move(buffer_),
                     std::move(blob), md5_hex_, checksum_value_};
  HttpResponse res = Dispatch(ctx);
  if (fault_ == FaultKind::kReset && !reset_after_) res.delivery = Delivery::kReset;
  if (fault_ == FaultKind::kTruncate) res.delivery = Delivery::kTruncate;
  if (fault_ == FaultKind::kCorrupt) res.delivery = Delivery::kCorrupt;
  return res;
}

void Exchange::Finish() {
  if (admin_) {
    response_ = HandleAdmin(service_, req_, buffer_);
  } else if (early_) {
    response_ = std::move(*early_);
  } else {
    response_ = Handle();
  }
  response_.SetHeader("x-amz-request-id", request_id_);
  response_.SetHeader("Server", "ferry-test-s3");
  if (response_.status == 503) response_.SetHeader("Retry-After", "1");
}

void Exchange::Record(uint64_t bytes_out) {
  if (admin_) return;
  OpStats d;
  d.requests = 1;
  d.errors = response_.status >= 400 || response_.delivery != Delivery::kNormal ||
                     fault_ == FaultKind::kComplete200Error
                 ? 1
                 : 0;
  d.bytes_in = bytes_in_;
  d.bytes_out = bytes_out;
  d.faults = fault_ != FaultKind::kNone ? 1 : 0;
  service_.counters().Record(op_name_, d);
}

}  // namespace ferry::s3server
