#pragma once
// Locations as users write them on the command line:
//   s3://bucket[/key-or-prefix]   an S3 bucket (any S3-compatible endpoint)
//   /dir, ./dir, dir, file:///dir a local path
// Parsing is pure; opening a store for a location is store/open.h.

#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry {

struct Location {
  enum class Kind { kLocal, kS3 };
  Kind kind = Kind::kLocal;
  std::string bucket;  // kS3
  std::string key;     // kS3: key or prefix after "bucket/", may be ""
  std::string path;    // kLocal: as given (file:// stripped)
  std::string text;    // the argument as typed, for messages

  bool is_s3() const { return kind == Kind::kS3; }
  // True when the location names a prefix or directory rather than one
  // object: "s3://b", "s3://b/", "s3://b/dir/", "dir/".
  bool ends_with_slash() const;
  // The location of `child` (a key relative to this one) for messages.
  std::string Child(std::string_view child) const;
};

// kInvalidArgument with a one-line reason for: an unknown scheme
// ("ftp://..."), a missing or invalid bucket name, file://host/..., an empty
// argument.
Result<Location> ParseLocation(std::string_view arg);

// S3 bucket naming rules (3-63 chars of a-z 0-9 . -, starting and ending with
// a letter or digit). Underscores and capitals are accepted for the sake of
// older S3-compatible servers.
bool IsValidBucketName(std::string_view name);

}  // namespace ferry
