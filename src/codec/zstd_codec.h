#pragma once
// zstd frames for HTTP content coding (RFC 9659, "zstd" in Content-Encoding):
// the encoder keeps the window within the RFC's 8 MB limit, writes the
// content size into the frame header when it is known, and ends the frame
// with its checksum; the decoder refuses frames that need a larger window
// and checks that checksum. Both stream: output is appended as input comes,
// so neither holds a whole body. libzstd does the work; these wrap its
// contexts (reused across bodies) and turn its errors into Status values.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::codec {

// RFC 9659 section 3: decoders need support windows of at most 8 MB
// (2^23 bytes), so encoders must not use larger ones.
inline constexpr int kMaxWindowLog = 23;

// Receives output as it is produced; an error stops the coder with it.
using Emit = std::function<Status(std::string_view)>;

class ZstdEncoder {
 public:
  explicit ZstdEncoder(int level = 3);
  ~ZstdEncoder();
  ZstdEncoder(const ZstdEncoder&) = delete;
  ZstdEncoder& operator=(const ZstdEncoder&) = delete;

  // Starts a frame. `content_size`, when known, goes into the frame
  // header, and the frame must then carry exactly that many bytes.
  Status Begin(std::optional<uint64_t> content_size);
  // Compresses `in`, passing whatever output is ready to `emit`.
  Status Update(std::string_view in, const Emit& emit);
  // Ends the frame (with its checksum), passing the rest to `emit`.
  Status Finish(const Emit& emit);
  // The same, appending to a string.
  Status Update(std::string_view in, std::string* out);
  Status Finish(std::string* out);

  int level() const { return level_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int level_;
};

class ZstdDecoder {
 public:
  ZstdDecoder();
  ~ZstdDecoder();
  ZstdDecoder(const ZstdDecoder&) = delete;
  ZstdDecoder& operator=(const ZstdDecoder&) = delete;

  // Starts a new body (frames may follow each other in one body).
  void Reset();
  // Decompresses `in`, passing what is ready to `emit`. A damaged frame, a
  // wrong checksum or a window over 8 MB is a kCorruption error.
  Status Update(std::string_view in, const Emit& emit);
  Status Update(std::string_view in, std::string* out);  // appends
  // OK only when the body ended at the end of a frame (no frame cut short).
  Status Finish() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot helpers over the classes above.
Result<std::string> ZstdCompress(std::string_view in, int level = 3);
Result<std::string> ZstdDecompress(std::string_view in);

// The content size in the header of the frame that starts `frame`, when
// the header has one (nullopt: absent, or not a zstd frame).
std::optional<uint64_t> ZstdFrameContentSize(std::string_view frame);

}  // namespace ferry::codec
