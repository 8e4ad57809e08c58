// ferry-nbd-replay: plays a recorded NBD session (nbd/trace.h) as many
// guests at once, or checks afterwards that their acknowledged changes
// are there. For tests and benchmarks (never installed).
//
//   ferry-nbd-replay --trace T --nbd 127.0.0.1:P [--nbd ...] --guests N
//       [--export 'v-{i}'] [--ramp-ms MS] [--threads T] [--time-scale X]
//       [--check-image IMG] [--write-log FILE] [--timeout S]
//   ferry-nbd-replay --verify-writes FILE --nbd ... [--export ...]
//
// Guest g talks to server g mod S (S = the --nbd count), to the export
// named by --export with {i} = g / S: with 8 daemons of 1,000 volumes
// v-0..v-999 each, 8,000 guests each have a volume of their own. Prints
// one JSON object on stdout; exits 1 when a guest failed, a read differed
// from --check-image or an acknowledged change was lost.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/process_limits.h"
#include "nbd/test_client.h"
#include "replay.h"
#include "verify.h"

namespace {

using ferry::Result;
using ferry::Status;
using nlohmann::json;
namespace replay = ferry::replay;

struct Args {
  std::string trace, export_pattern = "v-{i}", check_image, write_log, verify_writes, progress;
  std::vector<std::string> nbd;
  int guests = 1, threads = 2, ramp_ms = 0, timeout_s = 600;
  uint64_t offset = 0;
  double time_scale = 1.0;
};

struct Server {
  std::string host;
  uint16_t port = 0;
};

Result<std::vector<Server>> ParseServers(const std::vector<std::string>& list) {
  std::vector<Server> out;
  for (const std::string& s : list) {
    size_t colon = s.rfind(':');
    int port = colon == std::string::npos ? 0 : std::atoi(s.c_str() + colon + 1);
    if (colon == std::string::npos || port <= 0 || port > 65535) {
      return Status::InvalidArgument("--nbd " + s + ": not HOST:PORT");
    }
    out.push_back({s.substr(0, colon), static_cast<uint16_t>(port)});
  }
  return out;
}

std::string ExportName(const std::string& pattern, uint64_t i) {
  std::string name = pattern;
  size_t at = name.find("{i}");
  if (at != std::string::npos) name.replace(at, 3, std::to_string(i));
  return name;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The q-quantile of `v` (sorted here).
template <typename T>
double Quantile(std::vector<T>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  return static_cast<double>(v[i]);
}

json Summary(std::vector<replay::GuestResult>& results, double wall_ms) {
  std::vector<double> boot, connect;
  std::vector<float> reads;
  uint64_t requests = 0, read_bytes = 0, written = 0, checked = 0, mismatches = 0;
  std::map<std::string, int> errors;
  for (auto& r : results) {
    requests += r.requests;
    read_bytes += r.read_bytes;
    written += r.written_bytes;
    checked += r.reads_checked;
    mismatches += r.read_mismatches;
    reads.insert(reads.end(), r.read_ms.begin(), r.read_ms.end());
    if (!r.ok) {
      ++errors[r.error];
      continue;
    }
    boot.push_back(r.boot_ms);
    connect.push_back(r.connect_ms);
  }
  json errs = json::object();
  for (const auto& [e, n] : errors) errs[e] = n;
  return {{"guests", results.size()},
          {"ok", boot.size()},
          {"failed", results.size() - boot.size()},
          {"errors", errs},
          {"wall_ms", wall_ms},
          {"boot_ms",
           {{"min", Quantile(boot, 0)},
            {"p50", Quantile(boot, 0.5)},
            {"p99", Quantile(boot, 0.99)},
            {"max", boot.empty() ? 0 : boot.back()}}},
          {"connect_ms", {{"p50", Quantile(connect, 0.5)}, {"p99", Quantile(connect, 0.99)}}},
          {"read_ms",
           {{"count", reads.size()},
            {"p50", Quantile(reads, 0.5)},
            {"p99", Quantile(reads, 0.99)},
            {"max", reads.empty() ? 0 : reads.back()}}},
          {"requests", requests},
          {"read_bytes", read_bytes},
          {"written_bytes", written},
          {"reads_checked", checked},
          {"read_mismatches", mismatches}};
}

int Replay(const Args& a, const std::vector<Server>& servers) {
  auto text = ReadFile(a.trace);
  if (!text.ok())
    return std::fprintf(stderr, "ferry-nbd-replay: %s\n", text.status().message().c_str()), 2;
  auto trace = ferry::nbd::ParseTrace(*text);
  if (!trace.ok()) {
    return std::fprintf(stderr, "ferry-nbd-replay: %s: %s\n", a.trace.c_str(),
                        trace.status().message().c_str()),
           2;
  }
  for (auto& r : trace->records) {  // --offset (a flush has none)
    if (r.op != ferry::nbd::TraceOp::kFlush) r.offset += a.offset;
  }
  replay::ReplayOptions o;
  o.trace = &*trace;
  o.threads = a.threads;
  o.time_scale = a.time_scale;
  o.timeout = std::chrono::seconds(a.timeout_s);
  std::string image;
  if (!a.check_image.empty()) {
    auto bytes = ReadFile(a.check_image);
    if (!bytes.ok())
      return std::fprintf(stderr, "ferry-nbd-replay: %s\n", bytes.status().message().c_str()), 2;
    image = std::move(*bytes);
    o.image = image;
  }
  for (int g = 0; g < a.guests; ++g) {
    const Server& s = servers[static_cast<size_t>(g) % servers.size()];
    replay::GuestSpec spec;
    spec.id = static_cast<uint64_t>(g);
    spec.host = s.host;
    spec.port = s.port;
    spec.export_name = ExportName(a.export_pattern, static_cast<uint64_t>(g) / servers.size());
    spec.start =
        std::chrono::milliseconds(a.guests > 1 ? int64_t{a.ramp_ms} * g / (a.guests - 1) : 0);
    o.guests.push_back(spec);
  }
  // --progress: the count of acknowledged changes, rewritten every 100 ms.
  std::atomic<uint64_t> acked{0};
  std::atomic<bool> done{false};
  o.acked_changes = &acked;
  std::thread watcher([&] {
    while (!a.progress.empty() && !done) {
      std::ofstream(a.progress + ".tmp", std::ios::trunc) << "acked " << acked.load() << "\n";
      std::rename((a.progress + ".tmp").c_str(), a.progress.c_str());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  auto t0 = std::chrono::steady_clock::now();
  auto results = replay::RunReplay(o);
  done = true;
  watcher.join();
  double wall =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!a.write_log.empty()) {
    std::ofstream log(a.write_log, std::ios::trunc);
    for (size_t g = 0; g < results.size(); ++g) {
      for (const auto& w : results[g].writes) log << replay::WriteLogLine(g, w);
    }
    if (!log.flush())
      return std::fprintf(stderr, "ferry-nbd-replay: %s: cannot write\n", a.write_log.c_str()), 2;
  }
  json j = Summary(results, wall);
  std::printf("%s\n", j.dump().c_str());
  return j["failed"] == 0 && j["read_mismatches"] == 0 ? 0 : 1;
}

int Verify(const Args& a, const std::vector<Server>& servers) {
  auto text = ReadFile(a.verify_writes);
  if (!text.ok())
    return std::fprintf(stderr, "ferry-nbd-replay: %s\n", text.status().message().c_str()), 2;
  auto log = replay::ParseWriteLog(*text);
  if (!log.ok()) {
    return std::fprintf(stderr, "ferry-nbd-replay: %s: %s\n", a.verify_writes.c_str(),
                        log.status().message().c_str()),
           2;
  }
  replay::VerifyCounts counts;
  for (const auto& [guest, changes] : *log) {
    const Server& s = servers[guest % servers.size()];
    std::string name = ExportName(a.export_pattern, guest / servers.size()), error;
    auto c = ferry::nbd::TestClient::Connect(s.port, name, false, &error);
    if (!c)
      return std::fprintf(stderr, "ferry-nbd-replay: %s: %s\n", name.c_str(), error.c_str()), 1;
    uint64_t handle = 0;
    auto read = [&](uint64_t offset, uint64_t length) -> Result<std::string> {
      ferry::nbd::Request r;
      r.type = ferry::nbd::kCmdRead;
      r.handle = ++handle;
      r.offset = offset;
      r.length = static_cast<uint32_t>(length);
      ferry::nbd::TestClient::Reply reply;
      if (!c->Send(r) || !c->Receive(&reply, r.length) || reply.error != 0) {
        return Status::IoError(name + ": a read at " + std::to_string(offset) + " failed");
      }
      return std::move(reply.payload);
    };
    Status st = replay::VerifyGuest(guest, changes, read, &counts);
    if (!st.ok()) return std::fprintf(stderr, "ferry-nbd-replay: %s\n", st.message().c_str()), 1;
  }
  json j = {{"guests", log->size()},
            {"changes_acked", counts.changes},
            {"sectors_checked", counts.sectors},
            {"sectors_lost", counts.lost}};
  if (counts.lost) j["first_loss"] = counts.first_loss;
  std::printf("%s\n", j.dump().c_str());
  return counts.lost == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Replays a recorded NBD session as many guests, or verifies their writes"};
  app.add_option("--trace", a.trace, "The recorded session (ferry volume serve --trace-dir)");
  app.add_option("--nbd", a.nbd, "An NBD server, HOST:PORT (repeatable; guests go round them)")
      ->required();
  app.add_option("--export", a.export_pattern,
                 "Export names; {i} is the guest's index on its server")
      ->capture_default_str();
  app.add_option("--guests", a.guests, "How many guests")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--ramp-ms", a.ramp_ms, "Guests start evenly over this many ms")
      ->capture_default_str();
  app.add_option("--threads", a.threads, "Event loops")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--offset", a.offset,
                 "Bytes added to every request's offset (the recorded disk placed further into the export)")
      ->capture_default_str();
  app.add_option("--time-scale", a.time_scale, "Think times times this (0: none)")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  app.add_option("--check-image", a.check_image,
                 "Compare every read with this image where the guest has not written");
  app.add_option("--write-log", a.write_log,
                 "Write every change's fate here (for --verify-writes)");
  app.add_option("--progress", a.progress,
                 "Keep \"acked N\" (changes acknowledged so far) in this file");
  app.add_option("--timeout", a.timeout_s, "Seconds a guest may take")->capture_default_str();
  app.add_option("--verify-writes", a.verify_writes,
                 "Check the changes of this write log instead of replaying");
  CLI11_PARSE(app, argc, argv);
  ferry::RaiseOpenFileLimit();  // a connection per guest
  auto servers = ParseServers(a.nbd);
  if (!servers.ok())
    return std::fprintf(stderr, "ferry-nbd-replay: %s\n", servers.status().message().c_str()), 2;
  if (!a.verify_writes.empty()) return Verify(a, *servers);
  if (a.trace.empty())
    return std::fprintf(stderr, "ferry-nbd-replay: give --trace or --verify-writes\n"), 2;
  return Replay(a, *servers);
}
