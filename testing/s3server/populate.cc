#include "populate.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>

#include <nlohmann/json.hpp>

#include "crypto/digest.h"

namespace ferry::s3server {
namespace {

// Body bytes are generated and hashed in chunks of this size.
constexpr size_t kChunk = 256u << 10;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Independent 64-bit values per (seed, index, purpose).
uint64_t Mix(uint64_t seed, uint64_t index, uint64_t purpose) {
  return SplitMix64(SplitMix64(seed ^ (purpose * 0xd6e8feb86659fd93ull)) ^ index);
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Fills out[0..n) from a xorshift64* stream (cheap: about a byte per cycle).
void Fill(uint64_t* state, char* out, size_t n) {
  uint64_t x = *state;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    uint64_t w = x * 0x2545f4914f6cdd1dull;
    std::memcpy(out + i, &w, 8);
  }
  if (i < n) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    uint64_t w = x * 0x2545f4914f6cdd1dull;
    std::memcpy(out + i, &w, n - i);
  }
  *state = x;
}

size_t Digits(uint64_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

void AppendPadded(std::string* out, uint64_t v, size_t width) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  size_t len = static_cast<size_t>(end - buf);
  if (len < width) out->append(width - len, '0');
  out->append(buf, len);
}

struct KeyShape {
  size_t dir_width;
  size_t index_width;
};

KeyShape Shape(const PopulateSpec& spec) {
  return {std::max<size_t>(3, Digits(spec.dirs > 0 ? spec.dirs - 1 : 0)),
          std::max<size_t>(8, Digits(spec.count > 0 ? spec.count - 1 : 0))};
}

void BuildKey(const PopulateSpec& spec, const KeyShape& shape, uint64_t index,
              std::string* out) {
  out->assign(spec.prefix);
  out->push_back('d');
  AppendPadded(out, index % spec.dirs, shape.dir_width);
  out->append("/o");
  AppendPadded(out, index, shape.index_width);
}

// Writes `size` bytes of the stream seeded by `stream_seed` into a new blob;
// sets `*etag` to their MD5 (hex).
Result<std::shared_ptr<const Blob>> MakeBody(BlobStore& blobs, uint64_t size,
                                             uint64_t stream_seed, std::string* chunk,
                                             std::string* etag) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> writer, blobs.NewWriter(size));
  StreamingDigest md5(StreamingDigest::Kind::kMd5);
  uint64_t state = stream_seed != 0 ? stream_seed : 0x853c49e6748fea9bull;
  chunk->resize(kChunk);
  for (uint64_t left = size; left > 0;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(left, kChunk));
    Fill(&state, chunk->data(), n);
    std::string_view piece(chunk->data(), n);
    md5.Update(piece);
    FERRY_RETURN_IF_ERROR(writer->Append(piece));
    left -= n;
  }
  *etag = HexLower(md5.Finish());
  return writer->Finish();
}

Result<uint64_t> Unsigned(const nlohmann::json& v, std::string_view name) {
  if (!v.is_number_unsigned()) {
    return Status::InvalidArgument("populate: \"" + std::string(name) +
                                   "\" must be a non-negative integer");
  }
  return v.get<uint64_t>();
}

Result<std::string> String(const nlohmann::json& v, std::string_view name) {
  if (!v.is_string()) {
    return Status::InvalidArgument("populate: \"" + std::string(name) + "\" must be a string");
  }
  return v.get<std::string>();
}

Result<PopulateSizeRange> RangeFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("populate: each size range is an object");
  PopulateSizeRange r;
  for (const auto& [name, v] : j.items()) {
    if (name == "weight") {
      FERRY_ASSIGN_OR_RETURN(r.weight, Unsigned(v, "weight"));
    } else if (name == "min") {
      FERRY_ASSIGN_OR_RETURN(r.min, Unsigned(v, "min"));
    } else if (name == "max") {
      FERRY_ASSIGN_OR_RETURN(r.max, Unsigned(v, "max"));
    } else {
      return Status::InvalidArgument("populate: unknown size range field '" + name + "'");
    }
  }
  if (r.weight == 0) return Status::InvalidArgument("populate: a size weight must be > 0");
  if (r.min > r.max) return Status::InvalidArgument("populate: size min > max");
  if (r.max > kPopulateMaxObjectSize) {
    return Status::InvalidArgument("populate: size max above " +
                                   std::to_string(kPopulateMaxObjectSize));
  }
  return r;
}

Result<PopulateExtra> ExtraFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("populate: each extra is an object");
  PopulateExtra e;
  bool has_key = false;
  for (const auto& [name, v] : j.items()) {
    if (name == "key") {
      FERRY_ASSIGN_OR_RETURN(e.key, String(v, "key"));
      has_key = true;
    } else if (name == "size") {
      FERRY_ASSIGN_OR_RETURN(e.size, Unsigned(v, "size"));
    } else {
      return Status::InvalidArgument("populate: unknown extra field '" + name + "'");
    }
  }
  if (!has_key || e.key.empty() || e.key.size() > kMaxKeyBytes) {
    return Status::InvalidArgument("populate: an extra needs a \"key\" of 1.." +
                                   std::to_string(kMaxKeyBytes) + " bytes");
  }
  if (e.size > kPopulateMaxObjectSize) {
    return Status::InvalidArgument("populate: extra size above " +
                                   std::to_string(kPopulateMaxObjectSize));
  }
  return e;
}

}  // namespace

Result<PopulateSpec> PopulateSpecFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("populate: the body must be a JSON object");
  PopulateSpec spec;
  bool has_bucket = false;
  for (const auto& [name, v] : j.items()) {
    if (name == "bucket") {
      FERRY_ASSIGN_OR_RETURN(spec.bucket, String(v, "bucket"));
      has_bucket = true;
    } else if (name == "prefix") {
      FERRY_ASSIGN_OR_RETURN(spec.prefix, String(v, "prefix"));
    } else if (name == "count") {
      FERRY_ASSIGN_OR_RETURN(spec.count, Unsigned(v, "count"));
    } else if (name == "seed") {
      FERRY_ASSIGN_OR_RETURN(spec.seed, Unsigned(v, "seed"));
    } else if (name == "dirs") {
      FERRY_ASSIGN_OR_RETURN(uint64_t dirs, Unsigned(v, "dirs"));
      if (dirs == 0 || dirs > 1'000'000) {
        return Status::InvalidArgument("populate: \"dirs\" must be 1..1000000");
      }
      spec.dirs = static_cast<uint32_t>(dirs);
    } else if (name == "content_type") {
      FERRY_ASSIGN_OR_RETURN(spec.content_type, String(v, "content_type"));
    } else if (name == "sizes") {
      if (!v.is_array() || v.empty()) {
        return Status::InvalidArgument("populate: \"sizes\" must be a non-empty array");
      }
      spec.sizes.clear();
      for (const auto& r : v) {
        FERRY_ASSIGN_OR_RETURN(PopulateSizeRange range, RangeFromJson(r));
        spec.sizes.push_back(range);
      }
    } else if (name == "extra") {
      if (!v.is_array()) return Status::InvalidArgument("populate: \"extra\" must be an array");
      for (const auto& e : v) {
        FERRY_ASSIGN_OR_RETURN(PopulateExtra extra, ExtraFromJson(e));
        spec.extra.push_back(std::move(extra));
      }
    } else {
      return Status::InvalidArgument("populate: unknown field '" + name + "'");
    }
  }
  if (!has_bucket) return Status::InvalidArgument("populate: \"bucket\" is required");
  if (spec.count > kPopulateMaxCount) {
    return Status::InvalidArgument("populate: count above " + std::to_string(kPopulateMaxCount));
  }
  if (spec.prefix.size() + 64 > kMaxKeyBytes) {
    return Status::InvalidArgument("populate: prefix too long");
  }
  return spec;
}

std::string PopulateKey(const PopulateSpec& spec, uint64_t index) {
  std::string key;
  BuildKey(spec, Shape(spec), index, &key);
  return key;
}

uint64_t PopulateSize(const PopulateSpec& spec, uint64_t index) {
  uint64_t total = 0;
  for (const auto& r : spec.sizes) total += r.weight;
  if (total == 0) return 0;
  uint64_t pick = Mix(spec.seed, index, 1) % total;
  const PopulateSizeRange* range = &spec.sizes.back();
  for (const auto& r : spec.sizes) {
    if (pick < r.weight) {
      range = &r;
      break;
    }
    pick -= r.weight;
  }
  uint64_t span = range->max - range->min + 1;  // max <= kPopulateMaxObjectSize
  return range->min + Mix(spec.seed, index, 2) % span;
}

Result<PopulateResult> Populate(Storage& storage, const PopulateSpec& spec) {
  FERRY_RETURN_IF_ERROR(storage.CheckBucket(spec.bucket));
  if (spec.dirs == 0) return Status::InvalidArgument("populate: dirs must be >= 1");
  BlobStore& blobs = storage.blobs();
  PopulateResult result;
  const TimePoint now = std::chrono::system_clock::now();
  ObjectMeta meta;
  meta.content_type = spec.content_type;

  // Every empty object shares one blob.
  std::string chunk;
  std::string empty_etag;
  std::shared_ptr<const Blob> empty;
  FERRY_ASSIGN_OR_RETURN(empty, MakeBody(blobs, 0, 1, &chunk, &empty_etag));

  auto put = [&](std::string key, uint64_t size, uint64_t stream_seed) -> Status {
    ObjectRecord rec;
    rec.key = std::move(key);
    rec.size = size;
    rec.last_modified = now;
    rec.meta = meta;
    if (size == 0) {
      rec.blob = empty;
      rec.etag = empty_etag;
    } else {
      FERRY_ASSIGN_OR_RETURN(rec.blob, MakeBody(blobs, size, stream_seed, &chunk, &rec.etag));
    }
    FERRY_RETURN_IF_ERROR(storage.PutObject(spec.bucket, std::move(rec)));
    ++result.created;
    result.bytes += size;
    return Status::Ok();
  };

  // Directory by directory, so keys arrive in ascending order.
  const KeyShape shape = Shape(spec);
  std::string key;
  for (uint64_t d = 0; d < spec.dirs && d < spec.count; ++d) {
    for (uint64_t i = d; i < spec.count; i += spec.dirs) {
      BuildKey(spec, shape, i, &key);
      FERRY_RETURN_IF_ERROR(put(key, PopulateSize(spec, i), Mix(spec.seed, i, 3)));
    }
  }
  for (const PopulateExtra& e : spec.extra) {
    FERRY_RETURN_IF_ERROR(put(e.key, e.size, Mix(spec.seed, Fnv1a(e.key), 4)));
  }
  return result;
}

}  // namespace ferry::s3server
