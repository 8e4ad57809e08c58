#pragma once
// Streaming between ByteSource/ByteSink and files, with MD5 on the way, for
// the local backend. Memory is bounded by one kIoBufferBytes buffer per call.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "crypto/digest.h"
#include "store/stream.h"

namespace ferry::local {

inline constexpr size_t kIoBufferBytes = 1 << 20;

// Reads exactly `size` bytes from `body` and writes them to `fd` (at its
// current offset). kCorruption if the body ends early, kInvalidArgument if
// it holds more than `size` bytes. Returns the raw 16-byte MD5.
Result<std::string> StreamBodyToFile(ByteSource& body, uint64_t size, int fd,
                                     std::string_view path);

// OK if `content_md5` (base64, as in Content-MD5) is empty or names
// `raw_md5`; kInvalidArgument if malformed, kCorruption if different.
Status CheckContentMd5(std::string_view content_md5, std::string_view raw_md5,
                       std::string_view key);

// Pushes [offset, offset + length) of `fd` into `sink`, updating `md5` (if
// not null) with every byte.
Status StreamFileToSink(int fd, uint64_t offset, uint64_t length, ByteSink& sink,
                        StreamingDigest* md5, std::string_view path);

// Lower-case hex MD5 of the first `size` bytes of `fd`.
Result<std::string> Md5HexOfFile(int fd, uint64_t size, std::string_view path);

}  // namespace ferry::local
