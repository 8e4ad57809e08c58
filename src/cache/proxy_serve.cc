// Proxy's answers from a stored object: to a lower tier as stored, else
// negotiated (zstd or identity, decoded once per stay in memory), with
// conditionals and one byte range.
#include <spdlog/spdlog.h>

#include "cache/negotiation.h"
#include "cache/proxy_internal.h"
#include "cache/range.h"
#include "codec/zstd_codec.h"

namespace ferry::cache {
namespace {

using namespace proxy_detail;  // NOLINT: the Proxy's own helpers

// Whether a conditional request matches `etag` (the one this answer
// carries) or the object's Last-Modified.
bool MatchesConditional(const ProxyRequest& req, const CachedObject& object, const std::string& etag) {
  return object.meta.status == 200 && NotModified(HeaderValue(req.headers, "if-none-match"),
                                                  HeaderValue(req.headers, "if-modified-since"), etag,
                                                  object.last_modified);
}

ProxyResponse NotModifiedAnswer(ProxyResponse r) {
  r.status = 304;
  static constexpr std::string_view kBodyFields[] = {"Content-Type", "Content-Encoding", "Content-Language",
                                                     "Accept-Ranges", kStoredHeader};
  for (std::string_view h : kBodyFields) RemoveHeader(&r.headers, h);
  r.keep.reset();
  return r;
}

// To a lower tier: the stored bytes as they are, marked, under the
// original validators.
ProxyResponse StoredAnswer(const ProxyRequest& req, const CachedObject& object, ProxyResponse r) {
  const EntryMeta& m = object.meta;
  if (m.encoding == StoredEncoding::kZstd) {
    SetHeader(&r.headers, "Content-Encoding", "zstd");
    SetHeader(&r.headers, kStoredHeader, "zstd; length=" + std::to_string(m.logical_length));
  }
  if (MatchesConditional(req, object, HeaderValue(m.headers, "etag"))) return NotModifiedAnswer(std::move(r));
  if (req.method == "HEAD") {
    r.head_length = object.body.size();
  } else {
    r.body = object.body;
  }
  return r;
}

}  // namespace

ProxyResponse Proxy::Serve(const ProxyRequest& req, const std::shared_ptr<const CachedObject>& object,
                           CacheStatus x_cache) {
  const EntryMeta& m = object->meta;
  ProxyResponse r;
  r.status = m.status;
  r.headers = m.headers;
  r.keep = object;
  SetHeader(&r.headers, "Age", std::to_string(object->AgeAt(Now()).count()));
  SetHeader(&r.headers, "X-Cache", std::string(CacheStatusName(x_cache)));
  // A big object goes to a lower tier as to any client (its frames are not
  // one zstd frame a tier could take as stored).
  if (HeaderValue(req.headers, kTierHeader) == "stored" && !object->big) {
    return StoredAnswer(req, *object, std::move(r));
  }

  // A Range is answered from the identity representation.
  const bool zstd_stored = m.encoding == StoredEncoding::kZstd;
  std::string range = HeaderValue(req.headers, "range");
  const bool send_zstd =
      zstd_stored && range.empty() && AcceptsCoding(HeaderValue(req.headers, "accept-encoding"), "zstd");
  std::string etag = HeaderValue(m.headers, "etag");
  if (zstd_stored) SetHeader(&r.headers, "Vary", "Accept-Encoding");
  if (send_zstd) {
    SetHeader(&r.headers, "Content-Encoding", "zstd");
    RemoveHeader(&r.headers, "Accept-Ranges");
    if (!etag.empty()) {
      etag = ZstdEtag(etag);
      SetHeader(&r.headers, "ETag", etag);
    }
  }
  if (MatchesConditional(req, *object, etag)) return NotModifiedAnswer(std::move(r));

  const uint64_t stored_size = object->big ? m.stored_length : object->body.size();
  uint64_t length = send_zstd || !zstd_stored ? stored_size : m.logical_length;
  RangeDecision rd;
  if (!send_zstd && m.status == 200) {
    SetHeader(&r.headers, "Accept-Ranges", "bytes");
    rd = DecideRange(range, HeaderValue(req.headers, "if-range"), etag, HeaderValue(m.headers, "last-modified"),
                     length);
  }
  if (rd.kind == RangeDecision::Kind::kUnsatisfiable) {
    r.status = 416;
    SetHeader(&r.headers, "Content-Range", "bytes */" + std::to_string(length));
    RemoveHeader(&r.headers, "Content-Type");
    r.body = {};
    r.keep.reset();
    return r;
  }
  uint64_t first = 0, count = length;
  if (rd.kind == RangeDecision::Kind::kPartial) {
    r.status = 206;
    first = rd.first;
    count = rd.last - rd.first + 1;
    SetHeader(&r.headers, "Content-Range",
              "bytes " + std::to_string(rd.first) + "-" + std::to_string(rd.last) + "/" + std::to_string(length));
  }
  if (req.method == "HEAD") {
    r.head_length = count;
    r.keep.reset();
    return r;
  }
  if (object->big) {  // from disk as it is sent: only the frames [first, first + count) covers
    r.stream = BigBody(object, send_zstd, first, count);
    r.stream_length = count;
    return r;
  }
  if (!zstd_stored || send_zstd) {
    r.body = std::string_view(object->body).substr(first, count);
    return r;
  }
  std::shared_ptr<const CachedObject> plain = DecodedCopy(*object);
  if (!plain) return Simple(502, "cache: a stored entry failed to decode", x_cache);
  r.body = std::string_view(plain->body).substr(first, count);
  r.keep = std::move(plain);
  return r;
}

std::shared_ptr<const CachedObject> Proxy::DecodedCopy(const CachedObject& object) {
  const EntryMeta& m = object.meta;
  std::shared_ptr<const CachedObject> plain = decoded_.Get(m.key);
  if (plain && plain->id == object.id) return plain;
  auto start = SteadyClock::now();
  auto decoded = codec::ZstdDecompress(object.body);
  if (!decoded.ok() || decoded->size() != m.logical_length) {
    counters_.errors++;
    spdlog::warn("cache: a stored entry failed to decode; removed");
    (void)store_->Remove(m.key);
    Forget(m.key);
    return nullptr;
  }
  counters_.decode_ns += NanosSince(start);
  counters_.decode_bytes += decoded->size();
  auto copy = std::make_shared<CachedObject>();
  copy->meta.key = m.key;
  copy->id = object.id;
  copy->body = std::move(decoded).value();
  decoded_.Put(copy);
  return copy;
}

bool Proxy::NeedsDecode(const ProxyRequest& req, const CachedObject& object) {
  // A big object decodes a frame at a time as it is sent, on a worker.
  if (object.big || object.meta.encoding != StoredEncoding::kZstd || req.method == "HEAD") return false;
  if (HeaderValue(req.headers, kTierHeader) == "stored") return false;
  if (HeaderValue(req.headers, "range").empty() &&
      AcceptsCoding(HeaderValue(req.headers, "accept-encoding"), "zstd")) {
    return false;
  }
  auto plain = decoded_.Get(object.meta.key);
  return !plain || plain->id != object.id;
}

}  // namespace ferry::cache
