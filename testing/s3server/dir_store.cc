#include "dir_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "crypto/digest.h"
#include "memory_blob_store.h"

namespace ferry::s3server {
namespace fs = std::filesystem;
namespace {

constexpr const char* kBlobDir = ".ferry-blobs";
constexpr const char* kBucketFile = "_bucket.json";

// Shared by a store and its blobs: once closed, released blobs keep files.
struct DirState {
  fs::path blob_dir;
  std::atomic<bool> closed{false};
};

class FileBlob : public Blob {
 public:
  FileBlob(std::shared_ptr<DirState> state, std::string id, uint64_t size)
      : state_(std::move(state)), id_(std::move(id)), size_(size) {}
  ~FileBlob() override {
    if (!state_->closed.load()) {
      std::error_code ec;
      fs::remove(path(), ec);
    }
  }

  uint64_t size() const override { return size_; }
  const std::string& id() const { return id_; }
  fs::path path() const { return state_->blob_dir / id_; }

  Result<std::string_view> ReadAt(uint64_t offset, size_t max,
                                  std::string* scratch) const override {
    if (offset >= size_ || max == 0) return Status::InvalidArgument("read past end of blob");
    int fd = ::open(path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno(errno, "open " + path().string());
    size_t want = static_cast<size_t>(std::min<uint64_t>(max, size_ - offset));
    scratch->resize(want);
    ssize_t n = ::pread(fd, scratch->data(), want, static_cast<off_t>(offset));
    int err = errno;
    ::close(fd);
    if (n < 0) return Status::FromErrno(err, "read " + path().string());
    if (n == 0) return Status::Corruption("blob file shorter than recorded: " + path().string());
    return std::string_view(scratch->data(), static_cast<size_t>(n));
  }

 private:
  std::shared_ptr<DirState> state_;
  std::string id_;
  uint64_t size_;
};

std::string NewBlobId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  uint8_t raw[12];
  for (auto& b : raw) b = static_cast<uint8_t>(rng());
  return HexLower(raw, sizeof raw);
}

class FileBlobWriter : public BlobWriter {
 public:
  FileBlobWriter(std::shared_ptr<DirState> state, std::string id, int fd)
      : state_(std::move(state)), id_(std::move(id)), fd_(fd) {}
  ~FileBlobWriter() override {
    if (fd_ >= 0) {
      ::close(fd_);
      std::error_code ec;
      fs::remove(PartialPath(), ec);
    }
  }

  Status Append(std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno(errno, "write " + PartialPath().string());
      }
      data.remove_prefix(static_cast<size_t>(n));
      size_ += static_cast<uint64_t>(n);
    }
    return Status::Ok();
  }

  Result<std::shared_ptr<const Blob>> Finish() override {
    if (::close(fd_) != 0) {
      fd_ = -1;
      return Status::FromErrno(errno, "close " + PartialPath().string());
    }
    fd_ = -1;
    std::error_code ec;
    fs::rename(PartialPath(), state_->blob_dir / id_, ec);
    if (ec) return Status::IoError("rename blob: " + ec.message());
    return std::shared_ptr<const Blob>(std::make_shared<FileBlob>(state_, id_, size_));
  }

 private:
  fs::path PartialPath() const { return state_->blob_dir / (id_ + ".partial"); }

  std::shared_ptr<DirState> state_;
  std::string id_;
  int fd_;
  uint64_t size_ = 0;
};

class DirBlobStore : public BlobStore {
 public:
  explicit DirBlobStore(std::shared_ptr<DirState> state) : state_(std::move(state)) {}

  Result<std::unique_ptr<BlobWriter>> NewWriter(uint64_t /*size_hint*/) override {
    std::string id = NewBlobId();
    fs::path partial = state_->blob_dir / (id + ".partial");
    int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return Status::FromErrno(errno, "create " + partial.string());
    return std::unique_ptr<BlobWriter>(std::make_unique<FileBlobWriter>(state_, id, fd));
  }

  void Close() override { state_->closed.store(true); }

 private:
  std::shared_ptr<DirState> state_;
};

// Writes `text` to `path` atomically (temporary file, then rename).
Status WriteFileAtomic(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return Status::IoError("write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Status::IoError("rename " + tmp.string() + ": " + ec.message());
  return Status::Ok();
}

Result<nlohmann::json> ReadJson(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("open " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Corruption("bad JSON in " + path.string());
  return j;
}

int64_t ToMillis(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
TimePoint FromMillis(int64_t ms) { return TimePoint(std::chrono::milliseconds(ms)); }

std::string RecordFileName(const std::string& key) { return HexLower(Sha256(key)) + ".json"; }

nlohmann::json MetaToJson(const ObjectMeta& m) {
  return {{"content_type", m.content_type},
          {"content_encoding", m.content_encoding},
          {"content_disposition", m.content_disposition},
          {"cache_control", m.cache_control},
          {"content_language", m.content_language},
          {"expires", m.expires},
          {"user", m.user}};
}

ObjectMeta MetaFromJson(const nlohmann::json& j) {
  ObjectMeta m;
  m.content_type = j.value("content_type", "");
  m.content_encoding = j.value("content_encoding", "");
  m.content_disposition = j.value("content_disposition", "");
  m.cache_control = j.value("cache_control", "");
  m.content_language = j.value("content_language", "");
  m.expires = j.value("expires", "");
  if (j.contains("user")) m.user = j["user"].get<std::map<std::string, std::string>>();
  return m;
}

class DirCatalog : public Catalog {
 public:
  DirCatalog(fs::path root, std::shared_ptr<DirState> state)
      : root_(std::move(root)), state_(std::move(state)) {}

  Status Load(std::map<std::string, BucketState>* buckets) override {
    std::map<std::string, std::shared_ptr<const Blob>> blobs;  // by id, shared
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root_, ec)) {
      std::string name = entry.path().filename().string();
      if (!entry.is_directory() || !IsValidBucketName(name)) continue;
      BucketState& bucket = (*buckets)[name];
      auto meta = ReadJson(entry.path() / kBucketFile);
      bucket.created = meta.ok() ? FromMillis(meta->value("created_ms", int64_t{0}))
                                 : std::chrono::system_clock::now();
      for (const auto& file : fs::directory_iterator(entry.path(), ec)) {
        std::string fname = file.path().filename().string();
        if (fname == kBucketFile || file.path().extension() != ".json") continue;
        FERRY_ASSIGN_OR_RETURN(nlohmann::json j, ReadJson(file.path()));
        ObjectRecord rec;
        if (!Base64Decode(j.value("key_b64", ""), &rec.key)) {
          return Status::Corruption("bad key in " + file.path().string());
        }
        std::string id = j.value("blob", "");
        rec.size = j.value("size", uint64_t{0});
        rec.etag = j.value("etag", "");
        rec.last_modified = FromMillis(j.value("last_modified_ms", int64_t{0}));
        if (j.contains("meta")) rec.meta = MetaFromJson(j["meta"]);
        rec.checksum_deferred = j.value("checksum_deferred", false);
        if (j.contains("checksum")) {
          const auto& c = j["checksum"];
          auto a = ParseChecksumAlgorithm(c.value("algorithm", ""));
          auto t = s3::ParseChecksumType(c.value("type", ""));
          if (a && t) rec.checksum = s3::ObjectChecksum{*a, c.value("value", ""), *t};
        }
        if (j.contains("parts")) {
          for (const auto& p : j["parts"]) {
            rec.parts.push_back({p.value("size", uint64_t{0}), p.value("checksum", "")});
          }
        }
        auto& blob = blobs[id];
        if (!blob) blob = std::make_shared<FileBlob>(state_, id, rec.size);
        rec.blob = blob;
        bucket.objects.insert_or_assign(rec.key, std::move(rec));
      }
    }
    if (ec) return Status::IoError("scan " + root_.string() + ": " + ec.message());
    // Garbage: partial writes and bodies of uploads that never completed.
    for (const auto& entry : fs::directory_iterator(state_->blob_dir, ec)) {
      if (!blobs.count(entry.path().filename().string())) fs::remove(entry.path(), ec);
    }
    return Status::Ok();
  }

  Status SaveBucket(const std::string& bucket, TimePoint created) override {
    std::error_code ec;
    fs::create_directories(root_ / bucket, ec);
    if (ec) return Status::IoError("mkdir " + (root_ / bucket).string() + ": " + ec.message());
    nlohmann::json j = {{"created_ms", ToMillis(created)}};
    return WriteFileAtomic(root_ / bucket / kBucketFile, j.dump());
  }

  Status RemoveBucket(const std::string& bucket) override {
    std::error_code ec;
    fs::remove_all(root_ / bucket, ec);
    if (ec) return Status::IoError("remove " + (root_ / bucket).string() + ": " + ec.message());
    return Status::Ok();
  }

  Status SaveObject(const std::string& bucket, const ObjectRecord& rec) override {
    auto* blob = dynamic_cast<const FileBlob*>(rec.blob.get());
    if (blob == nullptr) return Status::Internal("directory catalogue given a non-file blob");
    nlohmann::json j = {{"key_b64", Base64Encode(rec.key)},
                        {"blob", blob->id()},
                        {"size", rec.size},
                        {"etag", rec.etag},
                        {"last_modified_ms", ToMillis(rec.last_modified)},
                        {"meta", MetaToJson(rec.meta)}};
    if (rec.checksum_deferred) j["checksum_deferred"] = true;
    if (rec.checksum) {
      j["checksum"] = {{"algorithm", ChecksumAlgorithmName(rec.checksum->algorithm)},
                       {"value", rec.checksum->value},
                       {"type", s3::ChecksumTypeName(rec.checksum->type)}};
    }
    for (const ObjectRecord::Part& p : rec.parts) {
      j["parts"].push_back({{"size", p.size}, {"checksum", p.checksum}});
    }
    return WriteFileAtomic(root_ / bucket / RecordFileName(rec.key),
                           j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

  Status RemoveObject(const std::string& bucket, const std::string& key) override {
    std::error_code ec;
    fs::remove(root_ / bucket / RecordFileName(key), ec);
    if (ec) return Status::IoError("remove record: " + ec.message());
    return Status::Ok();
  }

 private:
  fs::path root_;
  std::shared_ptr<DirState> state_;
};

}  // namespace

Result<std::unique_ptr<Storage>> OpenDirectoryStorage(const fs::path& root) {
  auto state = std::make_shared<DirState>();
  state->blob_dir = root / kBlobDir;
  std::error_code ec;
  fs::create_directories(state->blob_dir, ec);
  if (ec) return Status::IoError("mkdir " + state->blob_dir.string() + ": " + ec.message());
  auto storage = std::make_unique<Storage>(std::make_unique<DirBlobStore>(state),
                                           std::make_unique<DirCatalog>(root, state));
  FERRY_RETURN_IF_ERROR(storage->Open());
  return storage;
}

std::unique_ptr<Storage> NewMemoryStorage() {
  return std::make_unique<Storage>(std::make_unique<MemoryBlobStore>(), nullptr);
}

}  // namespace ferry::s3server
