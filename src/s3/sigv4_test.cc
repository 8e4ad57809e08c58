#include "s3/sigv4.h"

#include <gtest/gtest.h>

namespace ferry::s3 {
namespace {

// The worked example from the AWS S3 SigV4 documentation ("GET Object",
// examplebucket, Range bytes=0-9), with its published signature.
TEST(SigV4, AwsDocumentationGetObjectExample) {
  RequestToSign req;
  req.method = "GET";
  req.path = "/test.txt";
  req.headers = {{"Host", "examplebucket.s3.amazonaws.com"}, {"Range", "bytes=0-9"}};
  req.payload_hash = std::string(kEmptyPayloadSha256);
  Credentials creds{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
  SignRequest(req, creds, "us-east-1", "20130524T000000Z");
  std::string auth;
  for (auto& [k, v] : req.headers)
    if (k == "authorization") auth = v;
  EXPECT_EQ(auth,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
            "aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4, UriEncodeKeepsUnreservedAndOptionallySlash) {
  EXPECT_EQ(UriEncode("a b+c/~d%", false), "a%20b%2Bc/~d%25");
  EXPECT_EQ(UriEncode("a/b", true), "a%2Fb");
  EXPECT_EQ(UriEncode("\xc3\xa9", false), "%C3%A9");
}

TEST(SigV4, UriDecodeRejectsBadEscapes) {
  std::string out;
  EXPECT_TRUE(UriDecode("a%20b+%2F", &out));
  EXPECT_EQ(out, "a b+/");
  EXPECT_FALSE(UriDecode("a%2", &out));
  EXPECT_FALSE(UriDecode("a%zz", &out));
}

TEST(SigV4, CanonicalQuerySortsEncodedPairs) {
  EXPECT_EQ(CanonicalQuery({{"prefix", "a b"}, {"list-type", "2"}, {"delimiter", "/"}}),
            "delimiter=%2F&list-type=2&prefix=a%20b");
}

TEST(SigV4, ParseAuthorizationRoundTrip) {
  auto h = ParseAuthorization(
      "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request, "
      "SignedHeaders=host;x-amz-date, Signature=abc");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->access_key_id, "AK");
  EXPECT_EQ(h->region, "us-east-1");
  EXPECT_EQ(h->signed_headers, (std::vector<std::string>{"host", "x-amz-date"}));
  EXPECT_EQ(h->signature, "abc");
  EXPECT_FALSE(ParseAuthorization("AWS AK:sig").ok());
  EXPECT_FALSE(ParseAuthorization("AWS4-HMAC-SHA256 Credential=AK/x, Signature=1").ok());
}

}  // namespace
}  // namespace ferry::s3
