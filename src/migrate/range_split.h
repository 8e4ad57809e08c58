#pragma once
// Choosing where key ranges split (key_range.h), by asking the store.
//
// Split points only decide how work is shared; they never decide what is
// listed, since ranges tile the key space whatever their bounds. So they may
// come from anything: the common prefixes of one delimiter listing (cheap,
// and right for most buckets), or a bisection that probes the store with
// one-key listings to find a point with keys above it inside a range that is
// being listed (for a prefix that turns out to hold half the bucket).
//
// Each probe also checks the server's promises (keys after start-after, in
// byte order): a broken one is reported as `disorder`, never as a split.

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/object_store.h"

namespace ferry::migrate {

// One List call, with whatever retries the caller wants around it.
using ListFn = std::function<Result<ListPage>(const ListOptions&)>;

struct SplitSearch {
  std::optional<std::string> at;  // a split point with keys above it, if found
  std::string disorder;           // non-empty: a promise the server broke (one line)
  int probes = 0;                 // List calls made
};

// Searches (after, upper] of the keys under `prefix` (upper "" = no bound)
// for a point s, after < s < upper, with at least one key in (s, upper],
// by probes that are one-key listings with start-after = s, at most
// `max_probes` of them: first the coarsest successor of one of `after`'s
// characters that has keys above it (SuccessorBounds; for numbered keys
// that takes about half of what is left), then MidKey points from the top
// down. Nothing found leaves the range whole. List errors are returned.
Result<SplitSearch> FindSplit(const ListFn& list, const std::string& prefix,
                              const std::string& after, const std::string& upper,
                              int max_probes = 24);

// Split points from one delimiter listing of `prefix` ("/"): its common
// prefixes, thinned to at most `max` and kept inside (after, upper). When
// that gives fewer than max / 4 (a bucket whose keys all sit under "data/"),
// the prefixes found are listed one level deeper too (a request each, at
// most 16). A server that forgets some prefixes only makes fewer split
// points. The keys those listings return beside their prefixes are kept
// too: they are known to exist (KnownKeys).
struct SplitPoints {
  std::vector<std::string> bounds;
  std::vector<std::string> keys;  // every key the delimiter listings returned
};
Result<SplitPoints> PrefixSplitPoints(const ListFn& list, const std::string& prefix,
                                      const std::string& after, const std::string& upper,
                                      size_t max);

// Keys known to exist because a delimiter listing returned them, to check
// flat listings against: a listing that passes one without returning it
// skipped it, which a server listing out of byte order does without any
// page looking out of order (s3rver walks "x/" before "x.txt", and its
// start-after then drops "x.txt" for good). Thread-safe.
class KnownKeys {
 public:
  void Add(const std::vector<std::string>& keys);
  // The first known key in (after, through] ("" through: no bound) that
  // `objects[0, n)` lack; "" when none.
  std::string FirstSkipped(const std::string& after, const std::string& through,
                           const std::vector<ObjectInfo>& objects, size_t n) const;
  // A key deleted since it was seen: no longer expected.
  void Forget(const std::string& key);
  // Marks `key` listed (for Unseen).
  void Saw(const std::string& key);
  // Known keys no listing returned (Saw) yet.
  std::vector<std::string> Unseen() const;
  bool empty() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, bool> keys_;  // key -> seen; guarded by mu_
};

// Whether the server honours start-after, judged from a flat first `page`
// of `prefix` (in order, as CheckRangePage found it): lists again from the
// middle of it and expects exactly the keys that followed. Returns the
// disorder found ("" when none, or the page is too short to tell).
Result<std::string> ProbeStartAfter(const ListFn& list, const std::string& prefix,
                                    const ListPage& page);

}  // namespace ferry::migrate
