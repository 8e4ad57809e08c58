#include "migrate/shard_queue.h"

#include <algorithm>
#include <chrono>

namespace ferry::migrate {

void ShardQueue::Push(const state::ShardRecord& s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!seen_.insert(s.shard).second) return;
  auto live = std::make_shared<LiveShard>();
  live->rec = s;
  live->ranged = s.ranged;
  queue_.push_back(std::move(live));
  cv_.notify_all();
}

std::shared_ptr<LiveShard> ShardQueue::VictimLocked() {
  std::shared_ptr<LiveShard> best;
  int best_pages = 0;
  for (const auto& s : active_) {
    if (!s->ranged || splitting_.count(s.get()) > 0) continue;
    // A shard busy committing is looked at next time.
    std::unique_lock<std::mutex> held(s->mu, std::try_to_lock);
    if (!held.owns_lock()) continue;
    const state::ShardRecord& r = s->rec;
    if (r.done || !s->more || s->pages < 1) continue;
    if (s->no_split_tried && s->no_split_at == r.cursor) continue;
    if (s->pages > best_pages) {
      best = s;
      best_pages = s->pages;
    }
  }
  return best;
}

ShardQueue::Next ShardQueue::Take(bool may_split) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (failed_ || !fallback_.empty()) return {};
    if (!queue_.empty()) {
      Next n{Next::Kind::kList, queue_.front()};
      queue_.pop_front();
      active_.push_back(n.shard);
      return n;
    }
    if (active_.empty() && splitting_.empty()) return {};
    if (may_split) {
      if (auto v = VictimLocked()) {
        splitting_.insert(v.get());
        return {Next::Kind::kSplit, std::move(v)};
      }
    }
    // Woken by a page (a victim may have appeared), a push, or an end.
    cv_.wait_for(lock, std::chrono::milliseconds(200));
  }
}

void ShardQueue::Done(const std::shared_ptr<LiveShard>& s) {
  std::lock_guard<std::mutex> lock(mu_);
  active_.erase(std::remove(active_.begin(), active_.end(), s), active_.end());
  cv_.notify_all();
}

void ShardQueue::SplitDone(const std::shared_ptr<LiveShard>& s) {
  std::lock_guard<std::mutex> lock(mu_);
  splitting_.erase(s.get());
  cv_.notify_all();
}

void ShardQueue::Progress() { cv_.notify_all(); }

void ShardQueue::Fail(const Status& s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_) error_ = s;
  failed_ = true;
  cv_.notify_all();
}

void ShardQueue::RequestFallback(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fallback_.empty()) fallback_ = why;
  cv_.notify_all();
}

bool ShardQueue::stopped() {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_ || !fallback_.empty();
}

Status ShardQueue::error() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

std::string ShardQueue::fallback() {
  std::lock_guard<std::mutex> lock(mu_);
  return fallback_;
}

}  // namespace ferry::migrate
