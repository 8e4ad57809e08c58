#include "cache/hot_set.h"

#include <atomic>

namespace ferry::cache {

uint64_t NextObjectId() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

std::shared_ptr<const CachedObject> HotSet::Get(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.object;
}

void HotSet::EraseLocked(std::unordered_map<std::string, Node>::iterator it) {
  bytes_ -= Cost(*it->second.object);
  lru_.erase(it->second.lru);
  index_.erase(it);
}

void HotSet::Put(std::shared_ptr<const CachedObject> object) {
  const std::string& key = object->meta.key;
  std::lock_guard lock(mu_);
  auto it = index_.find(key);
  if (it != index_.end()) EraseLocked(it);
  uint64_t cost = Cost(*object);
  if (cost > max_bytes_) return;
  while (bytes_ + cost > max_bytes_ && !lru_.empty()) EraseLocked(index_.find(lru_.back()));
  lru_.push_front(key);
  bytes_ += cost;
  index_.emplace(key, Node{std::move(object), lru_.begin()});
}

void HotSet::Remove(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = index_.find(key);
  if (it != index_.end()) EraseLocked(it);
}

uint64_t HotSet::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

uint64_t HotSet::entries() const {
  std::lock_guard lock(mu_);
  return index_.size();
}

}  // namespace ferry::cache
