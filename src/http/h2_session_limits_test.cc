// H2Session's bounds against nghttp2's client (and raw frames where the
// client would not misbehave): stream resets, work out at once, header
// lists, request bodies, CONTINUATION floods.
#include <gtest/gtest.h>

#include "http/h2_session.h"
#include "http/h2_test_client.h"

namespace ferry::http {
namespace {

using testing::H2Pair;

std::optional<ServerResponse> Ok(const ServerRequest&) {
  ServerResponse r;
  r.SetBody("ok");
  return r;
}

// A frame header (RFC 9113 4.1) and its payload.
std::string Frame(uint8_t type, uint8_t flags, int32_t stream, const std::string& payload) {
  std::string f;
  const size_t n = payload.size();
  f += static_cast<char>((n >> 16) & 0xff);
  f += static_cast<char>((n >> 8) & 0xff);
  f += static_cast<char>(n & 0xff);
  f += static_cast<char>(type);
  f += static_cast<char>(flags);
  for (int i = 3; i >= 0; --i) f += static_cast<char>((stream >> (8 * i)) & 0xff);
  return f + payload;
}

TEST(H2SessionLimits, RapidResetEndsInEnhanceYourCalm) {
  H2Limits limits;
  limits.resets = {.burst = 20, .per_second = 5};
  H2Pair p(limits);  // unanswered: each stream is open when the client resets it
  Status st;
  int pairs = 0;
  for (; pairs < 1000 && st.ok(); ++pairs) {
    const int32_t id = p.client.Request("GET", "/x");
    ASSERT_TRUE(p.Pump().ok());
    p.client.Reset(id);
    st = p.Pump();
    p.server.Abandon(id);  // its worker came back
  }
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("resets"), std::string::npos) << st.message();
  EXPECT_LE(pairs, 22);
  ASSERT_TRUE(p.client.goaway.has_value());
  EXPECT_EQ(*p.client.goaway, static_cast<uint32_t>(NGHTTP2_ENHANCE_YOUR_CALM));
  EXPECT_TRUE(p.server.Done());
}

TEST(H2SessionLimits, ResetsAtAModestRateAreFine) {
  H2Limits limits;
  limits.resets = {.burst = 20, .per_second = 5};
  H2Pair p(limits);
  for (int i = 0; i < 150; ++i) {
    const int32_t id = p.client.Request("GET", "/x");
    ASSERT_TRUE(p.Pump().ok());
    p.client.Reset(id);
    ASSERT_TRUE(p.Pump().ok()) << i;
    p.server.Abandon(id);
    p.now += std::chrono::milliseconds(250);  // 4 a second
  }
  EXPECT_FALSE(p.client.goaway.has_value());
  EXPECT_EQ(p.requests.size(), 150u);
}

TEST(H2SessionLimits, WorkStillOutRefusesNewStreams) {
  H2Limits limits;
  limits.max_concurrent_streams = 2;
  H2Pair p(limits);  // the handler leaves every request unanswered
  const int32_t a = p.client.Request("GET", "/a");
  const int32_t b = p.client.Request("GET", "/b");
  ASSERT_TRUE(p.Pump().ok());
  ASSERT_EQ(p.unanswered.size(), 2u);
  // The client resets both: no stream is open, but their work is still out.
  p.client.Reset(a);
  p.client.Reset(b);
  ASSERT_TRUE(p.Pump().ok());
  EXPECT_EQ(p.server.open_streams(), 0u);
  EXPECT_EQ(p.server.outstanding(), 2u);
  const int32_t c = p.client.Request("GET", "/c");
  ASSERT_TRUE(p.Pump().ok());
  EXPECT_TRUE(p.client.responses[c].closed);
  EXPECT_EQ(p.client.responses[c].error, static_cast<uint32_t>(NGHTTP2_REFUSED_STREAM));
  EXPECT_EQ(p.requests.size(), 2u);  // /c never reached the handler
  // The work comes back: streams are served again.
  p.server.Abandon(a);
  p.server.Abandon(b);
  p.handler = Ok;
  const int32_t d = p.client.Request("GET", "/d");
  ASSERT_TRUE(p.Pump().ok());
  EXPECT_EQ(p.client.responses[d].status, 200);
}

TEST(H2SessionLimits, StreamsPastTheAdvertisedLimitAreRefused) {
  H2Limits limits;
  limits.max_concurrent_streams = 10;
  H2Pair p(limits);  // unanswered: the streams stay open
  // Sent before the client has seen (and acknowledged) our SETTINGS.
  std::vector<int32_t> ids;
  for (int i = 0; i < 15; ++i) ids.push_back(p.client.Request("GET", "/" + std::to_string(i)));
  ASSERT_TRUE(p.Pump().ok());
  int refused = 0;
  for (int32_t id : ids) refused += p.client.responses[id].error == NGHTTP2_REFUSED_STREAM;
  EXPECT_EQ(refused, 5);
  EXPECT_EQ(p.requests.size(), 10u);
}

TEST(H2SessionLimits, HeaderListOverTheLimitIs431) {
  H2Limits limits;
  limits.header_limit = 2048;
  H2Pair p(limits);
  p.handler = Ok;
  const int32_t big = p.client.Request("GET", "/x", {{"x-big", std::string(4000, 'a')}});
  const int32_t small = p.client.Request("GET", "/y", {{"x-small", std::string(100, 'a')}});
  ASSERT_TRUE(p.Pump().ok());
  EXPECT_EQ(p.client.responses[big].status, 431);
  EXPECT_EQ(p.client.responses[small].status, 200);
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].target, "/y");
}

TEST(H2SessionLimits, RequestBodyOverTheLimitIs413) {
  H2Limits limits;
  limits.body_limit = 1000;
  H2Pair p(limits);
  p.handler = [](const ServerRequest& req) -> std::optional<ServerResponse> {
    ServerResponse r;
    r.SetBody(std::to_string(req.body.size()));
    return r;
  };
  const int32_t big = p.client.Request("POST", "/echo", {}, std::string(5000, 'b'));
  const int32_t fits = p.client.Request("POST", "/echo", {}, std::string(900, 'b'));
  ASSERT_TRUE(p.Pump().ok());
  EXPECT_EQ(p.client.responses[big].status, 413);
  EXPECT_EQ(p.client.responses[fits].status, 200);
  EXPECT_EQ(p.client.responses[fits].body, "900");
}

TEST(H2SessionLimits, RequestBodiesHeldOnAConnectionAreBounded) {
  H2Limits limits;
  limits.body_limit = 40'000;
  limits.connection_body_limit = 100'000;
  H2Pair p(limits);  // unanswered: the bodies stay held
  std::vector<int32_t> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(p.client.Request("POST", "/up", {}, std::string(30'000, 'u')));
  ASSERT_TRUE(p.Pump().ok());
  EXPECT_EQ(p.requests.size(), 3u);
  int refused = 0;
  for (int32_t id : ids) refused += p.client.responses[id].error == NGHTTP2_REFUSED_STREAM;
  EXPECT_EQ(refused, 1);
}

TEST(H2SessionLimits, ContinuationFloodEndsInGoaway) {
  H2Pair p;
  p.handler = Ok;
  ASSERT_TRUE(p.Pump().ok());  // preface and SETTINGS exchanged
  // HEADERS without END_HEADERS, then CONTINUATION frames that never end
  // (each a literal field, never indexed: 0x10, name "x-a", value "b").
  const std::string field = std::string(
      "\x10\x03x-a\x01"
      "b",
      7);
  std::string flood =
      Frame(0x1, 0x1, 1, std::string("\x82\x84\x86", 3) + field);  // END_STREAM only
  for (int i = 0; i < 10'000; ++i) flood += Frame(0x9, 0x0, 1, field);
  Status st = p.server.Receive(flood, p.now);
  EXPECT_FALSE(st.ok());
  std::string out;
  p.server.Send(&out, 1 << 20);
  EXPECT_EQ(out, GoawayFrame(1, NGHTTP2_ENHANCE_YOUR_CALM));
  EXPECT_TRUE(p.server.Done());
  EXPECT_TRUE(p.requests.empty());
}

}  // namespace
}  // namespace ferry::http
