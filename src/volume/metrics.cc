#include "volume/metrics.h"

#include "base/prom_text.h"

namespace ferry::volume {

std::string RenderMetrics(const DaemonMetrics& m) {
  PromText t;
  auto per_volume = [&](const char* name, const char* type, const char* help, auto value) {
    t.Family(name, type, help);
    for (const auto& [v, s] : m.volumes) t.Sample(static_cast<double>(value(s)), {{"volume", v}});
  };
  per_volume("ferry_volume_chunks", "gauge", "Chunks of the volume.", [](const VolumeStats& s) { return s.chunks; });
  per_volume("ferry_volume_hydrated_chunks", "gauge", "Chunks present locally (hydrated or written).",
             [](const VolumeStats& s) { return s.present; });
  per_volume("ferry_volume_triggers_total", "counter", "Urgent fetches started by client I/O.",
             [](const VolumeStats& s) { return s.triggers; });
  per_volume("ferry_volume_fetched_bytes_total", "counter", "Chunk bytes received for the volume.",
             [](const VolumeStats& s) { return s.fetched_bytes; });
  per_volume("ferry_volume_bytes_from_origin_total", "counter", "Of those, bytes its fetches brought from the origin.",
             [](const VolumeStats& s) { return s.origin_bytes; });
  per_volume("ferry_volume_bytes_from_cache_total", "counter", "Of those, bytes the transfer cache had.",
             [](const VolumeStats& s) { return s.cache_bytes; });
  per_volume("ferry_volume_written_bytes_total", "counter", "Bytes clients wrote.",
             [](const VolumeStats& s) { return s.written_bytes; });
  per_volume("ferry_volume_fetch_errors_total", "counter", "Chunk fetches that failed.",
             [](const VolumeStats& s) { return s.fetch_errors; });
  per_volume("ferry_volume_bitmap_commits_total", "counter",
             "Group commits of the volume's bitmaps (each a write and a sync of a bitmap file).",
             [](const VolumeStats& s) { return s.bitmap_commits; });
  t.Family("ferry_volume_pool_hydration_bytes_per_second", "gauge", "Hydration bandwidth of the pool, lately.");
  for (const auto& p : m.pools) t.Sample(static_cast<double>(p.hydration_bps), {{"pool", p.dir}});
  t.Family("ferry_volume_pool_write_bytes_per_second", "gauge", "Client write bandwidth of the pool, lately.");
  for (const auto& p : m.pools) t.Sample(static_cast<double>(p.write_bps), {{"pool", p.dir}});
  t.Family("ferry_volume_hydration_backoffs_total", "counter", "Hydration pauses while the origin failed.")
      .Sample(static_cast<double>(m.hydration_backoffs));
  t.Family("ferry_volume_cache_hits_total", "counter", "Transfer cache hits.").Sample(static_cast<double>(m.cache.hits));
  t.Family("ferry_volume_cache_misses_total", "counter", "Transfer cache misses (fetched from the source).")
      .Sample(static_cast<double>(m.cache.misses));
  t.Family("ferry_volume_cache_coalesced_total", "counter", "Fetches that shared another's fetch of the same chunk.")
      .Sample(static_cast<double>(m.cache.coalesced));
  t.Family("ferry_volume_origin_bytes_total", "counter", "Chunk bytes fetched from the source behind the caches.")
      .Sample(static_cast<double>(m.cache.source_bytes));
  t.Family("ferry_volume_cache_stored_bytes", "gauge", "Compressed bytes the transfer caches hold.")
      .Sample(static_cast<double>(m.cache.stored_bytes));
  t.Family("ferry_volume_trigger_wait_seconds", "histogram",
           "How long client I/O waited for each missing chunk it touched (its trigger, or a fetch it joined).");
  t.Buckets(m.trigger_waits);
  return t.Take();
}

}  // namespace ferry::volume
