#include "cache/meta_codec.h"

#include <algorithm>

#include "base/strings.h"
#include "cache/bytes.h"
#include "http/date.h"

namespace ferry::cache {
namespace {

constexpr uint8_t kVersion = 1;

// Response header names as origins commonly spell them. Append only.
constexpr std::string_view kNames[] = {
    "Content-Type",   "Content-Length",   "Cache-Control",
    "ETag",           "Last-Modified",    "Date",
    "Expires",        "Server",           "Vary",
    "Age",            "Accept-Ranges",    "Content-Encoding",
    "Content-Language", "Access-Control-Allow-Origin", "Strict-Transport-Security",
    "X-Content-Type-Options", "Content-Security-Policy", "Link",
    "Via",            "Set-Cookie",       "Content-Disposition",
    "Content-type",   "Etag",             "X-Frame-Options",
    "Referrer-Policy", "Timing-Allow-Origin", "Alt-Svc",
    "Cross-Origin-Resource-Policy", "Report-To", "NEL",
};
constexpr uint64_t kNameCount = sizeof(kNames) / sizeof(kNames[0]);

uint64_t NameCode(std::string_view name) {
  for (uint64_t i = 0; i < kNameCount; ++i) {
    if (name == kNames[i]) return i + 1;
  }
  bool lower = std::none_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  for (uint64_t i = 0; lower && i < kNameCount; ++i) {
    if (EqualsIgnoreCase(name, kNames[i])) return kNameCount + i + 1;
  }
  return 0;
}

void PutValue(std::string* out, std::string_view value) {
  if (value.size() == 29) {  // "Sun, 06 Nov 1994 08:49:37 GMT"
    auto t = http::ParseHttpDate(value);
    if (t && http::FormatHttpDate(*t) == value) {
      PutVarint(out, 1);
      PutSignedVarint(out, t->time_since_epoch().count());
      return;
    }
  }
  PutVarint(out, uint64_t{value.size()} * 2);
  out->append(value);
}

Status MetaDamaged(const std::string& what) { return Status::Corruption("entry metadata: " + what); }

}  // namespace

std::string EncodeMeta(const EntryMeta& m) {
  std::string out;
  out.reserve(64 + m.key.size() + 48 * m.headers.size());
  out.push_back(static_cast<char>(kVersion));
  PutVarint(&out, static_cast<uint64_t>(m.status));
  out.push_back(static_cast<char>(m.encoding));  // 0 identity, 1 zstd, 2 zstd with a trained dictionary
  PutVarint(&out, m.logical_length);
  PutVarint(&out, m.stored_length);
  PutSignedVarint(&out, m.request_time);
  PutSignedVarint(&out, m.response_time - m.request_time);
  PutBytes(&out, m.key);
  PutVarint(&out, m.headers.size());
  for (const auto& [name, value] : m.headers) {
    uint64_t code = NameCode(name);
    PutVarint(&out, code);
    if (code == 0) PutBytes(&out, name);
    PutValue(&out, value);
  }
  return out;
}

Result<EntryMeta> DecodeMeta(std::string_view in) {
  ByteReader r(in);
  if (r.U8() != kVersion) return MetaDamaged("unknown version");
  EntryMeta m;
  uint64_t status = r.Varint();
  if (status > 999) return MetaDamaged("status " + std::to_string(status));
  m.status = static_cast<int>(status);
  uint8_t enc = r.U8();
  if (enc > 2) return MetaDamaged("unknown encoding " + std::to_string(enc));
  m.encoding = static_cast<StoredEncoding>(enc);
  m.logical_length = r.Varint();
  m.stored_length = r.Varint();
  m.request_time = r.SignedVarint();
  m.response_time = m.request_time + r.SignedVarint();
  m.key = std::string(r.Bytes());
  uint64_t n = r.Varint();
  if (n > in.size()) return MetaDamaged("header count " + std::to_string(n));
  m.headers.reserve(n);
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    uint64_t code = r.Varint();
    std::string name;
    if (code == 0) {
      name = std::string(r.Bytes());
    } else if (code <= kNameCount) {
      name = std::string(kNames[code - 1]);
    } else if (code <= 2 * kNameCount) {
      name = AsciiLower(kNames[code - kNameCount - 1]);
    } else {
      return MetaDamaged("unknown header name code " + std::to_string(code));
    }
    uint64_t tag = r.Varint();
    std::string value;
    if (tag == 1) {
      value = http::FormatHttpDate(http::SysSeconds(std::chrono::seconds(r.SignedVarint())));
    } else if (tag % 2 == 0) {
      value = std::string(r.Take(tag / 2));
    } else {
      return MetaDamaged("unknown value tag " + std::to_string(tag));
    }
    m.headers.emplace_back(std::move(name), std::move(value));
  }
  if (!r.done()) return MetaDamaged(r.ok() ? "bytes after the end" : "cut short");
  return m;
}

}  // namespace ferry::cache
