#include "store/local/local_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <functional>

#include "store/local/key_path.h"
#include "store/local/lister.h"
#include "store/local/object_io.h"

namespace ferry {

using local::UniqueFd;

namespace {

constexpr size_t kMaxSidecarBytes = 1 << 20;
constexpr int kCreateAttempts = 4;

std::string Quoted(std::string_view key) { return "'" + std::string(key) + "'"; }

TimePoint ToTimePoint(const struct stat& st) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(
      std::chrono::nanoseconds(local::MtimeNs(st))));
}

std::string_view StripQuotes(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

Status NoSuchKey(std::string_view key) { return Status::NotFound("no such key " + Quoted(key)); }

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenLocalStore(std::string root,
                                                    const LocalStoreOptions& options) {
  if (root.empty()) return Status::InvalidArgument("empty local store root");
  if (options.create_if_missing) {
    // mkdir -p, component by component from "/" (or the cwd).
    for (size_t pos = 1; pos <= root.size(); ++pos) {
      if (pos != root.size() && root[pos] != '/') continue;
      std::string prefix = root.substr(0, pos);
      if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
        return Status::FromErrno(errno, "create local store root " + prefix);
      }
    }
  }
  char resolved[PATH_MAX];
  if (::realpath(root.c_str(), resolved) == nullptr) {
    return Status::FromErrno(errno, "open local store root " + root);
  }
  struct stat st;
  if (::stat(resolved, &st) != 0) return Status::FromErrno(errno, "stat " + std::string(resolved));
  if (!S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("local store root " + root + " is not a directory");
  }
  return std::unique_ptr<ObjectStore>(std::make_unique<LocalStore>(resolved, options));
}

Result<std::unique_ptr<ObjectStore>> OpenLocalStore(std::string root, bool create) {
  LocalStoreOptions options;
  options.create_if_missing = create;
  return OpenLocalStore(std::move(root), options);
}

LocalStore::LocalStore(std::string root, LocalStoreOptions options)
    : root_(std::move(root)), options_(options) {}

StoreFeatures LocalStore::Features() const {
  StoreFeatures f;
  f.server_side_copy = true;
  f.multipart = true;
  f.min_part_size = options_.min_part_size;
  f.range_listing = true;  // the walk honours start-after, in byte order
  return f;
}

std::mutex& LocalStore::StripeLock(std::string_view name) {
  return stripes_[std::hash<std::string_view>{}(name) % stripes_.size()];
}

Result<LocalStore::Location> LocalStore::Locate(std::string_view key) const {
  auto rel = local::EncodeKey(key);
  if (!rel.ok()) return rel.status().WithContext(Quoted(key));
  auto [rel_dir, name] = local::SplitDirName(*rel);
  Location loc;
  loc.key = std::string(key);
  loc.rel_dir = std::string(rel_dir);
  loc.name = std::string(name);
  loc.dir = rel_dir.empty() ? root_ : root_ + "/" + loc.rel_dir;
  loc.data = loc.dir + "/" + loc.name;
  loc.sidecar = loc.dir + "/" + local::SidecarName(loc.name);
  return loc;
}

Result<LocalStore::OpenObject> LocalStore::OpenForRead(const Location& loc) {
  OpenObject obj;
  std::optional<std::string> sidecar_text;
  {
    std::lock_guard<std::mutex> lock(StripeLock(loc.key));
    obj.fd = UniqueFd(::open(loc.data.c_str(), O_RDONLY | O_CLOEXEC));
    if (!obj.fd.valid()) {
      if (errno == ENOENT || errno == ENOTDIR) return NoSuchKey(loc.key);
      return Status::FromErrno(errno, "open " + Quoted(loc.key));
    }
    if (::fstat(obj.fd.get(), &obj.st) != 0) {
      return Status::FromErrno(errno, "stat " + Quoted(loc.key));
    }
    if (!S_ISREG(obj.st.st_mode)) return NoSuchKey(loc.key);  // a directory of longer keys
    auto text = local::ReadSmallFile(loc.sidecar, kMaxSidecarBytes);
    if (text.ok()) sidecar_text = std::move(*text);
  }
  if (sidecar_text) {
    obj.meta = local::ParseMeta(*sidecar_text);
    if (obj.meta && !local::MetaMatches(*obj.meta, obj.st)) obj.meta.reset();
  }
  return obj;
}

Result<LocalStore::TempFile> LocalStore::CreateTempFor(const Location& loc) {
  Status last;
  for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
    last = local::MakeDirs(root_, loc.rel_dir);
    if (last.code() == ErrorCode::kAlreadyExists) {
      return Status::AlreadyExists("write " + Quoted(loc.key) + ": " + last.message() +
                                   " (a key cannot be both an object and a prefix of "
                                   "other keys in a local store)");
    }
    if (last.ok()) {
      TempFile temp;
      temp.path = loc.dir + "/" + local::TempName();
      auto fd = local::CreateExclusive(temp.path);
      if (fd.ok()) {
        temp.fd = std::move(*fd);
        return temp;
      }
      last = fd.status();
    }
    // kNotFound: a concurrent Delete pruned a directory we just made.
    if (last.code() != ErrorCode::kNotFound) break;
  }
  return last.WithContext("write " + Quoted(loc.key));
}

Result<ObjectInfo> LocalStore::Commit(const Location& loc, TempFile temp, const std::string& etag,
                                      const ObjectHeaders& headers) {
  std::string sidecar_temp;
  Status st = [&]() -> Status {
    if (options_.sync) FERRY_RETURN_IF_ERROR(local::FsyncFd(temp.fd.get(), temp.path));
    struct stat file_stat;
    if (::fstat(temp.fd.get(), &file_stat) != 0) {
      return Status::FromErrno(errno, "stat " + temp.path);
    }
    temp.fd.Reset();
    local::ObjectMeta meta;
    meta.etag = etag;
    meta.headers = headers;
    meta.size = static_cast<uint64_t>(file_stat.st_size);
    meta.mtime_ns = local::MtimeNs(file_stat);
    sidecar_temp = loc.dir + "/" + local::TempName();
    {
      FERRY_ASSIGN_OR_RETURN(UniqueFd fd, local::CreateExclusive(sidecar_temp));
      FERRY_RETURN_IF_ERROR(local::WriteAll(fd.get(), local::SerializeMeta(meta), sidecar_temp));
      if (options_.sync) FERRY_RETURN_IF_ERROR(local::FsyncFd(fd.get(), sidecar_temp));
    }
    std::lock_guard<std::mutex> lock(StripeLock(loc.key));
    if (::rename(temp.path.c_str(), loc.data.c_str()) != 0) {
      int err = errno;
      if (err == EISDIR || err == ENOTEMPTY || err == EEXIST) {
        return Status::AlreadyExists("write " + Quoted(loc.key) + ": conflicts with directory " +
                                     loc.data +
                                     " (other keys have this key followed by '/' as a prefix)");
      }
      return Status::FromErrno(err, "rename into " + Quoted(loc.key));
    }
    temp.path.clear();  // now the object
    if (::rename(sidecar_temp.c_str(), loc.sidecar.c_str()) != 0) {
      int err = errno;
      ::unlink(loc.sidecar.c_str());  // stale either way; don't leave it to be misread
      return Status::FromErrno(err, "write metadata of " + Quoted(loc.key));
    }
    sidecar_temp.clear();
    return Status::Ok();
  }();
  if (!temp.path.empty()) ::unlink(temp.path.c_str());
  if (!sidecar_temp.empty()) ::unlink(sidecar_temp.c_str());
  FERRY_RETURN_IF_ERROR(st);
  if (options_.sync) FERRY_RETURN_IF_ERROR(local::FsyncDir(loc.dir));
  struct stat final_stat;
  if (::stat(loc.data.c_str(), &final_stat) != 0) {
    return Status::FromErrno(errno, "stat " + Quoted(loc.key));
  }
  ObjectInfo info;
  info.key = loc.key;
  info.size = static_cast<uint64_t>(final_stat.st_size);
  info.etag = etag;
  info.last_modified = ToTimePoint(final_stat);
  info.headers = headers;
  return info;
}

namespace {

// What a stat tells of an object: its key, size and modification time.
ObjectInfo StatInfo(const std::string& key, const struct stat& st) {
  ObjectInfo info;
  info.key = key;
  info.size = static_cast<uint64_t>(st.st_size);
  info.last_modified = ToTimePoint(st);
  return info;
}

}  // namespace

Result<ListPage> LocalStore::List(const ListOptions& options) {
  return local::ListTree(root_, options);
}

Result<ObjectInfo> LocalStore::Head(std::string_view key) {
  FERRY_ASSIGN_OR_RETURN(Location loc, Locate(key));
  FERRY_ASSIGN_OR_RETURN(OpenObject obj, OpenForRead(loc));
  ObjectInfo info = StatInfo(loc.key, obj.st);
  if (obj.meta) {
    info.etag = obj.meta->etag;
    info.headers = obj.meta->headers;
  } else {
    FERRY_ASSIGN_OR_RETURN(info.etag, local::Md5HexOfFile(obj.fd.get(), info.size, loc.data));
  }
  return info;
}

Result<ObjectInfo> LocalStore::Get(std::string_view key, const GetOptions& options,
                                   ByteSink& sink) {
  FERRY_ASSIGN_OR_RETURN(Location loc, Locate(key));
  FERRY_ASSIGN_OR_RETURN(OpenObject obj, OpenForRead(loc));
  ObjectInfo info = StatInfo(loc.key, obj.st);
  uint64_t offset = 0;
  uint64_t length = info.size;
  bool whole = true;
  if (options.range && info.size > 0) {  // like S3, a range of an empty object is ignored
    offset = options.range->offset;
    if (offset >= info.size) {
      return Status::InvalidArgument("range starts at " + std::to_string(offset) +
                                     ", past the end of " + Quoted(key) + " (" +
                                     std::to_string(info.size) + " bytes)");
    }
    length = std::min(info.size - offset, options.range->length.value_or(info.size));
    whole = offset == 0 && length == info.size;
  }
  std::optional<StreamingDigest> md5;
  if (obj.meta) {
    info.etag = obj.meta->etag;
    info.headers = obj.meta->headers;
  } else if (!options.if_match.empty()) {
    // A foreign file: its ETag must be computed before deciding to send.
    FERRY_ASSIGN_OR_RETURN(info.etag, local::Md5HexOfFile(obj.fd.get(), info.size, loc.data));
  } else if (whole) {
    md5.emplace(StreamingDigest::Kind::kMd5);
  }
  if (!options.if_match.empty() && StripQuotes(options.if_match) != info.etag) {
    return Status(ErrorCode::kPreconditionFailed,
                  "get " + Quoted(key) + ": ETag is '" + info.etag + "', not '" +
                      std::string(StripQuotes(options.if_match)) + "'");
  }
  if (!md5) FERRY_RETURN_IF_ERROR(sink.Start(info));  // else the ETag is known only at the end
  FERRY_RETURN_IF_ERROR(
      local::StreamFileToSink(obj.fd.get(), offset, length, sink, md5 ? &*md5 : nullptr, loc.data));
  if (md5) {
    std::string raw = md5->Finish();
    info.etag = HexLower(raw);
  }
  return info;
}

Result<ObjectInfo> LocalStore::Put(std::string_view key, ByteSource& body, uint64_t size,
                                   const PutOptions& options) {
  FERRY_ASSIGN_OR_RETURN(Location loc, Locate(key));
  FERRY_ASSIGN_OR_RETURN(TempFile temp, CreateTempFor(loc));
  auto md5 = local::StreamBodyToFile(body, size, temp.fd.get(), temp.path);
  Status st = md5.ok() ? local::CheckContentMd5(options.content_md5, *md5, key) : md5.status();
  if (!st.ok()) {
    ::unlink(temp.path.c_str());
    local::PruneEmptyDirs(root_, loc.rel_dir);
    return st.WithContext("put " + Quoted(key));
  }
  std::string etag = HexLower(*md5);
  return Commit(loc, std::move(temp), etag, options.headers);
}

Result<ObjectInfo> LocalStore::Copy(std::string_view src_key, std::string_view dst_key,
                                    const std::optional<ObjectHeaders>& replace_headers) {
  FERRY_ASSIGN_OR_RETURN(Location src, Locate(src_key));
  FERRY_ASSIGN_OR_RETURN(Location dst, Locate(dst_key));
  auto opened = OpenForRead(src);
  if (!opened.ok()) return opened.status().WithContext("copy source");
  OpenObject obj = std::move(*opened);
  uint64_t size = static_cast<uint64_t>(obj.st.st_size);
  std::string etag;
  ObjectHeaders headers;
  if (obj.meta) {
    etag = obj.meta->etag;  // a multipart ETag stays one: same bytes, same parts
    headers = obj.meta->headers;
  } else {
    FERRY_ASSIGN_OR_RETURN(etag, local::Md5HexOfFile(obj.fd.get(), size, src.data));
  }
  if (replace_headers) headers = *replace_headers;
  FERRY_ASSIGN_OR_RETURN(TempFile temp, CreateTempFor(dst));
  Status st = local::CopyFileData(obj.fd.get(), temp.fd.get(), size, src.data);
  if (!st.ok()) {
    ::unlink(temp.path.c_str());
    local::PruneEmptyDirs(root_, dst.rel_dir);
    return st.WithContext("copy " + Quoted(src_key) + " to " + Quoted(dst_key));
  }
  return Commit(dst, std::move(temp), etag, headers);
}

Status LocalStore::Delete(std::string_view key) {
  FERRY_ASSIGN_OR_RETURN(Location loc, Locate(key));
  bool removed = false;
  {
    std::lock_guard<std::mutex> lock(StripeLock(loc.key));
    if (::unlink(loc.data.c_str()) == 0) {
      removed = true;
    } else if (errno != ENOENT && errno != ENOTDIR && errno != EISDIR) {
      // EISDIR: only longer keys live there; deleting a missing key is OK.
      return Status::FromErrno(errno, "delete " + Quoted(key));
    }
    if (::unlink(loc.sidecar.c_str()) == 0) removed = true;
  }
  if (!removed) return Status::Ok();
  if (options_.sync) {
    Status st = local::FsyncDir(loc.dir);
    // kNotFound: a concurrent Delete already pruned the directory.
    if (!st.ok() && st.code() != ErrorCode::kNotFound)
      return st.WithContext("delete " + Quoted(key));
  }
  local::PruneEmptyDirs(root_, loc.rel_dir);
  return Status::Ok();
}

}  // namespace ferry
