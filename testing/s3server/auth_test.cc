#include "auth.h"

#include <gtest/gtest.h>

#include "time_format.h"

namespace ferry::s3server {
namespace {

constexpr char kDate[] = "20240102T030405Z";

// Signs a request with the client-side signer and turns it into what the
// server receives.
HttpRequest Signed(const std::string& method, const std::string& raw_target,
                   const std::string& decoded_path, s3::KeyValues query,
                   const std::string& payload_hash, const std::string& secret = "ferrytestsecret",
                   const std::string& akid = "ferrytest") {
  s3::RequestToSign r{method, decoded_path, std::move(query), {{"host", "127.0.0.1:9000"}},
                      payload_hash};
  s3::SignRequest(r, {akid, secret, ""}, "us-east-1", kDate);
  HttpRequest req;
  req.method = method;
  req.target = raw_target;
  for (auto& [k, v] : r.headers) req.headers.emplace_back(k, v);
  return req;
}

TimePoint Now() { return *ParseAmzDate(kDate) + std::chrono::seconds(30); }

Status Check(const HttpRequest& req, const Authenticator& a, TimePoint now = Now()) {
  auto t = Route(req);
  if (!t.ok()) return t.status();
  return a.Verify(req, *t, now).status();
}

TEST(Authenticator, AcceptsOddKeysAndQueries) {
  Authenticator a{AuthConfig{}};
  std::string key = "dir/a b+c%d//\xc3\xa9~";
  std::string raw = "/bkt/" + s3::UriEncode(key, false);
  EXPECT_TRUE(
      Check(Signed("PUT", raw, "/bkt/" + key, {}, std::string(s3::kEmptyPayloadSha256)), a).ok());
  EXPECT_TRUE(Check(Signed("GET", "/bkt?list-type=2&prefix=a%2Fb%20c&delimiter=%2F",
                           "/bkt", {{"list-type", "2"}, {"prefix", "a/b c"}, {"delimiter", "/"}},
                           std::string(s3::kUnsignedPayload)),
                    a)
                  .ok());
  EXPECT_TRUE(Check(Signed("POST", "/bkt/k?uploads", "/bkt/k", {{"uploads", ""}},
                           std::string(s3::kUnsignedPayload)),
                    a)
                  .ok());
}

TEST(Authenticator, RejectionsCarryS3Codes) {
  Authenticator a{AuthConfig{}};
  std::string hash(s3::kUnsignedPayload);
  EXPECT_EQ(Check(Signed("GET", "/bkt/k", "/bkt/k", {}, hash, "wrong"), a).remote_code(),
            "SignatureDoesNotMatch");
  EXPECT_EQ(Check(Signed("GET", "/bkt/k", "/bkt/k", {}, hash, "ferrytestsecret", "nobody"), a)
                .remote_code(),
            "InvalidAccessKeyId");
  // The path the client signed differs from the one it sent.
  EXPECT_EQ(Check(Signed("GET", "/bkt/k2", "/bkt/k", {}, hash), a).remote_code(),
            "SignatureDoesNotMatch");
  HttpRequest unsigned_req;
  unsigned_req.method = "GET";
  unsigned_req.target = "/bkt/k";
  EXPECT_EQ(Check(unsigned_req, a).remote_code(), "AccessDenied");
  EXPECT_EQ(Check(Signed("GET", "/bkt/k", "/bkt/k", {}, hash), a,
                  Now() + std::chrono::minutes(20))
                .remote_code(),
            "RequestTimeTooSkewed");
}

TEST(Authenticator, SessionTokenRequired) {
  AuthConfig cfg;
  cfg.session_token = "tok";
  Authenticator a{cfg};
  EXPECT_EQ(Check(Signed("GET", "/bkt/k", "/bkt/k", {}, std::string(s3::kUnsignedPayload)), a)
                .remote_code(),
            "InvalidToken");
}

TEST(Authenticator, DisabledAcceptsAnything) {
  AuthConfig cfg;
  cfg.enabled = false;
  Authenticator a{cfg};
  HttpRequest req;
  req.method = "GET";
  req.target = "/bkt/k";
  EXPECT_TRUE(Check(req, a).ok());
}

TEST(Router, Operations) {
  struct Case {
    const char* method;
    const char* target;
    std::vector<std::pair<std::string, std::string>> headers;
    Op op;
    const char* bucket;
    const char* key;
  };
  const Case cases[] = {
      {"GET", "/", {}, Op::kListBuckets, "", ""},
      {"PUT", "/b", {}, Op::kCreateBucket, "b", ""},
      {"GET", "/b?list-type=2&prefix=x", {}, Op::kListObjectsV2, "b", ""},
      {"GET", "/b/", {}, Op::kListObjectsV1, "b", ""},
      {"GET", "/b?uploads", {}, Op::kListUploads, "b", ""},
      {"POST", "/b?delete", {}, Op::kDeleteObjects, "b", ""},
      {"GET", "/b/k%20x/y/", {}, Op::kGetObject, "b", "k x/y/"},
      {"GET", "/b//k", {}, Op::kGetObject, "b", "/k"},
      {"PUT", "/b/k", {{"x-amz-copy-source", "/a/b"}}, Op::kCopyObject, "b", "k"},
      {"PUT", "/b/k?partNumber=1&uploadId=u", {}, Op::kUploadPart, "b", "k"},
      {"POST", "/b/k?uploads", {}, Op::kCreateMultipart, "b", "k"},
      {"POST", "/b/k?uploadId=u", {}, Op::kCompleteMultipart, "b", "k"},
      {"DELETE", "/b/k?uploadId=u", {}, Op::kAbortMultipart, "b", "k"},
      {"GET", "/b/k?uploadId=u", {}, Op::kListParts, "b", "k"},
      {"GET", "/b/k?acl", {}, Op::kUnsupported, "b", "k"},
      {"GET", "/k/x", {{"host", "vb.localhost:9000"}}, Op::kGetObject, "vb", "k/x"},
      {"GET", "/?list-type=2", {{"host", "vb.localhost"}}, Op::kListObjectsV2, "vb", ""},
      {"GET", "/b/k?x-id=GetObject", {}, Op::kGetObject, "b", "k"},
  };
  for (const Case& c : cases) {
    HttpRequest req;
    req.method = c.method;
    req.target = c.target;
    req.headers = c.headers;
    auto t = Route(req);
    ASSERT_TRUE(t.ok()) << c.target;
    EXPECT_EQ(t->op, c.op) << c.method << " " << c.target;
    EXPECT_EQ(t->bucket, c.bucket) << c.target;
    EXPECT_EQ(t->key, c.key) << c.target;
  }
  HttpRequest bad;
  bad.method = "GET";
  bad.target = "/b/%zz";
  EXPECT_EQ(Route(bad).status().remote_code(), "InvalidURI");
}

TEST(Authenticator, SigningRegionWhenRequired) {
  HttpRequest req = Signed("GET", "/bkt/k", "/bkt/k", {}, std::string(s3::kEmptyPayloadSha256));
  EXPECT_TRUE(Check(req, Authenticator{AuthConfig{}}).ok()) << "any region by default";
  AuthConfig same;
  same.signing_region = "us-east-1";
  EXPECT_TRUE(Check(req, Authenticator{same}).ok());
  AuthConfig other;
  other.signing_region = "auto";
  Status s = Check(req, Authenticator{other});
  EXPECT_EQ(s.remote_code(), "AuthorizationHeaderMalformed") << s.ToString();
}

}  // namespace
}  // namespace ferry::s3server
