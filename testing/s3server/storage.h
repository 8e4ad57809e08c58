#pragma once
// The server's data: buckets, objects and in-progress multipart uploads.
//
// One Storage serves both modes. The key index and the uploads always live
// in memory; bodies live in a BlobStore (memory segments or files), and in
// directory mode a Catalog persists buckets and object records so a restart
// with the same --dir sees the same objects (uploads are not persisted).
//
// Thread safety: every method may be called from any thread. A single mutex
// guards the index; blob I/O (multipart concatenation) runs outside it.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "blob.h"
#include "listing.h"
#include "listing_quirks.h"
#include "s3_types.h"

namespace ferry::s3server {

struct BucketState {
  TimePoint created{};
  KeyIndex objects;
  // The same keys in walk order, for the unordered list quirk: null until
  // the bucket's first unordered listing, then kept in step with `objects`.
  std::unique_ptr<WalkIndex> walk;
};

// Persistence of buckets and object records (directory mode). Calls are made
// under Storage's lock, in the order the changes happen.
class Catalog {
 public:
  virtual ~Catalog() = default;
  // Reads everything persisted so far.
  virtual Status Load(std::map<std::string, BucketState>* buckets) = 0;
  virtual Status SaveBucket(const std::string& bucket, TimePoint created) = 0;
  virtual Status RemoveBucket(const std::string& bucket) = 0;
  virtual Status SaveObject(const std::string& bucket, const ObjectRecord& record) = 0;
  virtual Status RemoveObject(const std::string& bucket, const std::string& key) = 0;
};

class Storage {
 public:
  // `catalog` may be null (memory mode).
  Storage(std::unique_ptr<BlobStore> blobs, std::unique_ptr<Catalog> catalog);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Loads the catalogue, if any. Call once before serving.
  Status Open();

  BlobStore& blobs() { return *blobs_; }

  // Bucket names: 3..63 of [a-z0-9.-] (InvalidBucketName otherwise).
  Status CreateBucket(const std::string& bucket);       // 409 BucketAlreadyOwnedByYou
  Status DeleteBucket(const std::string& bucket);       // 409 BucketNotEmpty
  Status CheckBucket(const std::string& bucket) const;  // 404 NoSuchBucket
  std::vector<BucketInfo> ListBuckets() const;

  Status PutObject(const std::string& bucket, ObjectRecord record);
  Result<ObjectRecord> GetObject(const std::string& bucket, const std::string& key) const;
  // GetObject, with a deferred checksum computed (reading the body once)
  // and kept.
  Result<ObjectRecord> WithChecksum(const std::string& bucket, const std::string& key);
  // Deleting a missing key succeeds.
  Status DeleteObject(const std::string& bucket, const std::string& key);
  // The byte-ordered listing, without quirks.
  Result<ListResult> ListObjects(const std::string& bucket, const ListParams& params) const;
  // A ListObjects request with list quirks (ListWithQuirks); the first
  // unordered listing of a bucket builds its WalkIndex.
  Result<ListResult> ListObjects(const std::string& bucket, const ListRequest& request,
                                 ListQuirks quirks);

  Result<std::string> CreateUpload(const std::string& bucket, const std::string& key,
                                   ObjectMeta meta,
                                   std::optional<s3::ObjectChecksum> checksum_plan = std::nullopt);
  // Replaces any earlier part with the same number. 404 NoSuchUpload.
  Status PutPart(const std::string& bucket, const std::string& key, const std::string& upload_id,
                 PartRecord part);
  Status CheckUpload(const std::string& bucket, const std::string& key,
                     const std::string& upload_id) const;
  // The upload's checksum plan (404 NoSuchUpload): nullopt when none was
  // asked for (S3's default, deferred).
  Result<std::optional<s3::ObjectChecksum>> UploadChecksumPlan(const std::string& bucket,
                                                               const std::string& key,
                                                               const std::string& upload_id) const;
  // Validates `parts` (ascending numbers: InvalidPartOrder; existing parts
  // with matching ETags: InvalidPart; every part but the last at least
  // `min_part_size`: EntityTooSmall; a part checksum sent that differs
  // from the part's: InvalidPart), gives the object its checksum (the
  // parts' composite, or the whole object's: BadDigest when
  // `full_object_checksum` is given and differs), then stores the object
  // and ends the upload. On error the upload is left as it was.
  Result<ObjectRecord> CompleteUpload(const std::string& bucket, const std::string& key,
                                      const std::string& upload_id,
                                      const std::vector<CompletedPart>& parts,
                                      uint64_t min_part_size,
                                      const std::string& full_object_checksum = "");
  Status AbortUpload(const std::string& bucket, const std::string& key,
                     const std::string& upload_id);
  Result<std::vector<PartRecord>> ListParts(const std::string& bucket, const std::string& key,
                                            const std::string& upload_id) const;
  // Uploads in the bucket whose key starts with `prefix`, by key then
  // initiation time.
  Result<std::vector<UploadInfo>> ListUploads(const std::string& bucket,
                                              const std::string& prefix) const;

  // Drops every bucket, object and upload.
  Status Clear();

  size_t object_count() const;
  size_t upload_count() const;

 private:
  struct Upload {
    UploadInfo info;
    std::map<int, PartRecord> parts;
  };

  Status CheckBucketLocked(const std::string& bucket) const;
  Result<const Upload*> FindUploadLocked(const std::string& bucket, const std::string& key,
                                         const std::string& upload_id) const;

  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<Catalog> catalog_;
  mutable std::mutex mu_;
  std::map<std::string, BucketState> buckets_;  // guarded by mu_
  std::map<std::string, Upload> uploads_;       // by upload id; guarded by mu_
  uint64_t next_upload_ = 1;                    // guarded by mu_
};

bool IsValidBucketName(std::string_view name);

}  // namespace ferry::s3server
