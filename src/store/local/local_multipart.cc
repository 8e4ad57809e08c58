// Multipart uploads for the local backend.
//
// Staging layout, all below the reserved directory <root>/%mpu:
//   %mpu/<upload-id>/upload.json            {"key": "...", "headers": {...}}
//   %mpu/<upload-id>/part.<NNNNN>.<md5hex>  one file per uploaded part
//   %mpu/<upload-id>/.%tmp.<hex>            a part being written
// The upload id is 32 random hex digits; ids of any other form are rejected
// before they reach a path. A part's ETag lives in its file name, so a part
// and its ETag are published together by one rename; re-uploading a part
// number renames the new file in and then removes the older ones (under the
// upload's stripe lock, so two uploads of one part cannot delete each other).
// CompleteMultipart concatenates the parts (copy_file_range) into a temp file
// in the key's directory, commits it like a Put, then removes the staging
// directory. Failures before the commit leave the staging directory intact.

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "store/local/key_path.h"
#include "store/local/local_store.h"
#include "store/local/object_io.h"

namespace ferry {

using local::UniqueFd;

namespace {

constexpr size_t kUploadIdHexDigits = 32;
constexpr int kMaxPartNumber = 10000;
constexpr char kManifestName[] = "upload.json";
constexpr char kStagingDir[] = "%mpu";

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool ValidUploadId(std::string_view id) { return id.size() == kUploadIdHexDigits && IsHex(id); }

Status NoSuchUpload(std::string_view key, std::string_view id) {
  return Status::NotFound("no such upload '" + std::string(id) + "' for '" + std::string(key) +
                          "'");
}

std::string PartPrefix(int number) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "part.%05d.", number);
  return buf;
}

// Parses "part.NNNNN.<32 hex>"; false for other names.
bool ParsePartName(std::string_view name, int* number, std::string* etag) {
  constexpr size_t kPrefix = 11;  // "part.NNNNN."
  if (name.size() != kPrefix + 32 || !name.starts_with("part.") || name[10] != '.') return false;
  std::string_view digits = name.substr(5, 5);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  *number = std::stoi(std::string(digits));
  if (*number < 1 || *number > kMaxPartNumber) return false;
  std::string_view hex = name.substr(kPrefix);
  if (!IsHex(hex)) return false;
  *etag = std::string(hex);
  return true;
}

// "\"abc\"" -> "abc"; ETags are compared case-insensitively as hex.
std::string NormalizeEtag(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  std::string out(etag);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool HexToBytes(std::string_view hex, std::string* out) {
  if (hex.size() % 2 != 0 || !IsHex(hex)) return false;
  out->clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    out->push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return true;
}

struct StagedPart {
  int number;
  std::string etag;
  std::string path;
};

Result<std::vector<StagedPart>> ReadParts(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Status::FromErrno(errno, "list upload " + dir);
  std::vector<StagedPart> parts;
  while (struct dirent* e = ::readdir(d)) {
    StagedPart p;
    if (ParsePartName(e->d_name, &p.number, &p.etag)) {
      p.path = dir + "/" + e->d_name;
      parts.push_back(std::move(p));
    }
  }
  ::closedir(d);
  std::sort(parts.begin(), parts.end(),
            [](const StagedPart& a, const StagedPart& b) { return a.number < b.number; });
  return parts;
}

}  // namespace

Result<std::string> LocalStore::UploadDir(std::string_view key, std::string_view upload_id,
                                          ObjectHeaders* headers) const {
  FERRY_RETURN_IF_ERROR(local::ValidateKey(key));
  if (!ValidUploadId(upload_id)) return NoSuchUpload(key, upload_id);
  std::string dir = root_ + "/" + kStagingDir + "/" + std::string(upload_id);
  auto text = local::ReadSmallFile(dir + "/" + kManifestName, 1 << 20);
  if (!text.ok()) {
    if (text.status().code() == ErrorCode::kNotFound) return NoSuchUpload(key, upload_id);
    return text.status();
  }
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("key") || !j["key"].is_string() ||
      !j.contains("headers")) {
    return Status::Corruption("malformed multipart manifest in " + dir);
  }
  if (j["key"].get<std::string>() != key) return NoSuchUpload(key, upload_id);
  if (headers != nullptr) {
    auto h = local::ParseHeaders(j["headers"].dump());
    if (!h) return Status::Corruption("malformed multipart manifest in " + dir);
    *headers = std::move(*h);
  }
  return dir;
}

Result<std::string> LocalStore::CreateMultipart(std::string_view key, const PutOptions& options) {
  FERRY_RETURN_IF_ERROR(Locate(key).status());
  std::string staging = root_ + "/" + kStagingDir;
  if (::mkdir(staging.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::FromErrno(errno, "create multipart staging " + staging);
  }
  std::string id;
  std::string dir;
  for (;;) {
    id = local::RandomHex(kUploadIdHexDigits);
    dir = staging + "/" + id;
    if (::mkdir(dir.c_str(), 0755) == 0) break;
    if (errno != EEXIST) return Status::FromErrno(errno, "create upload " + dir);
  }
  nlohmann::json manifest = {
      {"key", std::string(key)},
      {"headers", nlohmann::json::parse(local::SerializeHeaders(options.headers))}};
  Status st = WriteFileAtomic(dir + "/" + kManifestName, DumpJson(manifest),
                              {.sync = options_.sync, .temp_dir = {}});
  if (!st.ok()) {
    local::RemoveTree(dir);
    return st.WithContext("create multipart upload of '" + std::string(key) + "'");
  }
  return id;
}

Result<PartInfo> LocalStore::UploadPart(std::string_view key, std::string_view upload_id,
                                        int part_number, ByteSource& body, uint64_t size,
                                        const PartOptions& options) {
  const std::string& content_md5 = options.content_md5;  // no checksums kept here
  if (part_number < 1 || part_number > kMaxPartNumber) {
    return Status::InvalidArgument("part number " + std::to_string(part_number) +
                                   " outside 1..10000");
  }
  FERRY_ASSIGN_OR_RETURN(std::string dir, UploadDir(key, upload_id, nullptr));
  std::string temp = dir + "/" + local::TempName();
  auto fd = local::CreateExclusive(temp);
  if (!fd.ok()) {
    if (fd.status().code() == ErrorCode::kNotFound) return NoSuchUpload(key, upload_id);
    return fd.status();
  }
  std::string part_name;
  Status st = [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(std::string md5, local::StreamBodyToFile(body, size, fd->get(), temp));
    FERRY_RETURN_IF_ERROR(local::CheckContentMd5(content_md5, md5, key));
    if (options_.sync) FERRY_RETURN_IF_ERROR(local::FsyncFd(fd->get(), temp));
    part_name = PartPrefix(part_number) + HexLower(md5);
    std::lock_guard<std::mutex> lock(StripeLock(upload_id));
    if (::rename(temp.c_str(), (dir + "/" + part_name).c_str()) != 0) {
      return Status::FromErrno(errno, "store part " + std::to_string(part_number));
    }
    FERRY_ASSIGN_OR_RETURN(std::vector<StagedPart> parts, ReadParts(dir));
    for (const StagedPart& p : parts) {
      if (p.number == part_number && p.path != dir + "/" + part_name) ::unlink(p.path.c_str());
    }
    return Status::Ok();
  }();
  if (!st.ok()) {
    ::unlink(temp.c_str());
    return st.WithContext("upload part " + std::to_string(part_number) + " of '" +
                          std::string(key) + "'");
  }
  if (options_.sync) FERRY_RETURN_IF_ERROR(local::FsyncDir(dir));
  PartInfo info;
  info.number = part_number;
  info.etag = part_name.substr(PartPrefix(part_number).size());
  info.size = size;
  return info;
}

Result<std::vector<PartInfo>> LocalStore::ListParts(std::string_view key,
                                                    std::string_view upload_id) {
  FERRY_ASSIGN_OR_RETURN(std::string dir, UploadDir(key, upload_id, nullptr));
  FERRY_ASSIGN_OR_RETURN(std::vector<StagedPart> staged, ReadParts(dir));
  std::vector<PartInfo> parts;
  for (const StagedPart& p : staged) {
    struct stat st;
    if (::stat(p.path.c_str(), &st) != 0) continue;  // replaced under us
    if (!parts.empty() && parts.back().number == p.number) continue;
    parts.push_back(PartInfo{p.number, p.etag, static_cast<uint64_t>(st.st_size)});
  }
  return parts;
}

Result<std::vector<UploadInfo>> LocalStore::ListMultipartUploads(std::string_view key) {
  FERRY_RETURN_IF_ERROR(local::ValidateKey(key));
  std::string staging = root_ + "/" + kStagingDir;
  std::vector<UploadInfo> uploads;
  DIR* dir = ::opendir(staging.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return uploads;  // no upload was ever made here
    return Status::FromErrno(errno, "list " + staging);
  }
  std::vector<std::string> ids;
  while (struct dirent* e = ::readdir(dir)) {
    if (ValidUploadId(e->d_name)) ids.emplace_back(e->d_name);
  }
  ::closedir(dir);
  for (const std::string& id : ids) {
    auto upload_dir = UploadDir(key, id, nullptr);
    if (!upload_dir.ok()) continue;  // another key's, or completed or aborted meanwhile
    struct stat st;
    if (::stat((*upload_dir + "/" + kManifestName).c_str(), &st) != 0) continue;
    UploadInfo u;
    u.key = std::string(key);
    u.upload_id = id;
    u.initiated = TimePoint(std::chrono::seconds(st.st_mtim.tv_sec)) +
                  std::chrono::duration_cast<TimePoint::duration>(
                      std::chrono::nanoseconds(st.st_mtim.tv_nsec));
    uploads.push_back(std::move(u));
  }
  std::sort(uploads.begin(), uploads.end(),
            [](const UploadInfo& a, const UploadInfo& b) { return a.initiated < b.initiated; });
  return uploads;
}

Result<ObjectInfo> LocalStore::CompleteMultipart(std::string_view key, std::string_view upload_id,
                                                 const std::vector<PartInfo>& parts) {
  ObjectHeaders headers;
  FERRY_ASSIGN_OR_RETURN(std::string dir, UploadDir(key, upload_id, &headers));
  const std::string what = "complete upload of '" + std::string(key) + "'";
  if (parts.empty()) return Status::InvalidArgument(what + ": no parts");
  // Open every part first: from here on a re-upload cannot change our bytes.
  std::vector<UniqueFd> fds;
  std::vector<uint64_t> sizes;
  std::string md5s;
  for (size_t i = 0; i < parts.size(); ++i) {
    const PartInfo& p = parts[i];
    if (i > 0 && p.number <= parts[i - 1].number) {
      return Status::InvalidArgument(what + ": parts not in ascending order at part " +
                                     std::to_string(p.number));
    }
    std::string etag = NormalizeEtag(p.etag);
    std::string raw;
    if (p.number < 1 || p.number > kMaxPartNumber || etag.size() != 32 || !HexToBytes(etag, &raw)) {
      return Status::InvalidArgument(what + ": no part " + std::to_string(p.number) +
                                     " with ETag '" + p.etag + "'");
    }
    std::string path = dir + "/" + PartPrefix(p.number) + etag;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
      if (errno == ENOENT) {
        return Status::InvalidArgument(what + ": no part " + std::to_string(p.number) +
                                       " with ETag '" + p.etag + "'");
      }
      return Status::FromErrno(errno, what + ": open part " + std::to_string(p.number));
    }
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, what + ": stat part");
    uint64_t size = static_cast<uint64_t>(st.st_size);
    if (i + 1 < parts.size() && size < options_.min_part_size) {
      return Status::InvalidArgument(what + ": part " + std::to_string(p.number) + " has " +
                                     std::to_string(size) + " bytes, below the minimum " +
                                     std::to_string(options_.min_part_size));
    }
    fds.push_back(std::move(fd));
    sizes.push_back(size);
    md5s += raw;
  }
  FERRY_ASSIGN_OR_RETURN(Location loc, Locate(key));
  FERRY_ASSIGN_OR_RETURN(TempFile temp, CreateTempFor(loc));
  uint64_t offset = 0;
  for (size_t i = 0; i < fds.size(); ++i) {
    Status st = local::AppendFileData(fds[i].get(), temp.fd.get(), sizes[i], offset, temp.path);
    if (!st.ok()) {
      ::unlink(temp.path.c_str());
      local::PruneEmptyDirs(root_, loc.rel_dir);
      return st.WithContext(what);
    }
    offset += sizes[i];
  }
  std::string etag = HexLower(Md5(md5s)) + "-" + std::to_string(parts.size());
  FERRY_ASSIGN_OR_RETURN(ObjectInfo info, Commit(loc, std::move(temp), etag, headers));
  {
    std::lock_guard<std::mutex> lock(StripeLock(upload_id));
    local::RemoveTree(dir);  // a leftover is harmless: never listed, abortable
  }
  return info;
}

Status LocalStore::AbortMultipart(std::string_view key, std::string_view upload_id) {
  FERRY_ASSIGN_OR_RETURN(std::string dir, UploadDir(key, upload_id, nullptr));
  std::lock_guard<std::mutex> lock(StripeLock(upload_id));
  Status st = local::RemoveTree(dir);
  if (!st.ok()) return st.WithContext("abort upload of '" + std::string(key) + "'");
  return Status::Ok();
}

}  // namespace ferry
