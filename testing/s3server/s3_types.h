#pragma once
// The records the server keeps per object, part and multipart upload, and
// the S3 error convention: a ferry::Status whose remote detail carries the
// HTTP status and the S3 error code ("NoSuchKey") sent back to the client.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "blob.h"
#include "crypto/digest.h"
#include "s3/flexible_checksum.h"

namespace ferry::s3server {

using TimePoint = std::chrono::system_clock::time_point;

// Longest key S3 accepts, in bytes.
constexpr size_t kMaxKeyBytes = 1024;

// Headers S3 stores with an object and returns on GET/HEAD.
struct ObjectMeta {
  std::string content_type;  // "" -> served as binary/octet-stream
  std::string content_encoding;
  std::string content_disposition;
  std::string cache_control;
  std::string content_language;
  std::string expires;
  std::map<std::string, std::string> user;  // x-amz-meta-NAME, NAME lower-case

  bool operator==(const ObjectMeta&) const = default;
};

struct ObjectRecord {
  std::string key;
  std::shared_ptr<const Blob> blob;  // never null for a stored object
  uint64_t size = 0;
  std::string etag;  // unquoted: md5 hex, or "hex-N" for multipart objects
  TimePoint last_modified{};
  ObjectMeta meta;
  // What S3 keeps of each new object: the checksum its upload named, else
  // CRC64NVME; a multipart object's is composite or full-object.
  std::optional<s3::ObjectChecksum> checksum;
  // No checksum was asked for: S3 would hold CRC64NVME (full object), which
  // this server computes the first time a client asks for it
  // (Storage::WithChecksum), so uploads pay nothing for what few read.
  bool checksum_deferred = false;
  // A multipart object's parts (GetObjectAttributes' ObjectParts).
  struct Part {
    uint64_t size = 0;
    std::string checksum;  // base64, in checksum->algorithm
  };
  std::vector<Part> parts;
};

struct PartRecord {
  int number = 0;  // 1..10000
  std::shared_ptr<const Blob> blob;
  uint64_t size = 0;
  std::string etag;  // unquoted md5 hex of the part
  TimePoint last_modified{};
  std::string checksum;  // base64, in the upload's algorithm
};

struct UploadInfo {
  std::string bucket;
  std::string key;
  std::string upload_id;
  TimePoint initiated{};
  ObjectMeta meta;
  // The algorithm and type its object's checksum will have (value empty);
  // not asked for: S3's default, computed when first asked for.
  s3::ObjectChecksum checksum_plan{s3::kDefaultChecksumAlgorithm, "",
                                   s3::ChecksumType::kFullObject};
  bool checksum_asked = false;
};

// One <Part> of a CompleteMultipartUpload request.
struct CompletedPart {
  int number = 0;
  std::string etag;      // as sent; quotes are ignored when comparing
  std::string checksum = {};  // Checksum<ALG> as sent, "" when absent
};

struct BucketInfo {
  std::string name;
  TimePoint created{};
};

// A Status that the HTTP layer renders as an S3 error document.
Status S3Error(int http_status, std::string code, std::string message);

// ETag of a completed multipart upload: ferry::MultipartEtag (crypto/digest.h).
using ::ferry::MultipartEtag;

// Removes one pair of surrounding double quotes, if present.
std::string_view StripQuotes(std::string_view etag);

}  // namespace ferry::s3server
