// The gateway's answers: S3 error documents, objects from memory with
// their conditions and ranges, large objects streamed from the destination
// in ranges, and the object headers a PUT carries.

#include <algorithm>

#include "base/strings.h"
#include "base/unix_time.h"
#include "cache/range.h"
#include "gateway/gateway_internal.h"
#include "gateway/s3_xml.h"
#include "http/date.h"
#include "s3/aws_chunked.h"
#include "s3/flexible_checksum.h"

namespace ferry::gateway {
namespace {

constexpr uint64_t kStreamChunk = 8ull << 20;

std::pair<int, const char*> AnswerFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return {400, "InvalidArgument"};
    case ErrorCode::kNotFound:
      return {404, "NoSuchKey"};
    case ErrorCode::kAccessDenied:
      return {403, "AccessDenied"};
    case ErrorCode::kPreconditionFailed:
      return {412, "PreconditionFailed"};
    case ErrorCode::kUnsupported:
      return {501, "NotImplemented"};
    case ErrorCode::kCorruption:
      return {400, "BadDigest"};
    case ErrorCode::kThrottled:
    case ErrorCode::kNetwork:
    case ErrorCode::kTimeout:
    case ErrorCode::kServerError:
      return {503, "ServiceUnavailable"};
    default:
      return {500, "InternalError"};
  }
}

std::string HttpDateOf(TimePoint t) {
  return http::FormatHttpDate(std::chrono::floor<std::chrono::seconds>(t));
}

// Reads [first, last] of the object a range at a time, each GET pinned to
// the ETag the answer's headers promised.
class RangeReader : public http::BodyReader {
 public:
  RangeReader(ObjectStore& dst, std::string key, std::string etag, uint64_t first, uint64_t last)
      : dst_(dst), key_(std::move(key)), etag_(std::move(etag)), next_(first), last_(last) {}

  Result<std::string> Read(size_t max) override {
    if (pending_.empty()) {
      if (next_ > last_) return std::string();
      uint64_t n = std::min<uint64_t>(kStreamChunk, last_ - next_ + 1);
      GetOptions o;
      o.range = ByteRange{next_, n};
      o.if_match = etag_;
      StringSink sink;
      FERRY_RETURN_IF_ERROR(dst_.Get(key_, o, sink).status());
      pending_ = std::move(sink.data());
      if (pending_.size() != n) return Status::Corruption("short range read of " + key_);
      next_ += n;
      at_ = 0;
    }
    size_t take = std::min(max, pending_.size() - at_);
    std::string out = pending_.substr(at_, take);
    at_ += take;
    if (at_ == pending_.size()) pending_.clear();
    return out;
  }
  void Cancel() override {}

 private:
  ObjectStore& dst_;
  const std::string key_, etag_;
  uint64_t next_, last_;
  std::string pending_;
  size_t at_ = 0;
};

// The conditions' answer when they do not let the request proceed.
std::optional<http::ServerResponse> ConditionAnswer(const Request& r, const ObjectInfo& info) {
  Precondition p = Evaluate(r.Conditions(), info.etag, info.last_modified);
  if (p == Precondition::kProceed) return std::nullopt;
  if (p == Precondition::kFailed) {
    return ErrorAnswer(s3::S3ErrorStatus(412, "PreconditionFailed",
                                         "At least one of the pre-conditions you specified did "
                                         "not hold"),
                       r.http->target);
  }
  http::ServerResponse resp;
  resp.status = 304;
  http::SetHeader(&resp.headers, "ETag", "\"" + info.etag + "\"");
  http::SetHeader(&resp.headers, "Last-Modified", HttpDateOf(info.last_modified));
  return resp;
}

}  // namespace

std::string Request::Header(std::string_view name) const {
  return http::HeaderValue(http->headers, name);
}

RequestConditions Request::Conditions() const {
  return RequestConditions{Header("If-Match"), Header("If-None-Match"), Header("If-Modified-Since"),
                           Header("If-Unmodified-Since")};
}

http::ServerResponse ErrorAnswer(const Status& st, std::string_view resource) {
  int status;
  std::string code;
  if (st.http_status() != 0 && !st.remote_code().empty()) {
    status = st.http_status();
    code = st.remote_code();
  } else {
    auto [s, c] = AnswerFor(st.code());
    status = s;
    code = c;
  }
  http::ServerResponse resp;
  resp.status = status;
  http::SetHeader(&resp.headers, "Content-Type", "application/xml");
  if (status == 503) http::SetHeader(&resp.headers, "Retry-After", "1");
  resp.SetBody(ErrorXml(code, st.message(), resource));
  return resp;
}

void AddObjectHeaders(const ObjectInfo& info, http::Headers* h) {
  http::SetHeader(h, "ETag", "\"" + info.etag + "\"");
  http::SetHeader(h, "Last-Modified", HttpDateOf(info.last_modified));
  http::SetHeader(h, "Accept-Ranges", "bytes");
  const ObjectHeaders& o = info.headers;
  http::SetHeader(h, "Content-Type",
                  o.content_type.empty() ? "binary/octet-stream" : o.content_type);
  if (!o.content_encoding.empty()) http::SetHeader(h, "Content-Encoding", o.content_encoding);
  if (!o.content_disposition.empty()) {
    http::SetHeader(h, "Content-Disposition", o.content_disposition);
  }
  if (!o.cache_control.empty()) http::SetHeader(h, "Cache-Control", o.cache_control);
  if (!o.content_language.empty()) http::SetHeader(h, "Content-Language", o.content_language);
  if (!o.expires.empty()) http::SetHeader(h, "Expires", o.expires);
  for (const auto& [name, value] : o.user) http::SetHeader(h, "x-amz-meta-" + name, value);
}

ObjectHeaders HeadersOfPut(const http::ServerRequest& req) {
  ObjectHeaders o;
  for (const auto& [name, value] : req.headers) {
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
    if (n == "content-type")
      o.content_type = value;
    else if (n == "content-encoding")
      o.content_encoding = s3::WithoutAwsChunked(value);
    else if (n == "content-disposition")
      o.content_disposition = value;
    else if (n == "cache-control")
      o.cache_control = value;
    else if (n == "content-language")
      o.content_language = value;
    else if (n == "expires")
      o.expires = value;
    else if (n.rfind("x-amz-meta-", 0) == 0)
      o.user[n.substr(11)] = value;
  }
  return o;
}

http::ServerResponse ObjectAnswer(const Request& r, const Held& held, bool head) {
  const ObjectInfo& info = held.info;
  if (auto c = ConditionAnswer(r, info)) return *c;
  http::ServerResponse resp;
  AddObjectHeaders(info, &resp.headers);
  const uint64_t size = held.body ? held.body->size() : info.size;
  auto range = cache::DecideRange(r.Header("Range"), r.Header("If-Range"), "\"" + info.etag + "\"",
                                  HttpDateOf(info.last_modified), size);
  uint64_t first = 0, length = size;
  if (range.kind == cache::RangeDecision::Kind::kUnsatisfiable) {
    auto err = ErrorAnswer(
        s3::S3ErrorStatus(416, "InvalidRange", "The requested range is not satisfiable"),
        r.http->target);
    http::SetHeader(&err.headers, "Content-Range", "bytes */" + std::to_string(size));
    return err;
  }
  if (range.kind == cache::RangeDecision::Kind::kPartial) {
    resp.status = 206;
    first = range.first;
    length = range.last - range.first + 1;
    http::SetHeader(&resp.headers, "Content-Range",
                    "bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) +
                        "/" + std::to_string(size));
  }
  // The stored checksum, when asked for, describes the whole object only.
  if (info.checksum && resp.status == 200 &&
      EqualsIgnoreCase(r.Header("x-amz-checksum-mode"), "ENABLED")) {
    s3::AddChecksumHeaders(*info.checksum, &resp.headers);
  }
  if (head || !held.body) {
    resp.head_length = length;
    return resp;
  }
  resp.body = std::string_view(*held.body).substr(first, length);
  resp.keep = held.body;
  return resp;
}

http::ServerResponse StreamAnswer(const Request& r, const ObjectInfo& info, bool head,
                                  const ReaderFor& reader) {
  if (auto c = ConditionAnswer(r, info)) return *c;
  Held sized{info, nullptr};
  http::ServerResponse resp = ObjectAnswer(r, sized, true);
  if (head || resp.status >= 300 || !resp.head_length) return resp;
  uint64_t first = 0;
  if (resp.status == 206) {
    std::string cr = http::HeaderValue(resp.headers, "Content-Range");
    first = std::stoull(cr.substr(6, cr.find('-') - 6));
  }
  const uint64_t length = *resp.head_length;
  resp.head_length.reset();
  resp.stream_length = length;
  if (length > 0) resp.stream = reader(first, first + length - 1);
  return resp;
}

ReaderFor RangesOf(ObjectStore& store, const std::string& store_key, const std::string& etag) {
  return [&store, store_key, etag](uint64_t first, uint64_t last) {
    return std::make_shared<RangeReader>(store, store_key, etag, first, last);
  };
}

}  // namespace ferry::gateway
