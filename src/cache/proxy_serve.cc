// Proxy's answers from a stored object: to a lower tier as stored, else
// negotiated (zstd or identity, decoded once per stay in memory), with
// conditionals and one byte range.
#include <spdlog/spdlog.h>

#include "cache/negotiation.h"
#include "cache/proxy_internal.h"
#include "cache/range.h"
#include "codec/text_codings.h"
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

// Whether a lower tier's request is answered with the stored bytes. A big
// object goes as to any client (its frames are not one zstd frame a tier
// could take as stored), and so does an entry made with a trained
// dictionary (the dictionary is this tier's own).
bool SentAsStored(const ProxyRequest& req, const CachedObject& object) {
  return HeaderValue(req.headers, kTierHeader) == "stored" && !object.big &&
         object.meta.encoding != StoredEncoding::kZstdDict;
}

// An answer's status and headers from a stored object, with Age and X-Cache.
ProxyResponse StoredHeaders(const std::shared_ptr<const CachedObject>& object, CacheStatus x_cache) {
  ProxyResponse r;
  r.status = object->meta.status;
  r.headers = object->meta.headers;
  r.keep = object;
  SetHeader(&r.headers, "Age", std::to_string(object->AgeAt(Now()).count()));
  SetHeader(&r.headers, "X-Cache", std::string(CacheStatusName(x_cache)));
  return r;
}

}  // namespace

ProxyResponse Proxy::Serve(const ProxyRequest& req, const std::shared_ptr<const CachedObject>& object,
                           CacheStatus x_cache, bool may_block) {
  const EntryMeta& m = object->meta;
  ProxyResponse r = StoredHeaders(object, x_cache);
  const bool to_tier = SentAsStored(req, *object);
  // This answer may be a compression dictionary (RFC 9842); a parent hop
  // passes on what marks it.
  MarkDictionary(req, object, to_tier, may_block, &r);
  if (to_tier) return StoredAnswer(req, *object, std::move(r));

  // A Range is answered from the identity representation; otherwise the
  // client gets the stored zstd, a br or gzip variant made from it, or
  // identity (negotiation.h).
  const bool zstd_stored = m.encoding != StoredEncoding::kIdentity;  // (with a trained dictionary: sent decoded)
  std::string range = HeaderValue(req.headers, "range");
  const Coding coding =
      range.empty() ? ChooseCoding(HeaderValue(req.headers, "accept-encoding"), Offer(*object)) : Coding::kIdentity;
  const bool coded = coding != Coding::kIdentity;
  std::string etag = HeaderValue(m.headers, "etag");
  if (zstd_stored) SetHeader(&r.headers, "Vary", "Accept-Encoding");
  // The client may hold a dictionary that makes a smaller answer.
  if (range.empty()) {
    if (auto dcz = DczAnswer(req, object, coding, may_block, &r)) return std::move(*dcz);
  }
  if (coded) {
    SetHeader(&r.headers, "Content-Encoding", std::string(CodingName(coding)));
    RemoveHeader(&r.headers, "Accept-Ranges");
    if (!etag.empty()) {
      etag = CodingEtag(etag, coding);
      SetHeader(&r.headers, "ETag", etag);
    }
  }
  if (MatchesConditional(req, *object, etag)) return Counted(coding, NotModifiedAnswer(std::move(r)));

  // The bytes this answer is cut from: the stored body (zstd or identity),
  // a variant, or the decoded copy; a big object's frames on disk.
  const uint64_t stored_size = object->big ? m.stored_length : object->body.size();
  std::shared_ptr<const CachedObject> source = AnswerSource(req, object, coding);
  if (!source) return Simple(502, "cache: a stored entry failed to decode", x_cache);
  uint64_t length = source != object            ? source->body.size()
                    : coded || !zstd_stored    ? stored_size
                                               : m.logical_length;
  RangeDecision rd;
  if (!coded && m.status == 200) {
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
    return Counted(coding, std::move(r));
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
    return Counted(coding, std::move(r));
  }
  if (object->big) {  // from disk as it is sent: only the frames [first, first + count) covers
    r.stream = BigBody(object, coding == Coding::kZstd, first, count);
    r.stream_length = count;
    return Counted(coding, std::move(r));
  }
  r.body = std::string_view(source->body).substr(first, count);
  r.keep = std::move(source);
  return Counted(coding, std::move(r));
}

std::optional<ProxyResponse> Proxy::DczAnswer(const ProxyRequest& req,
                                              const std::shared_ptr<const CachedObject>& object, Coding coding,
                                              bool may_block, ProxyResponse* partial) {
  if (HeaderValue(req.headers, "available-dictionary").empty()) return std::nullopt;
  const uint64_t ordinary = coding == Coding::kIdentity ? object->meta.logical_length : object->body.size();
  DictionaryInfo used;
  std::shared_ptr<const CachedObject> dcz = DczVariant(req, object, ordinary, may_block, &used);
  const bool vary_id = dcz && !used.mark.id.empty();
  if (dcz || object->meta.encoding == StoredEncoding::kZstd) {
    SetHeader(&partial->headers, "Vary", vary_id ? "Accept-Encoding, Available-Dictionary, Dictionary-ID"
                                                 : "Accept-Encoding, Available-Dictionary");
  }
  if (!dcz) return std::nullopt;
  ProxyResponse r = std::move(*partial);
  SetHeader(&r.headers, "Content-Encoding", "dcz");
  RemoveHeader(&r.headers, "Accept-Ranges");
  std::string etag = HeaderValue(object->meta.headers, "etag");
  if (!etag.empty()) {
    etag = DczEtag(etag, used.hash);
    SetHeader(&r.headers, "ETag", etag);
  }
  if (MatchesConditional(req, *object, etag)) return Counted(Coding::kDcz, NotModifiedAnswer(std::move(r)));
  if (req.method == "HEAD") {
    r.head_length = dcz->body.size();
    r.keep.reset();
    return Counted(Coding::kDcz, std::move(r));
  }
  r.body = dcz->body;
  r.keep = std::move(dcz);
  return Counted(Coding::kDcz, std::move(r));
}

std::shared_ptr<const CachedObject> Proxy::AnswerSource(const ProxyRequest& req,
                                                         const std::shared_ptr<const CachedObject>& object,
                                                         Coding coding) {
  if (object->big) return object;  // its frames, read from disk as sent
  if (coding == Coding::kBr || coding == Coding::kGzip) return VariantCopy(*object, coding);
  const bool compressed = object->meta.encoding != StoredEncoding::kIdentity;
  if (compressed && coding == Coding::kIdentity && req.method != "HEAD") return DecodedCopy(*object);
  return object;
}

CodingOffer Proxy::Offer(const CachedObject& object) const {
  CodingOffer offer;
  offer.zstd = object.meta.encoding == StoredEncoding::kZstd;
  // Variants of what the cache compressed (eligible text) and holds in
  // memory, answered whole (a big object: zstd or identity only).
  const bool text = offer.zstd && object.meta.status == 200 && !object.big;
  offer.br = text && options_.br_level > 0;
  offer.gzip = text && options_.gzip_level > 0;
  return offer;
}

ProxyResponse Proxy::Counted(Coding coding, ProxyResponse r) {
  auto i = static_cast<size_t>(coding);
  counters_.coding_responses[i]++;
  counters_.coding_bytes[i] += r.stream ? r.stream_length.value_or(0) : r.body.size();
  return r;
}

std::shared_ptr<const CachedObject> Proxy::VariantCopy(const CachedObject& object, Coding coding) {
  const EntryMeta& m = object.meta;
  const std::string key = m.key + "\n" + std::string(CodingName(coding));  // never a request's key
  std::shared_ptr<const CachedObject> variant = decoded_.Get(key);
  if (variant && variant->id == object.id) return variant;
  std::shared_ptr<const CachedObject> plain = DecodedCopy(object);
  if (!plain) return nullptr;
  const uint64_t cpu_start = ThreadCpuNanos();
  auto coded = coding == Coding::kBr ? codec::BrotliCompress(plain->body, options_.br_level)
                                     : codec::GzipCompress(plain->body, options_.gzip_level);
  if (!coded.ok()) {
    spdlog::warn("cache: {} of an entry failed: {}", CodingName(coding), coded.status().ToString());
    counters_.errors++;
    return nullptr;
  }
  auto i = static_cast<size_t>(coding);
  counters_.coding_encode_ns[i] += ThreadCpuNanos() - cpu_start;
  counters_.coding_encode_bytes[i] += plain->body.size();
  auto copy = std::make_shared<CachedObject>();
  copy->meta.key = key;
  copy->id = object.id;
  copy->body = std::move(coded).value();
  decoded_.Put(copy);
  return copy;
}

std::shared_ptr<const CachedObject> Proxy::DecodedCopy(const CachedObject& object) {
  const EntryMeta& m = object.meta;
  std::shared_ptr<const CachedObject> plain = decoded_.Get(m.key);
  if (plain && plain->id == object.id) return plain;
  const uint64_t cpu_start = ThreadCpuNanos();
  auto decoded = m.encoding == StoredEncoding::kZstdDict
                     ? (trained_ ? trained_->Decompress(object.body, m.logical_length)
                                 : Result<std::string>(Status::NotFound("trained dictionaries are off")))
                     : codec::ZstdDecompress(object.body);
  if (!decoded.ok() || decoded->size() != m.logical_length) {
    counters_.errors++;
    spdlog::warn("cache: a stored entry failed to decode; removed");
    (void)store_->Remove(m.key);
    Forget(m.key);
    return nullptr;
  }
  counters_.decode_ns += ThreadCpuNanos() - cpu_start;
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
  if (object.big || object.meta.encoding == StoredEncoding::kIdentity) return false;
  if (SentAsStored(req, object)) return false;
  const bool ranged = !HeaderValue(req.headers, "range").empty();
  const Coding coding = ranged ? Coding::kIdentity
                               : ChooseCoding(HeaderValue(req.headers, "accept-encoding"), Offer(object));
  if (coding == Coding::kZstd) return false;
  // A HEAD needs no decoded copy, but a variant's length is known only once it is made.
  if (coding == Coding::kIdentity && req.method == "HEAD") return false;
  std::string key = object.meta.key;
  if (coding != Coding::kIdentity) key += "\n" + std::string(CodingName(coding));
  auto copy = decoded_.Get(key);
  return !copy || copy->id != object.id;
}

}  // namespace ferry::cache
