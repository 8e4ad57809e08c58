#pragma once
// Copying one object (rclone's operations layer): between two stores, from a
// local file to a store, or from a store to a local file. Large objects go in
// equal parts, several at once (uploads through ops/multipart_upload.h);
// memory stays bounded by the part buffers in flight, never by the object's
// size.
//
// All-or-nothing: a failed copy leaves no partial file (downloads go to a
// temp file renamed at the end) and no dangling multipart upload (aborted).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ops/part_plan.h"
#include "store/object_store.h"

namespace ferry {

struct CopyOptions {
  PartPolicy parts;      // threshold and part size; store limits are applied
  int concurrency = 8;   // parts in flight for one object
  // Headers for the destination; unset = the source's (or, for a local file,
  // a Content-Type guessed from its extension).
  std::optional<ObjectHeaders> headers;
  bool allow_server_side = true;  // use ObjectStore::Copy when src == dst store
};

// `p` within the store's limits (part sizes, part count, multipart at all).
PartPolicy Limited(PartPolicy p, const StoreFeatures& f);

struct CopyResult {
  uint64_t bytes = 0;
  int parts = 1;
  bool server_side = false;
  std::string etag;
};

// `same_store` tells whether src and dst are the same store (same endpoint
// and bucket), which allows a server-side copy.
Result<CopyResult> CopyObject(ObjectStore& src, std::string_view src_key, ObjectStore& dst,
                              std::string_view dst_key, bool same_store, const CopyOptions& o);

Result<CopyResult> UploadFile(const std::string& path, ObjectStore& dst, std::string_view key,
                              const CopyOptions& o);

// Writes to `path` atomically (temp file in the same directory, fsync,
// rename). An existing directory at `path` is an error.
Result<CopyResult> DownloadFile(ObjectStore& src, std::string_view key, const std::string& path,
                                const CopyOptions& o);

Result<CopyResult> CopyLocalFile(const std::string& from, const std::string& to);

}  // namespace ferry
