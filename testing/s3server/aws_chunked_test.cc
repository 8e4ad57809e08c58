#include "aws_chunked.h"

#include <gtest/gtest.h>

namespace ferry::s3server {
namespace {

const std::string kSig(64, 'a');

std::string Encode(const std::vector<std::string>& chunks, const std::string& trailer = "") {
  std::string out;
  char buf[32];
  for (const auto& c : chunks) {
    std::snprintf(buf, sizeof buf, "%zx", c.size());
    out += buf;
    out += ";chunk-signature=" + kSig + "\r\n" + c + "\r\n";
  }
  out += "0;chunk-signature=" + kSig + "\r\n" + trailer + "\r\n";
  return out;
}

Status Decode(const std::string& body, size_t piece, std::string* out, AwsChunkedDecoder* d) {
  for (size_t i = 0; i < body.size(); i += piece) {
    FERRY_RETURN_IF_ERROR(d->Feed(std::string_view(body).substr(i, piece),
                                  [out](std::string_view s) {
                                    out->append(s);
                                    return Status::Ok();
                                  }));
  }
  return Status::Ok();
}

TEST(AwsChunkedDecoder, DecodesAtEverySplit) {
  std::string payload(70000, 'x');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>('a' + i % 26);
  std::string body = Encode({payload.substr(0, 65536), payload.substr(65536)});
  for (size_t piece : {1, 2, 7, 100, 65536, 1 << 20}) {
    AwsChunkedDecoder d;
    std::string out;
    ASSERT_TRUE(Decode(body, piece, &out, &d).ok()) << piece;
    EXPECT_TRUE(d.done());
    EXPECT_EQ(out, payload) << piece;
  }
}

TEST(AwsChunkedDecoder, UnsignedWithTrailer) {
  std::string body = "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n";
  AwsChunkedDecoder d;
  std::string out;
  ASSERT_TRUE(Decode(body, 3, &out, &d).ok());
  EXPECT_TRUE(d.done());
  EXPECT_EQ(out, "hello");
  EXPECT_EQ(d.trailers(), "x-amz-checksum-crc32:AAAAAA==\n");
}

TEST(AwsChunkedDecoder, EmptyPayload) {
  AwsChunkedDecoder d;
  std::string out;
  ASSERT_TRUE(Decode(Encode({}), 4, &out, &d).ok());
  EXPECT_TRUE(d.done());
  EXPECT_EQ(out, "");
}

TEST(AwsChunkedDecoder, RejectsMalformedFraming) {
  for (std::string body : {std::string("zz\r\n"), std::string("3\r\nabcX\r\n"),
                           Encode({"abc"}) + "extra"}) {
    AwsChunkedDecoder d;
    std::string out;
    EXPECT_FALSE(Decode(body, 1, &out, &d).ok()) << body;
  }
}

TEST(AwsChunkedDecoder, IncompleteBodyIsNotDone) {
  std::string body = Encode({"hello"});
  AwsChunkedDecoder d;
  std::string out;
  ASSERT_TRUE(Decode(body.substr(0, body.size() - 3), 5, &out, &d).ok());
  EXPECT_FALSE(d.done());
}

}  // namespace
}  // namespace ferry::s3server
