#pragma once
// Listing for the local backend: one ListObjectsV2-style page of the keys
// stored below a root directory, in byte order of the decoded keys.
//
// Order. Keys are sorted as strings, not as encoded paths, so the tree is
// walked depth-first with each directory's entries sorted by decoded name,
// a directory's name taking a trailing '/' (all keys below directory "d"
// start with "d/", so they sort exactly where "d/" sorts among its
// siblings). Chains of continuation directories (long segments, see
// key_path.h) are flattened into their parent first, since their keys share
// a prefix with no '/' after it and interleave with the siblings.
//
// Cost per page. The directories from the deepest one fixed by the prefix
// down to the resume point are read and sorted again (the continuation
// token is the last key or common prefix returned); subtrees wholly before
// the resume point or outside the prefix are never opened, and the walk
// stops at the first key past the prefix or once the page is full. With
// delimiter "/" a directory becomes a common prefix without being walked
// (only probed for one object). So a page costs O(sum of the sizes of the
// directories on the path to the resume point + page), not O(tree); the
// worst case is a huge flat directory, which is re-read for every page.
//
// Objects carry size, mtime and, when a matching sidecar exists, the ETag;
// otherwise the ETag is "" (computing MD5s here would read every file).

#include <string>

#include "base/status.h"
#include "store/object_store.h"

namespace ferry::local {

// kInvalidArgument for max_keys < 1 or a malformed continuation token;
// max_keys above 1000 is treated as 1000 (as S3 does). Entries that are not
// canonical encodings (key_path.h) are ignored.
Result<ListPage> ListTree(const std::string& root, const ListOptions& options);

}  // namespace ferry::local
