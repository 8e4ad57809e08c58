#pragma once
// Key ranges of a flat listing, as pure functions (table-tested in
// key_range_test.cc).
//
// The keys under a prefix are tiled by ranges (lower, upper]: `lower` is
// exclusive and is exactly what ListObjectsV2 takes as start-after; `upper`
// is inclusive, "" meaning no bound. Boundaries may be any strings, keys or
// not: a range that no key falls in is merely empty. So a set of ranges
// covers every key whatever its boundaries were chosen from (a delimiter
// listing, keys already seen, guesses), and a common prefix a server forgot
// to report merely merges into its neighbour's range. Completeness rests on
// two promises of the server instead, which CheckRangePage() checks on every
// page: keys come in byte order, and start-after is honoured.
//
// Keys are compared as bytes (std::string's order), which for UTF-8 is the
// order of code points. Boundaries this file makes are valid UTF-8 made of
// characters >= U+0020, so any server accepts them as start-after.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/object_store.h"

namespace ferry::migrate {

// True when lower < key and (upper is "" or key <= upper).
bool InRange(std::string_view key, std::string_view lower, std::string_view upper);

// The least valid-UTF-8 string above every key that starts with `prefix`
// ("big/" -> "big0"); nullopt for "" (no bound) or a prefix that is not
// valid UTF-8.
std::optional<std::string> PrefixEnd(std::string_view prefix);

// A boundary strictly between `lo` and `hi` (nullopt hi: no upper end):
// lo's characters up to where the two part, then one character chosen
// between theirs. The choice halves the distance in a scale where each
// UTF-8 length (ASCII, 2-, 3-, 4-byte characters) weighs the same, so a
// bisection that keeps finding nothing above it reaches ASCII keys in a few
// steps. nullopt when no such string exists, or lo or hi is not valid UTF-8.
std::optional<std::string> MidKey(std::string_view lo, std::optional<std::string_view> hi);

// The keys just above `lo` at each of its characters from the `from`-th on
// (counting characters, not bytes): lo's first i characters and the next
// character after its (i+1)-th, for i = from, from+1, ...; so they descend,
// and the first is the coarsest. "o0019" from 1 gives "o1", "o01", "o002",
// "o001:". Characters at U+10FFFF are passed over. Empty when lo is not
// valid UTF-8.
std::vector<std::string> SuccessorBounds(std::string_view lo, size_t from);

// The candidates strictly inside (lower, upper), sorted, without
// duplicates, and thinned evenly to at most `max` of them.
std::vector<std::string> ThinBounds(std::vector<std::string> candidates, std::string_view lower,
                                    std::string_view upper, size_t max);

// What one page of a range's listing says, checked against the server's
// promises. The page was asked for with start-after = `after`.
struct RangePageCheck {
  bool in_order = true;  // false: the server broke a promise; `why` says how
  std::string why;       // one line naming the offending keys
  size_t keep = 0;       // leading objects that are in the range (<= upper)
  bool past_upper = false;  // a key above upper came: the range ends here
};
// Every key must start with `prefix`, exceed `after`, and exceed the key
// before it (the whole page is checked, also past `upper`).
RangePageCheck CheckRangePage(const std::vector<ObjectInfo>& objects, std::string_view prefix,
                              std::string_view after, std::string_view upper);

}  // namespace ferry::migrate
