#include "storage.h"

#include <algorithm>
#include <random>

#include "crypto/digest.h"

namespace ferry::s3server {
namespace {

Status NoSuchBucket(const std::string& bucket) {
  return S3Error(404, "NoSuchBucket", "The specified bucket does not exist: " + bucket);
}

Status NoSuchUpload() {
  return S3Error(404, "NoSuchUpload",
                 "The specified multipart upload does not exist. The upload ID may be invalid, "
                 "or the upload may have been aborted or completed.");
}

std::string RandomHex(size_t bytes) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string raw(bytes, '\0');
  for (auto& c : raw) c = static_cast<char>(rng());
  return HexLower(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
}

// A whole object's checksum, read through once (a multipart object's
// full-object checksum).
Result<std::string> ChecksumOfBlob(ChecksumAlgorithm a, const Blob& blob) {
  Checksummer summer(a);
  std::string scratch;
  for (uint64_t off = 0; off < blob.size();) {
    FERRY_ASSIGN_OR_RETURN(std::string_view v, blob.ReadAt(off, 1 << 20, &scratch));
    summer.Update(v);
    off += v.size();
  }
  return summer.FinishBase64();
}

}  // namespace

bool IsValidBucketName(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) {
      return false;
    }
  }
  return name.front() != '.' && name.front() != '-' && name.back() != '.' && name.back() != '-';
}

Storage::Storage(std::unique_ptr<BlobStore> blobs, std::unique_ptr<Catalog> catalog)
    : blobs_(std::move(blobs)), catalog_(std::move(catalog)) {}

Storage::~Storage() {
  // Blobs released by the index below must keep their persisted data.
  blobs_->Close();
  buckets_.clear();
  uploads_.clear();
}

Status Storage::Open() {
  if (!catalog_) return Status::Ok();
  std::lock_guard lock(mu_);
  return catalog_->Load(&buckets_);
}

Status Storage::CreateBucket(const std::string& bucket) {
  if (!IsValidBucketName(bucket)) {
    return S3Error(400, "InvalidBucketName", "The specified bucket is not valid: " + bucket);
  }
  std::lock_guard lock(mu_);
  if (buckets_.count(bucket)) {
    return S3Error(409, "BucketAlreadyOwnedByYou",
                   "Your previous request to create the named bucket succeeded and you already "
                   "own it.");
  }
  TimePoint now = std::chrono::system_clock::now();
  if (catalog_) FERRY_RETURN_IF_ERROR(catalog_->SaveBucket(bucket, now));
  buckets_[bucket].created = now;
  return Status::Ok();
}

Status Storage::DeleteBucket(const std::string& bucket) {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return NoSuchBucket(bucket);
  if (!it->second.objects.empty()) {
    return S3Error(409, "BucketNotEmpty", "The bucket you tried to delete is not empty");
  }
  for (auto& [id, up] : uploads_) {
    if (up.info.bucket == bucket) {
      return S3Error(409, "BucketNotEmpty", "The bucket has multipart uploads in progress");
    }
  }
  if (catalog_) FERRY_RETURN_IF_ERROR(catalog_->RemoveBucket(bucket));
  buckets_.erase(it);
  return Status::Ok();
}

Status Storage::CheckBucketLocked(const std::string& bucket) const {
  return buckets_.count(bucket) ? Status::Ok() : NoSuchBucket(bucket);
}

Status Storage::CheckBucket(const std::string& bucket) const {
  std::lock_guard lock(mu_);
  return CheckBucketLocked(bucket);
}

std::vector<BucketInfo> Storage::ListBuckets() const {
  std::lock_guard lock(mu_);
  std::vector<BucketInfo> out;
  for (const auto& [name, b] : buckets_) out.push_back({name, b.created});
  return out;
}

Status Storage::PutObject(const std::string& bucket, ObjectRecord record) {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return NoSuchBucket(bucket);
  if (catalog_) FERRY_RETURN_IF_ERROR(catalog_->SaveObject(bucket, record));
  if (it->second.walk) it->second.walk->Add(record.key);
  std::string key = record.key;
  it->second.objects.insert_or_assign(std::move(key), std::move(record));
  return Status::Ok();
}

Result<ObjectRecord> Storage::GetObject(const std::string& bucket, const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return NoSuchBucket(bucket);
  auto obj = it->second.objects.find(key);
  if (obj == it->second.objects.end()) {
    return S3Error(404, "NoSuchKey", "The specified key does not exist.");
  }
  return obj->second;
}

Status Storage::DeleteObject(const std::string& bucket, const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return NoSuchBucket(bucket);
  auto obj = it->second.objects.find(key);
  if (obj == it->second.objects.end()) return Status::Ok();
  if (catalog_) FERRY_RETURN_IF_ERROR(catalog_->RemoveObject(bucket, key));
  if (it->second.walk) it->second.walk->Remove(key);
  it->second.objects.erase(obj);
  return Status::Ok();
}

Result<ListResult> Storage::ListObjects(const std::string& bucket, const ListParams& params) const {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return NoSuchBucket(bucket);
  return ListKeys(it->second.objects, params);
}

Result<ListResult> Storage::ListObjects(const std::string& bucket, const ListRequest& request,
                                        ListQuirks quirks) {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return NoSuchBucket(bucket);
  BucketState& b = it->second;
  if (quirks.unordered && !b.walk) b.walk = std::make_unique<WalkIndex>(b.objects);
  return ListWithQuirks(b.objects, b.walk.get(), request, quirks);
}

Result<std::string> Storage::CreateUpload(const std::string& bucket, const std::string& key,
                                          ObjectMeta meta,
                                          std::optional<s3::ObjectChecksum> checksum_plan) {
  std::lock_guard lock(mu_);
  FERRY_RETURN_IF_ERROR(CheckBucketLocked(bucket));
  // A counter keeps ids unique; the random tail makes stale ids from an
  // earlier server process fail instead of aliasing a new upload.
  std::string id = std::to_string(next_upload_++) + "." + RandomHex(12);
  Upload& up = uploads_[id];
  up.info = {bucket, key, id, std::chrono::system_clock::now(), std::move(meta)};
  if (checksum_plan) {
    up.info.checksum_plan = std::move(*checksum_plan);
    up.info.checksum_asked = true;
  }
  return id;
}

Result<const Storage::Upload*> Storage::FindUploadLocked(const std::string& bucket,
                                                         const std::string& key,
                                                         const std::string& upload_id) const {
  FERRY_RETURN_IF_ERROR(CheckBucketLocked(bucket));
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end() || it->second.info.bucket != bucket || it->second.info.key != key) {
    return NoSuchUpload();
  }
  return &it->second;
}

Status Storage::CheckUpload(const std::string& bucket, const std::string& key,
                            const std::string& upload_id) const {
  std::lock_guard lock(mu_);
  return FindUploadLocked(bucket, key, upload_id).status();
}

Result<std::optional<s3::ObjectChecksum>> Storage::UploadChecksumPlan(
    const std::string& bucket, const std::string& key, const std::string& upload_id) const {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(const Upload* up, FindUploadLocked(bucket, key, upload_id));
  if (!up->info.checksum_asked) return std::optional<s3::ObjectChecksum>();
  return std::optional(up->info.checksum_plan);
}

Result<ObjectRecord> Storage::WithChecksum(const std::string& bucket, const std::string& key) {
  FERRY_ASSIGN_OR_RETURN(ObjectRecord rec, GetObject(bucket, key));
  if (rec.checksum || !rec.checksum_deferred) return rec;
  FERRY_ASSIGN_OR_RETURN(std::string value,
                         ChecksumOfBlob(s3::kDefaultChecksumAlgorithm, *rec.blob));
  rec.checksum = s3::ObjectChecksum{s3::kDefaultChecksumAlgorithm, std::move(value),
                                    s3::ChecksumType::kFullObject};
  rec.checksum_deferred = false;
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  if (it == buckets_.end()) return rec;
  auto obj = it->second.objects.find(key);
  // Kept only while the key still holds these bytes.
  if (obj != it->second.objects.end() && obj->second.blob == rec.blob) {
    if (catalog_) FERRY_RETURN_IF_ERROR(catalog_->SaveObject(bucket, rec));
    obj->second = rec;
  }
  return rec;
}

Status Storage::PutPart(const std::string& bucket, const std::string& key,
                        const std::string& upload_id, PartRecord part) {
  std::lock_guard lock(mu_);
  FERRY_RETURN_IF_ERROR(FindUploadLocked(bucket, key, upload_id).status());
  int number = part.number;
  uploads_[upload_id].parts.insert_or_assign(number, std::move(part));
  return Status::Ok();
}

Result<ObjectRecord> Storage::CompleteUpload(const std::string& bucket, const std::string& key,
                                             const std::string& upload_id,
                                             const std::vector<CompletedPart>& parts,
                                             uint64_t min_part_size,
                                             const std::string& full_object_checksum) {
  if (parts.empty()) {
    return S3Error(400, "MalformedXML",
                   "The XML you provided was not well-formed or did not validate against our "
                   "published schema");
  }
  std::vector<std::shared_ptr<const Blob>> blobs;
  std::vector<std::string> md5s;
  std::vector<std::string> checksums;
  ObjectRecord record;
  s3::ObjectChecksum plan;
  bool asked = false;
  {
    std::lock_guard lock(mu_);
    FERRY_ASSIGN_OR_RETURN(const Upload* up, FindUploadLocked(bucket, key, upload_id));
    int previous = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const CompletedPart& want = parts[i];
      if (want.number <= previous) {
        return S3Error(400, "InvalidPartOrder",
                       "The list of parts was not in ascending order. The parts list must be "
                       "specified in order by part number.");
      }
      previous = want.number;
      auto have = up->parts.find(want.number);
      if (have == up->parts.end() || StripQuotes(want.etag) != have->second.etag) {
        return S3Error(400, "InvalidPart",
                       "One or more of the specified parts could not be found. The part may not "
                       "have been uploaded, or the specified entity tag may not match the part's "
                       "entity tag. Part " +
                           std::to_string(want.number));
      }
      if (i + 1 < parts.size() && have->second.size < min_part_size) {
        return S3Error(400, "EntityTooSmall",
                       "Your proposed upload is smaller than the minimum allowed object size. "
                       "Part " +
                           std::to_string(want.number));
      }
      if (!want.checksum.empty() && want.checksum != have->second.checksum) {
        return S3Error(400, "InvalidPart",
                       "The checksum of part " + std::to_string(want.number) +
                           " does not match the part's checksum.");
      }
      blobs.push_back(have->second.blob);
      md5s.push_back(have->second.etag);
      checksums.push_back(have->second.checksum);
      record.parts.push_back({have->second.size, have->second.checksum});
      record.size += have->second.size;
    }
    record.meta = up->info.meta;
    plan = up->info.checksum_plan;
    asked = up->info.checksum_asked;
  }

  // Concatenation may copy gigabytes (directory mode): done without the lock.
  FERRY_ASSIGN_OR_RETURN(record.blob, blobs_->Concat(blobs));
  if (!asked && full_object_checksum.empty()) {
    record.checksum_deferred = true;  // S3's default, computed when asked for
  } else if (plan.type == s3::ChecksumType::kComposite) {
    plan.value = s3::CompositeChecksum(plan.algorithm, checksums);
  } else {
    FERRY_ASSIGN_OR_RETURN(plan.value, ChecksumOfBlob(plan.algorithm, *record.blob));
    if (!full_object_checksum.empty() && full_object_checksum != plan.value) {
      return S3Error(400, "BadDigest",
                     "The " + std::string(ChecksumAlgorithmName(plan.algorithm)) +
                         " you specified did not match the calculated checksum.");
    }
  }
  if (!record.checksum_deferred) record.checksum = std::move(plan);
  record.key = key;
  record.etag = MultipartEtag(md5s);
  record.last_modified = std::chrono::system_clock::now();

  std::lock_guard lock(mu_);
  // Another Complete or an Abort may have won the race meanwhile.
  FERRY_RETURN_IF_ERROR(FindUploadLocked(bucket, key, upload_id).status());
  BucketState& b = buckets_[bucket];
  if (catalog_) FERRY_RETURN_IF_ERROR(catalog_->SaveObject(bucket, record));
  if (b.walk) b.walk->Add(key);
  b.objects.insert_or_assign(key, record);
  uploads_.erase(upload_id);
  return record;
}

Status Storage::AbortUpload(const std::string& bucket, const std::string& key,
                            const std::string& upload_id) {
  std::lock_guard lock(mu_);
  FERRY_RETURN_IF_ERROR(FindUploadLocked(bucket, key, upload_id).status());
  uploads_.erase(upload_id);
  return Status::Ok();
}

Result<std::vector<PartRecord>> Storage::ListParts(const std::string& bucket,
                                                   const std::string& key,
                                                   const std::string& upload_id) const {
  std::lock_guard lock(mu_);
  FERRY_ASSIGN_OR_RETURN(const Upload* up, FindUploadLocked(bucket, key, upload_id));
  std::vector<PartRecord> out;
  for (const auto& [n, part] : up->parts) out.push_back(part);
  return out;
}

Result<std::vector<UploadInfo>> Storage::ListUploads(const std::string& bucket,
                                                     const std::string& prefix) const {
  std::lock_guard lock(mu_);
  FERRY_RETURN_IF_ERROR(CheckBucketLocked(bucket));
  std::vector<UploadInfo> out;
  for (const auto& [id, up] : uploads_) {
    if (up.info.bucket == bucket && up.info.key.compare(0, prefix.size(), prefix) == 0) {
      out.push_back(up.info);
    }
  }
  std::sort(out.begin(), out.end(), [](const UploadInfo& a, const UploadInfo& b) {
    return a.key != b.key ? a.key < b.key : a.initiated < b.initiated;
  });
  return out;
}

Status Storage::Clear() {
  std::lock_guard lock(mu_);
  if (catalog_) {
    for (const auto& [name, b] : buckets_) {
      for (const auto& [key, rec] : b.objects) {
        FERRY_RETURN_IF_ERROR(catalog_->RemoveObject(name, key));
      }
      FERRY_RETURN_IF_ERROR(catalog_->RemoveBucket(name));
    }
  }
  buckets_.clear();
  uploads_.clear();
  return Status::Ok();
}

size_t Storage::object_count() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [name, b] : buckets_) n += b.objects.size();
  return n;
}

size_t Storage::upload_count() const {
  std::lock_guard lock(mu_);
  return uploads_.size();
}

}  // namespace ferry::s3server
