#pragma once
// The caching reverse proxy's logic for one request, without sockets. The
// phases, in order:
//   1. admin: GET /_ferry/metrics and PURGE, from allowed addresses only;
//   2. route: only configured origins are reachable (routing.h);
//   3. methods other than GET and HEAD pass through uncached (BYPASS);
//   4. lookup: the memory tier, then the disk store; a fresh entry is a HIT;
//   5. fill: one upstream fetch per key at a time (concurrent misses wait
//      for it and share its result: "coalesced"), conditional when a stale
//      entry has validators; a failing upstream serves the stale entry
//      (STALE); what may be stored is stored, zstd-compressed when eligible
//      (transcode_policy.h), never compressed twice. A small body is
//      compressed behind its fill (fill_encoder.h: batched on a thread of
//      its own): the fill is answered with the bytes as they came, served
//      from memory, and stored once compressed; a newer version, a 304's
//      refresh or a PURGE meanwhile wins over it;
//   6. answer: the stored zstd bytes for a client that takes zstd,
//      decoded bytes otherwise; 304 for a matching conditional; one byte
//      range of the identity representation (range.h).
// The memory tier holds parsed entries (half of memory_bytes) and decoded
// copies of recently used zstd entries (the other half), so a hot object
// costs one decode per stay in memory rather than one per identity client;
// the disk holds only the compressed bytes.
// Answers carry `X-Cache: HIT|MISS|EXPIRED|STALE|BYPASS` and `Age`.
//
// Tiers: with a parent, fills go to the parent tier (with several, the
// key's choice among them, parent_choice.h) (the request's own path
// and Host) with `X-Ferry-Tier: stored`. A tier that receives that header
// answers with its stored bytes as they are, marked `X-Ferry-Stored: zstd;
// length=N` when they are zstd (N: the original length), and the lower tier
// stores them without compressing again. The marker is trusted only from a
// configured parent and never reaches a client.
//
// Handle() may block (disk, upstream): run it on worker threads.
// HandleFromMemory() never blocks: it answers what the memory tier can
// (fresh hits, decoding at most a small body) and returns nullopt for
// everything else. Thread-safe.
//
// Bodies up to max_object are held in memory and may be cached. A larger
// one is streamed to its client through a spool file (spool.h) and, when
// it may be stored, cached as it arrives: a reader of its own takes the
// spool's bytes to disk as seekable zstd frames (or as they are, when not
// compressible; big_object.h), on a small pool of its own. Requests for it while
// it fills are streamed from the same spool from its first byte (one
// upstream fetch; they count as coalesced); once it is on disk, answers
// read and decode only the frames they need, so a range of a 200 MB object
// costs a frame or two. A big object's headers refreshed by a 304 are kept
// in memory only. Only single byte ranges are served (a multi-range
// request gets the whole representation, as RFC 9110 allows).

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/single_flight.h"
#include "cache/access.h"
#include "cache/cache_status.h"
#include "cache/dictionary.h"
#include "cache/disk_store.h"
#include "cache/fill.h"
#include "cache/fill_encoder.h"
#include "cache/freshness.h"
#include "cache/hot_set.h"
#include "cache/metrics.h"
#include "cache/negotiation.h"
#include "cache/routing.h"
#include "cache/spool.h"
#include "cache/trained_dictionaries.h"
#include "cache/transcode_policy.h"
#include "cache/upstream.h"
#include "engine/bounded_pool.h"
#include "http/headers.h"
#include "http/server.h"
#include "http/server_request.h"

namespace ferry::cache {

inline constexpr std::string_view kMetricsPath = "/_ferry/metrics";

// Compression dictionaries (RFC 9842; dictionary.h, proxy_dictionary.cc).
// An answer is marked as a dictionary by the origin's Use-As-Dictionary,
// or here: a path matching one of `match` gets `match="that pattern"`;
// with `versioned`, a versioned asset name gets the pattern of its other
// versions. ferry marks answers only for secure contexts (HTTPS or a
// loopback host), keeps each dictionary it served by its SHA-256 (in the
// store, beside the entries), and answers a client that holds one and
// takes dcz with the object compressed against it, when that is smaller:
// made once per (object, dictionary) with single flight, kept in the
// memory tier's second half and on disk like any entry.
struct DictionarySettings {
  bool enabled = true;              // answer dcz (and honour the origin's marks)
  std::vector<std::string> match;   // path patterns to mark ('*': any run)
  bool versioned = false;           // mark versioned asset names
  int level = 19;                   // zstd level of dcz answers (1..19)
  uint64_t max_size = 8 << 20;      // larger answers are not kept as dictionaries
  size_t max_known = 4096;          // dictionaries kept in memory (more: on disk only)
};

struct ProxyOptions {
  Routing routing;
  TranscodeSettings transcode;
  CacheSettings cache;
  int level = 3;                          // zstd level for transcoded entries
  // Clients that take neither zstd get br or gzip made from a stored zstd
  // entry (once per stay in memory: a variant), at these levels; 0: never.
  int br_level = 5;                       // 0..11 (0 here means off)
  int gzip_level = 6;                     // 1..9
  uint64_t max_object = 64 << 20;         // largest body held in memory (larger: spooled, cached as frames)
  // Where larger bodies are spooled on their way to their clients and the
  // disk ("": nowhere; they are answered 502).
  std::string spool_dir;
  uint64_t memory_bytes = 256ull << 20;   // memory tier budget (0: none)
  // Fill from these tiers instead of the origin: each key from one of
  // them (parent_choice.h), the next in its order when that one cannot be
  // reached. Empty: the origin.
  std::vector<http::Endpoint> parents;
  AllowList admin_allow;                  // may PURGE and read metrics
  // Upstream exchanges run on a bounded pool: at most upstream_threads at
  // once (each may stream a large body into a spool long after its request
  // moved on), at most upstream_queue more waiting; past that a fill is
  // answered 503 with Retry-After (or the stale entry, when one may serve).
  size_t upstream_threads = 64;
  size_t upstream_queue = 16;
  // Big objects are written to disk from their spools by a pool of their
  // own, so they never take an upstream exchange's place: at most
  // big_fill_threads at once, big_fill_queue more waiting (their spools
  // hold what they have not read yet); past that one is not cached.
  size_t big_fill_threads = 4;
  size_t big_fill_queue = 64;
  // Eligible bodies up to this size are compressed behind their fills, in
  // batches on a thread of their own (fill_encoder.h): the fill is
  // answered with the origin's bytes and stored once compressed. Larger
  // ones, and every one when this is 0 or the encoder's queue is full,
  // are compressed inline before the fill is answered.
  uint64_t encode_behind_max = 64 << 10;
  FillEncoderOptions encode_behind;  // its bounds and batching (its level: `level`)
  DictionarySettings dictionaries;
  // Dictionaries trained on small bodies (under transcode.min_size) to
  // store them compressed (trained_dictionaries.h); its level: `level`.
  TrainedSettings trained;
};

// The request as the server read it (http::RequestReader).
using ProxyRequest = http::ServerRequest;

// What the proxy answers: the HTTP server's response (a body in memory,
// or a Spool streamed as it fills).
using ProxyResponse = http::ServerResponse;

class Proxy {
 public:
  Proxy(ProxyOptions options, DiskStore* store, Upstream* upstream);
  ~Proxy();  // waits for upstream exchanges still streaming (the pool joins)
  ProxyResponse Handle(const ProxyRequest& req);
  std::optional<ProxyResponse> HandleFromMemory(const ProxyRequest& req);
  // Counts a request by its protocol (ServerRequest::version); the server
  // calls it once per request received.
  void CountRequest(const ProxyRequest& req);
  const ProxyCounters& counters() const { return counters_; }
  // Returns once every compression behind a fill begun so far is stored
  // (or given up): for tests (the destructor does the same).
  void WaitForEncodes();
  MetricsSnapshot Metrics() const;

 private:
  struct Fill;
  struct Fetched;

 public:
  struct Exchange;  // (for the sink in proxy.cc)

 private:
  std::optional<ProxyResponse> Run(const ProxyRequest& req, bool may_block);
  ProxyResponse Admin(const ProxyRequest& req);
  ProxyResponse PassThrough(const ProxyRequest& req, const Route& route);
  ProxyResponse Streamed(const ProxyRequest& req, const Fetched& f, CacheStatus x_cache);
  std::shared_ptr<const Fill> LeadFill(const ProxyRequest& req, const Route& route,
                                       const std::shared_ptr<const CachedObject>& entry, const CacheControl& req_cc);
  std::shared_ptr<const Fill> FillFromUpstream(const ProxyRequest& req, const Route& route,
                                               const std::shared_ptr<const CachedObject>& stale,
                                               const CacheControl& req_cc);
  // One upstream exchange: with parents, to the key's first choice that
  // can be reached (a GET or HEAD whose connection is refused or reset
  // before any answer goes on to the next), else to the origin.
  Result<Fetched> Fetch(const Route& route, const std::string& method, http::Headers headers,
                        const std::string& body);
  // Fetch's exchange with one of them (`parent`: a parent tier, or null:
  // the route's origin); `*reached` false when no answer began.
  Result<Fetched> FetchFrom(const http::Endpoint* parent, const Route& route, const std::string& method,
                            http::Headers headers, const std::string& body, bool* reached);
  // The pieces of FillFromUpstream (proxy_fill.cc).
  void CountFill(const Fill& fill);
  void FailFill(Fill* fill, int status, std::string error);
  std::shared_ptr<const Fill> StreamFill(std::shared_ptr<Fill> fill, const Route& route,
                                         const std::shared_ptr<const CachedObject>& stale, Fetched fetched,
                                         const EntryMeta* storable);
  // Big objects (proxy_big.cc): caching one from its spool, the fill in
  // progress for a key, and the body of an answer from disk.
  bool StartBigFill(const EntryMeta& meta, const std::shared_ptr<Fetched>& fetched);
  void RunBigFill(std::unique_ptr<BigObjectWriter> writer, std::shared_ptr<http::BodyReader> spool,
                  const std::shared_ptr<Fetched>& fetched);
  std::shared_ptr<Fetched> BigFillFor(const std::string& key);
  bool AbandonBigFill(const std::string& key);  // a PURGE: whether one was under way
  std::shared_ptr<http::BodyReader> BigBody(const std::shared_ptr<const CachedObject>& object, bool stored,
                                            uint64_t first, uint64_t count);
  void DropDamaged(const std::string& key, const Status& why);
  // `behind`: a small body may be compressed behind the fill (not for a
  // lower tier, which is sent the stored bytes).
  std::shared_ptr<const Fill> StoreFill(std::shared_ptr<Fill> fill, const Route& route,
                                        const std::shared_ptr<const CachedObject>& stale,
                                        std::shared_ptr<CachedObject> object, bool storable, bool behind);
  std::shared_ptr<const CachedObject> FromDisk(const std::string& key);
  bool Keep(const std::shared_ptr<const CachedObject>& object);
  // Keep for a 304's refresh of an entry whose stored body is unchanged:
  // only its new metadata is written (DiskStore::Refresh); when the store
  // no longer holds that body, the whole entry.
  bool KeepRefreshed(const std::shared_ptr<const CachedObject>& object);
  // `may_block` false: on the event loop (memory only).
  ProxyResponse Serve(const ProxyRequest& req, const std::shared_ptr<const CachedObject>& object,
                      CacheStatus x_cache, bool may_block = true);
  // Whether serving `object` to `req` needs a decode or an encode that no
  // copy in memory saves.
  bool NeedsDecode(const ProxyRequest& req, const CachedObject& object);
  // The codings `object` may be sent in: zstd when stored so; br and gzip
  // variants of eligible text the cache compressed (a 200), unless turned off.
  CodingOffer Offer(const CachedObject& object) const;
  // The br or gzip body of a zstd object, from memory or encoded now from
  // its decoded copy (and kept beside it, under the object's id); nullptr
  // when it cannot be made.
  std::shared_ptr<const CachedObject> VariantCopy(const CachedObject& object, Coding coding);
  // What an answer in `coding` is cut from: the object itself (its stored
  // bytes, or a big object's frames), a variant or the decoded copy;
  // nullptr when that cannot be made.
  std::shared_ptr<const CachedObject> AnswerSource(const ProxyRequest& req,
                                                   const std::shared_ptr<const CachedObject>& object, Coding coding);
  // The dcz answer to `req` (`partial`: its headers so far) when it names
  // a dictionary and DczVariant has one; else nullopt, `partial`'s Vary
  // set for a request that named one.
  std::optional<ProxyResponse> DczAnswer(const ProxyRequest& req, const std::shared_ptr<const CachedObject>& object,
                                         Coding coding, bool may_block, ProxyResponse* partial);
  // Counts an answer in the per-coding metrics.
  ProxyResponse Counted(Coding coding, ProxyResponse r);
  // Compression dictionaries (proxy_dictionary.cc). MarkDictionary: sets
  // Use-As-Dictionary on the answer when the settings mark it (`tier`: a
  // lower tier's request, marked whatever its scheme) and, on a worker,
  // keeps an answer marked so (by them or the origin) as a dictionary.
  // DczVariant: the dcz body for `req`, or nullptr (no dictionary applies,
  // it would not be smaller than `ordinary` bytes, or it is not in memory
  // and !may_block); `*used`: the dictionary. DictionaryWork: whether
  // either has work only a worker may do (for the event loop).
  void MarkDictionary(const ProxyRequest& req, const std::shared_ptr<const CachedObject>& object, bool tier,
                      bool may_block, ProxyResponse* r);
  std::shared_ptr<const CachedObject> DczVariant(const ProxyRequest& req,
                                                 const std::shared_ptr<const CachedObject>& object, uint64_t ordinary,
                                                 bool may_block, DictionaryInfo* used);
  bool DictionaryWork(const ProxyRequest& req, const CachedObject& object);
  // A shared answer of the cache's own zstd within the size bound.
  bool DictionaryEligible(const CachedObject& object) const;
  // The mark that applies to an answer of `object` to `req`, or nullopt;
  // `*configured`: it came from the settings (not the origin).
  std::optional<DictionaryMark> MarkFor(const ProxyRequest& req, const CachedObject& object, bool tier,
                                        bool* configured) const;
  // What a dictionary kept from this answer would be (its hash not yet
  // computed), or nullopt when none may be (not a secure context, a
  // pattern ferry cannot evaluate, no lifetime left).
  std::optional<DictionaryInfo> Keepable(const ProxyRequest& req, const CachedObject& object,
                                         const DictionaryMark& mark) const;
  bool KeptAlready(const std::string& key, uint64_t id, int64_t expires, int64_t now) const;
  void KeepDictionary(const std::string& origin, const std::shared_ptr<const CachedObject>& object,
                      DictionaryInfo info);
  // A dictionary of `origin` by its SHA-256 (raw bytes): from memory, else
  // (may_block) the store.
  std::optional<DictionaryInfo> KnownDictionary(const std::string& origin, const std::string& hash, bool may_block);
  std::optional<DictionaryInfo> DictionaryFor(const ProxyRequest& req, bool may_block);
  bool Remember(const std::string& known, DictionaryInfo info);  // into dictionaries_; whether it is new
  std::shared_ptr<const CachedObject> DictionaryBytes(const std::string& origin, const DictionaryInfo& dict);
  std::shared_ptr<const CachedObject> MakeDcz(const std::shared_ptr<const CachedObject>& object,
                                              const DictionaryInfo& dict, const std::string& key);
  // Writes a dictionary of `origin` to the store (its body as `encoding`
  // says); false (logged) when the store refused it.
  bool StoreDictionary(const std::string& origin, const DictionaryInfo& info, StoredEncoding encoding,
                       const std::string& body, uint64_t logical_length);
  // Between tiers (proxy_tier_dictionary.cc): a parent notes the marked
  // answers it sends lower tiers by their hash and answers GET
  // /_ferry/dictionary/HEX (admin addresses) with one; a lower tier asks
  // its parents for a dictionary it does not know.
  struct TierDictionary {
    std::string key, host, path;  // the entry, and the request it answered
    uint64_t id = 0;
    DictionaryMark mark;
  };
  static bool IsDictionaryExport(std::string_view path);
  void NoteTierDictionary(const ProxyRequest& req, const std::shared_ptr<const CachedObject>& object,
                          const DictionaryMark& mark);
  bool TierDictionaryNoted(const CachedObject& object) const;
  ProxyResponse ExportDictionary(const ProxyRequest& req);
  std::optional<DictionaryInfo> FetchDictionary(const ProxyRequest& req, const std::string& origin,
                                                const std::string& hash);
  // The identity body of a zstd object, from memory or decoded now (and
  // kept); nullptr when it does not decode (the entry is then removed).
  std::shared_ptr<const CachedObject> DecodedCopy(const CachedObject& object);
  // From both memory sets, and a compression behind its fill (whether one was given up).
  bool Forget(const std::string& key);
  // Keep without giving up a compression behind a fill (the encoder's sink).
  bool Store(const std::shared_ptr<const CachedObject>& object, bool sync = true);
  // Compresses `object` in place when eligible; its original (for
  // decoded_, under the object's id once prepared), or nullptr.
  std::shared_ptr<CachedObject> CompressInline(CachedObject* object);
  // The same for a body under --min-size, with its class's trained
  // dictionary (trained_dictionaries.h) when one saves enough.
  std::shared_ptr<CachedObject> CompressSmall(CachedObject* object);
  // Compressing behind fills (proxy_encode.cc). EncodeBehind: `object`
  // prepared and queued, served meanwhile from memory as it came; false
  // when it is over encode_behind_max or the encoder takes no more
  // (nothing published: compress inline). FinishEncode: the encoder's
  // sink. DropPending: gives up the key's compression behind its fill,
  // after waiting out a store of it under way (so what the caller stores
  // next is newer); whether there was one.
  bool EncodeBehind(const std::shared_ptr<CachedObject>& object);
  void FinishEncode(std::vector<FillEncoder::Done> turn);
  void StoreEncoded(FillEncoder::Done* done);  // one of a turn's, marked `storing`
  bool DropPending(const std::string& key);
  void WaitWhileStoring(std::unique_lock<std::mutex>& lock, const std::string& key);  // lock: on pending_mu_
  // The memory tier's object for `key`, or one waiting for its compression.
  std::shared_ptr<const CachedObject> InMemory(const std::string& key);

  ProxyOptions options_;
  DiskStore* store_;
  Upstream* upstream_;
  std::vector<std::string> parent_names_;  // options_.parents as "host:port" (parent_choice.h)
  HotSet hot_;      // stored objects (memory_bytes / 2)
  // Representations made from zstd objects (memory_bytes / 2): decoded
  // copies for identity clients (under the object's key) and br / gzip
  // variants (under key "\n" coding).
  HotSet decoded_;
  SingleFlight<std::string, std::shared_ptr<const Fill>> flights_;
  ProxyCounters counters_;
  std::mutex big_mu_;
  std::unordered_map<std::string, std::shared_ptr<Fetched>> big_fills_;  // guarded by big_mu_: filling now
  // Fill bodies whose compression is behind them, by key: the encoder's
  // result is stored only while its object is still the one here (a
  // newer fill, a 304's refresh or a PURGE drops it).
  struct PendingEncode {
    std::shared_ptr<const CachedObject> object;  // as it came, prepared
    bool storing = false;  // the sink stores its compressed form now
  };
  std::mutex pending_mu_;
  std::condition_variable pending_stored_;  // a key's `storing` ended
  std::unordered_map<std::string, PendingEncode> pending_;  // guarded by pending_mu_
  // Dictionaries known, by origin and SHA-256 ("origin\nhash"), and the
  // entries kept as one ("origin\nkey" -> object id, its expiry), so a hit
  // costs no hashing.
  mutable std::mutex dict_mu_;
  std::unordered_map<std::string, DictionaryInfo> dictionaries_;                // guarded by dict_mu_
  std::unordered_map<std::string, std::pair<uint64_t, int64_t>> dictionary_of_;  // guarded by dict_mu_
  std::unordered_map<std::string, TierDictionary> tier_dictionaries_;  // guarded by dict_mu_: by hash
  std::unordered_map<std::string, int64_t> parent_misses_;  // guarded by dict_mu_: "origin\nhash" -> until
  SingleFlight<std::string, std::shared_ptr<const CachedObject>> dcz_flights_;
  TranscodeSettings small_transcode_;  // options_.transcode without its min_size
  std::unique_ptr<TrainedDictionaries> trained_;  // null when off
  std::unique_ptr<FillEncoder> encoder_;  // destroyed (drained) after the pools, before the rest
  engine::BoundedPool big_fill_pool_;  // writes big objects from spools (proxy_big.cc)
  engine::BoundedPool exchange_pool_;  // last: destroyed (joined) first
};

// Header helpers (http/headers.h), also under cache::.
using http::EndToEnd;
using http::HeaderValue;

}  // namespace ferry::cache
