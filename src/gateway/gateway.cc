// The gateway's front: metrics, routing, SigV4, the one bucket, dispatch.

#include "gateway/gateway.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/prom_text.h"
#include "base/unix_time.h"
#include "crypto/digest.h"
#include "gateway/gateway_internal.h"
#include "gateway/s3_xml.h"
#include "s3/aws_chunked.h"
#include "s3/flexible_checksum.h"

namespace ferry::gateway {
namespace {

constexpr std::string_view kMetricsPath = "/_ferry/metrics";

bool IsLoopback(const std::string& peer) {
  return peer == "::1" || peer.rfind("127.", 0) == 0 || peer.rfind("::ffff:127.", 0) == 0;
}

s3::KeyValues LowerCaseNames(const http::Headers& h) {
  s3::KeyValues out;
  out.reserve(h.size());
  for (const auto& [name, value] : h) {
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
    out.emplace_back(std::move(n), value);
  }
  return out;
}

bool IsUpload(s3::Op op) { return op == s3::Op::kPutObject || op == s3::Op::kUploadPart; }

http::ServerResponse PromAnswer(std::string text) {
  http::ServerResponse resp;
  http::SetHeader(&resp.headers, "Content-Type", "text/plain; version=0.0.4");
  resp.SetBody(std::move(text));
  return resp;
}

http::ServerRequest WithBody(const http::ServerRequest& req, std::string payload) {
  http::ServerRequest plain;
  plain.method = req.method;
  plain.target = req.target;
  plain.headers = req.headers;
  plain.peer = req.peer;
  plain.version = req.version;
  plain.body = std::move(payload);
  return plain;
}

}  // namespace

const char* FromName(From f) {
  switch (f) {
    case From::kDestination:
      return "destination";
    case From::kOnDemand:
      return "on_demand";
    case From::kPassthrough:
      return "passthrough";
    case From::kWrite:
      return "write";
    case From::kListing:
      return "listing";
    case From::kError:
      return "error";
  }
  return "unknown";
}

Gateway::Impl::Impl(GatewayOptions o, GatewayStores s)
    : options(std::move(o)), stores(std::move(s)) {
  // No queue: a copy never waits behind others; past the threads it runs
  // on the request's worker.
  copiers = std::make_unique<engine::BoundedPool>(
      static_cast<size_t>(std::max(1, options.copy_threads)), 0);
  renewer = std::thread([this] { RenewLoop(); });
}

Gateway::Impl::~Impl() {
  copiers.reset();  // copies in flight end first (their claims renewed meanwhile)
  {
    std::lock_guard lock(renew_mu);
    stopping = true;
  }
  renew_cv.notify_all();
  renewer.join();
}

void Gateway::Impl::RenewLoop() {
  const auto every = std::max(options.lease / 3, std::chrono::milliseconds(100));
  std::unique_lock lock(renew_mu);
  while (!renew_cv.wait_for(lock, every, [&] { return stopping; })) {
    bool busy = writes_in_flight.load() > 0;
    {
      std::lock_guard copies_lock(copies_mu);
      busy |= !copies.empty();
    }
    if (!busy) continue;
    Status st =
        stores.state->RenewLeases(options.job, options.owner, NowUnixMs() + options.lease.count());
    if (!st.ok()) spdlog::warn("gateway: renewing its claims failed: {}", st.ToString());
  }
}

Result<state::JobRecord> Gateway::Impl::Job(bool refresh) {
  std::lock_guard lock(job_mu);
  const auto now = std::chrono::steady_clock::now();
  if (refresh || job.id.empty() || now - job_read > std::chrono::milliseconds(200)) {
    FERRY_ASSIGN_OR_RETURN(job, stores.state->GetJob(options.job));
    job_read = now;
  }
  return job;
}

std::optional<state::JobState> Gateway::Impl::Ended(bool refresh) {
  auto j = Job(refresh);
  if (j.ok() && (j->archived || state::IsFinal(j->state))) return j->state;
  return std::nullopt;
}

http::ServerResponse Gateway::Impl::Count(http::ServerResponse resp, From from, uint64_t bytes) {
  if (resp.status >= 400) from = From::kError;
  metrics.answers[static_cast<int>(from)]++;
  metrics.bytes[static_cast<int>(from)] += bytes;
  http::SetHeader(&resp.headers, "x-ferry-answer", FromName(from));
  return resp;
}

http::ServerResponse Gateway::Impl::Error(const Request& r, const Status& st) {
  return Count(ErrorAnswer(st, r.http->target), From::kError);
}

Gateway::Gateway(GatewayOptions options, GatewayStores stores)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(stores))) {}

Gateway::~Gateway() { Drain(); }

void Gateway::Drain() {
  std::unique_lock lock(impl_->copies_mu);
  impl_->drained.wait(lock, [&] { return impl_->copies.empty(); });
}

// A HEAD's answer carries no body, errors included: what a GET would have
// sent is its Content-Length. A CORS preflight is answered before any
// authentication (browsers send it without credentials).
http::ServerResponse Gateway::Handle(const http::ServerRequest& req) {
  const std::string origin = http::HeaderValue(req.headers, "origin");
  if (req.method == "OPTIONS") return Preflight(req, origin);
  http::ServerResponse resp = Dispatch(req);
  AddCorsHeaders(impl_->options.cors, origin, &resp.headers);
  if (req.method == "HEAD" && !resp.body.empty()) {
    resp.head_length = resp.body.size();
    resp.body = {};
    resp.keep.reset();
  }
  return resp;
}

bool Gateway::StreamBody(const http::ServerRequest& head) {
  auto target =
      s3::Route(s3::RouteInput{head.method, head.target, http::HeaderValue(head.headers, "host"),
                               !http::HeaderValue(head.headers, "x-amz-copy-source").empty()});
  return target.ok() && IsUpload(target->op);
}

http::ServerResponse Gateway::Preflight(const http::ServerRequest& req, const std::string& origin) {
  Impl& g = *impl_;
  PreflightAnswer a = gateway::Preflight(
      g.options.cors, origin, http::HeaderValue(req.headers, "access-control-request-method"),
      http::HeaderValue(req.headers, "access-control-request-headers"));
  if (a.status != 200) {
    g.metrics.preflights_refused++;
    return ErrorAnswer(s3::S3ErrorStatus(403, "AccessForbidden", a.refusal), req.target);
  }
  g.metrics.preflights_allowed++;
  http::ServerResponse resp;
  resp.headers = std::move(a.headers);
  return resp;
}

http::ServerResponse Gateway::Dispatch(const http::ServerRequest& req) {
  Impl& g = *impl_;
  Request r;
  r.http = &req;
  if (req.target == kMetricsPath && req.method == "GET") {
    if (!IsLoopback(req.peer)) {
      return g.Error(r, s3::S3ErrorStatus(403, "AccessDenied", "metrics are for loopback clients"));
    }
    return PromAnswer(MetricsText());
  }
  auto target =
      s3::Route(s3::RouteInput{req.method, req.target, http::HeaderValue(req.headers, "host"),
                               !http::HeaderValue(req.headers, "x-amz-copy-source").empty()});
  if (!target.ok()) return g.Error(r, target.status());
  r.target = std::move(*target);
  r.key = r.target.key;
  // The signature first (from the header alone), then the body: an upload
  // with a length streams on, checked as the store reads it; any other
  // body is read and checked whole first.
  const s3::KeyValues headers = LowerCaseNames(req.headers);
  s3::ReceivedRequest rr{req.method, r.target.canonical_path, &r.target.query, &headers};
  auto verified = s3::Verify(rr, g.options.keys, std::chrono::system_clock::now());
  if (!verified.ok()) {
    if (verified.status().http_status() == 403) g.metrics.auth_failures++;
    return g.Error(r, verified.status());
  }
  ViewSource held(req.body);
  RequestBodySource arriving(req.stream.get());
  ByteSource* raw = req.stream ? static_cast<ByteSource*>(&arriving) : &held;
  std::optional<uint64_t> raw_length =
      req.stream ? req.stream->length() : std::optional<uint64_t>(req.body.size());
  auto plan = PlanUpload(headers, std::move(verified->chain), raw_length);
  if (!plan.ok()) return g.Error(r, plan.status());
  // An empty body is held: nothing would be read, so nothing checked.
  const bool streamed =
      req.stream && !verified->deferred && plan->size.value_or(0) > 0 && IsUpload(r.target.op);
  UploadBody body(raw, std::move(*plan), verified->deferred);
  http::ServerRequest whole;
  if (streamed) {
    r.upload = &body;
    g.metrics.streamed_uploads++;
  } else {
    auto payload = body.ReadAll(g.options.max_held_body);
    if (req.stream) req.stream->Abandon();
    Status st = payload.status();
    if (st.ok() && verified->deferred) st = s3::VerifyDeferred(rr, g.options.keys, body.sha256());
    if (!st.ok()) {
      if (st.http_status() == 403) g.metrics.auth_failures++;
      return g.Error(r, st);
    }
    r.checksum = IsUpload(r.target.op) ? body.checksum() : std::nullopt;
    if (req.stream || *payload != req.body) r.http = &(whole = WithBody(req, std::move(*payload)));
  }
  return g.Serve(r);
}

// An authenticated request, its body ready (r.upload or r.http->body), to
// the operation it names.
http::ServerResponse Gateway::Impl::Serve(const Request& r) {
  using s3::Op;
  if (r.target.op == Op::kListBuckets) {
    http::ServerResponse resp;
    http::SetHeader(&resp.headers, "Content-Type", "application/xml");
    resp.SetBody(ListBucketsXml(options.bucket));
    return Count(std::move(resp), From::kListing);
  }
  if (r.target.op == Op::kCreateBucket) return CreateBucket(r);
  if (r.target.bucket != options.bucket) {
    return Error(r, s3::S3ErrorStatus(404, "NoSuchBucket",
                                      "The specified bucket does not exist (this gateway serves "
                                      "only " +
                                          options.bucket + ")"));
  }
  switch (r.target.op) {
    case Op::kHeadBucket: {
      http::ServerResponse resp;
      http::SetHeader(&resp.headers, "x-amz-bucket-region", options.region);
      return Count(std::move(resp), From::kListing);
    }
    case Op::kBucketLocation: {
      http::ServerResponse resp;
      http::SetHeader(&resp.headers, "Content-Type", "application/xml");
      resp.SetBody(LocationXml(options.region));
      return Count(std::move(resp), From::kListing);
    }
    case Op::kListObjectsV2:
    case Op::kListObjectsV1:
      return List(r);
    case Op::kGetObject:
    case Op::kHeadObject:
      return GetOrHead(r);
    case Op::kGetObjectAttributes:
      return GetObjectAttributes(r);
    case Op::kListParts:
      return ListParts(r);
    case Op::kPutObject:
      return Put(r);
    case Op::kCopyObject:
      return CopyObject(r);
    case Op::kDeleteObject:
      return Delete(r);
    case Op::kDeleteObjects:
      return DeleteMany(r);
    case Op::kCreateMultipart:
      return CreateMultipart(r);
    case Op::kUploadPart:
      return UploadPart(r);
    case Op::kCompleteMultipart:
      return CompleteMultipart(r);
    case Op::kAbortMultipart:
      return AbortMultipart(r);
    default:
      return Error(r, s3::S3ErrorStatus(501, "NotImplemented",
                                        "ferry gateway does not implement " +
                                            std::string(s3::OpName(r.target.op))));
  }
}

// Clients that make sure of their bucket first (rclone at its defaults) get
// what S3 answers its owner: 200 in us-east-1, else 409
// BucketAlreadyOwnedByYou. No other bucket can be made here.
http::ServerResponse Gateway::Impl::CreateBucket(const Request& r) {
  if (r.target.bucket != options.bucket) {
    return Error(r, s3::S3ErrorStatus(403, "AccessDenied",
                                      "this gateway serves only the bucket " + options.bucket));
  }
  if (options.region != "us-east-1") {
    return Error(r, s3::S3ErrorStatus(409, "BucketAlreadyOwnedByYou",
                                      "Your previous request to create the named bucket "
                                      "succeeded and you already own it."));
  }
  http::ServerResponse resp;
  http::SetHeader(&resp.headers, "Location", "/" + options.bucket);
  return Count(std::move(resp), From::kListing);
}

std::string Gateway::MetricsText() const {
  const Metrics& m = impl_->metrics;
  PromText t;
  t.Family("ferry_gateway_requests_total", "counter",
           "Answers, by where they came from (destination, on_demand, passthrough, write, "
           "listing, error).");
  for (int i = 0; i < kFromCount; ++i) {
    t.Sample(static_cast<double>(m.answers[i].load()), {{"answer", FromName(From(i))}});
  }
  t.Family("ferry_gateway_response_bytes_total", "counter",
           "Object bytes answered, by where they came from.");
  for (int i = 0; i < kFromCount; ++i) {
    t.Sample(static_cast<double>(m.bytes[i].load()), {{"answer", FromName(From(i))}});
  }
  t.Family("ferry_gateway_on_demand_copies_total", "counter",
           "Objects copied from the source by the gateway ahead of the bulk copy, written and "
           "marked in the job.")
      .Sample(static_cast<double>(m.on_demand_copies.load()));
  t.Family("ferry_gateway_on_demand_bytes_total", "counter", "Bytes of those copies.")
      .Sample(static_cast<double>(m.on_demand_bytes.load()));
  t.Family("ferry_gateway_shared_fetches_total", "counter",
           "Reads answered from another read's on-demand fetch of the same key.")
      .Sample(static_cast<double>(m.shared_fetches.load()));
  t.Family("ferry_gateway_busy_waits_total", "counter",
           "Reads that waited for a worker's copy of their key.")
      .Sample(static_cast<double>(m.busy_waits.load()));
  t.Family("ferry_gateway_source_errors_total", "counter",
           "Reads answered 503 because the source failed.")
      .Sample(static_cast<double>(m.source_errors.load()));
  t.Family("ferry_gateway_persist_failures_total", "counter",
           "On-demand copies answered but not written or not marked (the bulk copy does them).")
      .Sample(static_cast<double>(m.persist_failures.load()));
  t.Family("ferry_gateway_auth_failures_total", "counter", "Requests refused by SigV4.")
      .Sample(static_cast<double>(m.auth_failures.load()));
  t.Family("ferry_gateway_streamed_uploads_total", "counter",
           "Uploads (PutObject, UploadPart) written to the destination as their bodies arrived.")
      .Sample(static_cast<double>(m.streamed_uploads.load()));
  t.Family("ferry_gateway_cors_preflights_total", "counter",
           "CORS preflights (OPTIONS) answered, by result (allowed, refused).")
      .Sample(static_cast<double>(m.preflights_allowed.load()), {{"result", "allowed"}})
      .Sample(static_cast<double>(m.preflights_refused.load()), {{"result", "refused"}});
  return t.Take();
}

}  // namespace ferry::gateway
