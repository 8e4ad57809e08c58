// ferry-test-s3: the project's S3-compatible server for tests and benchmarks.
// See README.md beside this file for flags and the admin API.

#include <malloc.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "base/process_limits.h"
#include "dir_store.h"
#include "faults.h"
#include "server.h"
#include "service.h"

namespace {

// --retain-memory: object memory (up to 32 MiB a piece) comes from one
// heap and stays there when freed, for the next objects. Memory the kernel
// hands out anew must be zeroed first, which made page faults the in-memory
// server's largest cost in a benchmark that refills a cleared bucket; with
// this, a warmed-up server (filled once, then POST /_admin/clear) pays it
// for no run.
void RetainMemory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, -1);  // never trim
  mallopt(M_ARENA_MAX, 1);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::s3server;
  CLI::App app{"ferry-test-s3: S3-compatible test server (tests and benchmarks only)"};

  ServerOptions server;
  ServiceOptions service_opts;
  FaultConfig faults;
  std::string dir;
  std::string fault_kind = "none";
  std::vector<std::string> fault_rules;
  std::optional<uint64_t> fault_seed;
  std::vector<std::string> list_quirks;
  bool no_auth = false;
  bool retain_memory = false;
  int idle_timeout_s = static_cast<int>(server.idle_timeout.count());
  int io_timeout_s = static_cast<int>(server.io_timeout.count());

  app.add_option("--listen", server.listen, "HOST:PORT to listen on (port 0: pick one)")
      ->capture_default_str();
  app.add_flag("--allow-remote", server.allow_remote, "allow a non-loopback --listen address");
  app.add_option("--dir", dir, "keep objects in this directory (default: in memory)");
  app.add_option("--bucket", service_opts.buckets, "bucket to create at start (repeatable)");
  app.add_option("--access-key", service_opts.auth.access_key, "accepted access key id")
      ->capture_default_str();
  app.add_option("--secret-key", service_opts.auth.secret_key, "its secret key")
      ->capture_default_str();
  app.add_option("--session-token", service_opts.auth.session_token,
                 "require this x-amz-security-token");
  app.add_flag("--no-auth", no_auth, "accept requests without checking signatures");
  app.add_option("--signing-region", service_opts.auth.signing_region,
                 "refuse signatures scoped to any other region (default: accept any)");
  app.add_option("--region", service_opts.region, "region reported to clients")
      ->capture_default_str();
  app.add_option("--min-part-size", service_opts.min_part_size,
                 "minimum size of every multipart part but the last, bytes")
      ->capture_default_str();
  app.add_flag("--tls", server.tls, "serve HTTPS with a generated self-signed certificate");
  app.add_option("--cert-out", server.cert_out, "write the --tls certificate PEM here");
  app.add_option("--port-file", server.port_file, "write the bound port here");
  app.add_option("--threads", server.threads, "I/O threads")->capture_default_str();
  app.add_flag("--retain-memory", retain_memory,
               "keep freed object memory for reuse (benchmarks; see README)");
  app.add_option("--idle-timeout-s", idle_timeout_s, "keep-alive idle timeout, seconds")
      ->capture_default_str();
  app.add_option("--io-timeout-s", io_timeout_s, "deadline of each socket operation, seconds")
      ->capture_default_str();
  app.add_flag("-v,--verbose", server.verbose, "log every request to stderr");

  app.add_option("--latency-ms", faults.latency_ms, "fixed latency added to each request");
  app.add_option("--latency-jitter-ms", faults.latency_jitter_ms,
                 "plus a uniform random 0..N ms");
  app.add_option("--bandwidth", faults.bandwidth, "bytes/s per connection, bodies (0 = off)");
  app.add_option("--bandwidth-total", faults.bandwidth_total,
                 "bytes/s across all connections (0 = off)");
  app.add_option("--requests-per-second", faults.requests_per_second,
                 "S3 requests started per second, all connections (0 = off)");
  app.add_option("--fault", fault_kind,
                 "fault kind: none|403|500|503|reset|truncate|wrong-etag|complete-200-error")
      ->capture_default_str();
  app.add_option("--fault-key", faults.key_regex, "fault only keys matching this regex");
  app.add_option("--fault-every", faults.every, "fault every Nth matching request");
  app.add_option("--fault-op", faults.op, "fault only this operation (get|put|upload-part|"
                                          "complete|list|head|...|any)")
      ->capture_default_str();
  app.add_option("--fault-count", faults.count, "inject at most K faults (-1 = unlimited)")
      ->capture_default_str();
  app.add_option("--fault-rule", fault_rules,
                 "a fault rule as JSON, tried after the --fault one (repeatable), e.g. "
                 "'{\"kind\":\"503\",\"probability\":0.05}'");
  app.add_option("--fault-seed", fault_seed, "seed for the fault probabilities and jitter");
  app.add_option("--list-quirk", list_quirks,
                 "answer listings like a broken server: forget-prefixes|ignore-start-after|"
                 "unordered (repeatable; see README)");
  CLI11_PARSE(app, argc, argv);

  ferry::RaiseOpenFileLimit();
  if (retain_memory) RetainMemory();
  // stdout carries only the "listening on" line that fixtures parse.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ferry-test-s3"));
  server.idle_timeout = std::chrono::seconds(idle_timeout_s);
  server.io_timeout = std::chrono::seconds(io_timeout_s);
  service_opts.auth.enabled = !no_auth;
  auto kind = ParseFaultKind(fault_kind);
  if (!kind.ok()) {
    std::fprintf(stderr, "ferry-test-s3: %s\n", kind.status().ToString().c_str());
    return 2;
  }
  faults.kind = *kind;
  faults.seed = fault_seed;
  for (const std::string& text : fault_rules) {
    auto rule = ParseFaultRule(text);
    if (!rule.ok()) {
      std::fprintf(stderr, "ferry-test-s3: --fault-rule: %s\n",
                   rule.status().ToString().c_str());
      return 2;
    }
    faults.rules.push_back(std::move(rule).value());
  }

  for (const std::string& name : list_quirks) {
    ferry::Status quirk = AddListQuirk(name, &faults.list_quirks);
    if (!quirk.ok()) {
      std::fprintf(stderr, "ferry-test-s3: --list-quirk: %s\n", quirk.ToString().c_str());
      return 2;
    }
  }

  std::unique_ptr<Storage> storage;
  if (dir.empty()) {
    storage = NewMemoryStorage();
  } else {
    auto opened = OpenDirectoryStorage(dir);
    if (!opened.ok()) {
      std::fprintf(stderr, "ferry-test-s3: %s\n", opened.status().ToString().c_str());
      return 1;
    }
    storage = std::move(opened).value();
  }
  Service service(std::move(service_opts), std::move(storage));
  ferry::Status st = service.faults().Configure(faults);
  if (st.ok()) st = service.CreateInitialBuckets();
  if (st.ok()) st = RunServer(server, service);
  if (!st.ok()) {
    std::fprintf(stderr, "ferry-test-s3: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
