#include "volume/chunk_cache.h"

#include "codec/zstd_codec.h"

namespace ferry::volume {

ChunkCache::ChunkCache(ChunkSource* source, uint64_t max_bytes, int level)
    : source_(source), level_(level), max_bytes_(max_bytes), memory_(max_bytes), hot_(HotBytes(max_bytes)) {}

std::optional<std::string> ChunkCache::FromMemory(const std::string& hash) {
  if (auto hot = hot_.Get(hash)) {
    hits_++;
    hot_hits_++;
    (void)memory_.Get(hash);  // keeps its compressed copy recent too: the hottest must not go first there
    return *hot;
  }
  auto hit = memory_.Get(hash);
  if (!hit) return std::nullopt;
  auto plain = codec::ZstdDecompress(hit->zstd);
  if (!plain.ok() || plain->size() != hit->length) {
    memory_.Remove(hash);  // cannot happen short of memory damage: fetch again
    return std::nullopt;
  }
  hits_++;
  // Hit once since it was fetched: likely hit again soon (a boot storm's chunk).
  hot_.Put(hash, std::make_shared<const std::string>(*plain), plain->size() + hash.size() + 64);
  return std::move(plain).value();
}

Result<std::string> ChunkCache::Fetch(const std::string& hash, bool urgent) {
  ChunkOrigin ignored;
  return FetchWithOrigin(hash, urgent, &ignored);
}

Result<std::string> ChunkCache::FetchWithOrigin(const std::string& hash, bool urgent, ChunkOrigin* origin) {
  *origin = ChunkOrigin::kCache;  // unless this call is the one that goes to the source
  if (auto plain = FromMemory(hash)) return std::move(*plain);
  auto [fetched, led] = flights_.Do(hash, [&]() -> Fetched {
    // A flight for this chunk may have ended between the lookup above and
    // this one starting: look again before going to the source.
    if (auto plain = FromMemory(hash)) return std::make_shared<Result<std::string>>(std::move(*plain));
    misses_++;
    *origin = ChunkOrigin::kSource;
    auto got = source_->Fetch(hash, urgent);
    if (got.ok()) source_bytes_ += got->size();
    if (got.ok() && !Admit()) passed_++;
    if (got.ok() && Admit()) {
      auto z = codec::ZstdCompress(*got, level_);
      if (z.ok()) {
        auto c = std::make_shared<Compressed>();
        c->length = got->size();
        c->zstd = std::move(z).value();
        const uint64_t cost = c->zstd.size() + hash.size() + 64;
        memory_.Put(hash, std::move(c), cost);
      }
    }
    return std::make_shared<Result<std::string>>(std::move(got));
  });
  if (!led) coalesced_++;
  if (!fetched) return Status(ErrorCode::kInternal, "chunk fetch ended without a result");
  // The flight is over, so nobody new can take a reference: the last holder
  // takes the bytes without a copy.
  if (fetched.use_count() == 1) return std::move(*fetched);
  return *fetched;
}

ChunkCacheStats ChunkCache::stats() const {
  ChunkCacheStats s;
  s.hits = hits_;
  s.misses = misses_;
  s.coalesced = coalesced_;
  s.source_bytes = source_bytes_;
  s.stored_bytes = memory_.bytes();
  s.hot_bytes = hot_.bytes();
  s.hot_hits = hot_hits_;
  s.passed = passed_;
  return s;
}

}  // namespace ferry::volume
