#pragma once
// Where snapshots live: a prefix of an object store (a local directory or
// an s3:// bucket prefix) holding
//   PREFIX/snapshots/NAME            the manifests (manifest.h)
//   PREFIX/chunks/XY/<sha256 hex>    chunk bytes, shared by every snapshot
// Chunks are immutable and named by their content, so writing one that is
// already there is skipped, and a snapshot is visible only once its
// manifest is written (after all its chunks).

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "snapshot/manifest.h"
#include "store/object_store.h"
#include "store/open/open.h"

namespace ferry::snapshot {

class Repository {
 public:
  // `prefix` is "" or ends with '/'.
  Repository(std::shared_ptr<ObjectStore> store, std::string prefix)
      : store_(std::move(store)), prefix_(std::move(prefix)) {}

  std::string ChunkKey(const std::string& hash) const;
  std::string ManifestKey(const std::string& name) const;

  Result<bool> HasChunk(const std::string& hash);
  Status PutChunk(const std::string& hash, std::string_view bytes);
  // Reads a chunk and checks it against its name (kCorruption otherwise).
  Result<std::string> GetChunk(const std::string& hash);

  Status PutManifest(const Manifest& m);
  // kNotFound when there is no such snapshot; kCorruption when its
  // manifest is damaged.
  Result<Manifest> GetManifest(const std::string& name);
  // Names of the snapshots, in order.
  Result<std::vector<std::string>> List();

  ObjectStore& store() { return *store_; }

 private:
  std::shared_ptr<ObjectStore> store_;
  std::string prefix_;
};

// Opens the repository at `location` (a local directory or
// s3://bucket[/prefix]); `create` makes a missing local directory.
Result<Repository> OpenRepository(const std::string& location, const OpenOptions& options, bool create);

// Whether two repository locations (REPOSITORY as SplitSnapshotLocation
// gives it) name one repository: remote ones by kind, account, bucket and
// prefix (trailing '/' aside); local ones by their absolute, normalized
// paths (symlinks resolved where they exist). Unparseable: false.
bool SameRepository(const std::string& a, const std::string& b);

// "REPOSITORY/NAME" -> {REPOSITORY, NAME}; a bad name is kInvalidArgument.
Result<std::pair<std::string, std::string>> SplitSnapshotLocation(const std::string& where);

}  // namespace ferry::snapshot
