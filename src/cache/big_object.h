#pragma once
// A body too large to hold in memory (over --max-object), cached in a
// file of its own as it arrives: compressible ones as zstd frames of
// kBigFrameSize logical bytes each, the rest as they came, with a seek
// table, so a byte range costs the frames it covers, never the whole body.
//
//   DIR/big/XY/<SHA-256 of the key, hex>   (XY: its first two digits)
//   [0, 8+N)   header, a zstd skippable frame: u32 0x184D2A50, u32 N, then
//                "FERRY-BIG-1\n"
//                u8 encoding (0 identity, 1 zstd), 3 zero bytes
//                u32 frame size (logical bytes per frame; the last may be
//                    shorter)
//                u64 body length (stored bytes)
//                u64 seek table length, and its checksum (the first 8
//                    bytes of SHA-256 of the table frame)
//                u32 M, then M bytes of metadata (meta_codec.h), then zeros
//                u64 header checksum (first 8 bytes of SHA-256 of the
//                    header's content before it)
//   body       zstd frames (content size and checksum in each), or the
//              identity bytes
//   table      seek_table.h (zstd's seekable format); for identity bodies
//              with a checksum per block
//
// For a zstd body the whole file is a valid zstd stream (skippable frame,
// frames, skippable frame): `zstd -d` gives back the body. The header is
// written last, over room reserved at the start, so the writer streams.
// Files are written under DIR/tmp and renamed into place by the store once
// synced: a crash leaves a whole file or none under big/.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/entry.h"
#include "cache/seek_table.h"
#include "codec/zstd_codec.h"

namespace ferry::cache {

inline constexpr uint32_t kBigFrameSize = 1 << 20;

class BigObjectWriter {
 public:
  // A new file at `path` (it must not exist) for `meta` (its lengths are
  // filled in by Finish), the body compressed at `level` when `compress`.
  static Result<std::unique_ptr<BigObjectWriter>> Create(std::string path, EntryMeta meta, bool compress,
                                                         int level, uint32_t frame_size = kBigFrameSize);
  ~BigObjectWriter();  // removes the file unless Release()d
  BigObjectWriter(const BigObjectWriter&) = delete;
  BigObjectWriter& operator=(const BigObjectWriter&) = delete;

  // The next body bytes; whole frames are compressed and written as they fill.
  Status Write(std::string_view data);
  // The last frame, the seek table and the header; synced when `sync`.
  Status Finish(bool sync);
  // The file now belongs to someone else (renamed into place).
  void Release() { released_ = true; }

  const std::string& path() const { return path_; }
  const EntryMeta& meta() const { return meta_; }  // lengths complete after Finish
  uint64_t file_size() const { return file_size_; }
  uint64_t logical_written() const { return logical_; }
  bool compressing() const { return compress_; }
  uint64_t encode_ns() const { return encode_ns_; }

 private:
  BigObjectWriter(int fd, std::string path, EntryMeta meta, bool compress, int level, uint32_t frame_size,
                  size_t header_size);
  Status FlushFrame();

  int fd_;
  std::string path_;
  EntryMeta meta_;
  bool compress_;
  uint32_t frame_size_;
  size_t header_size_;
  codec::ZstdEncoder encoder_;
  SeekTable table_;
  std::string pending_;  // logical bytes of the frame being filled
  uint64_t logical_ = 0;
  uint64_t file_size_ = 0;
  uint64_t encode_ns_ = 0;
  bool released_ = false;
};

// A big object file opened for reading; immutable, shared by the answers
// that read it (it stays readable after the store removes its name).
class BigObject {
 public:
  // Checks the header, the table and that they agree with the file's
  // size: kCorruption naming what is wrong.
  static Result<std::shared_ptr<const BigObject>> Open(const std::string& path);
  ~BigObject();
  BigObject(const BigObject&) = delete;
  BigObject& operator=(const BigObject&) = delete;

  const EntryMeta& meta() const { return meta_; }
  const SeekTable& table() const { return table_; }
  uint64_t file_size() const { return file_size_; }
  uint64_t Allocated() const;  // st_blocks * 512

  // Stored body bytes [offset, offset + n) (n may run past the end: fewer).
  Result<std::string> ReadStored(uint64_t offset, uint64_t n) const;
  // Frame i's logical bytes: decoded (zstd) or read and checked (identity);
  // kCorruption when the frame does not decode or check.
  Result<std::string> ReadFrame(size_t i) const;

 private:
  BigObject(int fd, EntryMeta meta, SeekTable table, uint64_t body_offset, uint64_t file_size)
      : fd_(fd), meta_(std::move(meta)), table_(std::move(table)), body_offset_(body_offset), file_size_(file_size) {}

  int fd_;
  EntryMeta meta_;
  SeekTable table_;
  uint64_t body_offset_;
  uint64_t file_size_;
};

}  // namespace ferry::cache
