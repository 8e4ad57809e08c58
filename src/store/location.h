#pragma once
// Locations as users write them on the command line:
//   s3://bucket[/key-or-prefix]   an S3 bucket (any S3-compatible endpoint)
//   gs://bucket[/key-or-prefix]   a Google Cloud Storage bucket (its XML API)
//   azure://account/container[/key-or-prefix]
//                                 an Azure Blob Storage container
//   /dir, ./dir, dir, file:///dir a local path
// Parsing is pure; opening a store for a location is store/open/open.h.

#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry {

struct Location {
  enum class Kind { kLocal, kS3, kGcs, kAzure };
  Kind kind = Kind::kLocal;
  std::string account;  // kAzure: the storage account
  std::string bucket;   // remote kinds: the bucket (the container for kAzure)
  std::string key;      // remote kinds: key or prefix after "bucket/", may be ""
  std::string path;     // kLocal: as given (file:// stripped)
  std::string text;     // the argument as typed, for messages

  bool is_s3() const { return kind == Kind::kS3; }
  bool is_gcs() const { return kind == Kind::kGcs; }
  bool is_azure() const { return kind == Kind::kAzure; }
  // A bucket-like remote store addressed by keys (S3, GCS, Azure), as
  // opposed to a local directory: key prefixes, overlap checks by store
  // identity and server-side copy apply to it.
  bool is_remote() const { return kind != Kind::kLocal; }
  // "s3://bucket", "gs://bucket", "azure://account/container"; the path of a
  // local location.
  std::string Root() const;
  // True when the location names a prefix or directory rather than one
  // object: "s3://b", "s3://b/", "s3://b/dir/", "dir/".
  bool ends_with_slash() const;
  // The location of `child` (a key relative to this one) for messages.
  std::string Child(std::string_view child) const;
};

// kInvalidArgument with a one-line reason for: an unknown scheme
// ("ftp://..."), a missing or invalid bucket, account or container name,
// file://host/..., an empty argument.
Result<Location> ParseLocation(std::string_view arg);

// S3 bucket naming rules (3-63 chars of a-z 0-9 . -, starting and ending with
// a letter or digit). Underscores and capitals are accepted for the sake of
// older S3-compatible servers.
bool IsValidBucketName(std::string_view name);

// Azure's rules: an account is 3-24 lower-case letters and digits; a
// container 3-63 of a-z 0-9 and '-', starting and ending with a letter or
// digit, no "--" (or "$root" / "$web" / "$logs").
bool IsValidAzureAccount(std::string_view name);
bool IsValidAzureContainer(std::string_view name);

}  // namespace ferry
