#include "gateway/upload_body.h"

#include <algorithm>
#include <cstring>

#include "crypto/digest.h"
#include "s3/sigv4_verify.h"

namespace ferry::gateway {
namespace {

constexpr size_t kPiece = 64 << 10;

// What a raw body's failure is to the client: too large, or cut short.
Status RawFailure(const Status& st) {
  if (st.code() == ErrorCode::kInvalidArgument) {
    return s3::S3ErrorStatus(
        400, "EntityTooLarge",
        "Your proposed upload exceeds the maximum allowed size: " + st.message());
  }
  return s3::S3ErrorStatus(400, "IncompleteBody",
                           "You did not provide the number of bytes specified by the "
                           "Content-Length HTTP header: " +
                               st.message());
}

}  // namespace

Result<UploadPlan> PlanUpload(const s3::KeyValues& lower_headers,
                              std::optional<s3::ChunkChain> chain,
                              std::optional<uint64_t> raw_length) {
  UploadPlan plan;
  FERRY_ASSIGN_OR_RETURN(plan.streaming, s3::StreamingOptions(lower_headers, std::move(chain)));
  FERRY_ASSIGN_OR_RETURN(plan.check, s3::ChecksumCheck::FromHeaders(lower_headers));
  if (plan.streaming) {
    plan.size = plan.streaming->decoded_length;
    return plan;
  }
  plan.size = raw_length;
  if (const std::string* claimed = s3::FindValue(lower_headers, "x-amz-content-sha256");
      claimed != nullptr && s3::IsLowerHex64(*claimed)) {
    plan.signed_sha256 = *claimed;
  }
  return plan;
}

UploadBody::UploadBody(ByteSource* raw, UploadPlan plan, bool hash_payload)
    : raw_(raw), plan_(std::move(plan)), size_(plan_.size) {
  if (plan_.streaming) decoder_ = std::make_unique<s3::AwsChunkedDecoder>(*plan_.streaming);
  if (hash_payload || !plan_.signed_sha256.empty()) {
    sha256_ = std::make_unique<StreamingDigest>(StreamingDigest::Kind::kSha256);
  }
}

UploadBody::~UploadBody() = default;

Status UploadBody::Fail(Status st) {
  if (failure_.ok()) failure_ = std::move(st);
  return failure_;
}

Status UploadBody::Pull() {
  char piece[kPiece];
  auto n = raw_->Read(piece, sizeof piece);
  if (!n.ok()) return Fail(RawFailure(n.status()));
  if (*n == 0) {
    raw_done_ = true;
    return Finish();
  }
  auto accept = [this](std::string_view d) {
    plan_.check.Update(d);
    if (sha256_) sha256_->Update(d);
    pending_.append(d);
    decoded_ += d.size();
    return Status::Ok();
  };
  std::string_view got(piece, *n);
  if (!decoder_) return accept(got);
  if (Status st = decoder_->Feed(got, accept); !st.ok()) return Fail(std::move(st));
  return Status::Ok();
}

Status UploadBody::Finish() {
  if (decoder_) {
    if (Status st = decoder_->Finish(); !st.ok()) return Fail(std::move(st));
  }
  auto sum = plan_.check.Finish(decoder_ ? decoder_->trailers() : s3::KeyValues{});
  if (!sum.ok()) return Fail(sum.status());
  checksum_ = std::move(*sum);
  if (sha256_) {
    sha256_hex_ = HexLower(sha256_->Finish());
    if (!plan_.signed_sha256.empty() && sha256_hex_ != plan_.signed_sha256) {
      return Fail(s3::S3ErrorStatus(400, "XAmzContentSHA256Mismatch",
                                    "The provided 'x-amz-content-sha256' header does not match "
                                    "what was computed."));
    }
  }
  if (size_ && decoded_ != *size_) {
    return Fail(RawFailure(Status::Corruption(std::to_string(decoded_) + " bytes arrived of " +
                                              std::to_string(*size_))));
  }
  return Status::Ok();
}

Result<size_t> UploadBody::Read(char* buf, size_t cap) {
  if (!failure_.ok()) return failure_;
  // Until the raw body ends, one byte stays back (see the contract).
  while (!raw_done_ && pending_.size() - at_ <= 1) FERRY_RETURN_IF_ERROR(Pull());
  size_t avail = pending_.size() - at_;
  if (!raw_done_) avail -= 1;
  const size_t n = std::min(cap, avail);
  std::memcpy(buf, pending_.data() + at_, n);
  at_ += n;
  if (at_ >= kPiece || at_ == pending_.size()) {
    pending_.erase(0, at_);
    at_ = 0;
  }
  return n;
}

Result<std::string> UploadBody::ReadAll(uint64_t limit) {
  std::string out;
  if (size_ && *size_ <= limit) out.reserve(static_cast<size_t>(*size_));
  char piece[kPiece];
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(size_t n, Read(piece, sizeof piece));
    if (n == 0) return out;
    if (out.size() + n > limit) {
      return Fail(RawFailure(Status::InvalidArgument("over " + std::to_string(limit) + " bytes")));
    }
    out.append(piece, n);
  }
}

Result<size_t> RequestBodySource::Read(char* buf, size_t cap) { return body_->Read(buf, cap); }

}  // namespace ferry::gateway
