// Legacy presigned URLs (query-string signature version 2): AWS's worked
// examples for the string to sign and the signature, and s3::Verify's
// checks of such a URL.
#include "s3/sigv2_query.h"

#include <gtest/gtest.h>

#include <chrono>

#include "s3/sigv4_verify.h"

namespace ferry::s3 {
namespace {

constexpr std::string_view kV2Secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

// "Query string request authentication alternative" in AWS's S3 signature
// version 2 documentation: johnsmith's puppy.jpg until 1175139620.
TEST(SigV2QueryTest, AwsWorkedExample) {
  SigV2Request r;
  r.method = "GET";
  r.expires = "1175139620";
  r.encoded_path = "/johnsmith/photos/puppy.jpg";
  r.query = {
      {"AWSAccessKeyId", "AKIAIOSFODNN7EXAMPLE"}, {"Expires", "1175139620"}, {"Signature", "x"}};
  r.headers = {{"Host", "johnsmith.s3.amazonaws.com"}};
  EXPECT_EQ(SigV2StringToSign(r), "GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg");
  EXPECT_EQ(SigV2Signature(kV2Secret, SigV2StringToSign(r)), "NpgCjnDzrM+WFzoENXmpNDUsSn8=");
  // The header form's example signs a date in the same place.
  EXPECT_EQ(SigV2Signature(kV2Secret,
                           "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/puppy.jpg"),
            "bWq2s1WEIj+Ydj0vQ697zp+IXMU=");
}

TEST(SigV2QueryTest, SubResourcesAndAmzHeadersAreSignedOthersNot) {
  SigV2Request r;
  r.method = "PUT";
  r.content_md5 = "md5";
  r.content_type = "text/plain";
  r.expires = "100";
  r.encoded_path = "/bkt/a%20b";
  r.query = {{"uploadId", "U"}, {"partNumber", "2"}, {"Expires", "100"}, {"x-id", "UploadPart"}};
  r.headers = {{"X-Amz-Meta-B", " two "},
               {"x-amz-meta-a", "one"},
               {"Content-Length", "5"},
               {"x-amz-meta-b", "again"}};
  EXPECT_EQ(SigV2StringToSign(r),
            "PUT\nmd5\ntext/plain\n100\nx-amz-meta-a:one\nx-amz-meta-b:two,again\n"
            "/bkt/a%20b?partNumber=2&uploadId=U");
  r.query = {{"uploads", ""}};
  EXPECT_EQ(SigV2StringToSign(r).substr(SigV2StringToSign(r).rfind('\n') + 1),
            "/bkt/a%20b?uploads");
}

struct PresignedV2 {
  std::string method = "GET";
  std::string path = "/bkt/my key.txt";
  int64_t expires = 2'000'000'000;
  KeyValues headers = {{"host", "127.0.0.1"}};

  KeyValues Query(std::string_view secret) const {
    SigV2Request r;
    r.method = method;
    r.expires = std::to_string(expires);
    r.encoded_path = "/bkt/my%20key.txt";
    return {{"AWSAccessKeyId", "AKID"},
            {"Expires", r.expires},
            {"Signature", SigV2Signature(secret, SigV2StringToSign(r))}};
  }
  Result<Verified> VerifyAt(int64_t now_s, const KeyValues& query) const {
    VerifyKeys keys;
    keys.secrets["AKID"] = std::string(kV2Secret);
    ReceivedRequest req{method, path, &query, &headers};
    return Verify(req, keys, std::chrono::system_clock::time_point(std::chrono::seconds(now_s)));
  }
};

TEST(SigV2QueryTest, VerifyTakesAGoodUrlUntilItExpires) {
  PresignedV2 p;
  const KeyValues q = p.Query(kV2Secret);
  auto v = p.VerifyAt(p.expires - 3600, q);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_TRUE(v->presigned);
  EXPECT_EQ(v->access_key, "AKID");
  auto late = p.VerifyAt(p.expires + 1, q);
  EXPECT_EQ(late.status().remote_code(), "AccessDenied");
  EXPECT_NE(late.status().message().find("expired"), std::string::npos);
  auto far = p.VerifyAt(p.expires - 30 * 86400, q);
  EXPECT_EQ(far.status().remote_code(), "AuthorizationQueryParametersError");
}

TEST(SigV2QueryTest, VerifyRefusesWrongKeysSignaturesAndMethods) {
  PresignedV2 p;
  const int64_t now = p.expires - 60;
  EXPECT_EQ(p.VerifyAt(now, p.Query("other secret")).status().remote_code(),
            "SignatureDoesNotMatch");
  KeyValues unknown = p.Query(kV2Secret);
  unknown[0].second = "NOBODY";
  EXPECT_EQ(p.VerifyAt(now, unknown).status().remote_code(), "InvalidAccessKeyId");
  KeyValues missing = p.Query(kV2Secret);
  missing.pop_back();
  EXPECT_EQ(p.VerifyAt(now, missing).status().remote_code(), "AuthorizationQueryParametersError");
  KeyValues bad_expiry = p.Query(kV2Secret);
  bad_expiry[1].second = "soon";
  EXPECT_EQ(p.VerifyAt(now, bad_expiry).status().remote_code(),
            "AuthorizationQueryParametersError");
  PresignedV2 put = p;
  put.method = "PUT";  // a GET's URL used for a PUT
  EXPECT_EQ(put.VerifyAt(now, p.Query(kV2Secret)).status().remote_code(), "SignatureDoesNotMatch");
  PresignedV2 both = p;
  both.headers.push_back({"authorization", "AWS AKID:sig"});
  EXPECT_EQ(both.VerifyAt(now, p.Query(kV2Secret)).status().remote_code(), "InvalidArgument");
}

}  // namespace
}  // namespace ferry::s3
