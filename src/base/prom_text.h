#pragma once
// Prometheus's text exposition format (0.0.4), as every ferry daemon serves
// its metrics: each family with its # HELP and # TYPE lines, then its
// samples, label values escaped (\\, \" and \n). Names follow Prometheus's
// conventions, which `promtool check metrics` checks in the tests: base
// units (_seconds, _bytes), counters ending in _total.
//
//   PromText t;
//   t.Family("ferry_x_requests_total", "counter", "Requests.").Sample(7, {{"result", "hit"}});
//   t.Family("ferry_x_latency_seconds", "histogram", "Latency.").Buckets(bounds, counts, overflow,
//   sum); std::string body = t.Take();

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/latency_histogram.h"

namespace ferry {

class PromText {
 public:
  using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

  // Starts a family; the samples that follow belong to it.
  PromText& Family(std::string_view name, std::string_view type, std::string_view help);
  // One sample of the current family.
  PromText& Sample(double value, Labels labels = {});
  // One histogram of the current family (a "histogram" Family): `counts[i]`
  // observations at most `bounds[i]` (not cumulative; bounds ascending),
  // `overflow` above the last, `sum` of all observations.
  PromText& Buckets(const std::vector<double>& bounds, const std::vector<uint64_t>& counts,
                    uint64_t overflow, double sum, Labels labels = {});
  // A LatencyHistogram's snapshot, in its fixed bounds.
  PromText& Buckets(const LatencyHistogram::Snapshot& h, Labels labels = {});

  std::string Take() { return std::move(out_); }

 private:
  void Line(std::string_view suffix, double value, Labels labels, std::string_view le = {});
  std::string out_;
  std::string family_;
};

}  // namespace ferry
