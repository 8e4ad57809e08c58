#pragma once
// `ferry gateway`: an S3 endpoint in front of a running migration. Clients
// switch to it on day one; it answers from the destination what the job has
// copied and copies on demand, ahead of the bulk copy, what it has not:
//
//  - Reads (GetObject with ranges and conditionals, HeadObject, ListObjects):
//    a key the job has copied, or that was written through the gateway, is
//    served from the destination. A key still pending (or not listed yet)
//    is claimed in the job's state (StateStore::ClaimKey) so no worker copies
//    it meanwhile, fetched from the source once however many clients ask,
//    answered, then written to the destination and marked copied (MarkKey):
//    the job counts it once and its bulk copy never copies it again. A key a
//    worker is copying right now is waited for, then served from the
//    destination. Listings merge the destination's keys with the source's
//    until the job completes (list_merge.h).
//  - Writes (PutObject, CopyObject, multipart uploads, DeleteObject(s)) go to
//    the destination and are marked written or deleted, so the bulk copy
//    neither overwrites nor resurrects them.
//  - When the job has completed, the destination alone answers.
//
// Requests are signed with the gateway's own keys (SigV4, s3/sigv4_verify.h,
// the test server's verifier too); only the one bucket name it serves is
// reachable. A source that fails (outage, 5xx, timeouts) gives 503 for keys
// not yet copied while copied ones are still served. Metrics in Prometheus's
// text form at /_ferry/metrics for loopback clients. Browsers on the
// configured origins may call it (CORS, gateway/cors.h), e.g. to upload
// to a presigned URL.
//
// The state store, both object stores and the key map are the caller's
// (cli/cmd_gateway.cc opens them from the job). Blocking: Handle runs on
// the HTTP server's workers.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "gateway/cors.h"
#include "http/server.h"
#include "s3/sigv4_verify.h"
#include "state/state_store.h"
#include "store/object_store.h"

namespace ferry::gateway {

// Which keys the job copies (its filters, key range, a split part's top
// level), so the gateway copies on demand only what the job itself would,
// and records only writes the job could meet. Keys it leaves out are
// served from the destination, else the source as it is, and written
// straight to the destination. Unset functions admit every key.
struct JobScope {
  // By the client's key alone (include/exclude globs, the key range).
  std::function<bool(const std::string& key)> by_name;
  // With the object's size and last-modified (the size and age filters).
  std::function<bool(const std::string& key, uint64_t size, int64_t last_modified_ms)> by_object;
};

struct GatewayOptions {
  std::string job;
  std::string bucket;  // the bucket name clients use
  std::string region = "us-east-1";
  s3::VerifyKeys keys;
  std::string owner;  // this gateway's name in the job's leases
  // How long a claim lasts without a result (a gateway killed mid-copy: the
  // bulk copy takes the key after it).
  std::chrono::milliseconds lease{60'000};
  // How long a read waits for another party's copy of the same key before
  // answering from the source without copying.
  std::chrono::milliseconds busy_wait{30'000};
  // Objects up to this size are copied on demand through memory: answered
  // as their bytes arrive from the source, then written to the destination;
  // larger ones are copied store to store (multipart) and then served from
  // the destination.
  uint64_t inline_limit = 64ull << 20;
  JobScope scope;
  // Ask the destination before copying even a key the listing has not
  // reached (else, with range shards, such a key is copied without asking):
  // for jobs that keep what the destination has (--overwrite never) or
  // skip what an earlier job copied (--since-last).
  bool look_before_copy = false;
  // On-demand copies running at once on their own threads; past them a
  // copy runs on the request's worker, answered once its body is whole.
  int copy_threads = 16;
  // Which web origins may call it from a browser (none by default).
  CorsPolicy cors;
  // A request body held whole (XML requests; an upload whose signature
  // waits for its body's hash, or sent without a length) is at most this;
  // uploads with a length stream through instead, up to S3's 5 GiB.
  uint64_t max_held_body = 512ull << 20;
};

struct GatewayStores {
  state::StateStore* state = nullptr;
  ObjectStore* src = nullptr;
  ObjectStore* dst = nullptr;
  std::string src_prefix, dst_prefix;  // a client's key K is src_prefix+K, dst_prefix+K
};

class Gateway : public http::Handler {
 public:
  Gateway(GatewayOptions options, GatewayStores stores);
  ~Gateway() override;
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  http::ServerResponse Handle(const http::ServerRequest& req) override;
  // PutObject and UploadPart bodies are taken as they arrive (checked while
  // they stream: gateway/upload_body.h); others whole.
  bool StreamBody(const http::ServerRequest& head) override;
  // The metrics' text (what /_ferry/metrics answers).
  std::string MetricsText() const;
  // Waits until every on-demand copy answered so far is written and marked.
  void Drain();

  struct Impl;

 private:
  http::ServerResponse Dispatch(const http::ServerRequest& req);
  http::ServerResponse Preflight(const http::ServerRequest& req, const std::string& origin);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::gateway
