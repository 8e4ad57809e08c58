// ferry cache serve: the caching reverse proxy (see cache/server.h).
#include <algorithm>
#include <cstdio>

#include "cache/dictionary.h"
#include "cache/server.h"
#include "cli/cli_util.h"
#include "cli/config_file.h"
#include "cli/registry.h"
#include "http/endpoint.h"
#include "migrate/filter.h"

namespace ferry::cli {
namespace {

struct CacheArgs {
  std::string origin;
  std::vector<std::string> host_map;
  std::string listen = "127.0.0.1:8080";
  std::string dir;
  std::string max_size = "1G";
  std::string min_size = "4K";
  std::string default_ttl = "0s";
  double heuristic_fraction = 0.1;
  int br_level = 5;
  int gzip_level = 6;
  std::string max_heuristic = "1d";
  int level = 3;
  std::string port_file;
  bool transform_no_transform = false;
  std::vector<std::string> parents;
  std::vector<std::string> compress_types;
  std::vector<std::string> admin_allow = {"127.0.0.1", "::1"};
  std::string memory_size = "256M";
  std::string max_object = "64M";
  std::string compress_behind = "64K";
  size_t upstream_threads = 64;
  size_t upstream_queue = 16;
  std::string client_timeout = "60s";
  std::string origin_timeout = "60s";
  std::vector<std::string> tls_certs, tls_keys;
  std::string listen_tls;
  std::string tls_port_file;
  bool no_http2 = false;
  size_t max_connections = 10'000;
  std::vector<std::string> dictionary_match;
  bool dictionary_versioned = false;
  bool no_dictionaries = false;
  int dictionary_level = 19;
  bool no_trained = false;
};

// RFC 9842 dictionaries: which answers ferry marks, and dcz answers.
Status DictionaryOptions(const CacheArgs& a, cache::DictionarySettings* d) {
  for (const std::string& m : a.dictionary_match) {
    if (!m.starts_with("/") || !cache::ResolveMatch(m, "/", "h", false)) {
      return Status::InvalidArgument("--dictionary-match " + m +
                                     ": give a path pattern that starts with / (with * for any run of characters)");
    }
  }
  if (a.no_dictionaries && (!a.dictionary_match.empty() || a.dictionary_versioned)) {
    return Status::InvalidArgument("--no-dictionaries cannot go with --dictionary-match or --dictionary-versioned");
  }
  d->enabled = !a.no_dictionaries;
  d->match = a.dictionary_match;
  d->versioned = a.dictionary_versioned;
  d->level = a.dictionary_level;
  return Status::Ok();
}

// --tls-cert and --tls-key in pairs (the first the default certificate,
// the others chosen by SNI), and where HTTPS is served.
Status TlsOptions(const CacheArgs& a, cache::ServeOptions* o) {
  if (a.tls_certs.size() != a.tls_keys.size()) {
    return Status::InvalidArgument("--tls-cert and --tls-key come in pairs (both a certificate and a key): " + std::to_string(a.tls_certs.size()) +
                                   " certificate(s), " + std::to_string(a.tls_keys.size()) + " key(s)");
  }
  for (size_t i = 0; i < a.tls_certs.size(); ++i) o->tls.certificates.push_back({a.tls_certs[i], a.tls_keys[i]});
  if (!a.listen_tls.empty() && !o->tls.enabled()) {
    return Status::InvalidArgument("--listen-tls needs --tls-cert and --tls-key");
  }
  if (!a.tls_port_file.empty() && a.listen_tls.empty()) {
    return Status::InvalidArgument("--tls-port-file needs --listen-tls");
  }
  o->listen_tls = a.listen_tls;
  o->tls_port_file = a.tls_port_file;
  o->http2 = !a.no_http2;
  return Status::Ok();
}

int RunServe(const CacheArgs& a) {
  cache::ServeOptions o;
  o.listen = a.listen;
  o.port_file = a.port_file;
  if (Status st = TlsOptions(a, &o); !st.ok()) return Fail("cache serve", st);
  if (Status st = DictionaryOptions(a, &o.proxy.dictionaries); !st.ok()) return Fail("cache serve", st);
  if (a.max_connections < 1) return Fail("cache serve", Status::InvalidArgument("--max-connections must be at least 1"));
  o.max_connections = a.max_connections;
  auto routing = cache::ParseRouting(a.origin, a.host_map);
  if (!routing.ok()) return Fail("cache serve", routing.status());
  o.proxy.routing = std::move(routing).value();
  auto max = ParseSize(a.max_size);
  if (!max.ok()) return Fail("cache serve: --max-size", max.status());
  auto min = ParseSize(a.min_size);
  if (!min.ok()) return Fail("cache serve: --min-size", min.status());
  auto ttl = migrate::ParseDurationMs(a.default_ttl);
  if (!ttl.ok()) return Fail("cache serve: --default-ttl", ttl.status());
  auto max_heuristic = migrate::ParseDurationMs(a.max_heuristic);
  if (!max_heuristic.ok()) return Fail("cache serve: --max-heuristic", max_heuristic.status());
  if (a.level < 1 || a.level > 19) {
    return Fail("cache serve", Status::InvalidArgument("--level must be 1..19"));
  }
  auto memory = ParseSize(a.memory_size);
  if (!memory.ok()) return Fail("cache serve: --memory-size", memory.status());
  auto max_object = ParseSize(a.max_object);
  if (!max_object.ok()) return Fail("cache serve: --max-object", max_object.status());
  auto compress_behind = ParseSize(a.compress_behind);
  if (!compress_behind.ok()) return Fail("cache serve: --compress-behind", compress_behind.status());
  auto client_timeout = migrate::ParseDurationMs(a.client_timeout);
  if (!client_timeout.ok()) return Fail("cache serve: --client-timeout", client_timeout.status());
  auto origin_timeout = migrate::ParseDurationMs(a.origin_timeout);
  if (!origin_timeout.ok()) return Fail("cache serve: --origin-timeout", origin_timeout.status());
  if (*client_timeout <= 0 || *origin_timeout <= 0) {
    return Fail("cache serve", Status::InvalidArgument("timeouts must be positive"));
  }
  auto allow = cache::ParseAllowList(a.admin_allow);
  if (!allow.ok()) return Fail("cache serve: --admin-allow", allow.status());
  for (const std::string& p : a.parents) {
    std::string path;
    auto parent = http::ParseEndpoint(p, &path);
    if (!parent.ok()) return Fail("cache serve: --parent", parent.status());
    if (!path.empty() && path != "/") {
      return Fail("cache serve", Status::InvalidArgument("--parent " + p + ": give no path"));
    }
    o.proxy.parents.push_back(*parent);
  }
  o.proxy.admin_allow = std::move(allow).value();
  o.proxy.memory_bytes = *memory;
  o.proxy.max_object = *max_object;
  o.proxy.encode_behind_max = *compress_behind;
  if (a.upstream_threads < 1) return Fail("cache serve", Status::InvalidArgument("--upstream-threads must be at least 1"));
  o.proxy.upstream_threads = a.upstream_threads;
  o.proxy.upstream_queue = a.upstream_queue;
  o.client_timeout = std::chrono::milliseconds(*client_timeout);
  o.origin.io_timeout = std::chrono::milliseconds(*origin_timeout);
  o.origin.connect_timeout = std::min(o.origin.connect_timeout, o.origin.io_timeout);
  o.store.dir = a.dir;
  o.store.max_bytes = *max;
  o.proxy.level = a.level;
  o.proxy.transcode.min_size = *min;
  for (const auto& t : a.compress_types) o.proxy.transcode.types.push_back(t);
  o.proxy.transcode.ignore_no_transform = a.transform_no_transform;
  o.proxy.cache.default_ttl = std::chrono::seconds(*ttl / 1000);
  o.proxy.cache.heuristic_fraction = a.heuristic_fraction;
  o.proxy.br_level = a.br_level;
  o.proxy.trained.enabled = !a.no_trained;
  o.proxy.gzip_level = a.gzip_level;
  o.proxy.cache.max_heuristic = std::chrono::seconds(*max_heuristic / 1000);
  Status st = cache::ServeCache(o);
  if (!st.ok()) return Fail("cache serve", st);
  return 0;
}

void AddDictionaryOptions(CLI::App* serve, CacheArgs* a) {
  serve->add_option("--dictionary-match", a->dictionary_match,
                    "Mark answers whose path matches this pattern (* for any run) as compression dictionaries "
                    "(RFC 9842 Use-As-Dictionary, match=the pattern) for later versions; repeatable; HTTPS or "
                    "localhost clients only");
  serve->add_flag("--dictionary-versioned", a->dictionary_versioned,
                  "Mark versioned asset names (app.3f2a9c1b.js, lib-1.2.3.min.js) as dictionaries for their other "
                  "versions");
  serve->add_option("--dictionary-level", a->dictionary_level,
                    "zstd level of dcz answers (made once per object and dictionary)")
      ->check(CLI::Range(1, 19))
      ->capture_default_str();
  serve->add_flag("--no-trained-dictionaries", a->no_trained,
                  "Store bodies under --min-size as they came (by default: compressed with a zstd dictionary "
                  "trained per content type on what the cache stored, when that saves a tenth)");
  serve->add_flag("--no-dictionaries", a->no_dictionaries,
                  "Never answer dcz, nor keep dictionaries (the origin's Use-As-Dictionary still passes)");
}

}  // namespace

void AddCacheCommand(CLI::App& app, int* exit_code) {
  auto* cache = app.add_subcommand("cache", "Caching reverse proxy that keeps text zstd-compressed");
  cache->require_subcommand(1);
  auto a = std::make_shared<CacheArgs>();
  auto* serve = cache->add_subcommand("serve", "Serve configured origins through the cache");
  serve->add_option("--origin", a->origin, "Origin URL for any host (http://HOST[:PORT][/PATH])");
  serve->add_option("--origin-host-map", a->host_map, "HOST=URL: the origin for one Host (repeatable)");
  serve->add_option("--listen", a->listen, "HOST:PORT, [V6]:PORT or unix:PATH to listen on (port 0: pick one)")
      ->capture_default_str();
  serve->add_option("--listen-tls", a->listen_tls,
                    "HOST:PORT to serve HTTPS on, beside a plain --listen (without it, --tls-cert makes --listen HTTPS)");
  serve->add_option("--tls-cert", a->tls_certs,
                    "Serve HTTPS with this certificate chain (PEM); repeatable: the client's SNI name picks the one "
                    "naming it, the first by default; SIGHUP reloads");
  serve->add_option("--tls-key", a->tls_keys, "The private key (PEM) of the --tls-cert in the same place");
  serve->add_option("--tls-port-file", a->tls_port_file, "Write the bound --listen-tls port here");
  serve->add_flag("--no-http2", a->no_http2, "Speak HTTP/1.1 only (no h2 by ALPN, no h2c with prior knowledge)");
  serve->add_option("--max-connections", a->max_connections,
                    "Client connections open at once (one more is closed at once)")
      ->capture_default_str();
  serve->add_option("--dir", a->dir, "Cache directory")->required();
  serve->add_option("--max-size", a->max_size, "Bytes of live entries kept on disk (LRU)")->capture_default_str();
  serve->add_option("--level", a->level, "zstd level for transcoded entries")->capture_default_str();
  serve->add_option("--min-size", a->min_size, "Smallest body worth compressing")->capture_default_str();
  serve->add_option("--default-ttl", a->default_ttl,
                    "Freshness of responses with no explicit lifetime and no Last-Modified (e.g. 60s, 5m)")
      ->capture_default_str();
  serve->add_option("--heuristic-fraction", a->heuristic_fraction,
                    "Heuristic freshness of responses with only Last-Modified: this fraction of their age "
                    "(RFC 9111 4.2.2; 0: none)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  serve->add_option("--max-heuristic", a->max_heuristic, "Cap of heuristic freshness (e.g. 1h, 1d)")
      ->capture_default_str();
  serve->add_option("--br-level", a->br_level,
                    "br quality of variants for clients that take br but not zstd (0: send them gzip or identity)")
      ->check(CLI::Range(0, 11))
      ->capture_default_str();
  serve->add_option("--gzip-level", a->gzip_level,
                    "gzip level of variants for clients that take gzip only (0: send them identity)")
      ->check(CLI::Range(0, 9))
      ->capture_default_str();
  AddDictionaryOptions(serve, a.get());
  serve->add_option("--compress-type", a->compress_types,
                    "Also compress this media type (type/subtype, type/* or *+suffix; repeatable)");
  serve->add_flag("--transform-no-transform", a->transform_no_transform,
                  "Compress at rest despite Cache-Control: no-transform");
  serve->add_option("--parent", a->parents,
                    "Fill misses from this ferry cache tier (http://HOST:PORT) instead of the origin; "
                    "repeatable: each key from one of them by rendezvous hashing, the next when it is down");
  serve->add_option("--admin-allow", a->admin_allow, "Addresses or CIDR blocks that may PURGE and read metrics")
      ->capture_default_str();
  serve->add_option("--memory-size", a->memory_size, "Bytes of entries also kept in memory")->capture_default_str();
  serve->add_option("--max-object", a->max_object,
                    "Largest body held in memory (larger: streamed to the client and cached on disk as seekable "
                    "zstd frames)")
      ->capture_default_str();
  serve->add_option("--compress-behind", a->compress_behind,
                    "Bodies up to this size are zstd-compressed behind their fills, in batches on a thread of "
                    "their own: the miss is answered with the origin's bytes (0: compress before answering)")
      ->capture_default_str();
  serve->add_option("--upstream-threads", a->upstream_threads,
                    "Upstream exchanges at once (each may stream a large body long after its request)")
      ->capture_default_str();
  serve->add_option("--upstream-queue", a->upstream_queue,
                    "Upstream exchanges waiting for a thread; past it a miss is answered 503")
      ->capture_default_str();
  serve->add_option("--client-timeout", a->client_timeout, "Wait for a request, and for each write to a client")
      ->capture_default_str();
  serve->add_option("--origin-timeout", a->origin_timeout, "Connect and idle deadline towards upstream")
      ->capture_default_str();
  serve->add_option("--port-file", a->port_file, "Write the bound port here");
  AddDaemonOptions(serve, "cache serve");
  serve->callback([a, exit_code] { *exit_code = RunServe(*a); });
}

}  // namespace ferry::cli
