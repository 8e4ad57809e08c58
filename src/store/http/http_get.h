#pragma once
// What reading an object over HTTP means the same way for every HTTP store
// (s3/s3_store.cc, azure/azure_store.cc), whatever the range header is
// called there:
//   - the bytes a GET asks for when it resumes after `got` of them reached
//     the caller, so a retried read never sends a byte twice;
//   - the check, before any byte reaches the sink, that a ranged answer is
//     that range (a server that ignores Range sends 200 and the whole
//     object, which must not be appended);
//   - what a GET or HEAD answer's standard fields say of the object.
// Pure; table-tested.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "http/client.h"
#include "store/object_store.h"

namespace ferry {

// The part of a read of `o` still wanted once `got` bytes reached the caller.
struct ResumeRange {
  uint64_t offset = 0;  // the first byte wanted
  bool ranged = false;  // false: the whole object, sent without a range
  std::string value;    // when ranged: "bytes=OFFSET-" or "bytes=OFFSET-LAST"
};
ResumeRange RangeToResume(const GetOptions& o, uint64_t got);

// OK when `r` answers `want`: any answer when !want.ranged; else a 206
// whose Content-Range starts at want.offset (kProtocol otherwise). A 206
// that starts at or past the object's end ("bytes 10-9/10": Azurite's
// answer where Azure and S3 say 416) is kInvalidArgument, as a 416 is.
Status CheckRangeAnswer(const http::Response& r, const ResumeRange& want);

// The object a GET or HEAD answer describes: `key`; the ETag unquoted; the
// size from Content-Length, or the total of a Content-Range ("bytes
// 0-9/1234"), which sets *ranged when given; Last-Modified; Content-Type,
// -Encoding, -Disposition, -Language and Cache-Control. The rest
// (etag_is_md5, md5_hex, Expires, user metadata) is each backend's.
ObjectInfo InfoFromAnswer(std::string_view key, const http::Response& r, bool* ranged = nullptr);

}  // namespace ferry
