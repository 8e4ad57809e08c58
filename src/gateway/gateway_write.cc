// The gateway's writes: each goes to the destination under the key's claim
// in the job's state and is marked there (written or deleted), so the bulk
// copy never overwrites or resurrects it.

#include <spdlog/spdlog.h>

#include <charconv>
#include <thread>

#include "base/unix_time.h"
#include "gateway/gateway_internal.h"
#include "gateway/s3_xml.h"
#include "ops/copy.h"
#include "s3/sigv4.h"

namespace ferry::gateway {
namespace {

http::ServerResponse XmlAnswer(std::string xml) {
  http::ServerResponse resp;
  http::SetHeader(&resp.headers, "Content-Type", "application/xml");
  resp.SetBody(std::move(xml));
  return resp;
}

Status SlowDown(const std::string& key) {
  return s3::S3ErrorStatus(503, "SlowDown",
                           "the migration is copying " + key + " right now; retry shortly");
}

}  // namespace

// Recorded all the same, so what runs on the job later (--delete, a
// resumed or retried run) leaves it alone.
Result<ObjectInfo> Gateway::Impl::WriteAfterTheJob(
    const std::string& key, state::KeyMark mark, const std::function<Result<ObjectInfo>()>& write) {
  auto result = write();
  if (result.ok()) {
    if (Status st = stores.state->RecordKey(options.job, SrcKey(key), mark, NowUnixMs());
        !st.ok()) {
      metrics.persist_failures++;
      spdlog::warn("gateway: {} written after the job, not recorded: {}", key, st.ToString());
    }
  }
  return result;
}

Result<ObjectInfo> Gateway::Impl::Write(const std::string& key, state::KeyMark mark,
                                        const std::function<Result<ObjectInfo>()>& write) {
  // An on-demand copy of ours still being written lands first; then the
  // key's lock is held from the claim to the mark.
  std::unique_lock key_lock(KeyLock(key), std::defer_lock);
  for (;;) {
    if (std::shared_ptr<Copy> mine = CopyOf(key)) {
      std::unique_lock lock(mine->mu);
      mine->cv.wait(lock, [&] { return mine->persisted; });
      continue;
    }
    key_lock.lock();
    if (!HasCopy(key)) break;
    key_lock.unlock();
  }
  writes_in_flight++;
  struct Done {
    std::atomic<int>& n;
    ~Done() { n--; }
  } done{writes_in_flight};
  if (Ended()) return WriteAfterTheJob(key, mark, write);  // no bulk copy left
  const auto deadline = std::chrono::steady_clock::now() + options.busy_wait;
  auto pause = std::chrono::milliseconds(5);
  bool claimed = false;
  for (;;) {
    const int64_t now = NowUnixMs();
    auto claim = stores.state->ClaimKey(options.job, SrcKey(key), options.owner, now,
                                        now + options.lease.count(), true);
    if (!claim.ok() && claim.status().code() == ErrorCode::kNotFound && Ended(true)) {
      return WriteAfterTheJob(key, mark, write);  // it ended (and was archived) meanwhile
    }
    if (!claim.ok()) return claim.status();
    if (claim->kind != state::KeyClaim::Kind::kBusy) {
      claimed = claim->kind == state::KeyClaim::Kind::kClaimed;
      break;
    }
    if (std::chrono::steady_clock::now() + pause > deadline) return SlowDown(key);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
  auto result = write();
  if (!result.ok()) {
    if (claimed) (void)stores.state->ReleaseKey(options.job, SrcKey(key), options.owner);
    return result;
  }
  auto marked = stores.state->MarkKey(options.job, SrcKey(key), options.owner, mark, result->size,
                                      result->etag, NowUnixMs());
  if (!marked.ok() || !*marked) {
    spdlog::warn("gateway: {} {} at the destination but not marked in the job ({})", key,
                 state::ToString(mark),
                 marked.ok() ? "its claim was taken over" : marked.status().ToString());
  }
  return result;
}

// An upload's payload: streaming in (checked as it is read), or held.
struct Payload {
  explicit Payload(const Request& r) : held(r.http->body) {
    source = r.upload ? static_cast<ByteSource*>(r.upload) : &held;
    size = r.upload ? *r.upload->size() : r.http->body.size();
  }
  // The client's own error when its body failed the store's read.
  Status Failure(const Request& r, Status st) const {
    return r.upload && !r.upload->failure().ok() ? r.upload->failure() : st;
  }
  // The checksum verified; known once the body has ended.
  static const std::optional<ObjectChecksum>& Checksum(const Request& r) {
    return r.upload ? r.upload->checksum() : r.checksum;
  }
  ViewSource held;
  ByteSource* source;
  uint64_t size;
};

bool Gateway::Impl::DestinationTakesTrailers() {
  std::call_once(trailer_probe, [this] {
    const std::string key = DstKey(".ferry-gateway-probe-" + std::to_string(NowUnixMs()));
    const std::string probe = "ferry gateway: does this store take aws-chunked trailers?";
    ViewSource src(probe);
    PutOptions po;
    po.trailing_checksum = ChecksumAlgorithm::kCrc32;
    StringSink back;
    takes_trailers = stores.dst->Put(key, src, probe.size(), po).ok() &&
                     stores.dst->Get(key, GetOptions{}, back).ok() && back.data() == probe;
    (void)stores.dst->Delete(key);
    spdlog::info("gateway: the destination {} checksums sent as trailers",
                 takes_trailers ? "keeps" : "does not take");
  });
  return takes_trailers;
}

http::ServerResponse Gateway::Impl::Put(const Request& r) {
  PutOptions po;
  po.headers = HeadersOfPut(*r.http);
  po.content_md5 = r.Header("Content-MD5");
  // Verified here; the destination keeps it where it can. A streamed
  // body's checksum is known up front only when a header names its value.
  // Else the store computes it as it sends and has the destination keep it.
  po.checksum = r.upload ? r.upload->declared_checksum() : r.checksum;
  if (r.upload && !po.checksum && r.upload->checksum_algorithm() && DestinationTakesTrailers()) {
    po.trailing_checksum = r.upload->checksum_algorithm();
  }
  Payload body(r);
  auto put = Write(r.key, state::KeyMark::kWritten, [&]() -> Result<ObjectInfo> {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo info,
                           stores.dst->Put(DstKey(r.key), *body.source, body.size, po));
    info.size = body.size;
    return info;
  });
  if (!put.ok()) return Error(r, body.Failure(r, put.status()));
  http::ServerResponse resp;
  http::SetHeader(&resp.headers, "ETag", "\"" + put->etag + "\"");
  if (const auto& sum = Payload::Checksum(r)) s3::AddChecksumHeaders(*sum, &resp.headers);
  return Count(std::move(resp), From::kWrite, body.size);
}

http::ServerResponse Gateway::Impl::CopyObject(const Request& r) {
  std::string source;
  std::string raw = r.Header("x-amz-copy-source");
  raw = raw.substr(0, raw.find('?'));  // ?versionId: one version here
  if (!s3::UriDecode(raw, &source)) {
    return Error(r, s3::S3ErrorStatus(400, "InvalidArgument", "bad x-amz-copy-source"));
  }
  if (!source.empty() && source.front() == '/') source.erase(0, 1);
  const size_t slash = source.find('/');
  if (slash == std::string::npos || source.substr(0, slash) != options.bucket) {
    return Error(r, s3::S3ErrorStatus(403, "AccessDenied", "copies only within " + options.bucket));
  }
  const std::string from = source.substr(slash + 1);
  auto found = Find(from, true);
  if (!found.ok()) return Error(r, found.status());
  if (found->arriving) {  // copied on demand just now: once it is whole
    auto whole = found->arriving->WaitEnd();
    if (!whole.ok()) return Error(r, whole.status());
    if (found->arriving->windowed()) {
      found->at_destination = true;  // landed there part by part
    } else {
      found->held = Held{*whole, found->arriving->Body()};
    }
  }
  const bool replace = r.Header("x-amz-metadata-directive") == "REPLACE";
  auto copied = Write(r.key, state::KeyMark::kWritten, [&]() -> Result<ObjectInfo> {
    if (found->held) {
      PutOptions po;
      po.headers = replace ? HeadersOfPut(*r.http) : found->held->info.headers;
      ViewSource src(*found->held->body);
      FERRY_ASSIGN_OR_RETURN(ObjectInfo info,
                             stores.dst->Put(DstKey(r.key), src, found->held->body->size(), po));
      info.size = found->held->body->size();
      return info;
    }
    if (stores.dst->Features().server_side_copy) {
      std::optional<ObjectHeaders> headers;
      if (replace) headers = HeadersOfPut(*r.http);
      return stores.dst->Copy(DstKey(from), DstKey(r.key), headers);
    }
    FERRY_ASSIGN_OR_RETURN(auto c, ferry::CopyObject(*stores.dst, DstKey(from), *stores.dst,
                                                     DstKey(r.key), false, CopyOptions{}));
    ObjectInfo info;
    info.etag = c.etag;
    info.size = c.bytes;
    info.last_modified = std::chrono::system_clock::now();
    return info;
  });
  if (!copied.ok()) return Error(r, copied.status());
  TimePoint when = copied->last_modified == TimePoint{} ? std::chrono::system_clock::now()
                                                        : copied->last_modified;
  return Count(XmlAnswer(CopyObjectXml(copied->etag, when)), From::kWrite);
}

http::ServerResponse Gateway::Impl::Delete(const Request& r) {
  auto del = Write(r.key, state::KeyMark::kDeleted, [&]() -> Result<ObjectInfo> {
    FERRY_RETURN_IF_ERROR(stores.dst->Delete(DstKey(r.key)));
    return ObjectInfo{};
  });
  if (!del.ok()) return Error(r, del.status());
  http::ServerResponse resp;
  resp.status = 204;
  return Count(std::move(resp), From::kWrite);
}

http::ServerResponse Gateway::Impl::DeleteMany(const Request& r) {
  auto req = ParseDeleteRequest(r.http->body);
  if (!req.ok()) {
    return Error(r, s3::S3ErrorStatus(400, "MalformedXML", req.status().message()));
  }
  std::vector<DeleteOutcome> outcomes;
  for (const std::string& key : req->keys) {
    auto del = Write(key, state::KeyMark::kDeleted, [&]() -> Result<ObjectInfo> {
      FERRY_RETURN_IF_ERROR(stores.dst->Delete(DstKey(key)));
      return ObjectInfo{};
    });
    DeleteOutcome o{key, "", ""};
    if (!del.ok()) {
      o.error_code =
          del.status().remote_code().empty() ? "InternalError" : del.status().remote_code();
      o.error_message = del.status().message();
    }
    outcomes.push_back(std::move(o));
  }
  return Count(XmlAnswer(DeleteResultXml(outcomes, req->quiet)), From::kWrite);
}

http::ServerResponse Gateway::Impl::CreateMultipart(const Request& r) {
  PutOptions po;
  po.headers = HeadersOfPut(*r.http);
  // A checksum asked for goes on to the destination, which keeps the parts'
  // and the whole's; none asked for, the destination chooses (S3: CRC64NVME).
  if (!r.Header("x-amz-checksum-algorithm").empty() || !r.Header("x-amz-checksum-type").empty()) {
    s3::KeyValues h;
    for (const char* name : {"x-amz-checksum-algorithm", "x-amz-checksum-type"}) {
      if (std::string v = r.Header(name); !v.empty()) h.emplace_back(name, std::move(v));
    }
    auto plan = s3::MultipartChecksumPlan(h);
    if (!plan.ok()) return Error(r, plan.status());
    po.checksum = std::move(*plan);
  }
  auto id = stores.dst->CreateMultipart(DstKey(r.key), po);
  if (!id.ok()) return Error(r, id.status());
  return Count(XmlAnswer(InitiateMultipartXml(options.bucket, r.key, *id)), From::kWrite);
}

http::ServerResponse Gateway::Impl::UploadPart(const Request& r) {
  const std::string* id = r.target.Query("uploadId");
  const std::string* n = r.target.Query("partNumber");
  int number = 0;
  if (n != nullptr) std::from_chars(n->data(), n->data() + n->size(), number);
  if (id == nullptr || number < 1 || number > 10000) {
    return Error(r, s3::S3ErrorStatus(400, "InvalidArgument",
                                      "Part number must be an integer between 1 and 10000"));
  }
  Payload body(r);
  PartOptions po(r.Header("Content-MD5"));
  po.checksum = r.upload ? r.upload->declared_checksum() : r.checksum;
  if (r.upload && !po.checksum && r.upload->checksum_algorithm() && DestinationTakesTrailers()) {
    po.trailing_checksum = r.upload->checksum_algorithm();
  }
  auto part = stores.dst->UploadPart(DstKey(r.key), *id, number, *body.source, body.size, po);
  if (!part.ok()) return Error(r, body.Failure(r, part.status()));
  http::ServerResponse resp;
  http::SetHeader(&resp.headers, "ETag", "\"" + part->etag + "\"");
  if (const auto& sum = Payload::Checksum(r)) s3::AddChecksumHeaders(*sum, &resp.headers);
  return Count(std::move(resp), From::kWrite, body.size);
}

http::ServerResponse Gateway::Impl::CompleteMultipart(const Request& r) {
  const std::string* id = r.target.Query("uploadId");
  auto parts = ParseCompleteParts(r.http->body);
  if (!parts.ok()) {
    return Error(r, s3::S3ErrorStatus(400, "MalformedXML", parts.status().message()));
  }
  auto done = Write(r.key, state::KeyMark::kWritten, [&]() -> Result<ObjectInfo> {
    return stores.dst->CompleteMultipart(DstKey(r.key), *id, *parts);
  });
  if (!done.ok()) return Error(r, done.status());
  // The checksum the destination built from the parts, when it keeps one.
  std::optional<ObjectChecksum> checksum;
  if (auto head = stores.dst->Head(DstKey(r.key)); head.ok() && head->etag == done->etag) {
    checksum = head->checksum;
  }
  return Count(XmlAnswer(CompleteMultipartXml(options.bucket, r.key, done->etag, checksum)),
               From::kWrite);
}

http::ServerResponse Gateway::Impl::AbortMultipart(const Request& r) {
  const std::string* id = r.target.Query("uploadId");
  if (Status st = stores.dst->AbortMultipart(DstKey(r.key), *id); !st.ok()) return Error(r, st);
  http::ServerResponse resp;
  resp.status = 204;
  return Count(std::move(resp), From::kWrite);
}

}  // namespace ferry::gateway
