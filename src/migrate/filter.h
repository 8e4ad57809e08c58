#pragma once
// Which listed objects a migration job admits: rclone-style include/exclude
// globs, size bounds and last-modified bounds, and the parsers for the
// command-line values behind them. Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::migrate {

// Matches `key` (relative to the source prefix) against an rclone-style glob:
//   *        any run of characters within one path segment (not '/')
//   **       any run of characters, '/' included
//   ?        one character other than '/'
//   [abc] [a-z] [!a] [^a]   one character (not '/') from / not from a class
//   {a,b,c}  one of the alternatives (which may hold wildcards; no nesting)
//   \c       the character c itself
// Characters are UTF-8 code points (a byte that is not valid UTF-8 counts as
// one character). A pattern starting with '/' is anchored at the start of
// the key; any other pattern matches if it matches the whole key or any
// suffix that starts right after a '/' (so "*.jpg" matches "a/b/c.jpg").
// Runs in O(|pattern| * |key|): no exponential backtracking. A pattern that
// ValidateGlob() rejects matches nothing.
bool GlobMatch(std::string_view pattern, std::string_view key);

// OK, or kInvalidArgument with a one-line reason (unclosed '[' or '{',
// nested or unmatched braces, a reversed range, a trailing '\').
Status ValidateGlob(std::string_view pattern);

struct FilterSpec {
  std::vector<std::string> include;      // when non-empty, a key must match one (default: all)
  std::vector<std::string> exclude;      // a key matching any is left out; exclude wins
  std::optional<uint64_t> min_size;      // bytes, inclusive (default: no bound)
  std::optional<uint64_t> max_size;      // bytes, inclusive (default: no bound)
  std::optional<int64_t> newer_than_ms;  // last-modified strictly after this Unix ms
  std::optional<int64_t> older_than_ms;  // last-modified strictly before this Unix ms
  // True when the spec admits every object.
  bool empty() const;
};

// True when the object passes every part of `f`.
bool Admit(const FilterSpec& f, std::string_view relative_key, uint64_t size,
           int64_t last_modified_ms);

// A --newer-than / --older-than value -> Unix ms. Either an absolute time:
// "2024-05-01", "2024-05-01T12:30:00Z", "2024-05-01 12:30:00.250",
// "2024-05-01T12:30:00+02:00" (a time without a zone is UTC); or a duration
// before `now_ms` in ParseDurationMs() form: "90s", "15m", "12h", "7d", "2w",
// "1.5h". Errors: kInvalidArgument with a one-line reason quoting the input.
Result<int64_t> ParseTimeSpec(std::string_view text, int64_t now_ms);

// A duration -> ms, rclone's forms: a decimal number and a unit, repeated
// ("1h30m"): ms, s, m, h, d (24h), w (7d), M (30d), y (365d). "0" is the one
// value without a unit. Negative values are rejected.
Result<int64_t> ParseDurationMs(std::string_view text);

}  // namespace ferry::migrate
