#include "cache/seek_table.h"

#include <algorithm>

#include "cache/bytes.h"

namespace ferry::cache {
namespace {

constexpr uint32_t kSkippableMagic = 0x184D2A5E;
constexpr uint32_t kSeekableMagic = 0x8F92EAB1;
constexpr uint8_t kChecksumFlag = 0x80;

Status SeekTableDamaged(const std::string& what) { return Status::Corruption("seek table: " + what); }

size_t EntrySize(bool checksums) { return checksums ? 12 : 8; }

}  // namespace

void SeekTable::Add(Frame f) {
  frames_.push_back(f);
  stored_at_.push_back(stored_at_.back() + f.stored);
  logical_at_.push_back(logical_at_.back() + f.logical);
}

SeekTable::Span SeekTable::Covering(uint64_t offset, uint64_t count) const {
  // The last frame starting at or before a byte holds it (frames of no
  // logical bytes hold none and are passed over).
  auto holder = [&](uint64_t byte) {
    auto it = std::upper_bound(logical_at_.begin(), logical_at_.end() - 1, byte);
    return static_cast<size_t>(it - logical_at_.begin()) - 1;
  };
  return Span{holder(offset), holder(offset + count - 1)};
}

std::string SeekTable::Encode() const {
  std::string out;
  size_t content = frames_.size() * EntrySize(checksums_) + kSeekFooterSize;
  out.reserve(8 + content);
  PutU32(&out, kSkippableMagic);
  PutU32(&out, static_cast<uint32_t>(content));
  for (const Frame& f : frames_) {
    PutU32(&out, f.stored);
    PutU32(&out, f.logical);
    if (checksums_) PutU32(&out, f.checksum);
  }
  PutU32(&out, static_cast<uint32_t>(frames_.size()));
  out.push_back(static_cast<char>(checksums_ ? kChecksumFlag : 0));
  PutU32(&out, kSeekableMagic);
  return out;
}

Result<uint64_t> SeekTable::FrameSizeFromFooter(std::string_view footer) {
  if (footer.size() != kSeekFooterSize) return SeekTableDamaged("footer cut short");
  ByteReader r(footer);
  uint64_t n = r.U32();
  uint8_t descriptor = r.U8();
  if (r.U32() != kSeekableMagic) return SeekTableDamaged("no seekable magic");
  if ((descriptor & ~kChecksumFlag) != 0) return SeekTableDamaged("unknown descriptor bits");
  return 8 + n * EntrySize(descriptor & kChecksumFlag) + kSeekFooterSize;
}

Result<SeekTable> SeekTable::Decode(std::string_view frame) {
  if (frame.size() < 8 + kSeekFooterSize) return SeekTableDamaged("cut short");
  FERRY_ASSIGN_OR_RETURN(uint64_t size, FrameSizeFromFooter(frame.substr(frame.size() - kSeekFooterSize)));
  if (size != frame.size()) return SeekTableDamaged("its footer disagrees with its size");
  ByteReader r(frame);
  if (r.U32() != kSkippableMagic || r.U32() != frame.size() - 8) return SeekTableDamaged("bad frame header");
  bool checksums = (static_cast<uint8_t>(frame[frame.size() - 5]) & kChecksumFlag) != 0;
  size_t n = (frame.size() - 8 - kSeekFooterSize) / EntrySize(checksums);
  SeekTable t(checksums);
  for (size_t i = 0; i < n; ++i) {
    Frame f;
    f.stored = r.U32();
    f.logical = r.U32();
    if (checksums) f.checksum = r.U32();
    t.Add(f);
  }
  return t;
}

}  // namespace ferry::cache
