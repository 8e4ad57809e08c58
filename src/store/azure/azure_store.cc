#include "store/azure/azure_store.h"

#include <algorithm>
#include <random>
#include <thread>

#include "base/cancel.h"
#include "base/strings.h"
#include "crypto/digest.h"
#include "s3/xml.h"
#include "store/azure/azure_headers.h"
#include "store/azure/azure_requester.h"
#include "store/azure/azure_xml.h"
#include "store/azure/upload_blocks.h"
#include "store/azure/upload_ids.h"
#include "store/http/http_get.h"
#include "store/stream_taps.h"

namespace ferry {
namespace {

using azure::AzureCall;

// After an upload the service refused: when the caller's Content-MD5 is not
// the MD5 of the whole body ferry sent, that is the cause, whatever code the
// server gave it (Azure says Md5Mismatch, Azurite InvalidOperation).
Status ExplainRefusedUpload(const Status& refused, Md5Source& md5, uint64_t size,
                            const std::string& given_hex) {
  if (given_hex.empty() || refused.http_status() != 400 || md5.count() != size) return refused;
  if (md5.HexDigest() == given_hex) return refused;
  Status s = Status::Corruption("body does not match Content-MD5");
  s.set_remote(refused.http_status(), refused.remote_code());
  return s;
}

// The MD5 (hex) an upload's answer says the service stored, checked against
// what ferry sent. Answers without Content-MD5 are taken as they are.
Status CheckUploadedMd5(const http::Response& r, const std::string& sent_hex) {
  std::string stored = azure::Md5HexFromBase64(r.Get("content-md5"));
  if (!stored.empty() && stored != sent_hex) {
    return Status::Corruption("uploaded body's MD5 differs from the one the service computed");
  }
  return Status::Ok();
}

class AzureStore : public ObjectStore {
 public:
  AzureStore(AzureStoreOptions o, std::unique_ptr<azure::AzureRequester> rq)
      : opt_(std::move(o)), rq_(std::move(rq)) {}

  std::string Describe() const override {
    return "azure://" + opt_.config.account + "/" + opt_.container;
  }

  StoreFeatures Features() const override {
    StoreFeatures f;
    f.server_side_copy = true;
    f.min_part_size = 1;               // Azure has no minimum block size
    f.max_part_size = 4000ull << 20;   // Put Block, 2019-12-12 and later
    f.max_single_put = 5000ull << 20;  // Put Blob, 2019-12-12 and later
    f.max_parts = 10000;               // Azure allows 50,000; ferry's plans stop here
    return f;
  }

  Result<ListPage> List(const ListOptions& o) override {
    std::string marker = o.continuation_token;
    for (;;) {
      AzureCall c;
      c.method = "GET";
      c.query = {{"restype", "container"},
                 {"comp", "list"},
                 {"maxresults", std::to_string(std::clamp(o.max_keys, 1, 5000))}};
      if (!o.prefix.empty()) c.query.emplace_back("prefix", o.prefix);
      if (!o.delimiter.empty()) c.query.emplace_back("delimiter", o.delimiter);
      if (!marker.empty()) c.query.emplace_back("marker", marker);
      FERRY_ASSIGN_OR_RETURN(http::Response r, Call(c));
      FERRY_ASSIGN_OR_RETURN(azure::BlobListing l, azure::ParseListBlobs(r.body));
      ListPage page;
      for (auto& b : l.blobs) {
        if (o.start_after.empty() || b.key > o.start_after) page.objects.push_back(std::move(b));
      }
      for (auto& p : l.prefixes) {
        if (o.start_after.empty() || p > o.start_after)
          page.common_prefixes.push_back(std::move(p));
      }
      page.truncated = !l.next_marker.empty();
      page.next_continuation_token = l.next_marker;
      // A page emptied by start_after says nothing: read on.
      if (!page.truncated || !page.objects.empty() || !page.common_prefixes.empty()) return page;
      marker = l.next_marker;
      if (CancelRequested()) return Status::Cancelled("cancelled");
    }
  }

  Result<ObjectInfo> Head(std::string_view key) override {
    AzureCall c;
    c.method = "HEAD";
    c.blob = std::string(key);
    FERRY_ASSIGN_OR_RETURN(http::Response r, Call(c));
    return azure::InfoFromBlobResponse(key, r);
  }

  Result<ObjectInfo> Get(std::string_view key, const GetOptions& o, ByteSink& sink) override {
    CountingSink counted(sink);
    std::string etag = o.if_match;  // the version being read, once known
    for (int attempt = 1;; ++attempt) {
      http::Response seen;
      AzureCall c = GetCall(key, o, counted.count(), etag);
      auto r = rq_->Once(c, &counted, &seen);
      if (etag.empty() && seen.status >= 200 && seen.status < 300)
        etag = s3::Unquote(seen.Get("etag"));
      if (r.ok()) return azure::InfoFromBlobResponse(key, *r);
      if (counted.count() > 0 && etag.empty()) {
        Status s = r.status().WithContext("cannot resume a read of an object without an ETag");
        return s.set_retryable(false);
      }
      if (!ShouldRetry(rq_->retry(), r.status(), attempt)) return r.status();
      rq_->Backoff(r.status(), attempt);
    }
  }

  Result<ObjectInfo> Put(std::string_view key, ByteSource& body, uint64_t size,
                         const PutOptions& o) override {
    AzureCall c;
    c.method = "PUT";
    c.blob = std::string(key);
    c.headers.emplace_back("x-ms-blob-type", "BlockBlob");
    azure::AddBlobHeaders(o.headers, false, &c.headers);
    FERRY_ASSIGN_OR_RETURN(Sent sent, Upload(std::move(c), body, size, o.content_md5));
    ObjectInfo info;
    info.key = std::string(key);
    info.size = size;
    info.etag = s3::Unquote(sent.answer.Get("etag"));
    info.etag_is_md5 = false;
    info.md5_hex = sent.md5_hex;
    info.headers = o.headers;
    info.headers.expires.clear();  // Azure has no Expires
    return info;
  }

  Result<std::string> CreateMultipart(std::string_view key, const PutOptions& o) override {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    azure::UploadId id;
    id.nonce = azure::NewUploadNonce(std::chrono::system_clock::now(), rng());
    id.headers = o.headers;
    id.headers.expires.clear();
    FERRY_RETURN_IF_ERROR(PutMarkerBlock(key, id.nonce, azure::kMarkerPart));
    return azure::FormatUploadId(id);
  }

  Result<PartInfo> UploadPart(std::string_view key, std::string_view upload_id, int part_number,
                              ByteSource& body, uint64_t size,
                              const PartOptions& options) override {
    const std::string& content_md5 = options.content_md5;  // a blob keeps no checksums
    FERRY_ASSIGN_OR_RETURN(azure::UploadId id, azure::ParseUploadId(upload_id));
    if (part_number < 1 || part_number > Features().max_parts) {
      return Status::InvalidArgument("part number " + std::to_string(part_number) +
                                     " out of range");
    }
    FERRY_ASSIGN_OR_RETURN(Sent sent,
                           Upload(BlockCall(key, id.nonce, part_number), body, size, content_md5));
    return PartInfo{part_number, sent.md5_hex, size};
  }

  Result<ObjectInfo> CompleteMultipart(std::string_view key, std::string_view upload_id,
                                       const std::vector<PartInfo>& parts) override {
    FERRY_ASSIGN_OR_RETURN(azure::UploadId id, azure::ParseUploadId(upload_id));
    FERRY_ASSIGN_OR_RETURN(auto blocks, Blocks(key));
    azure::UploadBlocks u = azure::BlocksOf(blocks, id.nonce);
    // A retry after a lost answer finds its blocks already committed.
    if (azure::CommittedAs(u, parts)) return Head(key);
    if (!u.Open()) return Status::NotFound("no such multipart upload");
    FERRY_RETURN_IF_ERROR(azure::CheckParts(parts, u));
    std::vector<std::string> ids;
    uint64_t total = 0;
    for (const PartInfo& p : parts) {
      ids.push_back(azure::BlockId(id.nonce, p.number));
      total += p.size;
    }
    std::string xml = azure::BuildBlockList(ids);
    StringSource body(xml);
    AzureCall c;
    c.method = "PUT";
    c.blob = std::string(key);
    c.query = {{"comp", "blocklist"}};
    azure::AddBlobHeaders(id.headers, false, &c.headers);
    c.headers.emplace_back("Content-Type", "application/xml");
    c.body = &body;
    c.body_size = xml.size();
    FERRY_ASSIGN_OR_RETURN(http::Response r, Call(c));
    ObjectInfo info;
    info.key = std::string(key);
    info.size = total;
    info.etag = s3::Unquote(r.Get("etag"));
    info.etag_is_md5 = false;
    info.headers = id.headers;
    return info;
  }

  Status AbortMultipart(std::string_view key, std::string_view upload_id) override {
    FERRY_ASSIGN_OR_RETURN(azure::UploadId id, azure::ParseUploadId(upload_id));
    return PutMarkerBlock(key, id.nonce, azure::kTombstonePart);
  }

  Result<std::vector<PartInfo>> ListParts(std::string_view key,
                                          std::string_view upload_id) override {
    FERRY_ASSIGN_OR_RETURN(azure::UploadId id, azure::ParseUploadId(upload_id));
    FERRY_ASSIGN_OR_RETURN(auto blocks, Blocks(key));
    azure::UploadBlocks u = azure::BlocksOf(blocks, id.nonce);
    if (!u.Open()) return Status::NotFound("no such multipart upload");
    std::vector<PartInfo> out;
    for (const auto& [n, size] : u.parts) out.push_back(PartInfo{n, "", size});
    return out;
  }

  Result<std::vector<UploadInfo>> ListMultipartUploads(std::string_view key) override {
    FERRY_ASSIGN_OR_RETURN(auto blocks, Blocks(key));
    std::vector<UploadInfo> out;
    for (std::string& nonce : azure::OpenUploads(blocks)) {
      TimePoint initiated = azure::NonceTime(nonce);
      out.push_back(UploadInfo{std::string(key), std::move(nonce), initiated});
    }
    return out;
  }

  Result<ObjectInfo> Copy(std::string_view src_key, std::string_view dst_key,
                          const std::optional<ObjectHeaders>& replace) override;

  Status Delete(std::string_view key) override {
    AzureCall c;
    c.method = "DELETE";
    c.blob = std::string(key);
    c.headers.emplace_back("x-ms-delete-snapshots", "include");
    auto r = Call(c);
    if (!r.ok() && r.status().remote_code() == "BlobNotFound") return Status::Ok();
    return r.ok() ? Status::Ok() : r.status();
  }

 private:
  Result<http::Response> Call(const AzureCall& c) { return rq_->Run(c, nullptr); }

  // An upload's answer, and the MD5 (hex) of the body that was sent.
  struct Sent {
    http::Response answer;
    std::string md5_hex;
  };

  // Sends `c` with the `size` bytes of `body`, hashed on the way, and with
  // the caller's base64 `content_md5` when it gave one. A refusal that a
  // wrong Content-MD5 explains says so; the MD5 the service stored must be
  // the one sent.
  Result<Sent> Upload(AzureCall c, ByteSource& body, uint64_t size, std::string_view content_md5) {
    Md5Source md5(body);
    std::string given = azure::Md5HexFromBase64(content_md5);
    if (!given.empty()) c.headers.emplace_back("Content-MD5", std::string(content_md5));
    c.body = &md5;
    c.body_size = size;
    auto r = Call(c);
    if (!r.ok()) return ExplainRefusedUpload(r.status(), md5, size, given);
    Sent sent{std::move(*r), md5.HexDigest()};
    FERRY_RETURN_IF_ERROR(CheckUploadedMd5(sent.answer, sent.md5_hex));
    return sent;
  }

  // Get Blob from `got` bytes into the requested range, pinned to `etag`.
  AzureCall GetCall(std::string_view key, const GetOptions& o, uint64_t got,
                    const std::string& etag) const {
    AzureCall c;
    c.method = "GET";
    c.blob = std::string(key);
    ResumeRange want = RangeToResume(o, got);
    if (want.ranged) c.headers.emplace_back("x-ms-range", want.value);
    if (!etag.empty()) c.headers.emplace_back("If-Match", "\"" + etag + "\"");
    // Before any byte reaches the sink.
    c.check_headers = [want](const http::Response& r) { return CheckRangeAnswer(r, want); };
    return c;
  }

  AzureCall BlockCall(std::string_view key, std::string_view nonce, int part) const {
    AzureCall c;
    c.method = "PUT";
    c.blob = std::string(key);
    c.query = {{"comp", "block"}, {"blockid", Base64Encode(azure::BlockId(nonce, part))}};
    return c;
  }

  // The one-byte marker (part 0) or tombstone block of an upload.
  Status PutMarkerBlock(std::string_view key, std::string_view nonce, int part) {
    StringSource body(std::string(1, '\0'));
    AzureCall c = BlockCall(key, nonce, part);
    c.body = &body;
    c.body_size = 1;
    return Call(c).status();
  }

  // Every block of `key`, committed and not; a missing blob has none.
  Result<std::vector<azure::Block>> Blocks(std::string_view key) {
    AzureCall c;
    c.method = "GET";
    c.blob = std::string(key);
    c.query = {{"comp", "blocklist"}, {"blocklisttype", "all"}};
    auto r = Call(c);
    if (!r.ok() && r.status().remote_code() == "BlobNotFound") return std::vector<azure::Block>();
    if (!r.ok()) return r.status();
    return azure::ParseBlockList(r->body);
  }

  Result<ObjectInfo> WaitForCopy(std::string_view key, std::string copy_id);
  Status SetHeaders(std::string_view key, const ObjectHeaders& h);

  AzureStoreOptions opt_;
  std::unique_ptr<azure::AzureRequester> rq_;
};

Status AzureStore::SetHeaders(std::string_view key, const ObjectHeaders& h) {
  AzureCall props;
  props.method = "PUT";
  props.blob = std::string(key);
  props.query = {{"comp", "properties"}};
  ObjectHeaders no_user = h;
  no_user.user.clear();
  azure::AddBlobHeaders(no_user, true, &props.headers);
  FERRY_RETURN_IF_ERROR(Call(props).status());
  AzureCall meta;
  meta.method = "PUT";
  meta.blob = std::string(key);
  meta.query = {{"comp", "metadata"}};
  azure::AddMetadataHeaders(h, &meta.headers);
  return Call(meta).status();
}

Result<ObjectInfo> AzureStore::WaitForCopy(std::string_view key, std::string copy_id) {
  for (;;) {
    AzureCall c;
    c.method = "HEAD";
    c.blob = std::string(key);
    FERRY_ASSIGN_OR_RETURN(http::Response r, Call(c));
    ObjectInfo info = azure::InfoFromBlobResponse(key, r);
    std::string status = r.Get("x-ms-copy-status");
    if (r.Get("x-ms-copy-id") != copy_id || status == "success" || status.empty()) return info;
    if (status != "pending") {
      return Status(ErrorCode::kServerError, "server-side copy " + status);
    }
    if (CancelRequested()) return Status::Cancelled("cancelled while a copy was pending");
    std::this_thread::sleep_for(opt_.copy_poll);
  }
}

Result<ObjectInfo> AzureStore::Copy(std::string_view src_key, std::string_view dst_key,
                                    const std::optional<ObjectHeaders>& replace) {
  if (src_key == dst_key && replace) {  // Azure copies nothing onto itself: set the headers
    FERRY_RETURN_IF_ERROR(Head(src_key).status());
    FERRY_RETURN_IF_ERROR(SetHeaders(dst_key, *replace));
    return Head(dst_key);
  }
  auto endpoint = http::ParseEndpoint(opt_.config.endpoint_url);
  if (!endpoint.ok()) return endpoint.status();
  std::string source = endpoint->ToString() + s3::UriEncode(rq_->BlobUrl(src_key), false);
  if (!opt_.config.sas.empty()) source += "?" + opt_.config.sas;
  AzureCall c;
  c.method = "PUT";
  c.blob = std::string(dst_key);
  c.headers.emplace_back("x-ms-copy-source", source);
  if (replace) azure::AddMetadataHeaders(*replace, &c.headers);
  FERRY_ASSIGN_OR_RETURN(http::Response r, Call(c));
  FERRY_ASSIGN_OR_RETURN(ObjectInfo info, WaitForCopy(dst_key, r.Get("x-ms-copy-id")));
  if (!replace) return info;
  FERRY_RETURN_IF_ERROR(SetHeaders(dst_key, *replace));
  return Head(dst_key);
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenAzureStore(AzureStoreOptions o) {
  if (!o.client) o.client = std::make_shared<http::Client>(o.http);
  FERRY_ASSIGN_OR_RETURN(
      auto rq, azure::AzureRequester::Make(o.config, o.container, o.client, o.hooks, o.retry));
  return std::unique_ptr<ObjectStore>(new AzureStore(std::move(o), std::move(rq)));
}

}  // namespace ferry
