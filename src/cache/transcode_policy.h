#pragma once
// Whether the cache stores a response zstd-compressed (transcodes it) or as
// it was received. Pure policy: facts about one origin response in, a
// decision and its reason out (the reason feeds logs and metrics).
//
// Transcoded: a 200 to a request without Range, with no Content-Encoding
// (or "identity"), a compressible Content-Type (TranscodeSettings::types),
// and a Content-Length of at least min_size. Everything else is stored as
// received: 206 and other statuses, ranged requests, bodies already encoded
// (gzip, br, zstd...: nothing is compressed twice), unknown lengths, other
// types, and `Cache-Control: no-transform` unless the operator opts in.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::cache {

struct TranscodeSettings {
  // Media types worth compressing: "type/subtype" (exact), "type/*" (any
  // subtype) or "*+suffix" (a structured syntax suffix, RFC 6838 4.2.8).
  // Matched case-insensitively against the type without its parameters.
  std::vector<std::string> types = {"text/*",          "application/json", "application/javascript",
                                    "application/xml", "image/svg+xml",    "*+json",
                                    "*+xml"};
  uint64_t min_size = 4096;            // smaller bodies gain too little
  bool ignore_no_transform = false;    // transcode despite Cache-Control: no-transform
};

struct ResponseFacts {
  int status = 200;
  bool range_request = false;  // the request that produced it had a Range header
  std::string content_encoding;             // "" when absent
  std::string content_type;                 // "" when absent
  std::optional<uint64_t> content_length;   // nullopt when unknown (chunked, close-delimited)
  std::string cache_control;                // "" when absent
};

enum class Transcode { kZstd, kAsReceived };

struct TranscodeDecision {
  Transcode action = Transcode::kAsReceived;
  const char* reason = "";  // a short phrase, e.g. "already encoded"
};

TranscodeDecision DecideTranscode(const ResponseFacts& r, const TranscodeSettings& s);

// Whether `content_type` (parameters allowed) matches one of `patterns`.
bool CompressibleType(std::string_view content_type, const std::vector<std::string>& patterns);

}  // namespace ferry::cache
