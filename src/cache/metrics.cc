#include "cache/metrics.h"

#include <fmt/format.h>

namespace ferry::cache {

MetricsSnapshot Snapshot(const ProxyCounters& c) {
  MetricsSnapshot m;
  m.hits = c.hits;
  m.misses = c.misses;
  m.expired = c.expired;
  m.stale = c.stale;
  m.bypass = c.bypass;
  m.coalesced = c.coalesced;
  m.origin_fetches = c.origin_fetches;
  m.parent_failovers = c.parent_failovers;
  m.upstream_bytes = c.upstream_bytes;
  m.errors = c.errors;
  m.purges = c.purges;
  m.store_failures = c.store_failures;
  m.logical_bytes = c.logical_bytes;
  m.heuristic_entries = c.heuristic_entries;
  for (size_t i = 0; i < kCodings; ++i) {
    m.coding_responses[i] = c.coding_responses[i];
    m.coding_bytes[i] = c.coding_bytes[i];
    m.coding_encode_ns[i] = c.coding_encode_ns[i];
    m.coding_encode_bytes[i] = c.coding_encode_bytes[i];
  }
  m.heuristic_hits = c.heuristic_hits;
  m.stored_bytes = c.stored_bytes;
  m.encode_ns = c.encode_ns;
  m.encode_bytes = c.encode_bytes;
  m.encode_behind = c.encode_behind;
  m.decode_ns = c.decode_ns;
  m.decode_bytes = c.decode_bytes;
  m.requests_h1 = c.requests_h1;
  m.requests_h2 = c.requests_h2;
  m.big_fills = c.big_fills;
  m.big_read_bytes = c.big_read_bytes;
  m.dictionaries_kept = c.dictionaries_kept;
  m.dictionary_misses = c.dictionary_misses;
  return m;
}

namespace {

void Metric(std::string* out, const char* name, const char* type, const char* help, double value,
            const char* labels = "") {
  fmt::format_to(std::back_inserter(*out), "# HELP {} {}\n# TYPE {} {}\n{}{} {}\n", name, help, name, type,
                 name, labels, value);
}

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

double Ratio(uint64_t a, uint64_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b); }

// How densely the disk holds what it keeps, and what segments and big
// objects cost and did.
void RenderDiskMetrics(std::string* out, const MetricsSnapshot& m) {
  Metric(out, "ferry_cache_disk_logical_bytes", "gauge", "Bytes the entries on disk decode to.",
         m.disk_logical_bytes);
  Metric(out, "ferry_cache_disk_allocated_bytes", "gauge",
         "Disk blocks the store holds (st_blocks * 512 of segments and big objects).", m.disk_allocated_bytes);
  Metric(out, "ferry_cache_disk_logical_per_allocated", "gauge",
         "Logical bytes on disk / allocated bytes (compression and packing together).",
         Ratio(m.disk_logical_bytes, m.disk_allocated_bytes));
  Metric(out, "ferry_cache_disk_big_entries", "gauge", "Big objects on disk (seekable frames).",
         m.disk_big_entries);
  Metric(out, "ferry_cache_disk_segments", "gauge", "Segment files.", m.disk_segments);
  Metric(out, "ferry_cache_disk_segment_bytes", "gauge", "Bytes of segment files, dead records included.",
         m.disk_segment_bytes);
  Metric(out, "ferry_cache_torn_records_total", "counter",
         "Segment tails cut short by a crash mid-append, found on open and dropped.", m.torn);
  Metric(out, "ferry_cache_torn_bytes_total", "counter", "Bytes of those torn tails.", m.torn_bytes);
  Metric(out, "ferry_cache_compactions_total", "counter", "Sparse segments compacted and deleted.",
         m.compactions);
  Metric(out, "ferry_cache_compacted_bytes_total", "counter", "Live record bytes copied forward by compaction.",
         m.compacted_bytes);
  Metric(out, "ferry_cache_refreshes_total", "counter",
         "Revalidations (304s) stored as new metadata only, the body left where it was.", m.refreshes);
  Metric(out, "ferry_cache_refresh_bytes_total", "counter",
         "Bytes those revalidations wrote (refresh records): per revalidation, this / refreshes.",
         m.refresh_bytes);
  Metric(out, "ferry_cache_dictionaries_kept_total", "counter",
         "Answers kept as compression dictionaries (RFC 9842 Use-As-Dictionary).", m.dictionaries_kept);
  Metric(out, "ferry_cache_dictionary_misses_total", "counter",
         "Requests naming a dictionary (Available-Dictionary) the cache does not know or that does not apply to them.",
         m.dictionary_misses);
  Metric(out, "ferry_cache_dictionaries", "gauge", "Compression dictionaries known in memory.", m.dictionaries);
  Metric(out, "ferry_cache_trained_dictionaries_total", "counter",
         "Dictionaries trained on small bodies (per content class), stored beside the entries.",
         m.trained_dictionaries);
  Metric(out, "ferry_cache_trained_entries_total", "counter",
         "Bodies under --min-size stored compressed with a trained dictionary.", m.trained_entries);
  Metric(out, "ferry_cache_big_fills_total", "counter", "Big objects written to disk as they streamed.",
         m.big_fills);
  Metric(out, "ferry_cache_big_read_bytes_total", "counter", "Stored bytes of big objects read for answers.",
         m.big_read_bytes);
}

// zstd on fill and for identity clients; answers by coding, and the br /
// gzip variants' encoding.
void RenderCodingMetrics(std::string* o, const MetricsSnapshot& m) {
  std::string& out = *o;
  Metric(&out, "ferry_cache_encode_bytes_total", "counter", "Bytes zstd-encoded on fill.", m.encode_bytes);
  // CPU time as counters in seconds (Prometheus's base unit): per byte is
  // rate(..._cpu_seconds_total) / rate(..._bytes_total).
  Metric(&out, "ferry_cache_encode_cpu_seconds_total", "counter",
         "zstd encode CPU time on fill, the encoder's and the filling threads' (ns per byte: 1e9 * this / "
         "ferry_cache_encode_bytes_total).",
         Seconds(m.encode_ns));
  Metric(&out, "ferry_cache_encode_behind_total", "counter",
         "Fill bodies zstd-encoded behind their fills (--compress-behind), then stored unless a newer version or a "
         "PURGE came first.", m.encode_behind);
  Metric(&out, "ferry_cache_encode_batches_total", "counter",
         "Turns of the encoder behind fills: bodies / turns is its batch size.", m.encode_batches);
  Metric(&out, "ferry_cache_decode_bytes_total", "counter",
         "Bytes zstd-decoded for identity clients (of a big object: the frames an answer covers).",
         m.decode_bytes);
  Metric(&out, "ferry_cache_decode_cpu_seconds_total", "counter", "zstd decode CPU time for identity clients.",
         Seconds(m.decode_ns));
  auto by_coding = [&](const char* name, const char* type, const char* help, auto value, bool coded_only) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    for (size_t i = coded_only ? 2 : 0; i < kCodings; ++i) {
      fmt::format_to(std::back_inserter(out), "{}{{encoding=\"{}\"}} {}\n", name, kCodingNames[i], value(i));
    }
  };
  by_coding("ferry_cache_responses_total", "counter", "Answers to clients by content coding.",
            [&](size_t i) { return m.coding_responses[i]; }, false);
  by_coding("ferry_cache_response_bytes_total", "counter", "Body bytes sent to clients by content coding.",
            [&](size_t i) { return m.coding_bytes[i]; }, false);
  by_coding("ferry_cache_variant_encode_bytes_total", "counter",
            "Bytes encoded into br, gzip and dcz variants of stored entries.",
            [&](size_t i) { return m.coding_encode_bytes[i]; }, true);
  by_coding("ferry_cache_variant_encode_cpu_seconds_total", "counter", "br, gzip and dcz variant encode CPU time.",
            [&](size_t i) { return Seconds(m.coding_encode_ns[i]); }, true);
}

}  // namespace

std::string RenderMetrics(const MetricsSnapshot& m) {
  std::string out;
  out += "# HELP ferry_cache_requests_total Requests by cache result (X-Cache).\n"
         "# TYPE ferry_cache_requests_total counter\n";
  const std::pair<const char*, uint64_t> results[] = {{"hit", m.hits},       {"miss", m.misses},
                                                      {"expired", m.expired}, {"stale", m.stale},
                                                      {"bypass", m.bypass}};
  for (const auto& [label, v] : results) {
    fmt::format_to(std::back_inserter(out), "ferry_cache_requests_total{{result=\"{}\"}} {}\n", label, v);
  }
  out += "# HELP ferry_cache_http_requests_total Requests received, by protocol (HTTP/1.x, HTTP/2).\n"
         "# TYPE ferry_cache_http_requests_total counter\n";
  fmt::format_to(std::back_inserter(out), "ferry_cache_http_requests_total{{protocol=\"h1\"}} {}\n", m.requests_h1);
  fmt::format_to(std::back_inserter(out), "ferry_cache_http_requests_total{{protocol=\"h2\"}} {}\n", m.requests_h2);
  Metric(&out, "ferry_cache_coalesced_total", "counter",
         "Requests answered by another request's fill of the same key.", m.coalesced);
  Metric(&out, "ferry_cache_origin_fetches_total", "counter", "Requests sent upstream (origin or parent).",
         m.origin_fetches);
  Metric(&out, "ferry_cache_parent_failovers_total", "counter",
         "Fills sent on to a key's next parent tier: its first choice could not be reached.", m.parent_failovers);
  Metric(&out, "ferry_cache_upstream_bytes_total", "counter", "Body bytes received from upstream.",
         m.upstream_bytes);
  Metric(&out, "ferry_cache_errors_total", "counter", "Error answers the cache generated.", m.errors);
  Metric(&out, "ferry_cache_purges_total", "counter", "Entries removed by PURGE.", m.purges);
  Metric(&out, "ferry_cache_store_failures_total", "counter", "Entries that could not be written.",
         m.store_failures);
  Metric(&out, "ferry_cache_logical_bytes_total", "counter", "Logical bytes of entries written.",
         m.logical_bytes);
  Metric(&out, "ferry_cache_stored_bytes_total", "counter", "Stored bytes of entries written.", m.stored_bytes);
  Metric(&out, "ferry_cache_heuristic_entries_total", "counter",
         "Entries written fresh by heuristic (RFC 9111 4.2.2: a fraction of their Last-Modified age).",
         m.heuristic_entries);
  Metric(&out, "ferry_cache_heuristic_hits_total", "counter", "Hits on entries fresh by heuristic.",
         m.heuristic_hits);
  Metric(&out, "ferry_cache_compression_ratio", "gauge", "Logical / stored bytes of entries written.",
         Ratio(m.logical_bytes, m.stored_bytes));
  RenderCodingMetrics(&out, m);
  Metric(&out, "ferry_cache_evictions_total", "counter", "Entries evicted from disk (LRU).", m.evictions);
  Metric(&out, "ferry_cache_corrupt_entries_total", "counter", "Damaged entries found and removed.", m.corrupt);
  Metric(&out, "ferry_cache_disk_entries", "gauge", "Entries on disk.", m.disk_entries);
  Metric(&out, "ferry_cache_disk_bytes", "gauge", "Bytes of live entries on disk (records and big objects).",
         m.disk_bytes);
  RenderDiskMetrics(&out, m);
  Metric(&out, "ferry_cache_memory_entries", "gauge", "Stored entries in the memory tier.", m.memory_entries);
  Metric(&out, "ferry_cache_memory_bytes", "gauge", "Bytes in the memory tier (stored entries and decoded copies).", m.memory_bytes);
  Metric(&out, "ferry_cache_upstream_threads", "gauge", "Threads of the upstream exchange pool.",
         m.upstream_threads);
  Metric(&out, "ferry_cache_upstream_exchanges_running", "gauge", "Upstream exchanges running.",
         m.upstream_running);
  Metric(&out, "ferry_cache_upstream_exchanges_queued", "gauge", "Upstream exchanges waiting for a thread.",
         m.upstream_queued);
  Metric(&out, "ferry_cache_upstream_rejected_total", "counter",
         "Upstream exchanges refused (pool and queue full; answered 503).", m.upstream_rejected);
  return out;
}

}  // namespace ferry::cache
