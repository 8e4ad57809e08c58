#include "ops/copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <vector>

#include "base/cancel.h"
#include "crypto/digest.h"
#include "engine/parallel.h"
#include "ops/checksum_carry.h"
#include "ops/mime.h"
#include "ops/multipart_upload.h"
#include "ops/range_part_reader.h"
#include "store/local/fs_util.h"

namespace ferry {
namespace {

using local::UniqueFd;

// Writes a body at a fixed offset of a file; optionally hashes it. Every
// kWritebackChunk written it asks the kernel to start writing those pages
// back (sync_file_range, which does not wait), so the final fsync finds
// little left to do: durability overlaps the transfer instead of following it.
class PwriteSink : public ByteSink {
 public:
  static constexpr uint64_t kWritebackChunk = 8ull << 20;

  PwriteSink(int fd, uint64_t offset, std::string path, StreamingDigest* md5 = nullptr)
      : fd_(fd), offset_(offset), start_(offset), path_(std::move(path)), md5_(md5) {}
  ~PwriteSink() override { StartWriteback(); }
  Status Write(std::string_view data) override {
    if (CancelRequested()) return CancelledStatus();
    while (!data.empty()) {
      ssize_t n = ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(offset_));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::FromErrno(errno, "write " + path_);
      if (md5_) md5_->Update(data.substr(0, static_cast<size_t>(n)));
      offset_ += static_cast<uint64_t>(n);
      written_ += static_cast<uint64_t>(n);
      data.remove_prefix(static_cast<size_t>(n));
    }
    if (offset_ - start_ >= kWritebackChunk) StartWriteback();
    return Status::Ok();
  }
  uint64_t written() const { return written_; }

 private:
  void StartWriteback() {
    if (offset_ > start_) {
      ::sync_file_range(fd_, static_cast<off_t>(start_), static_cast<off_t>(offset_ - start_),
                        SYNC_FILE_RANGE_WRITE);
      start_ = offset_;
    }
  }

  int fd_;
  uint64_t offset_;
  uint64_t start_;  // first byte whose writeback has not been started
  std::string path_;
  StreamingDigest* md5_;
  uint64_t written_ = 0;
};

// A temp file beside `path`, renamed over it by Commit() and removed on
// destruction otherwise: the caller never leaves a partial file behind.
class AtomicFile {
 public:
  static Result<AtomicFile> Create(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return Status::AlreadyExists(path + " is a directory");
    }
    auto [dir, name] = local::SplitDirName(path);
    AtomicFile f;
    f.path_ = path;
    f.dir_ = dir.empty() ? (path.front() == '/' ? "/" : ".") : std::string(dir);
    f.temp_ = local::JoinPath(dir, local::TempName());
    FERRY_ASSIGN_OR_RETURN(f.fd_, local::CreateExclusive(f.temp_));
    return f;
  }
  AtomicFile() = default;
  AtomicFile(AtomicFile&&) = default;
  AtomicFile& operator=(AtomicFile&&) = default;
  ~AtomicFile() {
    if (fd_.valid() || !temp_.empty()) {
      fd_.Reset();
      if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
    }
  }
  int fd() const { return fd_.get(); }
  Status Commit() {
    FERRY_RETURN_IF_ERROR(local::FsyncFd(fd_.get(), temp_));
    fd_.Reset();
    if (::rename(temp_.c_str(), path_.c_str()) != 0) {
      return Status::FromErrno(errno, "rename to " + path_);
    }
    committed_ = true;
    return local::FsyncDir(dir_);
  }

 private:
  UniqueFd fd_;
  std::string path_, dir_, temp_;
  bool committed_ = false;
};

// The parts of a local file, streamed from it (pread at their offsets)
// without a buffer; each is hashed by the store as it goes and checked
// against the part's ETag.
class FilePartReader : public PartReader {
 public:
  explicit FilePartReader(int fd) : fd_(fd) {}
  Status Read(const PartSpan& part, const PartSend& send) override {
    FileRangeSource body(fd_, part.offset, part.size);
    return send(body, "");
  }

 private:
  int fd_;
};

// A one-shot multipart upload (aborted on failure) as a CopyResult.
Result<CopyResult> UploadParts(ObjectStore& dst, std::string_view key, uint64_t size,
                               const PartPlan& plan, const PutOptions& put, PartReader& reader,
                               const CopyOptions& o) {
  UploadJournal one_shot;
  MultipartOptions mo;
  mo.concurrency = o.concurrency;
  MultipartOutcome out = UploadMultipart(dst, key, size, plan, put, reader, one_shot, mo);
  if (!out.status.ok()) return out.status;
  CopyResult r;
  r.bytes = size;
  r.parts = plan.parts;
  r.etag = out.object.etag;
  return r;
}

}  // namespace

PartPolicy Limited(PartPolicy p, const StoreFeatures& f) {
  p.min_part_size = std::max(p.min_part_size, f.min_part_size);
  p.max_part_size = std::min(p.max_part_size, f.max_part_size);
  p.max_parts = std::min(p.max_parts, f.max_parts);
  if (!f.multipart) p.threshold = UINT64_MAX;
  return p;
}

Result<CopyResult> UploadFile(const std::string& path, ObjectStore& dst, std::string_view key,
                              const CopyOptions& o) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, "open " + path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(path + " is a directory");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  PutOptions put;
  if (o.headers) {
    put.headers = *o.headers;
  } else {
    put.headers.content_type = GuessContentType(path);
  }
  PartPlan plan = PlanParts(size, Limited(o.parts, dst.Features()));
  if (!plan.multipart) {
    // Small enough to read twice: the MD5 goes ahead as Content-MD5 so the
    // store rejects a damaged body instead of keeping it.
    StreamingDigest md5(StreamingDigest::Kind::kMd5);
    FileRangeSource pre(fd.get(), 0, size);
    std::vector<char> buf(1 << 20);
    for (;;) {
      FERRY_ASSIGN_OR_RETURN(size_t n, pre.Read(buf.data(), buf.size()));
      if (n == 0) break;
      md5.Update(std::string_view(buf.data(), n));
    }
    put.content_md5 = Base64Encode(md5.Finish());
    FileRangeSource body(fd.get(), 0, size);
    FERRY_ASSIGN_OR_RETURN(ObjectInfo info, dst.Put(key, body, size, put));
    CopyResult r;
    r.bytes = size;
    r.etag = info.etag;
    return r;
  }
  FilePartReader parts(fd.get());
  return UploadParts(dst, key, size, plan, put, parts, o);
}

Result<CopyResult> DownloadFile(ObjectStore& src, std::string_view key, const std::string& path,
                                const CopyOptions& o) {
  FERRY_ASSIGN_OR_RETURN(ObjectInfo info, src.Head(key));
  FERRY_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path));
  PartPlan plan = PlanParts(info.size, o.parts);
  if (!plan.multipart) {
    StreamingDigest md5(StreamingDigest::Kind::kMd5);
    PwriteSink sink(file.fd(), 0, path, &md5);
    GetOptions g;
    g.if_match = info.etag;  // the version Head saw, and no other
    FERRY_ASSIGN_OR_RETURN(ObjectInfo got, src.Get(key, g, sink));
    if (sink.written() != got.size) {
      return Status::Corruption("received " + std::to_string(sink.written()) + " of " +
                                std::to_string(got.size) + " bytes");
    }
    if (std::string want = BodyMd5(got); !want.empty() && HexLower(md5.Finish()) != want) {
      return Status::Corruption("downloaded bytes do not match the object's MD5");
    }
  } else {
    // Ranges land out of order: reserve the blocks up front (one contiguous
    // allocation, and ENOSPC now rather than half way), else just size it.
    if (::fallocate(file.fd(), 0, 0, static_cast<off_t>(info.size)) != 0 &&
        ::ftruncate(file.fd(), static_cast<off_t>(info.size)) != 0) {
      return Status::FromErrno(errno,
                               "allocate " + std::to_string(info.size) + " bytes for " + path);
    }
    Status s = RunParallel(plan.parts, o.concurrency, [&](int i) -> Status {
      uint64_t off = static_cast<uint64_t>(i) * plan.part_size;
      uint64_t len = std::min(plan.part_size, info.size - off);
      PwriteSink sink(file.fd(), off, path);
      GetOptions g;
      g.range = ByteRange{off, len};
      g.if_match = info.etag;
      FERRY_ASSIGN_OR_RETURN(ObjectInfo got, src.Get(key, g, sink));
      if (sink.written() != len) {
        return Status::Corruption("range at " + std::to_string(off) + ": received " +
                                  std::to_string(sink.written()) + " of " + std::to_string(len) +
                                  " bytes");
      }
      return Status::Ok();
    });
    FERRY_RETURN_IF_ERROR(s);
  }
  FERRY_RETURN_IF_ERROR(file.Commit());
  CopyResult r;
  r.bytes = info.size;
  r.parts = plan.parts;
  r.etag = info.etag;
  return r;
}

Result<CopyResult> CopyObject(ObjectStore& src, std::string_view src_key, ObjectStore& dst,
                              std::string_view dst_key, bool same_store, const CopyOptions& o) {
  FERRY_ASSIGN_OR_RETURN(ObjectInfo info, src.Head(src_key));
  if (same_store && o.allow_server_side && dst.Features().server_side_copy &&
      info.size <= dst.Features().max_single_put) {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo got, dst.Copy(src_key, dst_key, o.headers));
    CopyResult r;
    r.bytes = info.size;
    r.server_side = true;
    r.etag = got.etag;
    return r;
  }
  PutOptions put;
  put.headers = o.headers ? *o.headers : info.headers;
  PartPlan plan = PlanParts(info.size, Limited(o.parts, dst.Features()));
  if (!plan.multipart) {
    // Below the threshold: buffer the object (memory <= threshold).
    StringSink buf;
    GetOptions g;
    g.if_match = info.etag;
    FERRY_ASSIGN_OR_RETURN(ObjectInfo got, src.Get(src_key, g, buf));
    if (buf.data().size() != info.size) return Status::Corruption("source changed size");
    put.content_md5 = Base64Encode(Md5(buf.data()));
    put.checksum = got.checksum;  // carried; the destination compares it
    StringSource body(std::move(buf.data()));
    FERRY_ASSIGN_OR_RETURN(ObjectInfo stored, dst.Put(dst_key, body, info.size, put));
    CopyResult r;
    r.bytes = info.size;
    r.etag = stored.etag;
    return r;
  }
  // Streamed part by part: memory is part_size x concurrency.
  RangePartReader parts(src, std::string(src_key), info.etag);
  put.checksum = MultipartChecksumFor(info.checksum);
  FERRY_ASSIGN_OR_RETURN(CopyResult r, UploadParts(dst, dst_key, info.size, plan, put, parts, o));
  FERRY_RETURN_IF_ERROR(CheckCarriedChecksum(info.checksum, dst, dst_key));
  return r;
}

Result<CopyResult> CopyLocalFile(const std::string& from, const std::string& to) {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return Status::FromErrno(errno, "open " + from);
  struct stat st;
  if (::fstat(in.get(), &st) != 0) return Status::FromErrno(errno, "stat " + from);
  if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(from + " is a directory");
  FERRY_ASSIGN_OR_RETURN(AtomicFile out, AtomicFile::Create(to));
  uint64_t size = static_cast<uint64_t>(st.st_size);
  FERRY_RETURN_IF_ERROR(local::CopyFileData(in.get(), out.fd(), size, to));
  FERRY_RETURN_IF_ERROR(out.Commit());
  CopyResult r;
  r.bytes = size;
  return r;
}

}  // namespace ferry
