#include "s3/aws_chunked.h"

#include <algorithm>
#include <charconv>

#include "base/strings.h"
#include "crypto/digest.h"

namespace ferry::s3 {
namespace {

constexpr size_t kMaxLine = 4096;
constexpr std::string_view kSignatureExtension = "chunk-signature=";
constexpr std::string_view kTrailerSignature = "x-amz-trailer-signature";

Status Malformed(std::string_view what) {
  return S3ErrorStatus(400, "InvalidRequest", "malformed aws-chunked body: " + std::string(what));
}

Status Incomplete(std::string message) {
  return S3ErrorStatus(400, "IncompleteBody", std::move(message));
}

Status SignatureMismatch(std::string_view what) {
  return S3ErrorStatus(403, "SignatureDoesNotMatch",
                       "The " + std::string(what) +
                           " signature we calculated does not match the signature you provided.");
}

std::string Sign(const ChunkChain& chain, std::string_view algorithm, std::string_view previous,
                 std::string_view last_lines) {
  std::string sts;
  sts.reserve(256);
  sts.append(algorithm).append("\n").append(chain.amz_date).append("\n").append(chain.scope);
  sts.append("\n").append(previous).append("\n").append(last_lines);
  return HexLower(HmacSha256(chain.signing_key, sts));
}

bool HasTrailer(PayloadMode m) {
  return m == PayloadMode::kStreamingSignedTrailer || m == PayloadMode::kStreamingUnsignedTrailer;
}

}  // namespace

std::optional<PayloadMode> ParsePayloadMode(std::string_view v) {
  if (v == kUnsignedPayload) return PayloadMode::kUnsigned;
  if (v == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD") return PayloadMode::kStreamingSigned;
  if (v == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER")
    return PayloadMode::kStreamingSignedTrailer;
  if (v == "STREAMING-UNSIGNED-PAYLOAD-TRAILER") return PayloadMode::kStreamingUnsignedTrailer;
  bool hex = v.size() == 64 && std::all_of(v.begin(), v.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
             });
  if (hex) return PayloadMode::kSignedHash;
  return std::nullopt;
}

bool HasChunkSignatures(PayloadMode m) {
  return m == PayloadMode::kStreamingSigned || m == PayloadMode::kStreamingSignedTrailer;
}

Result<std::optional<AwsChunkedOptions>> StreamingOptions(const KeyValues& h,
                                                          std::optional<ChunkChain> chain) {
  const std::string* claimed = FindValue(h, "x-amz-content-sha256");
  if (claimed == nullptr || claimed->rfind("STREAMING-", 0) != 0)
    return std::optional<AwsChunkedOptions>();
  std::optional<PayloadMode> mode = ParsePayloadMode(*claimed);
  if (!mode) {
    return S3ErrorStatus(400, "InvalidArgument", "x-amz-content-sha256 names no payload mode");
  }
  AwsChunkedOptions options;
  options.mode = *mode;
  options.chain = std::move(chain);
  if (const std::string* decoded = FindValue(h, "x-amz-decoded-content-length")) {
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(decoded->data(), decoded->data() + decoded->size(), n);
    if (ec != std::errc() || end != decoded->data() + decoded->size() || decoded->empty()) {
      return S3ErrorStatus(400, "InvalidArgument", "x-amz-decoded-content-length is not a number");
    }
    options.decoded_length = n;
  }
  if (const std::string* trailer = FindValue(h, "x-amz-trailer")) {
    options.declared_trailers = ParseTrailerNames(*trailer);
    if (!options.declared_trailers.empty() && !HasTrailer(*mode)) {
      return S3ErrorStatus(400, "InvalidRequest",
                           "x-amz-trailer was sent with a payload mode that has no trailers");
    }
  }
  return std::optional<AwsChunkedOptions>(std::move(options));
}

std::string ChunkSignature(const ChunkChain& chain, std::string_view previous,
                           std::string_view chunk_sha256_hex) {
  return Sign(chain, "AWS4-HMAC-SHA256-PAYLOAD", previous,
              std::string(kEmptyPayloadSha256) + "\n" + std::string(chunk_sha256_hex));
}

std::string TrailerSignature(const ChunkChain& chain, std::string_view previous,
                             std::string_view canonical_trailers) {
  return Sign(chain, "AWS4-HMAC-SHA256-TRAILER", previous, HexLower(Sha256(canonical_trailers)));
}

std::string WithoutAwsChunked(std::string_view enc) {
  std::string kept;
  while (!enc.empty()) {
    size_t comma = enc.find(',');
    std::string_view item = TrimOws(enc.substr(0, comma));
    enc = comma == std::string_view::npos ? std::string_view() : enc.substr(comma + 1);
    if (item.empty() || EqualsIgnoreCase(item, "aws-chunked")) continue;
    if (!kept.empty()) kept += ',';
    kept += item;
  }
  return kept;
}

std::vector<std::string> ParseTrailerNames(std::string_view v) {
  std::vector<std::string> names;
  while (!v.empty()) {
    size_t comma = v.find(',');
    std::string_view item = TrimOws(v.substr(0, comma));
    if (!item.empty()) names.push_back(AsciiLower(item));
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
  return names;
}

AwsChunkedDecoder::AwsChunkedDecoder(AwsChunkedOptions options) : options_(std::move(options)) {
  if (options_.chain) previous_signature_ = options_.chain->seed_signature;
}

AwsChunkedDecoder::~AwsChunkedDecoder() = default;

Status AwsChunkedDecoder::EndSizeLine() {
  std::string_view line = line_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t semi = line.find(';');
  std::string_view hex = line.substr(0, semi);
  uint64_t size = 0;
  auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), size, 16);
  if (hex.empty() || ec != std::errc() || ptr != hex.data() + hex.size()) {
    return Malformed("bad chunk size line");
  }
  if (HasChunkSignatures(options_.mode)) {
    std::string_view ext = semi == std::string_view::npos ? "" : line.substr(semi + 1);
    if (ext.substr(0, kSignatureExtension.size()) != kSignatureExtension) {
      return Malformed("a chunk without its chunk-signature");
    }
    chunk_signature_ = std::string(ext.substr(kSignatureExtension.size()));
    if (!chunk_hash_)
      chunk_hash_ = std::make_unique<StreamingDigest>(StreamingDigest::Kind::kSha256);
  }
  if (options_.decoded_length && size > *options_.decoded_length - decoded_) {
    return Incomplete("the chunks carry more than x-amz-decoded-content-length");
  }
  line_.clear();
  remaining_ = size;
  if (size > 0) {
    state_ = State::kData;
    return Status::Ok();
  }
  state_ = State::kTrailer;
  return EndChunk();
}

Status AwsChunkedDecoder::EndChunk() {
  if (!HasChunkSignatures(options_.mode) || !options_.chain) return Status::Ok();
  std::string want =
      ChunkSignature(*options_.chain, previous_signature_, HexLower(chunk_hash_->Finish()));
  if (!SameSignature(want, chunk_signature_)) return SignatureMismatch("chunk");
  previous_signature_ = std::move(want);
  return Status::Ok();
}

Status AwsChunkedDecoder::EndTrailerLine() {
  std::string_view line = line_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return EndTrailers();
  size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return Malformed("bad trailer line");
  std::string name = AsciiLower(TrimOws(line.substr(0, colon)));
  std::string value(TrimOws(line.substr(colon + 1)));
  if (name == kTrailerSignature) {
    trailer_signature_ = std::move(value);
  } else {
    if (std::find(options_.declared_trailers.begin(), options_.declared_trailers.end(), name) ==
        options_.declared_trailers.end()) {
      return Malformed("trailer '" + name + "' was not declared in x-amz-trailer");
    }
    canonical_trailers_.append(name).append(":").append(value).append("\n");
    trailers_.emplace_back(std::move(name), std::move(value));
  }
  line_.clear();
  return Status::Ok();
}

Status AwsChunkedDecoder::EndTrailers() {
  line_.clear();
  for (const std::string& declared : options_.declared_trailers) {
    bool seen = std::any_of(trailers_.begin(), trailers_.end(),
                            [&](const auto& kv) { return kv.first == declared; });
    if (!seen) return Malformed("declared trailer '" + declared + "' did not arrive");
  }
  if (options_.mode == PayloadMode::kStreamingSignedTrailer) {
    if (trailer_signature_.empty()) return Malformed("no x-amz-trailer-signature");
    if (!options_.chain) return Status::Ok();
    std::string want = TrailerSignature(*options_.chain, previous_signature_, canonical_trailers_);
    if (!SameSignature(want, trailer_signature_)) return SignatureMismatch("trailer");
  }
  state_ = State::kDone;
  return Status::Ok();
}

Status AwsChunkedDecoder::Feed(std::string_view in, const Emit& emit) {
  while (!in.empty()) {
    switch (state_) {
      case State::kSizeLine:
      case State::kTrailer: {
        size_t nl = in.find('\n');
        size_t take = nl == std::string_view::npos ? in.size() : nl;
        line_.append(in.substr(0, take));
        if (line_.size() > kMaxLine) return Malformed("line too long");
        if (nl == std::string_view::npos) return Status::Ok();
        in.remove_prefix(nl + 1);
        FERRY_RETURN_IF_ERROR(state_ == State::kSizeLine ? EndSizeLine() : EndTrailerLine());
        break;
      }
      case State::kData: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, in.size()));
        std::string_view piece = in.substr(0, take);
        if (chunk_hash_) chunk_hash_->Update(piece);
        FERRY_RETURN_IF_ERROR(emit(piece));
        decoded_ += take;
        in.remove_prefix(take);
        remaining_ -= take;
        if (remaining_ == 0) state_ = State::kDataCr;
        break;
      }
      case State::kDataCr:
        if (in.front() != '\r') return Malformed("missing CR after chunk data");
        in.remove_prefix(1);
        state_ = State::kDataLf;
        break;
      case State::kDataLf:
        if (in.front() != '\n') return Malformed("missing LF after chunk data");
        in.remove_prefix(1);
        state_ = State::kSizeLine;
        FERRY_RETURN_IF_ERROR(EndChunk());
        break;
      case State::kDone:
        return Malformed("data after the final chunk");
    }
  }
  return Status::Ok();
}

Status AwsChunkedDecoder::Finish() {
  if (state_ != State::kDone) {
    return Incomplete("The body ended before its final aws-chunked chunk and trailers.");
  }
  if (options_.decoded_length && decoded_ != *options_.decoded_length) {
    return Incomplete(
        "You did not provide the number of bytes specified by "
        "x-amz-decoded-content-length.");
  }
  return Status::Ok();
}

}  // namespace ferry::s3
