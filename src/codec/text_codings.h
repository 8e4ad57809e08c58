#pragma once
// The content codings a cache answers browsers with besides zstd (RFC 9110
// 8.4.1): gzip (RFC 1952, through zlib) and br (RFC 7932, through
// libbrotli). One-shot: the cache encodes a stored entry once and keeps the
// result as a variant in memory, so these take and return whole bodies.
// Each thread keeps its coder's state (zlib's deflate stream, brotli's
// buffer), so a small body pays no setup beyond a reset.

#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::codec {

// A gzip member of `in` (zlib level 1..9).
Result<std::string> GzipCompress(std::string_view in, int level);
// Every gzip member of `in`, concatenated; kCorruption on damage or a cut.
Result<std::string> GzipDecompress(std::string_view in);

// A brotli stream of `in` (quality 0..11; the window sized to the body).
Result<std::string> BrotliCompress(std::string_view in, int quality);
// kCorruption on damage or a cut.
Result<std::string> BrotliDecompress(std::string_view in);

}  // namespace ferry::codec
