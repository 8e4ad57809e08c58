#pragma once
// The Azure Blob Storage backend: ObjectStore over the Blob service REST API
// (block blobs), authorized by Shared Key or a SAS (azure_config.h).
//
//   List      List Blobs (prefix, delimiter, marker, maxresults); start_after
//             is applied by skipping (Azure has no such parameter).
//   Head/Get  Get Blob Properties / Get Blob with x-ms-range and If-Match; an
//             interrupted read resumes pinned to the ETag, as S3Store does.
//   Put       Put Blob (BlockBlob); the service's Content-MD5 is checked
//             against the MD5 of the bytes sent.
//   Multipart Put Block / Put Block List with ferry's upload ids and block
//             ids (upload_ids.h). Azure keeps no upload object: Create writes
//             a marker block, Abort a tombstone block (uncommitted blocks
//             cannot be deleted; Azure drops them after 7 days or when the
//             blob is next written). A Put or a Complete of a key discards
//             every other upload's blocks of that key (Azure's rule), so one
//             upload per key at a time. ListParts reports no part ETags.
//   Copy      Copy Blob within the account, polled while pending; replaced
//             headers are set afterwards with Set Blob Properties.
//   Delete    Delete Blob with its snapshots; a missing blob is success.
//
// ETags are Azure's ("0x8D..."), never MD5s (etag_is_md5 = false); the
// blob's Content-MD5, when it has one, is ObjectInfo::md5_hex. Blocking
// calls only (Async() is null); thread-safe.

#include <chrono>
#include <memory>
#include <string>

#include "engine/retry.h"
#include "http/client.h"
#include "store/azure/azure_config.h"
#include "store/object_store.h"
#include "store/request_hooks.h"

namespace ferry {

struct AzureStoreOptions {
  std::string container;
  azure::AzureConfig config;
  RetryPolicy retry;
  http::ClientOptions http;
  // Shared connection pool; one is created when null.
  std::shared_ptr<http::Client> client;
  // Called around every attempt of every request; may be null.
  std::shared_ptr<RequestHooks> hooks;
  // How often a pending server-side copy is looked at (default 200 ms).
  std::chrono::milliseconds copy_poll{200};
};

Result<std::unique_ptr<ObjectStore>> OpenAzureStore(AzureStoreOptions options);

}  // namespace ferry
