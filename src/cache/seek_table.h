#pragma once
// Where each frame of a big object's body lies (big_object.h), so that a
// range is answered by reading, and decoding, only the frames it covers.
// Pure: the table, its encoding, and the frames a range needs.
//
// The encoding is the seek table of zstd's seekable format
// (contrib/seekable_format in the zstd sources), written here by hand as
// libzstd has no API for it: a skippable frame, so any zstd decoder passes
// over it.
//
//   u32 0x184D2A5E            skippable frame magic
//   u32 12*N + 9 (or 8*N + 9) its content size
//   N entries:  u32 stored size, u32 logical size [, u32 checksum]
//   u32 N
//   u8  descriptor: bit 7 = the entries carry checksums; other bits zero
//   u32 0x8F92EAB1            seekable magic
//
// zstd bodies carry no checksums here (each zstd frame checks itself);
// identity bodies do, as zstd's format has room for them, but each is the
// first 4 bytes of the block's SHA-256 (not XXH64 as zstd would have it):
// those files are not zstd streams.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::cache {

class SeekTable {
 public:
  struct Frame {
    uint32_t stored = 0;   // bytes of the frame in the file
    uint32_t logical = 0;  // bytes it decodes to
    uint32_t checksum = 0;
  };

  explicit SeekTable(bool checksums = false) : checksums_(checksums) {}

  void Add(Frame f);

  size_t size() const { return frames_.size(); }
  const Frame& frame(size_t i) const { return frames_[i]; }
  bool checksums() const { return checksums_; }
  // Where frame i starts in the body, stored and logical; i may be size().
  uint64_t stored_at(size_t i) const { return stored_at_[i]; }
  uint64_t logical_at(size_t i) const { return logical_at_[i]; }
  uint64_t stored_length() const { return stored_at_.back(); }
  uint64_t logical_length() const { return logical_at_.back(); }

  // The frames [first, last] holding logical bytes [offset, offset +
  // count): count > 0 and the range within logical_length().
  struct Span {
    size_t first = 0;
    size_t last = 0;
  };
  Span Covering(uint64_t offset, uint64_t count) const;

  // The whole skippable frame.
  std::string Encode() const;
  // A table from its skippable frame (exactly `frame`): kCorruption when it
  // is not one.
  static Result<SeekTable> Decode(std::string_view frame);
  // The size of the table frame that `footer` (its last 9 bytes) ends.
  static Result<uint64_t> FrameSizeFromFooter(std::string_view footer);

 private:
  bool checksums_;
  std::vector<Frame> frames_;
  std::vector<uint64_t> stored_at_{0};
  std::vector<uint64_t> logical_at_{0};
};

inline constexpr size_t kSeekFooterSize = 9;

}  // namespace ferry::cache
