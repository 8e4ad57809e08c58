#include "s3/route.h"

#include <array>

#include "s3/sigv4_verify.h"

namespace ferry::s3 {
namespace {

constexpr std::array<std::string_view, 21> kOpNames = {
    "list-buckets", "create-bucket",   "delete-bucket",    "head-bucket", "list",     "list",
    "list-uploads", "bucket-location", "delete-objects",   "put",         "copy",     "get",
    "head",         "delete",          "create-multipart", "upload-part", "complete", "abort",
    "list-parts",   "get-attributes",  "unsupported",
};

// Subresources S3 has and this server does not implement.
constexpr std::array<std::string_view, 26> kUnsupportedSubresources = {
    "acl",
    "policy",
    "cors",
    "lifecycle",
    "tagging",
    "versioning",
    "versions",
    "website",
    "logging",
    "notification",
    "replication",
    "encryption",
    "object-lock",
    "retention",
    "legal-hold",
    "torrent",
    "restore",
    "select",
    "analytics",
    "inventory",
    "metrics",
    "accelerate",
    "requestPayment",
    "ownershipControls",
    "publicAccessBlock",
    "intelligent-tiering",
};

Status InvalidUri() {
  return S3ErrorStatus(400, "InvalidURI", "Couldn't parse the specified URI.");
}

// Bucket named by a virtual-host style Host header, or "".
std::string BucketFromHost(std::string_view host) {
  if (!host.empty() && host.front() == '[') return "";  // IPv6 literal
  host = host.substr(0, host.find(':'));
  constexpr std::string_view kSuffix = ".localhost";
  if (host.size() <= kSuffix.size() || host.substr(host.size() - kSuffix.size()) != kSuffix) {
    return "";
  }
  return std::string(host.substr(0, host.size() - kSuffix.size()));
}

Op BucketOp(std::string_view method, const S3Target& t) {
  if (method == "PUT") return Op::kCreateBucket;
  if (method == "DELETE") return Op::kDeleteBucket;
  if (method == "HEAD") return Op::kHeadBucket;
  if (method == "POST") return t.HasQuery("delete") ? Op::kDeleteObjects : Op::kUnsupported;
  if (method == "GET") {
    if (t.HasQuery("uploads")) return Op::kListUploads;
    if (t.HasQuery("location")) return Op::kBucketLocation;
    const std::string* lt = t.Query("list-type");
    if (lt && *lt == "2") return Op::kListObjectsV2;
    return Op::kListObjectsV1;
  }
  return Op::kUnsupported;
}

Op ObjectOp(const RouteInput& req, const S3Target& t) {
  std::string_view m = req.method;
  bool upload = t.HasQuery("uploadId");
  if (m == "PUT") {
    bool copy = req.copy_source;
    if (upload && t.HasQuery("partNumber")) return copy ? Op::kUnsupported : Op::kUploadPart;
    return copy ? Op::kCopyObject : Op::kPutObject;
  }
  if (m == "GET") {
    if (upload) return Op::kListParts;
    return t.HasQuery("attributes") ? Op::kGetObjectAttributes : Op::kGetObject;
  }
  if (m == "HEAD") return Op::kHeadObject;
  if (m == "DELETE") return upload ? Op::kAbortMultipart : Op::kDeleteObject;
  if (m == "POST") {
    if (t.HasQuery("uploads")) return Op::kCreateMultipart;
    if (upload) return Op::kCompleteMultipart;
  }
  return Op::kUnsupported;
}

}  // namespace

std::string_view OpName(Op op) { return kOpNames[static_cast<size_t>(op)]; }

bool IsOpName(std::string_view name) {
  for (auto n : kOpNames) {
    if (n == name) return true;
  }
  return false;
}

const std::string* S3Target::Query(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return &v;
  }
  return nullptr;
}

Result<S3Target> Route(const RouteInput& req) {
  std::string_view target = req.target;
  // Absolute-form targets ("http://host/path") come from proxies.
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.substr(0, scheme.size()) == scheme) {
      size_t slash = target.find('/', scheme.size());
      target = slash == std::string_view::npos ? "/" : target.substr(slash);
    }
  }
  size_t qmark = target.find('?');
  std::string_view raw_path = target.substr(0, qmark);
  std::string_view raw_query =
      qmark == std::string_view::npos ? std::string_view() : target.substr(qmark + 1);
  if (raw_path.empty() || raw_path.front() != '/') return InvalidUri();

  S3Target t;
  if (!UriDecode(raw_path, &t.canonical_path)) return InvalidUri();
  while (!raw_query.empty()) {
    size_t amp = raw_query.find('&');
    std::string_view pair = raw_query.substr(0, amp);
    raw_query = amp == std::string_view::npos ? std::string_view() : raw_query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string name, value;
    if (!UriDecode(pair.substr(0, eq), &name)) return InvalidUri();
    if (eq != std::string_view::npos && !UriDecode(pair.substr(eq + 1), &value)) {
      return InvalidUri();
    }
    t.query.emplace_back(std::move(name), std::move(value));
  }

  std::string_view path = t.canonical_path;
  path.remove_prefix(1);
  t.bucket = BucketFromHost(req.host);
  if (!t.bucket.empty()) {
    t.key = std::string(path);
  } else {
    size_t slash = path.find('/');
    t.bucket = std::string(path.substr(0, slash));
    if (slash != std::string_view::npos) t.key = std::string(path.substr(slash + 1));
  }

  for (const auto& [name, value] : t.query) {
    for (auto sub : kUnsupportedSubresources) {
      if (name == sub) {
        t.op = Op::kUnsupported;
        return t;
      }
    }
  }
  if (t.bucket.empty()) {
    t.op = req.method == "GET" ? Op::kListBuckets : Op::kUnsupported;
  } else if (t.key.empty()) {
    t.op = BucketOp(req.method, t);
  } else {
    t.op = ObjectOp(req, t);
  }
  return t;
}

}  // namespace ferry::s3
