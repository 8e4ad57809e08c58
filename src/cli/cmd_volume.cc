// ferry volume serve | create | ls | status | rm: lazy volumes over NBD
// (volume/daemon.h); the client commands talk to the daemon's API.
#include <malloc.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "cli/cli_util.h"
#include "cli/config_file.h"
#include "cli/registry.h"
#include "cli/volume_api.h"
#include "migrate/filter.h"
#include "volume/daemon.h"

namespace ferry::cli {
namespace {

struct VolumeArgs {
  std::vector<std::string> pools;
  std::string nbd = "127.0.0.1:10809";
  std::string api = "127.0.0.1:10810";
  std::string port_file;
  std::string hydration_rate = "0";
  std::string cache_size = "256M";
  std::string fetch_deadline = "30s";
  std::string client_timeout = "60s";
  std::string busy_window = "50ms", trickle = "100ms";
  int fetch_reserve = -1, yield_fetches = 2;
  std::string yield_window = "250ms";
  bool learn_orders = false;
  std::string learn_settle = "10s", learn_bytes = "256M";
  std::string cache_url;
  std::string trace_dir;
  std::string tls = "off", tls_cert, tls_key, tls_ca;
  double overcommit = 1.0;
  int hydration_threads = 4;
  int prefetch_threads = 16;
  int nbd_queue_depth = 64;
  int readahead = 2;
  int read_around = 0;
  int fetch_slots = 32;
  int cache_level = 1;
  // client commands
  std::string name, from, size;
  int count = 1;
  bool json = false;
  GlobalOptions global;
};

// A duration flag's value (migrate::ParseDurationMs form), at least
// `min_ms` (1: "must be positive", 0: "must not be negative").
Result<std::chrono::milliseconds> DurationAtLeast(const std::string& text, int64_t min_ms) {
  auto ms = migrate::ParseDurationMs(text);
  if (!ms.ok()) return ms.status();
  if (*ms < min_ms) return Status::InvalidArgument(min_ms > 0 ? "must be positive" : "must not be negative");
  return std::chrono::milliseconds(*ms);
}

int RunServe(const VolumeArgs& a) {
  // Chunk buffers (1 MiB and up) come and go by the thousand a second:
  // keep them on the heap and keep the heap, so each is memory already
  // mapped in (by default glibc maps each anew, and every page of every
  // chunk costs a page fault).
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  volume::DaemonOptions o;
  o.pools = a.pools;
  o.nbd_listen = a.nbd;
  o.api_listen = a.api;
  o.port_file = a.port_file;
  o.hydration_threads = a.hydration_threads;
  o.prefetch_threads = a.prefetch_threads;
  auto rate = ParseSize(a.hydration_rate);
  if (!rate.ok()) return Fail("volume serve: --hydration-rate", rate.status());
  auto cache = ParseSize(a.cache_size);
  if (!cache.ok()) return Fail("volume serve: --cache-size", cache.status());
  auto learn_bytes = ParseSize(a.learn_bytes);
  if (!learn_bytes.ok()) return Fail("volume serve: --learn-bytes", learn_bytes.status());
  const struct {
    const char* flag;
    const std::string& text;
    int64_t min_ms;
    std::chrono::milliseconds* out;
  } durations[] = {
      {"--fetch-deadline", a.fetch_deadline, 1, &o.fetch_deadline},
      {"--client-timeout", a.client_timeout, 1, &o.client_timeout},
      {"--busy-window", a.busy_window, 0, &o.qos.busy_window},
      {"--trickle", a.trickle, 1, &o.qos.trickle},
      {"--learn-settle", a.learn_settle, 1, &o.learn.settle},
      {"--yield-window", a.yield_window, 0, &o.fetch_gate.yield_window},
  };
  for (const auto& d : durations) {
    auto ms = DurationAtLeast(d.text, d.min_ms);
    if (!ms.ok()) return Fail(std::string("volume serve: ") + d.flag, ms.status());
    *d.out = *ms;
  }
  o.hydration_rate = *rate;
  o.cache_url = a.cache_url;
  o.trace_dir = a.trace_dir;
  if (!(a.overcommit >= 1.0 && a.overcommit <= 100.0)) {
    return Fail("volume serve", Status::InvalidArgument("--overcommit must be 1..100"));
  }
  o.overcommit = a.overcommit;
  o.cache_bytes = *cache;
  o.cache_level = a.cache_level;
  auto tls = nbd::ParseTlsMode(a.tls);
  if (!tls.ok()) return Fail("volume serve", tls.status());
  o.nbd_tls = {*tls, a.tls_cert, a.tls_key, a.tls_ca};
  o.nbd_queue_depth = a.nbd_queue_depth;
  o.readahead_chunks = a.readahead;
  o.read_around_chunks = a.read_around;
  o.fetch_slots = a.fetch_slots;
  if (a.fetch_reserve >= a.fetch_slots) {
    return Fail("volume serve", Status::InvalidArgument("--fetch-reserve must be less than --fetch-slots"));
  }
  o.fetch_gate.reserve = a.fetch_reserve;
  o.fetch_gate.yield_slots = a.yield_fetches;
  o.learn_orders = a.learn_orders;
  o.learn.max_bytes = *learn_bytes;
  o.open = a.global.ToOpenOptions("");
  Status st = volume::ServeVolumes(o);
  return st.ok() ? 0 : Fail("volume serve", st);
}

// One API call; prints the JSON answer (or one line of it) and returns the exit code.
int Call(const VolumeArgs& a, const std::string& method, const std::string& path, const std::string& body,
         const std::function<void(const nlohmann::json&)>& print) {
  auto api = VolumeApi::Connect(a.api);
  if (!api.ok()) return Fail("volume", api.status());
  auto answer = (*api)->Call(method, path, body);
  if (!answer.ok()) return Fail("volume: the daemon at " + a.api, answer.status());
  const nlohmann::json& j = answer->json;
  if (answer->status >= 300) {
    std::fprintf(stderr, "ferry: volume: %s\n", answer->Error().c_str());
    return 1;
  }
  if (a.json || j.is_discarded()) {
    std::printf("%s\n", j.is_discarded() ? answer->body.c_str() : DumpJson(j).c_str());
  } else {
    print(j);
  }
  return 0;
}

void PrintStatus(const nlohmann::json& v) {
  std::printf("%-24s %-9s %6llu/%-6llu chunks  %10s  triggers %llu  origin %s  cache %s  from %s  pool %s\n",
              v["name"].get<std::string>().c_str(), v["state"].get<std::string>().c_str(),
              static_cast<unsigned long long>(v["hydrated"].get<uint64_t>()),
              static_cast<unsigned long long>(v["chunks"].get<uint64_t>()),
              HumanBytes(v["size"].get<uint64_t>()).c_str(),
              static_cast<unsigned long long>(v["triggers"].get<uint64_t>()),
              HumanBytes(v.value("bytes_from_origin", uint64_t{0})).c_str(),
              HumanBytes(v.value("bytes_from_cache", uint64_t{0})).c_str(), v["from"].get<std::string>().c_str(),
              v["pool"].get<std::string>().c_str());
}

// volume serve's flags for how clients' reads go ahead of the rest, and
// for orders that learn.
void AddDemandOptions(CLI::App* serve, const std::shared_ptr<VolumeArgs>& a) {
  serve->add_option("--fetch-reserve", a->fetch_reserve,
                    "Fetch slots only clients' reads take (-1: a quarter of --fetch-slots)")
      ->check(CLI::Range(-1, 1023))
      ->capture_default_str();
  serve->add_option("--yield-fetches", a->yield_fetches,
                    "Prefetch and hydration fetches in flight while clients wait on fetches (within --yield-window "
                    "of a client's fetch)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  serve->add_option("--yield-window", a->yield_window,
                    "Clients count as waiting on fetches this long after their last one (0: only during it)")
      ->capture_default_str();
  serve->add_flag("--learn-orders", a->learn_orders,
                  "Merge each new clone's first-touched chunks into its snapshot's prefetch order (writes the "
                  "snapshot's manifest, which ferry before this flag existed then refuses: upgrade every reader "
                  "first)");
  serve->add_option("--learn-settle", a->learn_settle,
                    "--learn-orders: a clone's first touches are merged once it touched no new chunk this long")
      ->capture_default_str();
  serve->add_option("--learn-bytes", a->learn_bytes, "--learn-orders: the most a learned order holds")
      ->capture_default_str();
}

void AddServeCommand(CLI::App* vol, const std::shared_ptr<VolumeArgs>& a, int* exit_code) {
  auto* serve = vol->add_subcommand("serve", "Run the volume daemon");
  serve->add_option("--pool", a->pools, "A directory holding volumes (repeatable)")->required();
  serve->add_option("--nbd", a->nbd, "NBD listen address (HOST:PORT, [V6]:PORT or unix:PATH)")->capture_default_str();
  serve->add_option("--api", a->api, "Control API listen address (HOST:PORT or [V6]:PORT)")->capture_default_str();
  serve->add_option("--hydration-rate", a->hydration_rate, "Background hydration cap per pool, bytes/s (0: none)")
      ->capture_default_str();
  serve->add_option("--hydration-threads", a->hydration_threads, "Background hydration workers")
      ->capture_default_str();
  serve->add_option("--prefetch-threads", a->prefetch_threads,
                    "Workers fetching new volumes' prefetch orders at once, ahead of hydration (0: hydrators)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  serve->add_option("--cache-size", a->cache_size, "Transfer cache for chunks (zstd in memory)")
      ->capture_default_str();
  serve->add_option("--cache-level", a->cache_level, "zstd level of the transfer cache's chunks")
      ->check(CLI::Range(-7, 19))
      ->capture_default_str();
  serve->add_option("--overcommit", a->overcommit,
                    "Place volumes as if pools had this many times their free space (volumes are thin)")
      ->capture_default_str();
  serve->add_option("--cache", a->cache_url,
                    "Fetch chunks through this HTTP cache tier (e.g. ferry cache serve), URL/chunks/XY/HASH");
  serve->add_option("--fetch-deadline", a->fetch_deadline,
                    "How long I/O waits for a chunk while the origin fails (then EIO)")
      ->capture_default_str();
  serve->add_option("--busy-window", a->busy_window,
                    "A pool's clients count as busy this long after their last I/O (0: never)")
      ->capture_default_str();
  serve->add_option("--trickle", a->trickle,
                    "While a pool's clients are busy, background hydration fetches one chunk per this interval")
      ->capture_default_str();
  serve->add_option("--port-file", a->port_file, "Write \"NBD_PORT API_PORT\" here");
  serve->add_option("--fetch-slots", a->fetch_slots,
                    "Chunk fetches from the object store at once (triggers first, then hints, then hydration)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  serve->add_option("--readahead", a->readahead,
                    "A client's read of a missing chunk also fetches this many chunks after it (0: none)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  serve->add_option("--read-around", a->read_around,
                    "Once a client's read of missing chunks has them, also fetch the missing chunks this many on "
                    "either side of each (0: none)")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  serve->add_option("--nbd-queue-depth", a->nbd_queue_depth,
                    "NBD requests run at once per connection (past it the connection waits; 1: one at a time)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  serve->add_option("--tls", a->tls, "NBD over TLS (STARTTLS): off, on (clients choose) or require")
      ->capture_default_str();
  serve->add_option("--tls-cert", a->tls_cert, "The NBD server's certificate chain (PEM)");
  serve->add_option("--tls-key", a->tls_key, "Its private key (PEM)");
  serve->add_option("--tls-ca", a->tls_ca, "Require NBD clients to show a certificate this CA (PEM) signed");
  serve->add_option("--client-timeout", a->client_timeout,
                    "Wait for an API request or an NBD handshake, and for each answer or reply to be taken")
      ->capture_default_str();
  serve->add_option("--trace-dir", a->trace_dir,
                    "Record every NBD request to each volume into DIR/NAME.trace (for the replay client; "
                    "never overwritten: a daemon whose trace exists records none for that volume)");
  AddGlobalOptions(*serve, &a->global);
  AddDaemonOptions(serve, "volume serve");
  AddDemandOptions(serve, a);
  serve->callback([a, exit_code] { *exit_code = RunServe(*a); });
}

}  // namespace

void AddVolumeCommand(CLI::App& app, int* exit_code) {
  auto* vol = app.add_subcommand("volume", "Lazy block volumes from snapshots, served over NBD");
  vol->require_subcommand(1);
  auto a = std::make_shared<VolumeArgs>();
  auto api_flag = [&](CLI::App* c) {
    c->add_option("--api", a->api, "The daemon's API (HOST:PORT)")->capture_default_str();
    c->add_flag("--json", a->json, "Print the daemon's JSON answer");
  };

  AddServeCommand(vol, a, exit_code);

  auto* create = vol->add_subcommand("create", "Create volumes from a snapshot (usable at once)");
  create->add_option("name", a->name, "Volume name (with --count N: NAME-0..NAME-(N-1))")->required();
  create->add_option("--from", a->from, "REPOSITORY/SNAPSHOT")->required();
  create->add_option("--size", a->size, "Volume size (default: the snapshot's)");
  create->add_option("--count", a->count, "How many volumes")->capture_default_str();
  api_flag(create);
  create->callback([a, exit_code] {
    nlohmann::json body{{"name", a->name}, {"from", a->from}, {"count", a->count}};
    if (!a->size.empty()) {
      auto s = ParseSize(a->size);
      if (!s.ok()) {
        *exit_code = Fail("volume create: --size", s.status());
        return;
      }
      body["size"] = *s;
    }
    *exit_code = Call(*a, "POST", "/volumes", DumpJson(body), [](const nlohmann::json& j) {
      for (const auto& v : j) {
        std::printf("%s  pool %s\n", v["name"].get<std::string>().c_str(), v["pool"].get<std::string>().c_str());
      }
    });
  });

  auto* ls = vol->add_subcommand("ls", "List volumes");
  api_flag(ls);
  ls->callback([a, exit_code] {
    *exit_code = Call(*a, "GET", "/volumes", "", [](const nlohmann::json& j) {
      for (const auto& v : j) PrintStatus(v);
    });
  });

  auto* status = vol->add_subcommand("status", "One volume's hydration, triggers, bytes and pool");
  status->add_option("name", a->name, "Volume name")->required();
  api_flag(status);
  status->callback([a, exit_code] {
    *exit_code = Call(*a, "GET", "/volumes/" + a->name, "", [](const nlohmann::json& v) {
      for (auto it = v.begin(); it != v.end(); ++it) {
        std::printf("%-14s %s\n", it.key().c_str(), DumpJson(it.value()).c_str());
      }
    });
  });

  auto* rm = vol->add_subcommand("rm", "Remove a volume and its data");
  rm->add_option("name", a->name, "Volume name")->required();
  api_flag(rm);
  rm->callback([a, exit_code] {
    *exit_code = Call(*a, "DELETE", "/volumes/" + a->name, "", [](const nlohmann::json& j) {
      std::printf("removed %s\n", j["removed"].get<std::string>().c_str());
    });
  });
}

}  // namespace ferry::cli
