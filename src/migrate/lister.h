#pragma once
// The listing stage of a migration: walks the source and enqueues what the
// job's filters admit into the state store, one committed page at a time.
//
// Each list page is committed with its sequence number and its cursor (the
// last key, or the continuation token), in one transaction with the keys it
// enqueues, so a restart continues after the last committed page and a page
// listed twice is recognised and enqueues nothing (state_store.h).
//
// A job on a store that lists by key ranges (StoreFeatures::range_listing,
// S3) with list_concurrency > 1 is listed as range shards (key_range.h): flat
// listings of (lower, upper] with start-after, up to list_concurrency at
// once, which tile the key space, so a common prefix a server forgets to
// report costs no key. A fresh job's first page is checked, the server's
// start-after probed, and the range split at the common prefixes of one
// delimiter listing; while listing, a thread with nothing to list splits the
// busiest range at a point found by probing (range_split.h), so one huge
// prefix does not serialise the job. Every page is checked for the promises
// ranges rest on (start-after honoured, byte order, and no key the delimiter
// listings showed passed over); when one is broken the job falls back to
// one flat listing paged by continuation tokens, with a warning (keys
// listed before then are listed again and checked at the destination,
// never copied twice). A flat listing that still never returns a key known
// to exist fails the listing: the job stops rather than finish without it.
//
// Other jobs (a local directory's walk, list_concurrency 1, a split job's
// top part) list prefix shards: the whole prefix paged by continuation
// token, or with delimiter "/" on shard 0, each common prefix it finds
// becoming a shard of its own.
//
// Listing runs ahead of the transfers, paced only by `wait_for_room`
// (back-pressure on the number of keys pending in the state store).

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "migrate/filter.h"
#include "migrate/policy.h"
#include "state/state_store.h"
#include "store/object_store.h"

namespace ferry::migrate {

struct ListerContext {
  ObjectStore* src = nullptr;
  state::StateStore* state = nullptr;
  std::string job;
  KeyMap keys;
  FilterSpec filter;
  std::string filter_prefix;  // put before each relative key for the filters
  // Keys last modified before this are unchanged (--since-last): counted as
  // skipped when listed, never enqueued. 0 = off.
  int64_t unchanged_before_ms = 0;
  bool top_level_only = false;  // ignore common prefixes (a split job's top part)
  int list_concurrency = 1;
  int page_size = 1000;
  // Blocks until more keys may be enqueued; false means stop listing now.
  std::function<bool()> wait_for_room;
  // After each committed page: keys enqueued by it.
  std::function<void(int64_t enqueued)> on_page;
  // Outage-class list errors are retried until this says stop.
  const std::atomic<bool>* stop = nullptr;
  // Something the user should know (a fallback to one flat listing): one line.
  std::function<void(const std::string&)> on_warning;
  // A remote source: the keys its delimiter listings show are checked
  // against its flat listings (range_split.h KnownKeys), which catches a
  // server that skips keys without any page looking out of order.
  bool check_known_keys = false;
};

// Lists every shard not yet done. Returns OK when listing finished (or was
// stopped through wait_for_room/stop), or the permanent error that ended it.
Status RunListing(const ListerContext& ctx);

}  // namespace ferry::migrate
