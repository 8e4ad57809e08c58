#pragma once
// Listing quirks: ferry-test-s3 answering ListObjects (V2 and V1) the way
// some broken S3 servers do, so tests can show that a client survives them
// or notices. Off by default; turned on with --list-quirk NAME (repeatable)
// or "list_quirks" in POST /_admin/faults. Pure functions, table-tested.
//
// The model is s3rver 3.7 (npm). It keeps key K as the file
// <bucket>/K._S3rver_object, with a directory for each '/'-separated
// segment but the last, and lists by walking that tree
// (lib/stores/filesystem.js listObjects, lib/utils.js walk).
//
//   forget-prefixes     A delimited listing leaves out the common prefixes
//                       that no key sits directly under (every key under
//                       the prefix has another delimiter after it), as
//                       s3rver does for delimiter '/': its walk never
//                       descends into those directories. Keys and the other
//                       prefixes are listed as usual.
//   ignore-start-after  V2 start-after is ignored. Continuation tokens still
//                       work; the V1 marker is still honoured.
//   unordered           Keys come in walk order (below), not byte order.
//                       A continuation token resumes after its key in walk
//                       order, so paging with tokens lists every key once
//                       (s3rver's own tokens do not; that failure is left
//                       out here). start-after and the V1 marker keep their
//                       S3 meaning, "only keys greater than this in byte
//                       order", applied to the walk as s3rver does: a client
//                       that pages with start-after = the last key it saw
//                       loses every later-walked key that is smaller.
//
// Walk order. s3rver's walk reads each directory's entries in byte order of
// their names (Node's fs.readdirSync is libuv's scandir, sorted with
// strcmp) and descends into a directory where it meets it. An entry's name
// is the segment for a directory and the segment + "._S3rver_object" for a
// key's own file. So two keys compare by the first level where their entry
// names differ, the smaller name (as bytes) first. Hence directory "x" (keys
// "x/...") comes before the file of key "x" ("x" < "x._S3rver_object"), and
// "x!" < "x-1" < "x" < "x._a" < "x.a" < "x0" ('!' and '-' sort below '.',
// and '_' below 'a'). s3rver cannot store a key with an empty segment
// before the last (path.join drops it); here that segment is a directory
// named "", first of its directory. A key ending in '/' is the file
// "._S3rver_object" in its directory, as in s3rver. A directory and a file
// with the same entry name cannot both exist on disk; here the file is
// first.
//
// Delimited listings under unordered: the keys considered (those under
// `prefix`, greater than start-after, after the token) are read in walk
// order; a key is listed, or stands for its common prefix, and a common
// prefix is listed once, where the first of its keys in the whole listing
// (under forget-prefixes: the first key directly under it) comes in walk
// order. The token of a page that ends with a common prefix names the key
// at which that prefix was listed.
//
// Cost. forget-prefixes and ignore-start-after cost what the byte-ordered
// listing costs. unordered reads a second index of the bucket's keys in
// walk order (WalkIndex): built on the bucket's first unordered listing,
// O(n log n) for n keys under the storage lock (0.8 s for a million keys),
// then kept in step by every write at O(log n) each, and kept until the
// bucket is dropped; about 110 bytes plus the key's size a key. A page
// costs O((k + m) log n), k the keys read on it and m, for a delimited
// listing, the keys of its first common prefix that came before the token:
// like the byte-ordered listing, never quadratic.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "listing.h"

namespace ferry::s3server {

struct ListQuirks {
  bool forget_prefixes = false;     // "forget-prefixes"
  bool ignore_start_after = false;  // "ignore-start-after"
  bool unordered = false;           // "unordered"

  bool any() const { return forget_prefixes || ignore_start_after || unordered; }
  bool operator==(const ListQuirks&) const = default;
};

// Turns on the quirk called `name` in `quirks`; InvalidArgument for an
// unknown name (`quirks` unchanged).
Status AddListQuirk(std::string_view name, ListQuirks* quirks);
// The names of the quirks that are on, in the order of ListQuirks.
std::vector<std::string_view> ListQuirkNames(const ListQuirks& quirks);

// A key's place in walk order: byte order of WalkKey is walk order. Each
// directory segment is written with its 0x00 bytes as 0x00 0xFF and ends
// with 0x00 0x01, which sorts below every byte a longer name could go on
// with; the last segment is written the same way, followed by
// "._S3rver_object". Invertible: KeyFromWalkKey(WalkKey(k)) == k.
std::string WalkKey(std::string_view key);
std::string KeyFromWalkKey(std::string_view walk_key);
// The walk keys of all keys that start with `prefix` start with
// WalkPrefix(prefix). A few others may too (a file whose segment is shorter
// than the prefix's last segment, which runs into "._S3rver_object"), so a
// caller filters what it reads by key.
std::string WalkPrefix(std::string_view prefix);

// A bucket's keys in walk order, beside its KeyIndex. Not thread-safe; the
// owner keeps it in step with the KeyIndex (Storage does, under its lock).
class WalkIndex {
 public:
  WalkIndex() = default;
  explicit WalkIndex(const KeyIndex& index);

  void Add(std::string_view key);     // no-op if present
  void Remove(std::string_view key);  // no-op if absent
  const std::set<std::string>& walk_keys() const { return walk_keys_; }

 private:
  std::set<std::string> walk_keys_;
};

// Lists `request` from `index` with `quirks` applied; with none, exactly
// ListKeys(index, ByteOrderParams(request)). Requires, when
// quirks.unordered, `walk` to hold exactly the keys of `index`; else `walk`
// may be null.
ListResult ListWithQuirks(const KeyIndex& index, const WalkIndex* walk, const ListRequest& request,
                          ListQuirks quirks);

}  // namespace ferry::s3server
