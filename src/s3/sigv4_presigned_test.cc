// Presigned URLs (query-string SigV4) through s3::Verify.
#include <gtest/gtest.h>

#include <chrono>

#include "s3/sigv4_verify.h"

namespace ferry::s3 {
namespace {

// AWS's worked example ("Authenticating Requests: Using Query Parameters"):
// a GET of examplebucket/test.txt valid for 86,400 s from 20130524T000000Z.
constexpr std::string_view kExampleSignature =
    "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";

struct Presigned {
  KeyValues query = {
      {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
      {"X-Amz-Credential", "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"},
      {"X-Amz-Date", "20130524T000000Z"},
      {"X-Amz-Expires", "86400"},
      {"X-Amz-SignedHeaders", "host"},
      {"X-Amz-Signature", std::string(kExampleSignature)}};
  KeyValues headers = {{"host", "examplebucket.s3.amazonaws.com"}};
  std::string method = "GET";

  void Set(std::string_view name, std::string value) {
    for (auto& [k, v] : query) {
      if (k == name) {
        v = std::move(value);
        return;
      }
    }
    query.emplace_back(std::string(name), std::move(value));
  }
  void Drop(std::string_view name) {
    std::erase_if(query, [&](const auto& kv) { return kv.first == name; });
  }
  Result<Verified> VerifyAt(std::chrono::system_clock::time_point now) const {
    VerifyKeys keys;
    keys.secrets["AKIAIOSFODNN7EXAMPLE"] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    ReceivedRequest req{method, "/test.txt", &query, &headers};
    return Verify(req, keys, now);
  }
};

std::chrono::system_clock::time_point At(std::string_view amz_date) {
  return *ParseAmzDate(amz_date);
}

TEST(PresignedTest, AwsWorkedExampleVerifiesWithinItsLifetime) {
  Presigned p;
  for (std::string_view now : {"20130524T000000Z", "20130524T120000Z", "20130525T000000Z"}) {
    auto v = p.VerifyAt(At(now));
    ASSERT_TRUE(v.ok()) << now << ": " << v.status().ToString();
    EXPECT_TRUE(v->presigned);
    EXPECT_EQ(v->access_key, "AKIAIOSFODNN7EXAMPLE");
  }
}

TEST(PresignedTest, ExpiredAndNotYetValid) {
  Presigned p;
  auto late = p.VerifyAt(At("20130525T000001Z"));
  EXPECT_EQ(late.status().remote_code(), "AccessDenied");
  EXPECT_NE(late.status().message().find("expired"), std::string::npos);
  // Within the clock skew allowed (15 minutes) ahead: accepted.
  EXPECT_TRUE(p.VerifyAt(At("20130523T235000Z")).ok());
  auto early = p.VerifyAt(At("20130523T230000Z"));
  EXPECT_EQ(early.status().remote_code(), "AccessDenied");
  EXPECT_NE(early.status().message().find("not valid yet"), std::string::npos);
}

TEST(PresignedTest, AnythingChangedBreaksTheSignature) {
  const auto now = At("20130524T010000Z");
  Presigned other_method;
  other_method.method = "PUT";
  EXPECT_EQ(other_method.VerifyAt(now).status().remote_code(), "SignatureDoesNotMatch");
  Presigned longer;
  longer.Set("X-Amz-Expires", "86401");
  EXPECT_EQ(longer.VerifyAt(now).status().remote_code(), "SignatureDoesNotMatch");
  Presigned extra;
  extra.Set("response-content-type", "text/html");
  EXPECT_EQ(extra.VerifyAt(now).status().remote_code(), "SignatureDoesNotMatch");
  Presigned host;
  host.headers = {{"host", "elsewhere.example.com"}};
  EXPECT_EQ(host.VerifyAt(now).status().remote_code(), "SignatureDoesNotMatch");
  Presigned key;
  key.Set("X-Amz-Credential", "AKIDUNKNOWN/20130524/us-east-1/s3/aws4_request");
  EXPECT_EQ(key.VerifyAt(now).status().remote_code(), "InvalidAccessKeyId");
}

TEST(PresignedTest, MalformedParameters) {
  const auto now = At("20130524T010000Z");
  for (std::string_view missing : {"X-Amz-Algorithm", "X-Amz-Date", "X-Amz-Expires",
                                   "X-Amz-SignedHeaders", "X-Amz-Signature"}) {
    Presigned p;
    p.Drop(missing);
    EXPECT_EQ(p.VerifyAt(now).status().remote_code(), "AuthorizationQueryParametersError")
        << missing;
  }
  for (std::string expires : {"604801", "-1", "1e3", ""}) {
    Presigned p;
    p.Set("X-Amz-Expires", expires);
    EXPECT_EQ(p.VerifyAt(now).status().remote_code(), "AuthorizationQueryParametersError")
        << expires;
  }
  Presigned algorithm;
  algorithm.Set("X-Amz-Algorithm", "AWS4-ECDSA-P256-SHA256");
  EXPECT_EQ(algorithm.VerifyAt(now).status().remote_code(), "AuthorizationQueryParametersError");
  Presigned both;
  both.headers.emplace_back("authorization", "AWS4-HMAC-SHA256 Credential=x");
  EXPECT_EQ(both.VerifyAt(now).status().remote_code(), "InvalidArgument");
}

}  // namespace
}  // namespace ferry::s3
