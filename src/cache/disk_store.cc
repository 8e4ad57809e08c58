#include "cache/disk_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "base/atomic_file.h"
#include "crypto/digest.h"
#include "store/local/fs_util.h"

namespace ferry::cache {
namespace {

std::string HashOf(std::string_view key) { return HexLower(Sha256(key)); }

bool IsHashName(std::string_view n) {
  return n.size() == 64 && std::all_of(n.begin(), n.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  return names;
}

Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  return Status::FromErrno(errno, "mkdir " + path);
}

}  // namespace

Result<std::unique_ptr<DiskStore>> DiskStore::Open(DiskStoreOptions options) {
  if (options.dir.empty()) return Status::InvalidArgument("cache directory not set");
  std::unique_ptr<DiskStore> s(new DiskStore(std::move(options)));
  FERRY_RETURN_IF_ERROR(s->Load());
  return s;
}

std::string DiskStore::PathOf(const std::string& hash) const {
  return options_.dir + "/entries/" + hash.substr(0, 2) + "/" + hash;
}

Status DiskStore::Load() {
  const std::string& dir = options_.dir;
  FERRY_RETURN_IF_ERROR(MakeDir(dir));
  FERRY_RETURN_IF_ERROR(MakeDir(dir + "/entries"));
  FERRY_RETURN_IF_ERROR(MakeDir(dir + "/tmp"));
  // Writes a crash interrupted never became entries.
  for (const std::string& n : ListDir(dir + "/tmp")) ::unlink((dir + "/tmp/" + n).c_str());
  struct Found {
    std::string hash;
    uint64_t bytes;
    int64_t mtime_ns;
  };
  std::vector<Found> found;
  for (const std::string& sub : ListDir(dir + "/entries")) {
    for (const std::string& n : ListDir(dir + "/entries/" + sub)) {
      std::string path = dir + "/entries/" + sub + "/" + n;
      struct stat st {};
      if (!IsHashName(n) || n.substr(0, 2) != sub || ::stat(path.c_str(), &st) != 0 ||
          !S_ISREG(st.st_mode)) {
        continue;  // not ours: left alone
      }
      found.push_back({n, static_cast<uint64_t>(st.st_size), local::MtimeNs(st)});
    }
  }
  // Most recently written first.
  std::sort(found.begin(), found.end(),
            [](const Found& a, const Found& b) { return a.mtime_ns > b.mtime_ns; });
  std::lock_guard<std::mutex> lock(mu_);
  for (const Found& f : found) {
    lru_.push_back(f.hash);
    index_[f.hash] = Node{std::prev(lru_.end()), f.bytes};
    bytes_ += f.bytes;
  }
  EvictOverLimit();  // a smaller --max-size than last time
  return Status::Ok();
}

Status DiskStore::Put(const EntryMeta& meta, std::string_view body) {
  std::string file = EncodeEntry(meta, body);
  if (file.size() > options_.max_bytes) {
    return Status::InvalidArgument("entry of " + std::to_string(file.size()) +
                                   " bytes is larger than the cache");
  }
  std::string hash = HashOf(meta.key);
  std::string sub = options_.dir + "/entries/" + hash.substr(0, 2);
  FERRY_RETURN_IF_ERROR(MakeDir(sub));
  FERRY_RETURN_IF_ERROR(
      WriteFileAtomic(PathOf(hash), file, {.sync = options_.sync, .temp_dir = options_.dir + "/tmp"}));
  std::lock_guard<std::mutex> lock(mu_);
  Forget(hash);  // the replaced entry's bytes
  lru_.push_front(hash);
  index_[hash] = Node{lru_.begin(), file.size()};
  bytes_ += file.size();
  EvictOverLimit();
  return Status::Ok();
}

Result<std::optional<StoredEntry>> DiskStore::Get(std::string_view key) {
  std::string hash = HashOf(key);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!index_.count(hash)) return std::optional<StoredEntry>();
    Touch(hash);
  }
  std::string path = PathOf(hash);
  auto bytes = local::ReadSmallFile(path, static_cast<size_t>(options_.max_bytes));
  if (!bytes.ok()) {
    if (bytes.status().code() == ErrorCode::kNotFound) {  // evicted meanwhile
      return std::optional<StoredEntry>();
    }
    return bytes.status();
  }
  StoredEntry out;
  out.file = std::move(bytes).value();
  auto decoded = DecodeEntry(out.file);
  Status damage = decoded.ok() ? Status::Ok() : decoded.status();
  if (decoded.ok() && decoded->meta.key != key) {
    damage = Status::Corruption("cache entry: file of another key");
  }
  if (!damage.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ::unlink(path.c_str());
    Forget(hash);
    corrupt_++;
    return std::optional<StoredEntry>();
  }
  out.entry = std::move(decoded).value();
  return std::optional<StoredEntry>(std::move(out));
}

Status DiskStore::Remove(std::string_view key) {
  std::string hash = HashOf(key);
  std::lock_guard<std::mutex> lock(mu_);
  if (!index_.count(hash)) return Status(ErrorCode::kNotFound, "no entry");
  std::string path = PathOf(hash);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(errno, "unlink " + path);
  Forget(hash);
  return Status::Ok();
}

DiskStoreStats DiskStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return DiskStoreStats{index_.size(), bytes_, evictions_, corrupt_};
}

void DiskStore::Forget(const std::string& hash) {
  auto it = index_.find(hash);
  if (it == index_.end()) return;
  bytes_ -= it->second.bytes;
  lru_.erase(it->second.lru);
  index_.erase(it);
}

void DiskStore::Touch(const std::string& hash) {
  Node& n = index_.at(hash);
  lru_.splice(lru_.begin(), lru_, n.lru);
}

void DiskStore::EvictOverLimit() {
  while (bytes_ > options_.max_bytes && !lru_.empty()) {
    std::string victim = lru_.back();
    ::unlink(PathOf(victim).c_str());
    Forget(victim);
    evictions_++;
  }
}

}  // namespace ferry::cache
