#include "s3/aws_chunked.h"

#include <gtest/gtest.h>

#include <chrono>

#include "crypto/digest.h"

namespace ferry::s3 {
namespace {

// The worked example of AWS's "Signature Calculations for the Authorization
// Header: Transferring Payload in Multiple Chunks": 66,560 bytes of 'a' in
// a 65,536-byte chunk, a 1,024-byte chunk and the final empty one.
constexpr std::string_view kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr std::string_view kSeed =
    "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
constexpr std::string_view kChunkSigs[] = {
    "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
    "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
    "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"};

ChunkChain ExampleChain() {
  return {SigningKey(kSecret, "20130524", "us-east-1", "s3"), "20130524T000000Z",
          "20130524/us-east-1/s3/aws4_request", std::string(kSeed)};
}

struct Sent {
  std::string body;
  std::string payload;
};

// An aws-chunked body as a client sends it: signed chunks when `chain` is
// given, then `trailers` (signed too when both are given).
Sent Encode(std::string payload, size_t chunk, const ChunkChain* chain,
            const KeyValues& trailers = {}) {
  Sent s{"", payload};
  std::string prev = chain ? chain->seed_signature : "";
  auto emit_chunk = [&](std::string_view data) {
    char size[32];
    snprintf(size, sizeof(size), "%zx", data.size());
    s.body += size;
    if (chain) {
      prev = ChunkSignature(*chain, prev, HexLower(Sha256(data)));
      s.body += ";chunk-signature=" + prev;
    }
    s.body += "\r\n";
    s.body.append(data);
    if (!data.empty()) s.body += "\r\n";
  };
  for (size_t i = 0; i < payload.size(); i += chunk) {
    emit_chunk(std::string_view(payload).substr(i, chunk));
  }
  emit_chunk("");
  std::string canonical;
  for (const auto& [name, value] : trailers) {
    s.body += name + ":" + value + "\r\n";
    canonical += name + ":" + value + "\n";
  }
  if (chain && !trailers.empty()) {
    s.body += "x-amz-trailer-signature:" + TrailerSignature(*chain, prev, canonical) + "\r\n";
  }
  s.body += "\r\n";
  return s;
}

struct Outcome {
  Status status;
  std::string decoded;
  KeyValues trailers;
};

Outcome Decode(const AwsChunkedOptions& options, std::string_view body, size_t piece) {
  AwsChunkedDecoder d(options);
  Outcome out;
  for (size_t i = 0; i < body.size() && out.status.ok(); i += piece) {
    out.status = d.Feed(body.substr(i, piece), [&](std::string_view x) {
      out.decoded.append(x);
      return Status::Ok();
    });
  }
  if (out.status.ok()) out.status = d.Finish();
  out.trailers = d.trailers();
  return out;
}

AwsChunkedOptions Signed(const ChunkChain& chain, std::optional<uint64_t> length = std::nullopt) {
  return {PayloadMode::kStreamingSigned, chain, length, {}};
}

TEST(AwsChunkedTest, AwsWorkedExampleSignaturesChain) {
  ChunkChain chain = ExampleChain();
  std::string prev(kSeed);
  const size_t sizes[] = {65536, 1024, 0};
  for (int i = 0; i < 3; ++i) {
    prev = ChunkSignature(chain, prev, HexLower(Sha256(std::string(sizes[i], 'a'))));
    EXPECT_EQ(prev, kChunkSigs[i]) << "chunk " << i;
  }
}

TEST(AwsChunkedTest, AwsWorkedExampleSeedFromVerify) {
  KeyValues headers = {
      {"authorization",
       "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
       "SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;"
       "x-amz-decoded-content-length;x-amz-storage-class,Signature=" +
           std::string(kSeed)},
      {"content-encoding", "aws-chunked"},
      {"content-length", "66824"},
      {"host", "s3.amazonaws.com"},
      {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
      {"x-amz-date", "20130524T000000Z"},
      {"x-amz-decoded-content-length", "66560"},
      {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
  KeyValues query;
  ReceivedRequest req{"PUT", "/examplebucket/chunkObject.txt", &query, &headers};
  VerifyKeys keys;
  keys.secrets["AKIAIOSFODNN7EXAMPLE"] = std::string(kSecret);
  keys.max_skew = std::chrono::hours(24 * 365 * 100);
  auto v = Verify(req, keys, std::chrono::system_clock::now());
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_TRUE(v->chain.has_value());
  EXPECT_EQ(v->chain->signing_key, ExampleChain().signing_key);
  EXPECT_EQ(v->chain->scope, ExampleChain().scope);

  Sent sent = Encode(std::string(66560, 'a'), 65536, &*v->chain);
  EXPECT_EQ(sent.body.size(), 66824u);  // the example's Content-Length
  EXPECT_NE(sent.body.find(kChunkSigs[2]), std::string::npos);
  for (size_t piece : {1ul, 7ul, 4096ul, 100000ul}) {
    Outcome o = Decode(Signed(*v->chain, 66560), sent.body, piece);
    ASSERT_TRUE(o.status.ok()) << piece << ": " << o.status.ToString();
    EXPECT_EQ(o.decoded, sent.payload);
  }
}

TEST(AwsChunkedTest, TamperedChainIsRefused) {
  ChunkChain chain = ExampleChain();
  Sent sent = Encode("hello, chunked world", 8, &chain);
  std::string flipped = sent.body;
  flipped[flipped.find("hello")] = 'j';
  EXPECT_EQ(Decode(Signed(chain), flipped, 5).status.remote_code(), "SignatureDoesNotMatch");

  std::string bad_sig = sent.body;
  size_t at = bad_sig.find("chunk-signature=") + 16;
  bad_sig[at] = bad_sig[at] == '0' ? '1' : '0';
  EXPECT_EQ(Decode(Signed(chain), bad_sig, 64).status.remote_code(), "SignatureDoesNotMatch");

  // A chunk dropped from the middle breaks the chain at the next one.
  size_t second = sent.body.find("\r\n", sent.body.find("\r\n") + 2) + 2;
  size_t third = sent.body.find("\r\n", sent.body.find("\r\n", second) + 2) + 2;
  std::string dropped = sent.body.substr(0, second) + sent.body.substr(third);
  EXPECT_EQ(Decode(Signed(chain), dropped, 64).status.remote_code(), "SignatureDoesNotMatch");

  std::string unsigned_chunk = "5\r\nhello\r\n0\r\n\r\n";
  EXPECT_EQ(Decode(Signed(chain), unsigned_chunk, 64).status.remote_code(), "InvalidRequest");

  ChunkChain other = chain;
  other.signing_key = SigningKey("another secret", "20130524", "us-east-1", "s3");
  EXPECT_EQ(Decode(Signed(other), sent.body, 64).status.remote_code(), "SignatureDoesNotMatch");
}

TEST(AwsChunkedTest, LengthsAndTruncation) {
  ChunkChain chain = ExampleChain();
  Sent sent = Encode(std::string(1000, 'x'), 300, &chain);
  EXPECT_TRUE(Decode(Signed(chain, 1000), sent.body, 64).status.ok());
  EXPECT_EQ(Decode(Signed(chain, 999), sent.body, 64).status.remote_code(), "IncompleteBody");
  EXPECT_EQ(Decode(Signed(chain, 1001), sent.body, 64).status.remote_code(), "IncompleteBody");
  // A size that would wrap the running total is still too long.
  AwsChunkedOptions unsigned_ten{PayloadMode::kStreamingUnsignedTrailer, std::nullopt, 10, {}};
  EXPECT_EQ(Decode(unsigned_ten, "5\r\nhello\r\nfffffffffffffffe\r\n", 64).status.remote_code(),
            "IncompleteBody");
  for (size_t cut : {0ul, 3ul, 150ul, sent.body.size() - 3, sent.body.size() - 1}) {
    Outcome o = Decode(Signed(chain, 1000), std::string_view(sent.body).substr(0, cut), 64);
    EXPECT_EQ(o.status.remote_code(), "IncompleteBody") << cut;
  }
}

TEST(AwsChunkedTest, UnsignedTrailerAsTheSdksSendIt) {
  const std::string payload(70000, 'q');
  KeyValues trailers = {{"x-amz-checksum-crc32", "AAAAAA=="}};
  Sent sent = Encode(payload, 65536, nullptr, trailers);
  AwsChunkedOptions opts{PayloadMode::kStreamingUnsignedTrailer, std::nullopt, 70000,
                         ParseTrailerNames("x-amz-checksum-crc32")};
  Outcome o = Decode(opts, sent.body, 1000);
  ASSERT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_EQ(o.decoded, payload);
  EXPECT_EQ(o.trailers, trailers);

  AwsChunkedOptions undeclared = opts;
  undeclared.declared_trailers = {"x-amz-checksum-sha256"};
  EXPECT_EQ(Decode(undeclared, sent.body, 1000).status.remote_code(), "InvalidRequest");
  Sent without = Encode(payload, 65536, nullptr);
  EXPECT_EQ(Decode(opts, without.body, 1000).status.remote_code(), "InvalidRequest");
}

TEST(AwsChunkedTest, SignedTrailer) {
  ChunkChain chain = ExampleChain();
  KeyValues trailers = {{"x-amz-checksum-crc32c", "sOO8/Q=="}};
  Sent sent = Encode("abcdefghij", 4, &chain, trailers);
  AwsChunkedOptions opts{PayloadMode::kStreamingSignedTrailer, chain, 10,
                         ParseTrailerNames(" x-amz-checksum-crc32c ")};
  Outcome o = Decode(opts, sent.body, 3);
  ASSERT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_EQ(o.trailers, trailers);

  std::string changed = sent.body;
  changed.replace(changed.find("sOO8/Q=="), 8, "AAAAAA==");
  EXPECT_EQ(Decode(opts, changed, 3).status.remote_code(), "SignatureDoesNotMatch");
  std::string unsigned_trailer = sent.body;
  size_t sig = unsigned_trailer.find("x-amz-trailer-signature");
  unsigned_trailer.erase(sig, unsigned_trailer.find("\r\n", sig) + 2 - sig);
  EXPECT_EQ(Decode(opts, unsigned_trailer, 3).status.remote_code(), "InvalidRequest");
}

TEST(AwsChunkedTest, MalformedFraming) {
  AwsChunkedOptions opts{PayloadMode::kStreamingUnsignedTrailer, std::nullopt, std::nullopt, {}};
  for (std::string_view body : {"zz\r\nhello\r\n0\r\n\r\n", "5\r\nhelloXX0\r\n\r\n", "\r\n",
                                "5\r\nhello\r\n0\r\n\r\nextra", "0\r\nno colon\r\n\r\n"}) {
    EXPECT_EQ(Decode(opts, body, 64).status.remote_code(), "InvalidRequest") << body;
  }
  EXPECT_EQ(Decode(opts, std::string(5000, '1'), 64).status.remote_code(), "InvalidRequest");
  EXPECT_TRUE(Decode(opts, "5\r\nhello\r\n0\r\n\r\n", 1).status.ok());
}

TEST(AwsChunkedTest, EmptyPayloadAndNoAuth) {
  ChunkChain chain = ExampleChain();
  Sent empty = Encode("", 64, &chain);
  Outcome o = Decode(Signed(chain, 0), empty.body, 1);
  ASSERT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_EQ(o.decoded, "");
  // A server that does not authenticate checks the framing, not the chain.
  Sent sent = Encode("payload", 3, &chain);
  EXPECT_TRUE(
      Decode({PayloadMode::kStreamingSigned, std::nullopt, 7, {}}, sent.body, 2).status.ok());
}

TEST(AwsChunkedTest, PayloadModes) {
  EXPECT_EQ(ParsePayloadMode("UNSIGNED-PAYLOAD"), PayloadMode::kUnsigned);
  EXPECT_EQ(ParsePayloadMode(kEmptyPayloadSha256), PayloadMode::kSignedHash);
  EXPECT_EQ(ParsePayloadMode("STREAMING-UNSIGNED-PAYLOAD-TRAILER"),
            PayloadMode::kStreamingUnsignedTrailer);
  EXPECT_EQ(ParsePayloadMode("STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"),
            PayloadMode::kStreamingSignedTrailer);
  EXPECT_FALSE(ParsePayloadMode("STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD"));
  EXPECT_FALSE(
      ParsePayloadMode("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"));
  EXPECT_EQ(ParseTrailerNames("X-Amz-Checksum-CRC32, x-amz-checksum-sha1"),
            (std::vector<std::string>{"x-amz-checksum-crc32", "x-amz-checksum-sha1"}));
}

TEST(AwsChunkedTest, StreamingOptionsFromHeaders) {
  auto plain = StreamingOptions({{"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}}, std::nullopt);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(*plain);
  auto none = StreamingOptions({}, std::nullopt);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);

  auto sdk = StreamingOptions({{"x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"},
                               {"x-amz-decoded-content-length", "66560"},
                               {"x-amz-trailer", "x-amz-checksum-crc32"}},
                              ExampleChain());
  ASSERT_TRUE(sdk.ok()) << sdk.status().ToString();
  ASSERT_TRUE(*sdk);
  EXPECT_EQ((*sdk)->mode, PayloadMode::kStreamingUnsignedTrailer);
  EXPECT_EQ((*sdk)->decoded_length, 66560u);
  EXPECT_EQ((*sdk)->declared_trailers, std::vector<std::string>{"x-amz-checksum-crc32"});
  ASSERT_TRUE((*sdk)->chain);
  EXPECT_EQ((*sdk)->chain->seed_signature, kSeed);

  auto unknown = StreamingOptions({{"x-amz-content-sha256", "STREAMING-NOPE"}}, std::nullopt);
  EXPECT_EQ(unknown.status().remote_code(), "InvalidArgument");
  auto bad_length =
      StreamingOptions({{"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
                        {"x-amz-decoded-content-length", "12x"}},
                       std::nullopt);
  EXPECT_EQ(bad_length.status().remote_code(), "InvalidArgument");
  auto trailer_without_mode =
      StreamingOptions({{"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
                        {"x-amz-trailer", "x-amz-checksum-crc32"}},
                       std::nullopt);
  EXPECT_EQ(trailer_without_mode.status().remote_code(), "InvalidRequest");
}

}  // namespace
}  // namespace ferry::s3
