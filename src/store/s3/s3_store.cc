#include "store/s3/s3_store.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <random>

#include "base/await.h"
#include "base/cancel.h"
#include "base/strings.h"
#include "crypto/digest.h"
#include "s3/flexible_checksum.h"
#include "s3/sigv4.h"
#include "s3/xml.h"
#include "store/http/http_get.h"
#include "store/s3/addressing.h"
#include "store/s3/aws_chunked_source.h"
#include "store/s3/s3_errors.h"
#include "store/s3/s3_headers.h"
#include "store/stream_taps.h"

namespace ferry {
namespace {

using s3::AddObjectHeaders;
using s3::EtagIsMd5;
using s3::InfoFromHeaders;
using s3::KeyValues;

class S3Store : public ObjectStore, public AsyncObjectIo {
 public:
  S3Store(S3StoreOptions o, s3::Addressing addressing)
      : opt_(std::move(o)), addressing_(std::move(addressing)) {}

  std::string Describe() const override { return opt_.scheme + "://" + opt_.bucket; }

  StoreFeatures Features() const override {
    StoreFeatures f;
    f.server_side_copy = true;
    f.range_listing = true;
    return f;
  }

  Result<ListPage> List(const ListOptions& o) override {
    Call c;
    c.method = "GET";
    c.query = {{"list-type", "2"},
               {"encoding-type", "url"},
               {"max-keys", std::to_string(std::clamp(o.max_keys, 1, 1000))}};
    if (!o.prefix.empty()) c.query.emplace_back("prefix", o.prefix);
    if (!o.delimiter.empty()) c.query.emplace_back("delimiter", o.delimiter);
    if (!o.start_after.empty()) c.query.emplace_back("start-after", o.start_after);
    if (!o.continuation_token.empty()) {
      c.query.emplace_back("continuation-token", o.continuation_token);
    }
    FERRY_ASSIGN_OR_RETURN(http::Response r, Run(c, nullptr));
    return s3::ParseListObjectsV2(r.body);
  }

  Result<ObjectInfo> Head(std::string_view key) override {
    Call c;
    c.method = "HEAD";
    c.headers.emplace_back("x-amz-checksum-mode", "ENABLED");
    c.key = key;
    auto r = Run(c, nullptr);
    if (r.ok()) return InfoFromHeaders(key, *r);
    // HEAD answers carry no error document, so "403" or "404" alone cannot
    // tell a wrong key id from a wrong secret, or a missing bucket from a
    // missing key. A one-byte GET, made only on this error path, can.
    if (r.status().remote_code().empty() && r.status().http_status() >= 400 &&
        r.status().http_status() < 500) {
      Call probe = c;
      probe.method = "GET";
      probe.headers.emplace_back("Range", "bytes=0-0");
      StringSink discard;
      auto detail = Once(probe, &discard);
      if (!detail.ok() && !detail.status().remote_code().empty()) return detail.status();
    }
    return r.status();
  }

  // The blocking calls are the asynchronous ones waited for, so both share
  // one implementation.
  Result<ObjectInfo> Get(std::string_view key, const GetOptions& o, ByteSink& sink) override {
    return AwaitCallback<Result<ObjectInfo>>(
        [&](auto done) { GetAsync(key, o, sink, std::move(done)); });
  }

  Result<ObjectInfo> Put(std::string_view key, ByteSource& body, uint64_t size,
                         const PutOptions& o) override {
    return AwaitCallback<Result<ObjectInfo>>(
        [&](auto done) { PutAsync(key, body, size, o, std::move(done)); });
  }

  AsyncObjectIo* Async() override { return this; }

  void GetAsync(std::string_view key, const GetOptions& o, ByteSink& sink, Done done) override {
    auto op = std::make_shared<GetOp>(sink);
    op->key = std::string(key);
    op->options = o;
    // The version being read: the caller's, else the first answer's. A
    // resumed read is pinned to it with If-Match, so it never splices two
    // versions; without a known ETag an interrupted read cannot resume.
    op->etag = o.if_match;
    op->done = std::move(done);
    GetAttempt(std::move(op), 1);
  }

  void PutAsync(std::string_view key, ByteSource& body, uint64_t size, const PutOptions& o,
                Done done) override {
    auto op = std::make_shared<PutOp>(body);
    op->key = std::string(key);
    op->headers = o.headers;
    Call& c = op->call;
    c.method = "PUT";
    c.key = op->key;
    c.body_size = size;
    AddObjectHeaders(o.headers, &c.headers);
    if (!o.content_md5.empty()) c.headers.emplace_back("Content-MD5", o.content_md5);
    // A full-object checksum travels with the body; the server compares
    // (BadDigest) and keeps it. A composite one belongs to its parts.
    if (o.checksum && o.checksum->type == ChecksumType::kFullObject) {
      c.headers.emplace_back(std::string(ChecksumHeaderName(o.checksum->algorithm)),
                             o.checksum->value);
    }
    VerifyBody(o.content_md5, body, &op->md5, &c);
    if (!o.checksum && o.trailing_checksum)
      SendWithTrailer(*o.trailing_checksum, size, &op->chunked, &c);
    RunAsync(op->call, nullptr, [op, size, done = std::move(done)](Result<http::Response> r) {
      if (!r.ok()) return done(r.status());
      ObjectInfo info;
      info.key = op->key;
      info.size = size;
      info.etag = s3::Unquote(r->Get("etag"));
      info.headers = std::move(op->headers);
      info.checksum = s3::InfoFromHeaders(op->key, *r).checksum;
      done(std::move(info));
    });
  }

  Result<std::string> CreateMultipart(std::string_view key, const PutOptions& o) override {
    Call c;
    c.method = "POST";
    c.key = key;
    c.query = {{"uploads", ""}};
    AddObjectHeaders(o.headers, &c.headers);
    if (o.checksum) {  // the upload's algorithm and type: its parts carry it
      c.headers.emplace_back("x-amz-checksum-algorithm",
                             std::string(ChecksumAlgorithmName(o.checksum->algorithm)));
      c.headers.emplace_back("x-amz-checksum-type",
                             std::string(s3::ChecksumTypeName(o.checksum->type)));
    }
    FERRY_ASSIGN_OR_RETURN(http::Response r, Run(c, nullptr));
    return s3::ParseInitiateMultipartUpload(r.body);
  }

  Result<PartInfo> UploadPart(std::string_view key, std::string_view upload_id, int part_number,
                              ByteSource& body, uint64_t size, const PartOptions& o) override {
    Md5Source md5(body);
    Call c;
    c.method = "PUT";
    c.key = key;
    c.query = {{"partNumber", std::to_string(part_number)}, {"uploadId", std::string(upload_id)}};
    c.body_size = size;
    if (!o.content_md5.empty()) c.headers.emplace_back("Content-MD5", o.content_md5);
    if (o.checksum) {
      c.headers.emplace_back(std::string(ChecksumHeaderName(o.checksum->algorithm)),
                             o.checksum->value);
    }
    VerifyBody(o.content_md5, body, &md5, &c);
    std::optional<AwsChunkedSource> chunked;
    if (!o.checksum && o.trailing_checksum)
      SendWithTrailer(*o.trailing_checksum, size, &chunked, &c);
    FERRY_ASSIGN_OR_RETURN(http::Response r, Run(c, nullptr));
    PartInfo part{part_number, s3::Unquote(r.Get("etag")), size};
    if (auto a = o.checksum ? std::optional(o.checksum->algorithm) : o.trailing_checksum) {
      if (std::string v = r.Get(ChecksumHeaderName(*a)); !v.empty())
        part.checksum = ObjectChecksum{*a, v};
    }
    return part;
  }

  Result<ObjectInfo> CompleteMultipart(std::string_view key, std::string_view upload_id,
                                       const std::vector<PartInfo>& parts) override {
    std::string xml = s3::BuildCompleteMultipartUpload(parts);
    uint64_t total = 0;
    for (const auto& p : parts) total += p.size;
    for (int attempt = 1;; ++attempt) {
      StringSource body(xml);
      Call c;
      c.method = "POST";
      c.key = key;
      c.query = {{"uploadId", std::string(upload_id)}};
      c.body = &body;
      c.body_size = xml.size();
      c.payload_hash = HexLower(Sha256(xml));
      c.headers.emplace_back("Content-Type", "application/xml");
      auto r = Once(c, nullptr);
      Result<std::string> etag =
          r.ok() ? s3::ParseCompleteMultipartUpload(r->body) : Result<std::string>(r.status());
      if (etag.ok()) {
        ObjectInfo info;
        info.key = std::string(key);
        info.size = total;
        info.etag = *etag;
        return info;
      }
      // A retry after a lost answer finds the upload already completed.
      // (Also on the first attempt: the client may have re-sent it on a
      // fresh connection after the first one died without an answer.)
      if (etag.status().remote_code() == "NoSuchUpload") {
        auto info = Head(key);
        if (info.ok() && info->size == total &&
            info->etag.ends_with("-" + std::to_string(parts.size()))) {
          return info;
        }
      }
      if (!ShouldRetry(opt_.retry, etag.status(), attempt)) return Named(etag.status(), key);
      Sleep(etag.status(), attempt);
    }
  }

  Status AbortMultipart(std::string_view key, std::string_view upload_id) override {
    Call c;
    c.method = "DELETE";
    c.key = key;
    c.query = {{"uploadId", std::string(upload_id)}};
    auto r = Run(c, nullptr);
    return r.ok() ? Status::Ok() : r.status();
  }

  Result<std::vector<PartInfo>> ListParts(std::string_view key,
                                          std::string_view upload_id) override {
    std::vector<PartInfo> all;
    int marker = 0;
    for (;;) {
      Call c;
      c.method = "GET";
      c.key = key;
      c.query = {{"uploadId", std::string(upload_id)}, {"max-parts", "1000"}};
      if (marker > 0) c.query.emplace_back("part-number-marker", std::to_string(marker));
      FERRY_ASSIGN_OR_RETURN(http::Response r, Run(c, nullptr));
      bool truncated = false;
      const int before = marker;
      FERRY_ASSIGN_OR_RETURN(auto parts, s3::ParseListParts(r.body, &truncated, &marker));
      all.insert(all.end(), parts.begin(), parts.end());
      if (!truncated || marker == 0) return all;
      // A server whose pages do not move on would be asked forever.
      if (marker <= before)
        return Status::Corruption("ListParts: a truncated page whose marker does not advance");
    }
  }

  // GetObjectAttributes, its parts in pages; a server without it (501)
  // answers what HEAD says.
  Result<ObjectAttributes> Attributes(std::string_view key) override {
    ObjectAttributes all;
    for (int marker = 0;;) {
      Call c;
      c.method = "GET";
      c.key = key;
      c.query = {{"attributes", ""}, {"max-parts", "1000"}};
      if (marker > 0) c.query.emplace_back("part-number-marker", std::to_string(marker));
      c.headers.emplace_back("x-amz-object-attributes", "ETag,Checksum,ObjectParts,ObjectSize");
      auto r = Run(c, nullptr);
      if (!r.ok() && marker == 0 && r.status().http_status() == 501)
        return ObjectStore::Attributes(key);
      if (!r.ok()) return r.status();
      const int before = marker;
      bool truncated = false;
      FERRY_RETURN_IF_ERROR(s3::ParseObjectAttributes(r->body, &all, &truncated, &marker));
      all.info.key = std::string(key);
      if (!truncated) return all;
      if (marker <= before)
        return Status::Corruption(
            "GetObjectAttributes: a truncated page whose marker does not advance");
    }
  }

  Result<std::vector<UploadInfo>> ListMultipartUploads(std::string_view key) override {
    std::vector<UploadInfo> all;
    std::string key_marker, id_marker;
    for (;;) {
      Call c;
      c.method = "GET";
      c.query = {{"uploads", ""}, {"prefix", std::string(key)}, {"encoding-type", "url"}};
      if (!key_marker.empty()) c.query.emplace_back("key-marker", key_marker);
      if (!id_marker.empty()) c.query.emplace_back("upload-id-marker", id_marker);
      FERRY_ASSIGN_OR_RETURN(http::Response r, Run(c, nullptr));
      bool truncated = false;
      const auto before = std::make_pair(key_marker, id_marker);
      FERRY_ASSIGN_OR_RETURN(
          auto page, s3::ParseListMultipartUploads(r.body, &truncated, &key_marker, &id_marker));
      if (truncated && std::make_pair(key_marker, id_marker) == before) {
        return Status::Corruption(
            "ListMultipartUploads: a truncated page whose markers do not advance");
      }
      for (auto& u : page) {
        if (u.key == key) all.push_back(std::move(u));  // not the longer keys sharing the prefix
      }
      if (!truncated) return all;
    }
  }

  Result<ObjectInfo> Copy(std::string_view src_key, std::string_view dst_key,
                          const std::optional<ObjectHeaders>& replace) override {
    Call c;
    c.method = "PUT";
    c.key = dst_key;
    c.headers.emplace_back("x-amz-copy-source",
                           s3::UriEncode("/" + opt_.bucket + "/" + std::string(src_key), false));
    c.headers.emplace_back("x-amz-metadata-directive", replace ? "REPLACE" : "COPY");
    if (replace) AddObjectHeaders(*replace, &c.headers);
    // A 200 can still carry an <Error>: checked inside the retry loop.
    c.check_body = [](const http::Response& r) { return s3::ParseCopyResult(r.body).status(); };
    FERRY_ASSIGN_OR_RETURN(http::Response r, Run(c, nullptr));
    FERRY_ASSIGN_OR_RETURN(std::string etag, s3::ParseCopyResult(r.body));
    ObjectInfo info;
    info.key = std::string(dst_key);
    info.etag = etag;
    return info;
  }

  Status Delete(std::string_view key) override {
    Call c;
    c.method = "DELETE";
    c.key = key;
    auto r = Run(c, nullptr);
    if (!r.ok() && r.status().code() == ErrorCode::kNotFound &&
        r.status().remote_code() == "NoSuchKey") {
      return Status::Ok();
    }
    return r.ok() ? Status::Ok() : r.status();
  }

  static Result<std::unique_ptr<ObjectStore>> Open(S3StoreOptions o);

 private:
  struct Call {
    std::string method;
    std::string_view key;  // "" for bucket-level requests
    KeyValues query;
    http::Headers headers;
    ByteSource* body = nullptr;
    uint64_t body_size = 0;
    std::string payload_hash;         // "" = UNSIGNED-PAYLOAD with a body, empty hash without
    Md5Source* verify_md5 = nullptr;  // compare the answer's ETag with this
    std::string expect_md5;           // or with this hex MD5, when set
    std::function<Status(const http::Response&)> check_headers;  // see http::Request
    std::function<Status(const http::Response&)> check_body;     // of a 2xx answer
  };

  // How an upload's answer is checked: against the caller's Content-MD5 when
  // it gave one (the store checks the body against it too, so hashing it
  // again here would only cost CPU), else against an MD5 taken as it streams.
  static void VerifyBody(std::string_view content_md5, ByteSource& body, Md5Source* md5, Call* c) {
    std::string raw;
    if (!content_md5.empty() && Base64Decode(content_md5, &raw) && raw.size() == 16) {
      c->body = &body;
      c->expect_md5 = HexLower(raw);
      return;
    }
    c->body = md5;
    c->verify_md5 = md5;
  }

  // Frames the body of a PUT as aws-chunked with `a`'s checksum in a
  // trailer, computed as it is sent.
  static void SendWithTrailer(ChecksumAlgorithm a, uint64_t size,
                              std::optional<AwsChunkedSource>* chunked, Call* call) {
    Call& c = *call;
    chunked->emplace(*c.body, size, a);
    c.body = &**chunked;
    c.body_size = AwsChunkedSource::EncodedLength(size, a);
    c.payload_hash = std::string(AwsChunkedSource::kPayloadMode);
    AwsChunkedSource::AddHeaders(size, a, &c.headers);
  }

  using Answer = std::function<void(Result<http::Response>)>;

  // Signs `c` into an HTTP request.
  http::Request Prepare(const Call& c) const {
    std::string path = addressing_.PathFor(opt_.bucket, c.key);
    s3::RequestToSign req;
    req.method = c.method;
    req.path = path;
    req.query = c.query;
    req.headers = c.headers;
    req.headers.emplace_back("host", addressing_.endpoint.HostHeader());
    if (!c.payload_hash.empty()) {
      req.payload_hash = c.payload_hash;
    } else {
      req.payload_hash =
          c.body ? std::string(s3::kUnsignedPayload) : std::string(s3::kEmptyPayloadSha256);
    }
    s3::SignRequest(req, opt_.config.credentials, opt_.config.region, s3::AmzDateNow());

    http::Request hr;
    hr.method = c.method;
    hr.target = s3::UriEncode(path, false);
    std::string q = s3::CanonicalQuery(c.query);
    if (!q.empty()) hr.target += "?" + q;
    hr.headers = std::move(req.headers);
    hr.body = c.body;
    hr.body_size = c.body_size;
    hr.check_headers = c.check_headers;
    return hr;
  }

  // One attempt: wait out the hooks' delay, sign, send, and map a non-2xx
  // answer to a Status. `c`, `sink` and `seen` must outlive `done`; `seen`,
  // when given, keeps the answer's headers even if its body fails.
  void OnceAsync(const Call& c, ByteSink* sink, http::Response* seen, Answer done) {
    struct Attempt {
      http::Request req;
      http::Response resp;
    };
    auto send = [this, &c, sink, seen, done = std::move(done)]() mutable {
      auto a = std::make_shared<Attempt>();
      a->req = Prepare(c);
      http::Response* resp = seen ? seen : &a->resp;
      opt_.client->SendAsync(
          addressing_.endpoint, a->req, sink, resp,
          [this, a, &c, resp, keep = seen != nullptr, done = std::move(done)](Status sent) {
            Result<http::Response> r = Conclude(sent, *resp, c, keep);
            if (opt_.hooks) opt_.hooks->AfterRequest(r.status());
            done(std::move(r));
          });
    };
    auto delay = opt_.hooks ? opt_.hooks->BeforeRequest() : std::chrono::nanoseconds(0);
    if (delay <= std::chrono::nanoseconds(0)) return send();
    After(std::chrono::steady_clock::now() + delay, std::move(send));
  }

  Result<http::Response> Once(const Call& c, ByteSink* sink, http::Response* seen = nullptr) {
    return AwaitCallback<Result<http::Response>>(
        [&](auto done) { OnceAsync(c, sink, seen, std::move(done)); });
  }

  // Maps the answer to a sent request to a Status. The answer is moved out
  // of `resp` unless `keep` (the caller reads it there too).
  static Result<http::Response> Conclude(const Status& sent, http::Response& resp, const Call& c,
                                         bool keep) {
    if (!sent.ok()) return sent;
    Result<http::Response> r =
        keep ? Result<http::Response>(resp) : Result<http::Response>(std::move(resp));
    if (r->status < 200 || r->status >= 300) return s3::ErrorFromResponse(*r);
    if (c.check_body) FERRY_RETURN_IF_ERROR(c.check_body(*r));
    if (c.verify_md5 != nullptr || !c.expect_md5.empty()) {
      std::string etag = s3::Unquote(r->Get("etag"));
      std::string want = c.verify_md5 != nullptr ? c.verify_md5->HexDigest() : c.expect_md5;
      if (EtagIsMd5(*r) && AsciiLower(etag) != want) {
        return Status::Corruption("uploaded body's MD5 differs from the ETag the server returned");
      }
    }
    return r;
  }

  // OnceAsync() under the retry policy, rewinding any body between attempts.
  // Requests with a sink are not retried here (see GetAsync()). `c` must
  // outlive `done`.
  void RunAsync(const Call& c, ByteSink* sink, Answer done, int attempt = 1) {
    OnceAsync(
        c, sink, nullptr,
        [this, &c, sink, attempt, done = std::move(done)](Result<http::Response> r) mutable {
          if (r.ok()) return done(std::move(r));
          bool can_rewind = c.body == nullptr || c.body->Rewind().ok();
          if (sink != nullptr || !can_rewind || !ShouldRetry(opt_.retry, r.status(), attempt)) {
            return done(Named(r.status(), c.key));
          }
          Backoff(r.status(), attempt, [this, &c, sink, attempt, done = std::move(done)]() mutable {
            RunAsync(c, sink, std::move(done), attempt + 1);
          });
        });
  }

  Result<http::Response> Run(const Call& c, ByteSink* sink) {
    return AwaitCallback<Result<http::Response>>(
        [&](auto done) { RunAsync(c, sink, std::move(done)); });
  }

  // A read in progress: what each attempt resumes from.
  struct GetOp {
    explicit GetOp(ByteSink& sink) : counted(sink) {}
    std::string key;
    GetOptions options;
    CountingSink counted;
    std::string etag;
    Call call;             // the attempt in flight
    http::Response seen;   // its answer's headers
    bool started = false;  // the sink has had Start()
    Done done;
  };

  void GetAttempt(std::shared_ptr<GetOp> op, int attempt) {
    const GetOptions& o = op->options;
    uint64_t got = op->counted.count();
    Call& c = op->call;
    c = Call();
    c.method = "GET";
    c.key = op->key;
    ResumeRange want = RangeToResume(o, got);
    if (want.ranged) c.headers.emplace_back("Range", want.value);
    if (!want.ranged) c.headers.emplace_back("x-amz-checksum-mode", "ENABLED");
    if (!op->etag.empty()) c.headers.emplace_back("If-Match", "\"" + op->etag + "\"");
    // Before any byte reaches the sink.
    // (The op outlives its calls; a shared_ptr here would be a cycle.)
    c.check_headers = [raw = op.get(), want](const http::Response& r) {
      Status ok = CheckRangeAnswer(r, want);
      if (!ok.ok() || raw->started) return ok;
      raw->started = true;  // a resumed read is the same version: once is enough
      // Without a length (chunked) the size is not known yet: no Start.
      if (r.Get("content-length").empty() && r.Get("content-range").empty()) return ok;
      return raw->counted.Start(InfoFromHeaders(raw->key, r));
    };
    OnceAsync(c, &op->counted, &op->seen, [this, op, attempt](Result<http::Response> r) mutable {
      if (op->etag.empty() && op->seen.status >= 200 && op->seen.status < 300) {
        op->etag = s3::Unquote(op->seen.Get("etag"));
      }
      if (r.ok()) return op->done(InfoFromHeaders(op->key, *r));
      if (op->counted.count() > 0 && op->etag.empty()) {
        Status s = r.status().WithContext("cannot resume a read of an object without an ETag");
        return op->done(s.set_retryable(false));
      }
      if (!ShouldRetry(opt_.retry, r.status(), attempt)) {
        return op->done(Named(r.status(), op->key));
      }
      Backoff(r.status(), attempt,
              [this, op, attempt]() mutable { GetAttempt(std::move(op), attempt + 1); });
    });
  }

  // An upload in progress.
  struct PutOp {
    explicit PutOp(ByteSource& body) : md5(body) {}
    std::string key;
    ObjectHeaders headers;
    Md5Source md5;
    std::optional<AwsChunkedSource> chunked;  // md5 framed, with a trailing checksum
    Call call;
  };

  // Gives a remote "not found" its precise meaning for messages.
  Status Named(const Status& s, std::string_view key) const {
    if (s.code() == ErrorCode::kNotFound && s.remote_code().empty()) {
      Status n = Status::NotFound(key.empty() ? "no such bucket" : "no such key");
      n.set_remote(s.http_status(), "");
      return n;
    }
    return s;
  }

  // Calls `fn` on a client thread at `until`, or earlier once
  // CancelRequested() (checked every 50 ms, so an interrupted process does
  // not sit out a long wait).
  void After(std::chrono::steady_clock::time_point until, std::function<void()> fn) {
    auto now = std::chrono::steady_clock::now();
    if (now >= until || CancelRequested()) return fn();
    auto slice =
        std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(50), until - now);
    opt_.client->RunAfter(
        slice, [this, until, fn = std::move(fn)]() mutable { After(until, std::move(fn)); });
  }

  // Waits out the backoff after failed attempt `attempt`, then calls `fn`.
  void Backoff(const Status& s, int attempt, std::function<void()> fn) {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    After(std::chrono::steady_clock::now() + BackoffDelay(opt_.retry, s, attempt, r),
          std::move(fn));
  }

  void Sleep(const Status& s, int attempt) {
    AwaitCallback<bool>(
        [&](auto done) { Backoff(s, attempt, [done = std::move(done)] { done(true); }); });
  }

  S3StoreOptions opt_;
  s3::Addressing addressing_;
};

Result<std::unique_ptr<ObjectStore>> S3Store::Open(S3StoreOptions o) {
  FERRY_ASSIGN_OR_RETURN(s3::Addressing addressing,
                         s3::ResolveAddressing(o.bucket, o.config.endpoint_url, o.config.region));
  if (!o.client) {
    if (o.http.ca_file.empty()) o.http.ca_file = o.config.ca_bundle;
    o.client = std::make_shared<http::Client>(o.http);
  }
  return std::unique_ptr<ObjectStore>(new S3Store(std::move(o), std::move(addressing)));
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenS3Store(S3StoreOptions options) {
  return S3Store::Open(std::move(options));
}

}  // namespace ferry
