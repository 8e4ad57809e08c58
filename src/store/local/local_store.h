#pragma once
// The local directory backend: objects are files below a root directory.
//
// Layout (see key_path.h for the key <-> path scheme):
//   <root>/<encoded key>              the object's bytes
//   <dir>/.<name>%meta                its sidecar: ETag + headers (sidecar.h)
//   <dir>/.%tmp.<hex>                 a write in progress (renamed into place)
//   <root>/%mpu/<upload-id>/          multipart staging (local_multipart.cc)
// Every internal name is reserved (contains '%' + a non-escape character), so
// none of them is ever listed or confused with an object.
//
// Semantics and limits:
//  - Writes are atomic and durable: temp file in the destination directory,
//    write, fsync, rename, fsync the directory. Concurrent Puts of one key:
//    the last rename wins, and its sidecar wins with it; a reader never sees
//    a torn file.
//  - Keys "a" and "a/b" can both exist in S3 but not as a file and a
//    directory here: the second Put fails with kAlreadyExists ("conflicts
//    with ..."), and nothing is changed.
//  - Files put in the root by other tools (no sidecar, or a stale one) are
//    objects too: Head and whole-object Get compute their MD5 as the ETag;
//    List and ranged Get report "" for it. Their headers are empty.
//  - Empty directories left by other tools are not objects and not listed.
//  - Abandoned multipart uploads stay in <root>/%mpu until aborted.
//  - Thread-safe. Operations on one key are serialised in-process only by
//    the commit step (renames, sidecar reads); across processes the
//    file system's rename atomicity is the only guarantee.

#include <sys/stat.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "store/local/fs_util.h"
#include "store/local/sidecar.h"
#include "store/object_store.h"

namespace ferry {

struct LocalStoreOptions {
  // Create the root (and missing parents) if it does not exist. Default off:
  // a typo in a destination should fail, not create a tree somewhere.
  bool create_if_missing = false;
  // fsync data files and directories on every commit. Default on; turning
  // it off trades crash durability for speed (atomicity is kept).
  bool sync = true;
  // Smallest part CompleteMultipart accepts (all but the last part).
  // Default 1 byte: the local disk has no reason for S3's 5 MiB.
  uint64_t min_part_size = 1;
};

// Opens the store rooted at `root` (made absolute). kNotFound if it does not
// exist and !create_if_missing; kInvalidArgument if it is not a directory.
Result<std::unique_ptr<ObjectStore>> OpenLocalStore(std::string root,
                                                    const LocalStoreOptions& options);
Result<std::unique_ptr<ObjectStore>> OpenLocalStore(std::string root, bool create);

class LocalStore : public ObjectStore {
 public:
  // `root` must be an existing absolute directory path; use OpenLocalStore.
  LocalStore(std::string root, LocalStoreOptions options);

  std::string Describe() const override { return root_; }
  StoreFeatures Features() const override;

  Result<ListPage> List(const ListOptions& options) override;
  Result<ObjectInfo> Head(std::string_view key) override;
  Result<ObjectInfo> Get(std::string_view key, const GetOptions& options, ByteSink& sink) override;
  Result<ObjectInfo> Put(std::string_view key, ByteSource& body, uint64_t size,
                         const PutOptions& options) override;

  Result<std::string> CreateMultipart(std::string_view key, const PutOptions& options) override;
  Result<PartInfo> UploadPart(std::string_view key, std::string_view upload_id, int part_number,
                              ByteSource& body, uint64_t size, const PartOptions& options) override;
  Result<ObjectInfo> CompleteMultipart(std::string_view key, std::string_view upload_id,
                                       const std::vector<PartInfo>& parts) override;
  Status AbortMultipart(std::string_view key, std::string_view upload_id) override;
  Result<std::vector<PartInfo>> ListParts(std::string_view key,
                                          std::string_view upload_id) override;
  Result<std::vector<UploadInfo>> ListMultipartUploads(std::string_view key) override;

  Result<ObjectInfo> Copy(std::string_view src_key, std::string_view dst_key,
                          const std::optional<ObjectHeaders>& replace_headers) override;
  Status Delete(std::string_view key) override;

 private:
  // Where one key lives.
  struct Location {
    std::string key;
    std::string rel_dir;  // encoded directory, "" for the root
    std::string name;     // last encoded component
    std::string dir;      // absolute directory
    std::string data;     // absolute data file
    std::string sidecar;  // absolute sidecar file
  };
  Result<Location> Locate(std::string_view key) const;

  // An open data file with its stat and its sidecar when that matches.
  struct OpenObject {
    local::UniqueFd fd;
    struct stat st {};
    std::optional<local::ObjectMeta> meta;
  };
  Result<OpenObject> OpenForRead(const Location& loc);

  // A new temp file in the key's directory (created, with parents, as
  // needed; retried if a concurrent Delete prunes the directory under it).
  struct TempFile {
    std::string path;
    local::UniqueFd fd;
  };
  Result<TempFile> CreateTempFor(const Location& loc);

  // Renames the finished, synced `temp` over the key with a new sidecar
  // holding `etag` and `headers`, then syncs the directory. The temp is
  // removed on failure.
  Result<ObjectInfo> Commit(const Location& loc, TempFile temp, const std::string& etag,
                            const ObjectHeaders& headers);

  // The staging directory of an upload of `key`, after checking that the
  // upload exists and belongs to that key (kNotFound otherwise). Fills
  // `headers` with the options given to CreateMultipart when not null.
  Result<std::string> UploadDir(std::string_view key, std::string_view upload_id,
                                ObjectHeaders* headers) const;

  std::mutex& StripeLock(std::string_view name);

  const std::string root_;
  const LocalStoreOptions options_;
  // Striped locks serialising, per key, the commit renames against reads of
  // the (data file, sidecar) pair; per upload id, part replacement.
  std::array<std::mutex, 64> stripes_;
};

}  // namespace ferry
