#pragma once
// The listing threads' shared view of a job's shards (lister.h): shards
// waiting to be listed, shards being listed, and which of those an idle
// thread may split (work stealing), so one huge range does not serialise the
// listing.
//
// A LiveShard's record is what its lister last committed; its mutex is held
// across a commit, and by a thief across a split, so a page and a split of
// one shard never interleave in this process (the state store refuses the
// loser of such a race between processes: state_store.h SplitShard).

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "state/state_store.h"

namespace ferry::migrate {

struct LiveShard {
  bool ranged = false;  // rec.ranged, readable without mu (it never changes)
  std::mutex mu;
  state::ShardRecord rec;  // guarded by mu
  int pages = 0;           // pages this run; guarded by mu
  bool more = false;       // its last page was truncated; guarded by mu
  // A split search found nothing with the cursor here: not again until the
  // cursor moves. Guarded by mu.
  std::string no_split_at;
  bool no_split_tried = false;
};

class ShardQueue {
 public:
  struct Next {
    enum class Kind { kList, kSplit, kDone };
    Kind kind = Kind::kDone;
    std::shared_ptr<LiveShard> shard;  // kList: to list; kSplit: to split
  };

  // Queues a shard to list (once per shard number).
  void Push(const state::ShardRecord& s);
  // Blocks until there is a shard to list, a shard another thread lists
  // that is worth splitting (when `may_split` and nothing waits), or the
  // listing is over (everything listed, failed, or a fallback asked for).
  Next Take(bool may_split);
  // The shard taken with kList is finished (or abandoned).
  void Done(const std::shared_ptr<LiveShard>& s);
  // The shard taken with kSplit was looked at (split or not).
  void SplitDone(const std::shared_ptr<LiveShard>& s);
  // A page was committed: a thread waiting for work may find a victim now.
  void Progress();
  void Fail(const Status& s);
  // The server broke a promise ranges rely on: stop, then list flat.
  void RequestFallback(const std::string& why);

  bool stopped();  // failed or falling back
  Status error();
  std::string fallback();  // "" unless RequestFallback was called

 private:
  std::shared_ptr<LiveShard> VictimLocked();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<LiveShard>> queue_;     // guarded by mu_
  std::vector<std::shared_ptr<LiveShard>> active_;   // being listed; guarded by mu_
  std::set<int> seen_;                                // guarded by mu_
  std::set<LiveShard*> splitting_;                    // guarded by mu_
  bool failed_ = false;                               // guarded by mu_
  Status error_;                                      // guarded by mu_
  std::string fallback_;                              // guarded by mu_
};

}  // namespace ferry::migrate
