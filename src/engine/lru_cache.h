#pragma once
// A size-bounded LRU map from string keys to immutable, shared values: the
// memory tier of the HTTP cache (cache/hot_set.h) and the volumes' transfer
// cache (volume/chunk_cache.h). Each value is put with its cost (the bytes
// it holds, plus what the caller counts as overhead); past `max_bytes` the
// least recently used go. A reader keeps its value alive while it uses it,
// even if it is evicted or replaced meanwhile. Thread-safe.

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace ferry {

template <class V>
class LruCache {
 public:
  explicit LruCache(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // The value for `key`, now the most recently used; nullptr if absent.
  std::shared_ptr<const V> Get(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return it->second.value;
  }

  // Inserts or replaces; evicts the least recently used past the budget.
  // A value costing more than the whole budget is not kept (and one it
  // replaces is gone).
  void Put(const std::string& key, std::shared_ptr<const V> value, uint64_t cost) {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) EraseLocked(it);
    if (cost > max_bytes_) return;
    while (bytes_ + cost > max_bytes_ && !lru_.empty()) EraseLocked(index_.find(lru_.back()));
    lru_.push_front(key);
    bytes_ += cost;
    index_.emplace(key, Node{std::move(value), cost, lru_.begin()});
  }

  void Remove(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) EraseLocked(it);
  }

  uint64_t bytes() const {
    std::lock_guard lock(mu_);
    return bytes_;
  }
  uint64_t entries() const {
    std::lock_guard lock(mu_);
    return index_.size();
  }

 private:
  struct Node {
    std::shared_ptr<const V> value;
    uint64_t cost;
    std::list<std::string>::iterator lru;
  };
  using Index = std::unordered_map<std::string, Node>;

  void EraseLocked(typename Index::iterator it) {
    bytes_ -= it->second.cost;
    lru_.erase(it->second.lru);
    index_.erase(it);
  }

  const uint64_t max_bytes_;
  mutable std::mutex mu_;
  std::list<std::string> lru_;  // front = most recent; guarded by mu_
  Index index_;                 // guarded by mu_
  uint64_t bytes_ = 0;          // guarded by mu_
};

}  // namespace ferry
