// Proxy's compression behind fills: a small eligible body is answered as
// it came, held in pending_ (and the memory tier) while the FillEncoder
// compresses it with others, and stored by the encoder's sink, unless a
// newer version, a 304's refresh or a PURGE came meanwhile.
//
// Ordering: whoever stores a key drops its pending entry first
// (DropPending, in Keep and Forget), and DropPending waits while the sink
// stores that key, so the newer object is always stored last. The sink
// does not hold pending_mu_ while it writes (a turn's entries, then one
// disk sync): only those keys' droppers wait for it.
#include <spdlog/spdlog.h>

#include "cache/proxy_internal.h"

namespace ferry::cache {

void Proxy::WaitWhileStoring(std::unique_lock<std::mutex>& lock, const std::string& key) {
  pending_stored_.wait(lock, [&] {
    auto it = pending_.find(key);
    return it == pending_.end() || !it->second.storing;
  });
}

bool Proxy::EncodeBehind(const std::shared_ptr<CachedObject>& object) {
  if (!encoder_ || object->body.size() > options_.encode_behind_max) return false;
  Prepare(object.get(), options_.cache);
  std::shared_ptr<const CachedObject> shared = object;
  const std::string& key = shared->meta.key;
  std::unique_lock lock(pending_mu_);
  WaitWhileStoring(lock, key);  // an older version's store ends first (else it would land after this one)
  // Queued before it is published: refused, nothing was shared.
  if (!encoder_->Submit(shared)) return false;
  pending_[key] = PendingEncode{shared, false};
  hot_.Put(shared);  // under the lock: a newer Keep of the key comes after
  return true;
}

bool Proxy::DropPending(const std::string& key) {
  std::unique_lock lock(pending_mu_);
  WaitWhileStoring(lock, key);
  return pending_.erase(key) > 0;
}

std::shared_ptr<const CachedObject> Proxy::InMemory(const std::string& key) {
  if (auto object = hot_.Get(key)) return object;
  // One waiting for its compression, when the memory tier let it go (or has no room at all).
  std::lock_guard lock(pending_mu_);
  auto it = pending_.find(key);
  return it == pending_.end() ? nullptr : it->second.object;
}

// A turn's results: each still pending is marked `storing`, stored (one
// disk sync for the turn), then released.
void Proxy::FinishEncode(std::vector<FillEncoder::Done> turn) {
  std::vector<FillEncoder::Done*> current;
  {
    std::lock_guard lock(pending_mu_);
    for (auto& d : turn) {
      if (d.frame.ok()) {  // the encoder's work, whether or not it is kept
        counters_.encode_ns += d.cpu_ns;
        counters_.encode_bytes += d.plain->body.size();
        counters_.encode_behind++;
      }
      auto it = pending_.find(d.plain->meta.key);
      if (it == pending_.end() || it->second.object != d.plain || it->second.storing) continue;  // replaced, purged
      it->second.storing = true;
      current.push_back(&d);
    }
  }
  for (FillEncoder::Done* d : current) StoreEncoded(d);
  if (!current.empty()) {
    Status st = store_->SyncAppends();
    if (!st.ok()) spdlog::warn("cache: syncing entries compressed behind their fills: {}", st.ToString());
  }
  {
    std::lock_guard lock(pending_mu_);
    for (FillEncoder::Done* d : current) {
      auto it = pending_.find(d->plain->meta.key);
      if (it != pending_.end() && it->second.object == d->plain) pending_.erase(it);
    }
  }
  pending_stored_.notify_all();
}

void Proxy::StoreEncoded(FillEncoder::Done* done) {
  const std::shared_ptr<const CachedObject>& plain = done->plain;
  std::shared_ptr<const CachedObject> stored = plain;  // not compressible after all: as it came
  if (done->frame.ok()) {
    auto object = std::make_shared<CachedObject>();
    object->meta = plain->meta;
    object->shareable = plain->shareable;
    object->body = std::move(done->frame).value();
    object->meta.encoding = StoredEncoding::kZstd;
    object->meta.stored_length = object->body.size();
    Prepare(object.get(), options_.cache);
    object->id = plain->id;  // the same version: `plain` serves as its decoded copy
    stored = std::move(object);
  }
  if (!Store(stored, /*sync=*/false)) return;
  counters_.logical_bytes += stored->meta.logical_length;
  counters_.stored_bytes += stored->body.size();
  if (stored->heuristic) counters_.heuristic_entries++;
  if (stored != plain) decoded_.Put(plain);
}

}  // namespace ferry::cache
