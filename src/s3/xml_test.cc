#include "s3/xml.h"

#include <gtest/gtest.h>

#include <chrono>

#include "http/client.h"
#include "store/s3/s3_headers.h"

namespace ferry::s3 {
namespace {

TEST(S3Xml, ListObjectsV2WithUrlEncodingAndPrefixes) {
  const char* xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>b</Name><Prefix>a%2B</Prefix><KeyCount>3</KeyCount><MaxKeys>2</MaxKeys>
  <EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>
  <NextContinuationToken>tok/en+=</NextContinuationToken>
  <Contents><Key>a%2Bb+c%25d</Key><LastModified>2024-01-02T03:04:05.678Z</LastModified>
    <ETag>&quot;0123456789abcdef0123456789abcdef&quot;</ETag><Size>42</Size></Contents>
  <Contents><Key>%C3%BC%26%3C</Key><LastModified>2024-01-02T03:04:05Z</LastModified>
    <ETag>"x-2"</ETag><Size>0</Size></Contents>
  <CommonPrefixes><Prefix>dir%2F%2F/</Prefix></CommonPrefixes>
</ListBucketResult>)";
  auto page = ParseListObjectsV2(xml);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "a+b c%d");
  EXPECT_EQ(page->objects[0].size, 42u);
  EXPECT_EQ(page->objects[0].etag, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(page->objects[1].key, "\xc3\xbc&<");
  EXPECT_EQ(page->objects[1].etag, "x-2");
  ASSERT_EQ(page->common_prefixes.size(), 1u);
  EXPECT_EQ(page->common_prefixes[0], "dir///");
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "tok/en+=");
  auto t = std::chrono::system_clock::to_time_t(page->objects[0].last_modified);
  EXPECT_EQ(t, 1704164645);
}

TEST(S3Xml, ListWithoutEncodingKeepsKeysVerbatim) {
  auto page = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a+b%20&amp;</Key>"
      "<Size>1</Size></Contents></ListBucketResult>");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->objects[0].key, "a+b%20&");
}

TEST(S3Xml, MalformedDocumentsAreProtocolErrors) {
  EXPECT_EQ(ParseListObjectsV2("<ListBucketResult><Contents>").status().code(),
            ErrorCode::kProtocol);
  EXPECT_EQ(ParseListObjectsV2("<Other/>").status().code(), ErrorCode::kProtocol);
  EXPECT_EQ(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated>"
                               "</ListBucketResult>")
                .status()
                .code(),
            ErrorCode::kProtocol);
  EXPECT_FALSE(ParseInitiateMultipartUpload("<InitiateMultipartUploadResult/>").ok());
}

TEST(S3Xml, CompleteMultipartAnswering200WithErrorIsAnError) {
  auto ok = ParseCompleteMultipartUpload(
      "<CompleteMultipartUploadResult><ETag>\"abc-3\"</ETag></CompleteMultipartUploadResult>");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, "abc-3");
  auto bad = ParseCompleteMultipartUpload(
      "<?xml version=\"1.0\"?>\n<Error><Code>InternalError</Code><Message>We encountered an "
      "internal error.</Message></Error>");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().retryable());
  EXPECT_EQ(bad.status().remote_code(), "InternalError");
}

TEST(S3Xml, BuildCompleteAndEscape) {
  std::string xml = BuildCompleteMultipartUpload({{1, "aa", 5}, {2, "b<b", 5}});
  EXPECT_NE(xml.find("<Part><PartNumber>1</PartNumber><ETag>\"aa\"</ETag></Part>"),
            std::string::npos);
  EXPECT_NE(xml.find("b&lt;b"), std::string::npos);
  EXPECT_EQ(XmlEscape("<a&'\">"), "&lt;a&amp;&apos;&quot;&gt;");
}

TEST(S3Xml, ListParts) {
  bool truncated = false;
  int marker = 0;
  auto parts = ParseListParts(
      "<ListPartsResult><IsTruncated>true</IsTruncated><NextPartNumberMarker>2"
      "</NextPartNumberMarker><Part><PartNumber>1</PartNumber><ETag>\"e1\"</ETag><Size>5</Size>"
      "</Part><Part><PartNumber>2</PartNumber><ETag>\"e2\"</ETag><Size>6</Size></Part>"
      "</ListPartsResult>",
      &truncated, &marker);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[1].etag, "e2");
  EXPECT_EQ((*parts)[1].size, 6u);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(marker, 2);
}

// Dates past what a nanosecond clock holds (after 2262) from a broken
// server are clamped to the latest time there is, not overflowed (UBSan
// found the overflow through s3_answers_fuzz).
TEST(S3Xml, FarFutureDatesAreClampedNotOverflowed) {
  TimePoint t;
  ASSERT_TRUE(ParseIso8601("9999-12-31T23:59:59.999Z", &t));
  EXPECT_GT(t, TimePoint() + std::chrono::hours(24 * 365 * 200));
  ASSERT_TRUE(ParseIso8601("2024-01-02T03:04:05.678Z", &t));
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count(), 1704164645678);
  http::Response r;
  r.status = 200;
  r.headers = {{"Last-Modified", "Tue, 02 Jan 2334 03:04:05 GMT"}};
  EXPECT_GT(InfoFromHeaders("k", r).last_modified, TimePoint() + std::chrono::hours(24 * 365 * 200));
}

// A broken server's part numbers (missing, 0, past 10000, not a number)
// are refused, not used to place parts.
TEST(S3Xml, ListPartsRefusesPartNumbersOutOfRange) {
  for (const char* number : {"", "<PartNumber>0</PartNumber>", "<PartNumber>10001</PartNumber>",
                             "<PartNumber>-3</PartNumber>", "<PartNumber>x</PartNumber>"}) {
    bool truncated = false;
    int marker = 0;
    auto parts = ParseListParts(std::string("<ListPartsResult><Part>") + number +
                                    "<ETag>\"e\"</ETag><Size>1</Size></Part></ListPartsResult>",
                                &truncated, &marker);
    ASSERT_FALSE(parts.ok()) << number;
    EXPECT_EQ(parts.status().code(), ErrorCode::kCorruption) << number;
  }
}

TEST(XmlTest, ListMultipartUploadsWithUrlEncodedKeysAndMarkers) {
  bool truncated = false;
  std::string key_marker, id_marker;
  auto ups = ParseListMultipartUploads(
      "<ListMultipartUploadsResult><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>"
      "<NextKeyMarker>a%20b</NextKeyMarker><NextUploadIdMarker>id2</NextUploadIdMarker>"
      "<Upload><Key>a%20b</Key><UploadId>id1</UploadId><Initiated>2026-12-03T08:00:00.000Z</Initiated></Upload>"
      "<Upload><Key>a%20b</Key><UploadId>id2</UploadId><Initiated>2026-12-03T08:00:01.000Z</Initiated></Upload>"
      "</ListMultipartUploadsResult>",
      &truncated, &key_marker, &id_marker);
  ASSERT_TRUE(ups.ok()) << ups.status().ToString();
  ASSERT_EQ(ups->size(), 2u);
  EXPECT_EQ((*ups)[0].key, "a b");
  EXPECT_EQ((*ups)[1].upload_id, "id2");
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>((*ups)[1].initiated - (*ups)[0].initiated).count(), 1);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(key_marker, "a b");
  EXPECT_EQ(id_marker, "id2");
  auto bad = ParseListMultipartUploads("<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>"
                                       "</ListMultipartUploadsResult>",
                                       &truncated, &key_marker, &id_marker);
  EXPECT_FALSE(bad.ok());  // truncated without a way on
}

}  // namespace
}  // namespace ferry::s3
