#include "migrate/lister.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "base/unix_time.h"
#include "base/cancel.h"
#include "base/crash_point.h"
#include "engine/circuit_breaker.h"
#include "engine/retry.h"

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

// Shards waiting to be listed, shared by the listing threads. A thread that
// lists shard 0 may add shards, so the queue is finished only when it is
// empty and no thread is still listing.
class ShardQueue {
 public:
  void Push(const state::ShardRecord& s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!seen_.insert(s.shard).second) return;
    queue_.push_back(s);
    cv_.notify_one();
  }
  // False when there is nothing left to list.
  bool Pop(state::ShardRecord* out) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !queue_.empty() || active_ == 0 || failed_; });
    if (queue_.empty() || failed_) return false;
    *out = queue_.front();
    queue_.pop_front();
    ++active_;
    return true;
  }
  void Done() {
    std::lock_guard<std::mutex> lock(mu_);
    --active_;
    cv_.notify_all();
  }
  void Fail(const Status& s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_) error_ = s;
    failed_ = true;
    cv_.notify_all();
  }
  Status error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<state::ShardRecord> queue_;
  std::set<int> seen_;
  int active_ = 0;
  bool failed_ = false;
  Status error_;
};

// Lists one page, retrying what can be retried: a bounded number of times
// for transient errors, and for as long as it takes during an outage (the
// source not answering), so an outage never ends a job.
Result<ListPage> ListWithRetry(const ListerContext& ctx, const ListOptions& o) {
  RetryPolicy policy;
  policy.cap = std::chrono::milliseconds(5000);
  std::mt19937_64 rng{std::random_device{}()};
  for (int attempt = 1;; ++attempt) {
    auto page = ctx.src->List(o);
    if (page.ok() || Stopped(ctx)) return page;
    const Status& s = page.status();
    bool outage = IsOutageError(s);
    if (!s.retryable() || (!outage && attempt >= 10)) return s;
    double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    Nap(ctx, BackoffDelay(policy, s, std::min(attempt, 8), r));
  }
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

// Lists `shard` to its end, committing page after page.
Status ListShard(const ListerContext& ctx, state::ShardRecord shard, ShardQueue* queue) {
  while (!shard.done) {
    if (Stopped(ctx) || (ctx.wait_for_room && !ctx.wait_for_room())) return Status::Ok();
    ListOptions o;
    o.prefix = shard.prefix;
    o.delimiter = shard.delimiter;
    o.continuation_token = shard.token;
    o.max_keys = ctx.page_size;
    auto listed = ListWithRetry(ctx, o);
    if (Stopped(ctx)) return Status::Ok();
    if (!listed.ok()) return listed.status();
    ListPage& page = *listed;
    state::ListPageCommit commit;
    commit.shard = shard.shard;
    commit.seq = shard.seq + 1;
    commit.done = !page.truncated;
    commit.next_token = page.truncated ? page.next_continuation_token : "";
    if (page.truncated && commit.next_token.empty()) {
      return Status::Protocol("listing of " + ctx.src->Describe() +
                              " is truncated but has no continuation token");
    }
    commit.objects.reserve(page.objects.size());
    for (const auto& obj : page.objects) {
      int64_t lm = UnixMs(obj.last_modified);
      std::string rel = ctx.filter_prefix + std::string(ctx.keys.Relative(obj.key));
      if (!Admit(ctx.filter, rel, obj.size, lm)) continue;
      // The body's MD5 where the listing proves one (Azure lists its
      // Content-MD5 beside an ETag that is not one), so overwrite decisions
      // can compare content; else the ETag as listed.
      std::string md5 = BodyMd5(obj);
      commit.objects.push_back({obj.key, obj.size, md5.empty() ? obj.etag : md5, lm});
    }
    if (!ctx.top_level_only) commit.new_shards = page.common_prefixes;
    FERRY_ASSIGN_OR_RETURN(state::ListPageResult r,
                           StateRetry(ctx, [&] { return ctx.state->CommitListPage(ctx.job, commit); }));
    if (!r.applied) {
      // Someone else committed this page (another runner): continue from
      // what the state store says.
      FERRY_ASSIGN_OR_RETURN(auto shards,
                             StateRetry(ctx, [&] { return ctx.state->GetShards(ctx.job); }));
      for (const auto& s : shards) {
        if (s.shard == shard.shard) shard = s;
      }
      continue;
    }
    CrashPoint("list-page");
    if (ctx.on_page) ctx.on_page(r.enqueued);
    shard.seq = commit.seq;
    shard.token = commit.next_token;
    shard.done = commit.done;
    if (!commit.new_shards.empty()) {
      FERRY_ASSIGN_OR_RETURN(auto shards,
                             StateRetry(ctx, [&] { return ctx.state->GetShards(ctx.job); }));
      for (const auto& s : shards) {
        if (!s.done && s.shard != shard.shard) queue->Push(s);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunListing(const ListerContext& ctx) {
  FERRY_ASSIGN_OR_RETURN(auto shards, ctx.state->GetShards(ctx.job));
  ShardQueue queue;
  for (const auto& s : shards) {
    if (!s.done) queue.Push(s);
  }
  auto worker = [&] {
    state::ShardRecord shard;
    while (queue.Pop(&shard)) {
      Status s = ListShard(ctx, shard, &queue);
      if (!s.ok()) queue.Fail(s);
      queue.Done();
    }
  };
  int n = std::max(1, ctx.list_concurrency);
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return queue.error();
}

}  // namespace ferry::migrate
