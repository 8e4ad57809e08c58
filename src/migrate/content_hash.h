#pragma once
// What an object's listing or HEAD proves about its bytes: their MD5, when
// it is known. Shared by the transfer's overwrite check and verify.

#include <string>
#include <string_view>

#include "store/object_store.h"

namespace ferry::migrate {

// User metadata ferry adds to objects it uploads in parts when the source's
// MD5 is known, since their ETag is not an MD5.
inline constexpr char kFerryMd5Meta[] = "ferry-md5";
// rclone's metadata for the same (base64 of the raw MD5).
inline constexpr char kRcloneMd5Meta[] = "md5chksum";

// The MD5 (lower-case hex) a listed ETag is: 32 hex digits, as S3 gives for
// objects uploaded whole (SSE-KMS objects aside, which listings cannot
// tell). "" for a multipart ETag ("...-N") or anything else.
std::string ListedMd5(std::string_view etag);

// The MD5 an object's full info proves: its ETag when that is one, or the
// MD5 the store keeps beside it (BodyMd5: Azure's Content-MD5), else
// ferry's or rclone's MD5 metadata. "" when unknown.
std::string KnownMd5(const ObjectInfo& info);

}  // namespace ferry::migrate
