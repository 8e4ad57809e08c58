#pragma once
// The gateway's insides (gateway.h), shared by its .cc files: requests and
// routing in gateway.cc, reads and on-demand copies in gateway_read.cc,
// writes in gateway_write.cc, listings in gateway_list.cc, answers in
// gateway_answer.cc.

#include <array>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "engine/bounded_pool.h"
#include "gateway/arrival.h"
#include "gateway/conditions.h"
#include "gateway/gateway.h"
#include "gateway/upload_body.h"
#include "s3/route.h"

namespace ferry::gateway {

// Where an answer came from, for the metrics (ferry_gateway_requests_total's
// "answer" label).
enum class From {
  kDestination,  // the destination, the job had copied it (or it was written)
  kOnDemand,     // the source, copied on demand by this answer (or shared with it)
  kPassthrough,  // the source, not copied (waited too long, or not in the job)
  kWrite,        // a write or delete, to the destination
  kListing,      // a merged listing
  kError,        // an error answer
};
constexpr int kFromCount = 6;
const char* FromName(From f);

// One request as the handlers see it.
struct Request {
  const http::ServerRequest* http = nullptr;
  s3::S3Target target;
  std::string key;  // the client's key (target.key)
  // The flexible checksum the upload named, verified against its body
  // (a body read whole; a streamed one has it in `upload` at its end).
  std::optional<ObjectChecksum> checksum;
  // An upload's body still streaming in, checked as it is read; null when
  // the body was read whole (http->body is then its payload).
  UploadBody* upload = nullptr;
  std::string Header(std::string_view name) const;
  RequestConditions Conditions() const;
};

// An object held in memory: its info and its whole body.
struct Held {
  ObjectInfo info;
  std::shared_ptr<const std::string> body;
};

// An on-demand copy in flight in this process: readers of the same key
// read its body as it arrives instead of fetching again; writers of the key
// wait until it is written to the destination (so a late copy never lands
// on a write).
struct Copy {
  explicit Copy(uint64_t cap) : body(std::make_shared<Arrival>(cap)) {}
  std::shared_ptr<Arrival> body;
  std::mutex mu;
  std::condition_variable cv;
  bool persisted = false;  // written and marked (or given up): the entry goes
  Status large;            // a large body's copy store to store, once persisted
  // A windowed body (Arrival::BeginWindow) is kept at the destination (set
  // before its End); else readers that came late read the source.
  std::atomic<bool> kept{true};
};

struct Metrics {
  std::atomic<uint64_t> answers[kFromCount] = {};
  std::atomic<uint64_t> bytes[kFromCount] = {};
  std::atomic<uint64_t> on_demand_copies{0};  // fetched from the source and persisted
  std::atomic<uint64_t> on_demand_bytes{0};
  std::atomic<uint64_t> shared_fetches{0};    // readers served by another's fetch
  std::atomic<uint64_t> busy_waits{0};        // reads that waited for a worker's copy
  std::atomic<uint64_t> source_errors{0};     // 503s for a failing source
  std::atomic<uint64_t> persist_failures{0};  // copies answered but not written
  std::atomic<uint64_t> auth_failures{0};
  std::atomic<uint64_t> streamed_uploads{0};  // bodies written as they arrived
  std::atomic<uint64_t> preflights_allowed{0}, preflights_refused{0};
};

struct Gateway::Impl {
  Impl(GatewayOptions o, GatewayStores s);
  ~Impl();

  GatewayOptions options;
  GatewayStores stores;
  Metrics metrics;

  std::mutex copies_mu;
  std::map<std::string, std::shared_ptr<Copy>> copies;  // by client key
  std::condition_variable drained;
  std::shared_ptr<Copy> CopyOf(const std::string& key);  // null: none in flight
  bool HasCopy(const std::string& key) { return CopyOf(key) != nullptr; }

  // Every thread of this gateway claims as one owner, so the state store
  // cannot keep them apart: a key's lock (striped) is held from a claim to
  // its mark (a write), or until its copy is registered in `copies` (a
  // read), so a read and a write of one key never both hold its claim.
  static constexpr size_t kKeyLocks = 1024;
  std::array<std::mutex, kKeyLocks> key_locks;
  std::mutex& KeyLock(const std::string& key) {
    return key_locks[std::hash<std::string>{}(key) % kKeyLocks];
  }

  // Claims last `options.lease`; while copies or writes are in flight they
  // are renewed every third of it (StateStore::RenewLeases), so a long copy
  // keeps its key and a dead gateway's claims lapse.
  std::atomic<int> writes_in_flight{0};
  std::mutex renew_mu;
  std::condition_variable renew_cv;
  bool stopping = false;
  std::thread renewer;
  void RenewLoop();

  // The job as last read (refreshed at most every 200 ms).
  std::mutex job_mu;
  state::JobRecord job;
  std::chrono::steady_clock::time_point job_read{};
  Result<state::JobRecord> Job(bool refresh = false);
  // The job's state once it has ended (completed, failed, cancelled;
  // archived jobs too): no bulk copy is left to guard against, and no
  // claim or mark can be made any more.
  std::optional<state::JobState> Ended(bool refresh = false);

  // On-demand copies run here: fetched from the source (answering as the
  // bytes arrive), then written to the destination and marked. Last, so
  // its threads are joined before the members they use go.
  std::unique_ptr<engine::BoundedPool> copiers;

  // The job copies this key (by name; JobScope).
  bool InScope(const std::string& key) const {
    return !options.scope.by_name || options.scope.by_name(key);
  }
  std::string SrcKey(const std::string& key) const { return stores.src_prefix + key; }
  std::string DstKey(const std::string& key) const { return stores.dst_prefix + key; }

  // Handlers (each returns the whole answer).
  http::ServerResponse GetOrHead(const Request& r);
  http::ServerResponse List(const Request& r);
  http::ServerResponse Put(const Request& r);
  http::ServerResponse CreateBucket(const Request& r);
  http::ServerResponse CopyObject(const Request& r);
  http::ServerResponse Delete(const Request& r);
  http::ServerResponse DeleteMany(const Request& r);
  http::ServerResponse CreateMultipart(const Request& r);
  http::ServerResponse UploadPart(const Request& r);
  http::ServerResponse GetObjectAttributes(const Request& r);
  http::ServerResponse ListParts(const Request& r);
  http::ServerResponse Serve(const Request& r);
  // Whether the destination keeps a checksum sent as an aws-chunked
  // trailer (asked once, by writing and reading back a probe object): a
  // server that does not would store the framing.
  bool DestinationTakesTrailers();
  std::once_flag trailer_probe;
  bool takes_trailers = false;
  http::ServerResponse CompleteMultipart(const Request& r);
  http::ServerResponse AbortMultipart(const Request& r);

  // Reads: the key made present at the destination (copied on demand when
  // the job has not), or held in memory, or an error; `from` says how.
  struct Found {
    std::optional<Held> held;           // the bytes in memory (small objects)
    std::shared_ptr<Arrival> arriving;  // or arriving from the source (on demand)
    std::shared_ptr<Copy> copy;         // the copy it arrives for
    bool at_destination = false;        // else, without either: large, at the source
    From from = From::kDestination;
  };
  Result<Found> Find(const std::string& key, bool want_body);
  Result<Found> AfterTheJob(const std::string& key, bool want_body, state::JobState ended);
  // A copy of ours in flight for the key: its answer; else nullopt.
  std::optional<Result<Found>> FromOurCopy(const std::string& key, bool want_body);
  // What a claim's outcome answers; nullopt while another party holds it.
  std::optional<Result<Found>> Answer(const std::string& key, bool want_body,
                                      const state::KeyClaim& claim,
                                      std::unique_lock<std::mutex>& key_lock);
  // ClaimKey for this gateway; nullopt once the job has ended (and its
  // rows are archived).
  Result<std::optional<state::KeyClaim>> ClaimFor(const std::string& key, bool insert);
  // Copies a claimed key: registers the copy (then releases `key_lock`),
  // has it fetched, written and marked (RunCopy), and answers as soon as
  // its info has arrived.
  Result<Found> OnDemand(const std::string& key, std::unique_lock<std::mutex>& key_lock);
  // What a copy in flight answers, once its info has arrived (or it failed).
  Result<Found> FromCopy(const std::string& key, const std::shared_ptr<Copy>& copy, bool want_body);
  void RunCopy(const std::string& key, const std::shared_ptr<Copy>& copy);
  void CopyLarge(const std::string& key, const std::shared_ptr<Copy>& copy);
  // A body over the inline limit whose info the source announced: fetched
  // part by part into a window its readers take it from, each part
  // uploaded to the destination as it comes (when the job's scope keeps
  // it), then marked.
  void CopyWindowed(const std::string& key, const std::shared_ptr<Copy>& copy,
                    const ObjectInfo& info);
  Result<ObjectInfo> FetchInParts(const std::string& key, Arrival& body, const ObjectInfo& info,
                                  bool upload);
  // Where a reader that came after a window moved on reads.
  Arrival::Landed LandedOf(const std::string& key, const std::shared_ptr<Copy>& copy);
  Result<Found> FromDestination(const std::string& key, bool want_body);
  Result<Found> Passthrough(const std::string& key, bool want_body);
  Result<Held> Fetch(ObjectStore& store, const std::string& store_key, bool want_body);
  void Persist(const std::string& key, const std::shared_ptr<Copy>& copy);
  // MarkKey(copied) for this gateway's claim, counted in the metrics when
  // it holds (false: the claim was taken over meanwhile).
  Result<bool> MarkCopied(const std::string& key, uint64_t size, const std::string& etag);
  void EndCopy(const std::string& key, const std::shared_ptr<Copy>& copy);

  // Writes: the key claimed for a write (waiting out another's copy), run
  // `write`, then marked `mark`. ReleaseKey when `write` fails.
  Result<ObjectInfo> Write(const std::string& key, state::KeyMark mark,
                           const std::function<Result<ObjectInfo>()>& write);
  Result<ObjectInfo> WriteAfterTheJob(const std::string& key, state::KeyMark mark,
                                      const std::function<Result<ObjectInfo>()>& write);
  // The destination, else the source as it is, but for a key a client
  // deleted through the gateway.
  Result<Found> DestinationElseSource(const std::string& key, bool want_body);

  http::ServerResponse Error(const Request& r, const Status& st);
  http::ServerResponse Count(http::ServerResponse resp, From from, uint64_t bytes = 0);
};

// Answers (gateway_answer.cc).
// An S3 error document for `st` (its remote status and code when set, else
// one matched to its ErrorCode).
http::ServerResponse ErrorAnswer(const Status& st, std::string_view resource);
// GET or HEAD of a held object, with the request's conditions and range.
http::ServerResponse ObjectAnswer(const Request& r, const Held& held, bool head);
// GET or HEAD of an object whose body is read while it is sent: the bytes
// [first, last] the request's range asks for come from `reader(first, last)`.
using ReaderFor = std::function<std::shared_ptr<http::BodyReader>(uint64_t first, uint64_t last)>;
http::ServerResponse StreamAnswer(const Request& r, const ObjectInfo& info, bool head,
                                  const ReaderFor& reader);
// A reader of a large object at a store, in ranges (pinned to its ETag).
ReaderFor RangesOf(ObjectStore& store, const std::string& store_key, const std::string& etag);
// The object headers of a PUT (Content-Type, x-amz-meta-*...).
ObjectHeaders HeadersOfPut(const http::ServerRequest& req);
void AddObjectHeaders(const ObjectInfo& info, http::Headers* h);

}  // namespace ferry::gateway
