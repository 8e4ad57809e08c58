#pragma once
// Little-endian fixed-width integers and LEB128 varints, written to a
// string and read back from a view with bounds checked: what the cache's
// binary formats (meta_codec.h, segment_record.h, big_object.h) are made of.
// A ByteReader never reads past its view: a short or malformed field makes
// ok() false and every later read returns 0 or "".

#include <cstdint>
#include <string>
#include <string_view>

namespace ferry::cache {

inline void PutFixed(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
inline void PutU32(std::string* out, uint32_t v) { PutFixed(out, v, 4); }
inline void PutU64(std::string* out, uint64_t v) { PutFixed(out, v, 8); }

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Signed values as varints (zigzag: small magnitudes stay short).
inline void PutSignedVarint(std::string* out, int64_t v) {
  PutVarint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

// A varint length, then the bytes.
inline void PutBytes(std::string* out, std::string_view b) {
  PutVarint(out, b.size());
  out->append(b);
}

// Reads `bytes` little-endian bytes at p (the caller checked the bounds).
inline uint64_t LoadFixed(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  uint64_t Fixed(int bytes) {
    if (!ok_ || in_.size() - at_ < static_cast<size_t>(bytes)) return Fail();
    uint64_t v = LoadFixed(in_.data() + at_, bytes);
    at_ += bytes;
    return v;
  }
  uint32_t U32() { return static_cast<uint32_t>(Fixed(4)); }
  uint64_t U64() { return Fixed(8); }
  uint8_t U8() { return static_cast<uint8_t>(Fixed(1)); }

  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!ok_ || at_ >= in_.size()) return Fail();
      uint8_t b = static_cast<uint8_t>(in_[at_++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return v;
    }
    return Fail();  // more than 10 bytes: not a varint we wrote
  }
  int64_t SignedVarint() {
    uint64_t z = Varint();
    return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
  }
  std::string_view Bytes() {
    uint64_t n = Varint();
    return Take(n);
  }
  std::string_view Take(uint64_t n) {
    if (!ok_ || in_.size() - at_ < n) {
      Fail();
      return {};
    }
    std::string_view v = in_.substr(at_, n);
    at_ += n;
    return v;
  }

  bool ok() const { return ok_; }
  bool done() const { return ok_ && at_ == in_.size(); }
  size_t offset() const { return at_; }

 private:
  uint64_t Fail() {
    ok_ = false;
    return 0;
  }

  std::string_view in_;
  size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace ferry::cache
