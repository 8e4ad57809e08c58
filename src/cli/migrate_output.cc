#include "cli/migrate_output.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/unix_time.h"
#include "cli/cli_util.h"

namespace ferry::cli {
namespace {

using ojson = nlohmann::ordered_json;

void PutCounters(ojson& j, const state::JobCounters& c) {
  j["listed"] = c.listed;
  j["transferred"] = c.transferred;
  j["skipped"] = c.skipped;
  j["failed"] = c.failed;
  j["bytes"] = c.bytes;
}

// A recorded time, "-" when it was never set.

// A JSON string that is valid UTF-8 whatever the key holds.
ojson Str(const std::string& s) { return ojson(s); }

std::string Dump(const ojson& j) {
  return DumpJson(j);
}

}  // namespace

std::string SummaryJson(const state::JobRecord& job, const RunFigures& run) {
  ojson j;
  j["event"] = "summary";
  j["job"] = job.id;
  j["state"] = state::ToString(job.state);
  PutCounters(j, job.counters);
  j["pending"] = job.counters.pending;
  j["seconds"] = run.seconds;
  if (run.listing_seconds > 0) j["listing_seconds"] = run.listing_seconds;
  if (run.state_calls >= 0) {
    j["state_calls"] = run.state_calls;
    j["state_seconds"] = run.state_seconds;
  }
  if (!run.verify_json.empty()) {
    j["verify"] = ojson::parse(run.verify_json, nullptr, /*allow_exceptions=*/false);
  }
  if (!run.delete_json.empty()) {
    j["delete"] = ojson::parse(run.delete_json, nullptr, /*allow_exceptions=*/false);
  }
  return Dump(j);
}

std::string JobJson(const state::JobRecord& job) {
  ojson j;
  j["job"] = job.id;
  j["state"] = state::ToString(job.state);
  j["src"] = Str(job.src);
  j["dst"] = Str(job.dst);
  PutCounters(j, job.counters);
  j["pending"] = job.counters.pending;
  j["listing_done"] = job.listing_done;
  j["created"] = Rfc3339UtcOrDash(job.created_ms);
  j["started"] = Rfc3339UtcOrDash(job.started_ms);
  j["finished"] = Rfc3339UtcOrDash(job.finished_ms);
  j["run_seconds"] = job.run_seconds;
  j["runner"] = job.runner;
  j["archived"] = job.archived;
  if (job.archived) j["archived_at"] = Rfc3339UtcOrDash(job.archived_ms);
  return Dump(j);
}

std::string DeadLetterJson(const state::DeadLetter& d) {
  ojson j;
  j["key"] = Str(d.key);
  j["size"] = d.size;
  j["reason"] = d.reason;
  j["attempts"] = d.attempts;
  j["last_error"] = Str(d.last_error);
  j["at"] = Rfc3339UtcOrDash(d.at_ms);
  return Dump(j);
}

std::string ProgressJson(const std::string& job, const migrate::Progress& p) {
  ojson j;
  j["event"] = "progress";
  j["job"] = job;
  PutCounters(j, p.counters);
  j["pending"] = p.counters.pending;
  j["in_flight"] = p.in_flight;
  j["listing_done"] = p.listing_done;
  j["objects_per_s"] = p.objects_per_s;
  j["bytes_per_s"] = p.bytes_per_s;
  j["seconds"] = p.seconds;
  if (!p.circuits.empty()) j["circuits"] = p.circuits;
  j["throttles"] = p.throttles;
  j["src_concurrency"] = p.src_limit;
  j["dst_concurrency"] = p.dst_limit;
  return Dump(j);
}

std::string LiveJson(const migrate::Progress& p) {
  ojson j;
  j["in_flight"] = p.in_flight;
  j["circuits"] = p.circuits;
  j["src_concurrency"] = p.src_limit;
  j["dst_concurrency"] = p.dst_limit;
  j["throttles"] = p.throttles;
  j["retries"] = p.retries;
  j["objects_per_s"] = p.objects_per_s;
  j["bytes_per_s"] = p.bytes_per_s;
  return Dump(j);
}

std::string EventJson(const std::string& job, const migrate::Event& e) {
  ojson j;
  j["job"] = job;
  switch (e.kind) {
    case migrate::Event::Kind::kDeadLetter:
      j["event"] = "dead_letter";
      j["key"] = Str(e.key);
      j["reason"] = e.reason;
      j["attempts"] = e.attempts;
      j["last_error"] = Str(e.error);
      break;
    case migrate::Event::Kind::kCircuit:
      j["event"] = "circuit";
      j["circuits"] = e.reason;
      break;
    case migrate::Event::Kind::kListingDone:
      j["event"] = "listing_done";
      break;
    case migrate::Event::Kind::kWarning:
      j["event"] = "warning";
      j["message"] = Str(e.error);
      break;
  }
  return Dump(j);
}

std::string ProgressLine(const migrate::Progress& p) {
  const auto& c = p.counters;
  char buf[512];
  std::string eta = "?";
  int64_t left = c.listed - c.transferred - c.skipped - c.failed;
  if (p.listing_done && p.objects_per_s > 0.5) {
    int64_t s = static_cast<int64_t>(static_cast<double>(left) / p.objects_per_s);
    char e[32];
    std::snprintf(e, sizeof e, "%lld:%02lld", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
    eta = e;
  }
  std::snprintf(buf, sizeof buf,
                "listed %lld%s · done %lld · skipped %lld · failed %lld · in flight %lld · %s · "
                "%.0f obj/s · %s/s · ETA %s",
                static_cast<long long>(c.listed), p.listing_done ? "" : "+",
                static_cast<long long>(c.transferred), static_cast<long long>(c.skipped),
                static_cast<long long>(c.failed), static_cast<long long>(p.in_flight),
                HumanBytes(static_cast<uint64_t>(c.bytes)).c_str(), p.objects_per_s,
                HumanBytes(static_cast<uint64_t>(p.bytes_per_s)).c_str(), eta.c_str());
  std::string line = buf;
  if (p.throttles > 0) {
    line += " · throttled " + std::to_string(p.throttles) + " (limits " +
            std::to_string(p.src_limit) + "/" + std::to_string(p.dst_limit) + ")";
  }
  if (!p.circuits.empty()) line += " · circuit: " + p.circuits;
  return line;
}

std::string StatusText(const state::JobRecord& job) {
  const auto& c = job.counters;
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "job          %s\nstate        %s\nsource       %s\ndestination  %s\n"
      "listed       %lld%s\ntransferred  %lld\nskipped      %lld\nfailed       %lld (dead-letter "
      "queue)\npending      %lld\nbytes        %s\ncreated      %s\nstarted      %s\n"
      "finished     %s\nrun time     %.1fs\n",
      job.id.c_str(), state::ToString(job.state), job.src.c_str(), job.dst.c_str(),
      static_cast<long long>(c.listed), job.listing_done ? "" : " (listing in progress)",
      static_cast<long long>(c.transferred), static_cast<long long>(c.skipped),
      static_cast<long long>(c.failed), static_cast<long long>(c.pending),
      HumanBytes(static_cast<uint64_t>(c.bytes)).c_str(), Rfc3339UtcOrDash(job.created_ms).c_str(),
      Rfc3339UtcOrDash(job.started_ms).c_str(), Rfc3339UtcOrDash(job.finished_ms).c_str(), job.run_seconds);
  std::string out = buf;
  if (!job.runner.empty()) out += "runner       " + job.runner + "\n";
  if (job.archived) out += "archived     " + Rfc3339UtcOrDash(job.archived_ms) + "\n";
  return out;
}

std::string DifferenceJson(const migrate::Difference& d) {
  ojson j;
  j["event"] = "difference";
  j["kind"] = migrate::ToString(d.kind);
  j["key"] = Str(d.key);
  if (d.kind != migrate::Difference::Kind::kExtra) j["src_size"] = d.src_size;
  if (d.kind != migrate::Difference::Kind::kMissing) j["dst_size"] = d.dst_size;
  if (!d.why.empty()) j["why"] = Str(d.why);
  return Dump(j);
}

std::string DifferenceLine(const migrate::Difference& d) {
  std::string line = migrate::ToString(d.kind);
  line.resize(9, ' ');
  line += d.key;
  if (!d.why.empty()) line += ": " + d.why;
  return line;
}

std::string VerifyJson(const migrate::VerifyCounts& c) {
  ojson j;
  j["event"] = "verify";
  j["ok"] = c.ok();
  j["matched"] = c.matched;
  j["missing"] = c.missing;
  j["differing"] = c.differing;
  j["extra"] = c.extra;
  j["by_md5"] = c.by_md5;
  j["by_checksum"] = c.by_checksum;
  j["by_size_time"] = c.by_size_time;
  j["lookups"] = c.lookups;
  j["bytes_hashed"] = c.bytes_hashed;
  j["sorted_on_disk"] = c.sorted_on_disk;
  j["seconds"] = c.seconds;
  return Dump(j);
}

std::string VerifyLine(const migrate::VerifyCounts& c) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "verify: %lld matched, %lld missing, %lld different, %lld only at the destination "
                "(by md5 %lld, checksum %lld, size and time %lld)%s in %.1fs",
                static_cast<long long>(c.matched), static_cast<long long>(c.missing),
                static_cast<long long>(c.differing), static_cast<long long>(c.extra),
                static_cast<long long>(c.by_md5), static_cast<long long>(c.by_checksum),
                static_cast<long long>(c.by_size_time), c.sorted_on_disk ? ", sorted on disk" : "",
                c.seconds);
  return buf;
}

}  // namespace ferry::cli
