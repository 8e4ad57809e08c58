#pragma once
// The listing stage of a migration: walks the source and enqueues what the
// job's filters admit into the state store, one committed page at a time.
//
// Each list page is committed with its sequence number and the continuation
// token for the next page, in one transaction with the keys it enqueues, so
// a restart continues after the last committed page and a page listed twice
// is recognised and enqueues nothing (state_store.h). With list_concurrency
// > 1, shard 0 lists the top level with delimiter "/" and each common prefix
// it finds becomes a shard of its own, listed flat, up to list_concurrency
// at once. Listing runs ahead of the transfers, paced only by `wait_for_room`
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
  bool top_level_only = false;  // ignore common prefixes (a split job's top part)
  int list_concurrency = 1;
  int page_size = 1000;
  // Blocks until more keys may be enqueued; false means stop listing now.
  std::function<bool()> wait_for_room;
  // After each committed page: keys enqueued by it.
  std::function<void(int64_t enqueued)> on_page;
  // Outage-class list errors are retried until this says stop.
  const std::atomic<bool>* stop = nullptr;
};

// Lists every shard not yet done. Returns OK when listing finished (or was
// stopped through wait_for_room/stop), or the permanent error that ended it.
Status RunListing(const ListerContext& ctx);

}  // namespace ferry::migrate
