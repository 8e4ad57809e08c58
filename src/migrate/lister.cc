#include "migrate/lister.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/cancel.h"
#include "base/crash_point.h"
#include "base/unix_time.h"
#include "migrate/key_range.h"
#include "migrate/list_retry.h"
#include "migrate/range_split.h"
#include "migrate/range_queue.h"

namespace ferry::migrate {
namespace {

bool Stopped(const ListerContext& ctx) {
  return CancelRequested() || (ctx.stop != nullptr && ctx.stop->load());
}

// Sleeps up to `d`, waking early when the listing is stopped.
void Nap(const ListerContext& ctx, std::chrono::milliseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (!Stopped(ctx) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<ListPage> ListSrcWithRetry(const ListerContext& ctx, const ListOptions& o) {
  return migrate::ListWithRetry(*ctx.src, o, [&ctx] { return Stopped(ctx); });
}

// Runs a state-store call again while it fails with a retryable error (a
// database busy with another process) and the listing is not stopped.
template <typename F>
auto StateRetry(const ListerContext& ctx, F f) -> decltype(f()) {
  for (int attempt = 1;; ++attempt) {
    auto r = f();
    if (r.ok() || !r.status().retryable() || Stopped(ctx) || attempt >= 30) return r;
    Nap(ctx, std::chrono::milliseconds(std::min(2000, 100 * attempt)));
  }
}

// A shard being listed in this process, shared between its lister and a
// thread that may split it (RangeQueue). Its record is what its lister last
// committed; `mu` is held across a commit, and by a thief across a split,
// so a page and a split of one shard never interleave in this process (the
// state store refuses the loser of such a race between processes:
// state_store.h SplitShard).
struct LiveShard {
  explicit LiveShard(const state::ShardRecord& r) : ranged(r.ranged), rec(r) {}
  const bool ranged;       // rec.ranged, readable without mu
  std::mutex mu;
  state::ShardRecord rec;  // guarded by mu
  int pages = 0;           // pages this run; guarded by mu
  bool more = false;       // its last page was truncated; guarded by mu
  // A split search found nothing with the cursor here: not again until the
  // cursor moves. Guarded by mu.
  std::string no_split_at;
  bool no_split_tried = false;

  // RangeQueue's question, with mu held: a range shard still listing, whose
  // last page was full, and not known to be unsplittable where it is now.
  int SplitScore() const {
    if (!ranged || rec.done || !more || pages < 1) return 0;
    if (no_split_tried && no_split_at == rec.cursor) return 0;
    return pages;
  }
};
using ShardQueue = RangeQueue<LiveShard>;

// The job's listing: threads taking shards from a ShardQueue (see lister.h).
class Lister {
 public:
  Lister(const ListerContext& ctx, std::shared_ptr<KnownKeys> known)
      : ctx_(ctx), known_(std::move(known)) {
    list_ = [this](const ListOptions& o) { return ListSrcWithRetry(ctx_, o); };
  }
  Status Run();

 private:
  // A fresh range job: its first page, probes, and split at `bounds`.
  Status Plan(const state::ShardRecord& shard0, const std::vector<std::string>& bounds);
  // The first known key a page of (after, through] passed over that still
  // exists, or "".
  Result<std::string> Skipped(const std::string& after, const std::string& through,
                              const std::vector<ObjectInfo>& objects, size_t n);
  // The last page of a flat listing this run made whole: the keys known to
  // exist that it never returned (a server that loses keys even in its own
  // continuation tokens, as s3rver does) go into that page's commit, with a
  // warning. HEAD errors are returned (the page is then not committed).
  Status AddUnseen(const state::ShardRecord& shard, state::ListPageCommit* commit);
  void Thread();
  Status ListPrefixShard(LiveShard& live);
  Status ListRangeShard(LiveShard& live);
  // Lists and commits one page of a range shard; `probe`: check start-after
  // before committing (a fresh job's first page).
  Status ListRangePage(LiveShard& live, bool probe);
  void Split(LiveShard& victim);
  // The filters applied to objects[0, n) of a page, into `commit`.
  void Admit(const std::vector<ObjectInfo>& objects, size_t n, state::ListPageCommit* commit);
  // Reads `live`'s record again after a commit the store refused.
  Status Reload(LiveShard& live);
  // Replaces the job's shards with one flat listing of (lower, upper].
  Status FallBack(const std::string& why, const std::string& lower, const std::string& upper);
  // Lists every shard not done, again while listing made or revealed new
  // ones (a split by another runner); returns when all are done, or
  // stopped, failed or aborted.
  Status ListAll();

  // Queues a shard to list, once per shard number.
  void Push(const state::ShardRecord& s);

  const ListerContext& ctx_;
  std::shared_ptr<KnownKeys> known_;  // never null
  ListFn list_;
  ShardQueue queue_;
  std::mutex seen_mu_;
  std::set<int> seen_;  // shard numbers pushed; guarded by seen_mu_
  std::string prefix_;  // of the range shards
  // This run lists one flat shard whole, from its first page: at its end,
  // every key known to exist must have come (AddUnseen).
  bool check_flat_ = false;
};

void Lister::Push(const state::ShardRecord& s) {
  {
    std::lock_guard<std::mutex> lock(seen_mu_);
    if (!seen_.insert(s.shard).second) return;
  }
  queue_.Push(std::make_shared<LiveShard>(s));
}

void Lister::Admit(const std::vector<ObjectInfo>& objects, size_t n,
                   state::ListPageCommit* commit) {
  commit->objects.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const ObjectInfo& obj = objects[i];
    int64_t lm = UnixMs(obj.last_modified);
    std::string rel = ctx_.filter_prefix + std::string(ctx_.keys.Relative(obj.key));
    if (!migrate::Admit(ctx_.filter, rel, obj.size, lm)) continue;
    // Not a multipart object ("-N" ETag): S3 dates it from the upload's
    // start, which may be before the last job although it was completed after.
    if (lm > 0 && lm < ctx_.unchanged_before_ms && obj.etag.find('-') == std::string::npos) {
      ++commit->unchanged;
      continue;
    }
    // The body's MD5 where the listing proves one (Azure lists its
    // Content-MD5 beside an ETag that is not one), so overwrite decisions
    // can compare content; else the ETag as listed.
    std::string md5 = BodyMd5(obj);
    commit->objects.push_back({obj.key, obj.size, md5.empty() ? obj.etag : md5, lm});
  }
}

Status Lister::Reload(LiveShard& live) {
  FERRY_ASSIGN_OR_RETURN(auto shards, StateRetry(ctx_, [&] { return ctx_.state->GetShards(ctx_.job); }));
  for (const auto& s : shards) {
    if (s.shard == live.rec.shard) {
      live.rec = s;
      return Status::Ok();
    }
  }
  live.rec.done = true;  // gone: the listing was replaced (a fallback elsewhere)
  return Status::Ok();
}

// A prefix shard, to its end, committing page after page.
Status Lister::ListPrefixShard(LiveShard& live) {
  state::ShardRecord& shard = live.rec;
  while (!shard.done) {
    if (Stopped(ctx_) || (ctx_.wait_for_room && !ctx_.wait_for_room())) return Status::Ok();
    ListOptions o;
    o.prefix = shard.prefix;
    o.delimiter = shard.delimiter;
    o.continuation_token = shard.token;
    o.max_keys = ctx_.page_size;
    auto listed = ListSrcWithRetry(ctx_, o);
    if (Stopped(ctx_)) return Status::Ok();
    if (!listed.ok()) return listed.status();
    ListPage& page = *listed;
    state::ListPageCommit commit;
    commit.shard = shard.shard;
    commit.seq = shard.seq + 1;
    commit.upper = shard.upper;
    commit.done = !page.truncated;
    commit.next_token = page.truncated ? page.next_continuation_token : "";
    if (page.truncated && commit.next_token.empty()) {
      return Status::Protocol("listing of " + ctx_.src->Describe() +
                              " is truncated but has no continuation token");
    }
    // A fallback's flat shard keeps the job's key range (a --split part).
    if (!shard.lower.empty() || !shard.upper.empty()) {
      auto out = [&](const ObjectInfo& o) { return !InRange(o.key, shard.lower, shard.upper); };
      page.objects.erase(std::remove_if(page.objects.begin(), page.objects.end(), out),
                         page.objects.end());
    }
    Admit(page.objects, page.objects.size(), &commit);
    for (const ObjectInfo& obj : page.objects) known_->Saw(obj.key);
    if (!ctx_.top_level_only) commit.new_shards = page.common_prefixes;
    if (commit.done && check_flat_) FERRY_RETURN_IF_ERROR(AddUnseen(shard, &commit));
    FERRY_ASSIGN_OR_RETURN(state::ListPageResult r,
                           StateRetry(ctx_, [&] { return ctx_.state->CommitListPage(ctx_.job, commit); }));
    if (!r.applied) {
      // Someone else committed this page (another runner): continue from
      // what the state store says; this run no longer sees the whole listing.
      check_flat_ = false;
      FERRY_RETURN_IF_ERROR(Reload(live));
      continue;
    }
    CrashPoint("list-page");
    if (ctx_.on_page) ctx_.on_page(r.enqueued);
    shard.seq = commit.seq;
    shard.token = commit.next_token;
    shard.done = commit.done;
    if (!commit.new_shards.empty()) {
      FERRY_ASSIGN_OR_RETURN(auto shards,
                             StateRetry(ctx_, [&] { return ctx_.state->GetShards(ctx_.job); }));
      for (const auto& s : shards) {
        if (!s.done && s.shard != shard.shard) Push(s);
      }
    }
  }
  return Status::Ok();
}

Status Lister::ListRangePage(LiveShard& live, bool probe) {
  state::ShardRecord seen;
  {
    std::lock_guard<std::mutex> lock(live.mu);
    seen = live.rec;
  }
  ListOptions o;
  o.prefix = seen.prefix;
  o.start_after = std::max(seen.lower, seen.cursor);
  o.max_keys = ctx_.page_size;
  auto listed = ListSrcWithRetry(ctx_, o);
  if (Stopped(ctx_)) return Status::Ok();
  if (!listed.ok()) return listed.status();
  const ListPage& page = *listed;
  RangePageCheck check = CheckRangePage(page.objects, o.prefix, o.start_after, seen.upper);
  if (check.in_order && page.truncated && page.objects.empty()) {
    check.in_order = false;
    check.why = "a page after \"" + o.start_after + "\" is truncated but holds no key";
  }
  if (check.in_order && probe && page.truncated) {
    FERRY_ASSIGN_OR_RETURN(check.why, ProbeStartAfter(list_, o.prefix, page));
    check.in_order = check.why.empty();
  }
  if (check.in_order) {
    // The page covers (start-after, through]: its last key, or all of the
    // range when it ends the range.
    const bool ends = check.past_upper || !page.truncated;
    const std::string through = ends ? seen.upper : page.objects.back().key;
    FERRY_ASSIGN_OR_RETURN(std::string skipped,
                           Skipped(o.start_after, through, page.objects, check.keep));
    if (!skipped.empty()) {
      check.in_order = false;
      check.why = "key \"" + skipped + "\", which its delimiter listing shows, is missing from "
                  "its flat listing after \"" + o.start_after + "\" (not in byte order)";
    }
  }
  if (!check.in_order) {
    queue_.Abort(check.why);
    return Status::Ok();
  }
  state::ListPageResult r;
  {
    std::lock_guard<std::mutex> lock(live.mu);
    state::ShardRecord& rec = live.rec;
    if (rec.upper != seen.upper) {  // split meanwhile: the rest is another shard's
      check = CheckRangePage(page.objects, o.prefix, o.start_after, rec.upper);
    }
    state::ListPageCommit commit;
    commit.shard = rec.shard;
    commit.seq = rec.seq + 1;
    commit.upper = rec.upper;
    commit.done = check.past_upper || !page.truncated;
    if (check.keep > 0) commit.cursor = page.objects[check.keep - 1].key;
    Admit(page.objects, check.keep, &commit);
    FERRY_ASSIGN_OR_RETURN(r, StateRetry(ctx_, [&] { return ctx_.state->CommitListPage(ctx_.job, commit); }));
    if (!r.applied) return Reload(live);
    rec.seq = commit.seq;
    if (!commit.cursor.empty()) rec.cursor = commit.cursor;
    rec.done = commit.done;
    ++live.pages;
    live.more = !commit.done;
  }
  CrashPoint("list-page");
  if (ctx_.on_page) ctx_.on_page(r.enqueued);
  queue_.Progress();
  return Status::Ok();
}

Status Lister::ListRangeShard(LiveShard& live) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(live.mu);
      if (live.rec.done) return Status::Ok();
    }
    if (Stopped(ctx_) || queue_.stopped()) return Status::Ok();
    if (ctx_.wait_for_room && !ctx_.wait_for_room()) return Status::Ok();
    FERRY_RETURN_IF_ERROR(ListRangePage(live, false));
  }
}

void Lister::Split(LiveShard& victim) {
  state::ShardRecord seen;
  {
    std::lock_guard<std::mutex> lock(victim.mu);
    seen = victim.rec;
  }
  std::string after = std::max(seen.lower, seen.cursor);
  auto search = FindSplit(list_, seen.prefix, after, seen.upper);
  if (!search.ok() || Stopped(ctx_)) return;  // no split this time; listing goes on
  if (!search->disorder.empty()) {
    queue_.Abort(search->disorder);
    return;
  }
  std::lock_guard<std::mutex> lock(victim.mu);
  if (!search->at) {
    victim.no_split_tried = true;
    victim.no_split_at = seen.cursor;
    return;
  }
  state::ShardRecord& rec = victim.rec;
  if (rec.done || rec.upper != seen.upper || *search->at <= std::max(rec.lower, rec.cursor)) {
    return;  // it listed past the point meanwhile: look again later
  }
  auto made = StateRetry(ctx_, [&] {
    return ctx_.state->SplitShard(ctx_.job, rec.shard, rec.upper, {*search->at});
  });
  if (!made.ok() || made->empty()) {
    // Changed elsewhere (another runner's split or page): not again until
    // this shard's own lister has moved on and reloaded it.
    victim.no_split_tried = true;
    victim.no_split_at = rec.cursor;
    return;
  }
  rec.upper = *search->at;
  Push(made->front());
}

void Lister::Thread() {
  const bool may_split = ctx_.list_concurrency > 1;
  for (;;) {
    ShardQueue::Next next = queue_.Take(may_split);
    if (next.kind == ShardQueue::Next::Kind::kDone) return;
    LiveShard& live = *next.item;
    if (next.kind == ShardQueue::Next::Kind::kSplit) {
      Split(live);
      queue_.SplitDone(next.item);
      continue;
    }
    Status s = live.ranged ? ListRangeShard(live) : ListPrefixShard(live);
    if (!s.ok()) queue_.Fail(s);
    queue_.Done(next.item);
  }
}

Result<std::string> Lister::Skipped(const std::string& after, const std::string& through,
                                    const std::vector<ObjectInfo>& objects, size_t n) {
  for (;;) {
    std::string k = known_->FirstSkipped(after, through, objects, n);
    if (k.empty()) return k;
    auto head = ctx_.src->Head(k);
    if (head.ok()) return k;
    if (head.status().code() != ErrorCode::kNotFound) {
      return head.status().WithContext("looking at a key the listing passed over: " + k);
    }
    known_->Forget(k);  // deleted since the delimiter listing saw it
  }
}

Status Lister::AddUnseen(const state::ShardRecord& shard, state::ListPageCommit* commit) {
  std::vector<ObjectInfo> found;
  for (const std::string& k : known_->Unseen()) {
    if (k.compare(0, shard.prefix.size(), shard.prefix) != 0) continue;
    if ((!shard.lower.empty() || !shard.upper.empty()) && !InRange(k, shard.lower, shard.upper)) {
      continue;
    }
    auto head = ctx_.src->Head(k);
    if (!head.ok() && head.status().code() == ErrorCode::kNotFound) continue;  // deleted since
    if (!head.ok()) return head.status().WithContext("a key its listing never returned: " + k);
    head->key = k;
    found.push_back(std::move(*head));
    known_->Saw(k);
  }
  if (found.empty()) return Status::Ok();
  Admit(found, found.size(), commit);
  if (ctx_.on_warning) {
    ctx_.on_warning(ctx_.src->Describe() + ": its listing never returned " +
                    std::to_string(found.size()) + " key" + (found.size() == 1 ? "" : "s") +
                    " that exist (\"" + found.front().key +
                    "\"...), which its delimiter listing shows; they are copied too, but keys "
                    "deeper down may be missing as well (the server does not list this bucket "
                    "completely)");
  }
  return Status::Ok();
}

Status Lister::Plan(const state::ShardRecord& shard0, const std::vector<std::string>& all_bounds) {
  LiveShard live(shard0);
  FERRY_RETURN_IF_ERROR(ListRangePage(live, /*probe=*/true));
  if (!queue_.aborted().empty() || Stopped(ctx_) || live.rec.done || live.rec.seq == 0) {
    return Status::Ok();
  }
  std::vector<std::string> bounds = ThinBounds(all_bounds, live.rec.cursor, live.rec.upper, 255);
  if (bounds.empty()) return Status::Ok();  // stealing splits it instead
  auto made = StateRetry(ctx_, [&] {
    return ctx_.state->SplitShard(ctx_.job, live.rec.shard, live.rec.upper, bounds);
  });
  if (!made.ok() && made.status().code() != ErrorCode::kPreconditionFailed) return made.status();
  return Status::Ok();
}

Status Lister::FallBack(const std::string& why, const std::string& lower,
                        const std::string& upper) {
  FERRY_ASSIGN_OR_RETURN(state::JobRecord job, ctx_.state->GetJob(ctx_.job));
  if (ctx_.on_warning) {
    ctx_.on_warning(ctx_.src->Describe() + ": " + why +
                    "; listing it as one flat listing instead of key ranges" +
                    (job.counters.listed > 0 ? " (keys listed before are listed again and "
                                               "checked at the destination)"
                                             : ""));
  }
  // Refused while keys listed before are still pending: the transfers
  // finish them meanwhile (state_store.h FallBackToFlatListing).
  for (;;) {
    auto flat = ctx_.state->FallBackToFlatListing(ctx_.job, prefix_, lower, upper);
    if (flat.ok() || !flat.status().retryable()) return flat.status();
    if (Stopped(ctx_)) return Status::Ok();  // the next run falls back again
    Nap(ctx_, std::chrono::milliseconds(100));
  }
}

Status Lister::ListAll() {
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(auto shards, StateRetry(ctx_, [&] { return ctx_.state->GetShards(ctx_.job); }));
    size_t pushed = 0;
    {
      std::lock_guard<std::mutex> lock(seen_mu_);
      for (const auto& s : shards) pushed += !s.done && seen_.count(s.shard) == 0 ? 1 : 0;
    }
    if (pushed == 0) return queue_.error();
    for (const auto& s : shards) {
      if (!s.done) Push(s);
    }
    int n = std::max(1, ctx_.list_concurrency);
    std::vector<std::thread> threads;
    for (int i = 1; i < n; ++i) threads.emplace_back([this] { Thread(); });
    Thread();
    for (auto& t : threads) t.join();
    if (queue_.stopped() || Stopped(ctx_)) return queue_.error();
  }
}

Status Lister::Run() {
  FERRY_ASSIGN_OR_RETURN(auto shards, ctx_.state->GetShards(ctx_.job));
  bool ranged = false;
  std::vector<const state::ShardRecord*> undone;
  // The key range all the range shards cover (a --split part's), kept by a
  // fallback.
  // ("" is below every lower bound; as an upper bound it means none.)
  std::string lower, upper;
  bool unbounded_above = false;
  for (const auto& s : shards) {
    if (s.ranged) {
      prefix_ = s.prefix;
      if (!ranged || s.lower < lower) lower = s.lower;
      unbounded_above = unbounded_above || s.upper.empty();
      upper = std::max(upper, s.upper);
      ranged = true;
    }
    if (!s.done) undone.push_back(&s);
  }
  if (unbounded_above) upper.clear();
  const bool one_flat = undone.size() == 1 && !undone[0]->ranged &&
                        undone[0]->delimiter.empty();
  check_flat_ = ctx_.check_known_keys && one_flat && undone[0]->seq == 0;
  // What the delimiter listings show: split points for a fresh job, and
  // keys the flat listings must return.
  std::vector<std::string> bounds;
  if (ctx_.check_known_keys && !undone.empty() && (ranged || one_flat) && known_->empty()) {
    auto points = PrefixSplitPoints(list_, undone[0]->prefix, "", "", 255);
    if (points.ok()) {
      known_->Add(points->keys);
      bounds = std::move(points->bounds);
    } else if (ctx_.on_warning) {
      ctx_.on_warning(ctx_.src->Describe() + ": no delimiter listing (" +
                      points.status().ToString() +
                      "); its flat listings are checked for order only");
    }
  }
  const bool fresh = shards.size() == 1 && shards[0].ranged && shards[0].seq == 0 &&
                     !shards[0].done;
  if (fresh && ctx_.list_concurrency > 1) FERRY_RETURN_IF_ERROR(Plan(shards[0], bounds));
  if (queue_.aborted().empty()) FERRY_RETURN_IF_ERROR(ListAll());
  std::string why = queue_.aborted();
  if (why.empty() || Stopped(ctx_)) return queue_.error();
  // A broken promise: one flat listing from the start, on a queue of its own.
  FERRY_RETURN_IF_ERROR(FallBack(why, lower, upper));
  if (Stopped(ctx_)) return Status::Ok();
  ListerContext one = ctx_;
  one.list_concurrency = 1;
  return Lister(one, known_).Run();
}

}  // namespace

Status RunListing(const ListerContext& ctx) {
  return Lister(ctx, std::make_shared<KnownKeys>()).Run();
}

}  // namespace ferry::migrate
