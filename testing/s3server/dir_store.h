#pragma once
// Directory mode (--dir): object bodies in files, records in JSON sidecars,
// so the data survives a restart and can be inspected with ls.
//
// Layout under the root:
//   .ferry-blobs/<id>            one immutable body per blob (id: 24 hex)
//   .ferry-blobs/<id>.partial    a body being written (removed at startup)
//   <bucket>/_bucket.json        {"created_ms": N}
//   <bucket>/<sha256(key)>.json  {"key_b64", "blob", "size", "etag",
//                                 "last_modified_ms", "meta": {...}}
// Keys are hashed for file names because S3 keys may hold any bytes, "//",
// "..", or be longer than a file name. A blob file is deleted when its last
// reference (object, part, or a GET in flight) goes away, unless the store
// was closed first (shutdown). Blob files no record references (uploads that
// were in progress at shutdown) are removed when the directory is opened.

#include <filesystem>
#include <memory>
#include <string>

#include "blob.h"
#include "storage.h"

namespace ferry::s3server {

// Creates `root` if needed and returns the Storage over it, loaded.
Result<std::unique_ptr<Storage>> OpenDirectoryStorage(const std::filesystem::path& root);

// The memory-mode Storage.
std::unique_ptr<Storage> NewMemoryStorage();

}  // namespace ferry::s3server
