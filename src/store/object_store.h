#pragma once
// The object-store interface every backend implements (local directory, S3),
// in the spirit of rclone's fs.Fs: a small required surface plus a Features
// struct for optional powers, with callers falling back when one is missing.
//
// Threading: every method may be called from any thread, concurrently, unless
// a backend documents otherwise. Keys are raw UTF-8 object keys, never
// URL-encoded. Bodies are streamed through ByteSource / ByteSink so memory is
// bounded by the caller's buffers, never by object size.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/status.h"
#include "crypto/checksum.h"
#include "store/stream.h"

namespace ferry {

using TimePoint = std::chrono::system_clock::time_point;

// System metadata that S3 keeps as HTTP headers, and user metadata
// (x-amz-meta-NAME, NAME stored lower-case without the prefix).
struct ObjectHeaders {
  std::string content_type;
  std::string content_encoding;
  std::string content_disposition;
  std::string cache_control;
  std::string content_language;
  std::string expires;  // as sent (an HTTP date); not interpreted
  std::map<std::string, std::string> user;

  bool operator==(const ObjectHeaders&) const = default;
};

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  std::string etag;  // without surrounding quotes; "" when unknown
  // False when the ETag, though 32 hex digits, is not the body's MD5
  // (SSE-KMS / SSE-C objects on S3). Multipart "-N" ETags never are.
  bool etag_is_md5 = true;
  // The body's MD5 (32 lower-case hex digits) when the store keeps one apart
  // from the ETag (Azure's Content-MD5 property); "" otherwise. Stores whose
  // ETag is the MD5 leave this empty: read BodyMd5() rather than either.
  std::string md5_hex;
  TimePoint last_modified{};
  ObjectHeaders headers;  // filled by Head/Get; List fills none
  // The flexible checksum the store keeps (S3's x-amz-checksum-*), filled
  // by Head/Get of stores that keep one; nullopt otherwise.
  std::optional<ObjectChecksum> checksum;
};

// The body's MD5 as lower-case hex when `info` proves it (an ETag that is an
// MD5, else md5_hex); "" when unknown.
std::string BodyMd5(const ObjectInfo& info);

struct ListOptions {
  std::string prefix;
  std::string delimiter;           // "" for a flat listing
  std::string start_after;         // keys strictly greater than this
  std::string continuation_token;  // from a previous page
  int max_keys = 1000;             // 1..1000
};

struct ListPage {
  std::vector<ObjectInfo> objects;           // in key (byte) order
  std::vector<std::string> common_prefixes;  // with delimiter only
  bool truncated = false;
  std::string next_continuation_token;  // set when truncated
};

struct ByteRange {
  uint64_t offset = 0;
  std::optional<uint64_t> length;  // to the end when unset
};

struct GetOptions {
  std::optional<ByteRange> range;
  // When set, the read fails with kPreconditionFailed unless the object's
  // ETag equals this (so the ranges of one copy all come from one version).
  std::string if_match;
};

struct PutOptions {
  ObjectHeaders headers;
  // Base64 MD5 of the body. When set the store rejects a body that does not
  // match (kCorruption) and keeps nothing.
  std::string content_md5;
  // The body's full-object checksum, carried from where it came from or
  // given by a client. For CreateMultipart: the algorithm and type the
  // upload's checksum is to have (the value is not used); its parts then
  // carry that algorithm (PartOptions). A store that takes checksums rejects a body that
  // does not match (kCorruption, nothing kept) and keeps it; others ignore
  // it.
  std::optional<ObjectChecksum> checksum;
  // A checksum to compute as the body is sent, when no value is known
  // before it (a body relayed as it arrives): a store that takes checksums
  // has the destination verify and keep it (S3: an aws-chunked body with
  // it as a trailer); others ignore it. Ignored when `checksum` is set.
  std::optional<ChecksumAlgorithm> trailing_checksum;
};

struct PartInfo {
  int number = 0;  // 1..10000
  std::string etag;
  uint64_t size = 0;
  // The part's checksum (of an upload created with one), as the store
  // answered it; a CompleteMultipart sends it back.
  std::optional<ObjectChecksum> checksum = std::nullopt;
};

// How UploadPart checks a part: as PutOptions' fields of the same names.
struct PartOptions {
  PartOptions() = default;
  // Only a Content-MD5 (most callers).
  template <class S, class = std::enable_if_t<std::is_convertible_v<const S&, std::string_view>>>
  PartOptions(const S& md5) : content_md5(std::string_view(md5)) {}  // NOLINT: implicit
  std::string content_md5;
  std::optional<ObjectChecksum> checksum;
  std::optional<ChecksumAlgorithm> trailing_checksum;
};

// GetObjectAttributes' answer: the object's ETag, size and checksum
// (`info`), and for an object uploaded in parts their count and, where the
// store lists them (S3: composite checksums only), each part's size and
// checksum.
struct ObjectAttributes {
  ObjectInfo info;
  int parts_count = 0;  // 0: one part, or not known
  std::vector<PartInfo> parts;
};

// A multipart upload in progress (ListMultipartUploads).
struct UploadInfo {
  std::string key;
  std::string upload_id;
  TimePoint initiated{};  // the store's clock
};

struct StoreFeatures {
  bool server_side_copy = false;  // Copy() works within this store
  // List takes start_after and returns keys in byte order, so a listing can
  // be split into key ranges (migrate/key_range.h). A promise of the
  // protocol, which a server may still break: listers check it.
  bool range_listing = false;
  bool multipart = true;
  uint64_t min_part_size = 5ull << 20;  // every part but the last
  uint64_t max_part_size = 5ull << 30;
  int max_parts = 10000;
  uint64_t max_single_put = 5ull << 30;  // larger objects need multipart
};

// Get and Put that call back instead of waiting, for stores with an event
// loop of their own (S3): one thread can keep many transfers in flight.
class AsyncObjectIo {
 public:
  using Done = std::function<void(Result<ObjectInfo>)>;
  virtual ~AsyncObjectIo() = default;
  // As ObjectStore::Get and Put, retries included. `done` is called exactly
  // once, on a store thread, and must not block (it may start another
  // call). `sink` and `body` must stay alive until then; the key and the
  // options are copied. The store must outlive every call in flight.
  virtual void GetAsync(std::string_view key, const GetOptions& options, ByteSink& sink,
                        Done done) = 0;
  virtual void PutAsync(std::string_view key, ByteSource& body, uint64_t size,
                        const PutOptions& options, Done done) = 0;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // "s3://bucket" or "/abs/dir": how errors name this store.
  virtual std::string Describe() const = 0;
  virtual StoreFeatures Features() const = 0;

  // One page of keys in byte order. Pages hold at most max_keys entries
  // (objects + common prefixes). Keys equal to start_after are excluded.
  virtual Result<ListPage> List(const ListOptions& options) = 0;

  virtual Result<ObjectInfo> Head(std::string_view key) = 0;
  // What the store keeps about an object beside its bytes. By default
  // Head's info alone; stores that keep parts override it.
  virtual Result<ObjectAttributes> Attributes(std::string_view key) {
    ObjectAttributes a;
    FERRY_ASSIGN_OR_RETURN(a.info, Head(key));
    return a;
  }

  // Streams the object (or the requested range) into `sink`. Returns the
  // object's info (size is the whole object's). On error the sink may have
  // received a prefix of the body; callers that need all-or-nothing discard it.
  virtual Result<ObjectInfo> Get(std::string_view key, const GetOptions& options,
                                 ByteSink& sink) = 0;

  // Writes a whole object of exactly `size` bytes read from `body`. Atomic: a
  // reader sees the old object or the new one, never a part.
  virtual Result<ObjectInfo> Put(std::string_view key, ByteSource& body, uint64_t size,
                                 const PutOptions& options) = 0;

  // Multipart upload. Parts may be uploaded concurrently and in any order.
  virtual Result<std::string> CreateMultipart(std::string_view key, const PutOptions& options) = 0;
  virtual Result<PartInfo> UploadPart(std::string_view key, std::string_view upload_id,
                                      int part_number, ByteSource& body, uint64_t size,
                                      const PartOptions& options) = 0;
  // `parts` in ascending part order. Errors (including an S3 200 whose body
  // is an error) leave the upload in place so it can be retried or aborted.
  virtual Result<ObjectInfo> CompleteMultipart(std::string_view key, std::string_view upload_id,
                                               const std::vector<PartInfo>& parts) = 0;
  virtual Status AbortMultipart(std::string_view key, std::string_view upload_id) = 0;
  virtual Result<std::vector<PartInfo>> ListParts(std::string_view key,
                                                  std::string_view upload_id) = 0;
  // The uploads in progress of exactly `key` (not of longer keys it is a
  // prefix of), so a crash that left one unrecorded can be cleaned up.
  virtual Result<std::vector<UploadInfo>> ListMultipartUploads(std::string_view key) = 0;

  // Server-side copy within this store; kUnsupported when
  // !Features().server_side_copy (callers then stream through Get/Put).
  // Headers are copied from the source unless `replace_headers` is set.
  virtual Result<ObjectInfo> Copy(std::string_view src_key, std::string_view dst_key,
                                  const std::optional<ObjectHeaders>& replace_headers) = 0;

  // Deleting a missing key succeeds (S3 semantics).
  virtual Status Delete(std::string_view key) = 0;

  // The asynchronous Get and Put, for stores that have them; else null.
  virtual AsyncObjectIo* Async() { return nullptr; }
};

}  // namespace ferry
