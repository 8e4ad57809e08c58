// H2Session against nghttp2's client, in memory: requests and answers,
// HEAD, bodies streamed as the client's windows open, dropped work, the
// preface and a graceful end. Its limits: h2_session_limits_test.cc.
#include "http/h2_session.h"

#include <gtest/gtest.h>

#include "http/h2_test_client.h"

namespace ferry::http {
namespace {

using testing::H2Pair;

// A body of `size` bytes read in pieces; counts what was asked of it.
class PatternBody : public BodyReader {
 public:
  explicit PatternBody(size_t size) : bytes_(Expected(size)) {}
  static std::string Expected(size_t size) {
    std::string s(size, '\0');
    for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
    return s;
  }
  Result<std::string> Read(size_t max) override {
    ++reads;
    const size_t n = std::min(max, bytes_.size() - at_);
    std::string out = bytes_.substr(at_, n);
    at_ += n;
    return out;
  }
  void Cancel() override { cancelled = true; }
  size_t reads = 0;
  bool cancelled = false;

 private:
  std::string bytes_;
  size_t at_ = 0;
};

ServerResponse Text(std::string body) {
  ServerResponse r;
  r.headers = {{"Content-Type", "text/plain"}, {"Connection", "keep-alive"}, {"X-Cache", "HIT"}};
  r.SetBody(std::move(body));
  return r;
}

TEST(H2Preface, Classified) {
  EXPECT_EQ(MatchH2Preface(""), PrefaceMatch::kPartial);
  EXPECT_EQ(MatchH2Preface("PRI * HTTP/2"), PrefaceMatch::kPartial);
  EXPECT_EQ(MatchH2Preface(kH2Preface), PrefaceMatch::kYes);
  EXPECT_EQ(MatchH2Preface(std::string(kH2Preface) + "\x00\x00\x12\x04"), PrefaceMatch::kYes);
  EXPECT_EQ(MatchH2Preface("GET / HTTP/1.1\r\n"), PrefaceMatch::kNo);
  EXPECT_EQ(MatchH2Preface("PRI * HTTP/1.1\r\n"), PrefaceMatch::kNo);
  EXPECT_EQ(MatchH2Preface("P"), PrefaceMatch::kPartial);
}

TEST(GoawayFrame, Bytes) {
  EXPECT_EQ(GoawayFrame(5, 0xb), std::string("\x00\x00\x08\x07\x00\x00\x00\x00\x00"
                                             "\x00\x00\x00\x05\x00\x00\x00\x0b",
                                             17));
}

TEST(H2Session, AnswersWithMappedFields) {
  H2Pair p;
  p.handler = [](const ServerRequest& req) -> std::optional<ServerResponse> {
    return Text("hello " + req.target);
  };
  const int32_t id = p.client.Request("GET", "/a?b=1", {{"accept-encoding", "zstd"}});
  ASSERT_TRUE(p.Pump().ok());
  ASSERT_EQ(p.requests.size(), 1u);
  const ServerRequest& req = p.requests[0];
  EXPECT_EQ(req.method, "GET");
  EXPECT_EQ(req.target, "/a?b=1");
  EXPECT_EQ(req.version, 20);
  EXPECT_EQ(req.peer, "192.0.2.1");
  EXPECT_EQ(HeaderValue(req.headers, "host"), "cache.test");
  EXPECT_EQ(HeaderValue(req.headers, "accept-encoding"), "zstd");
  const auto& r = p.client.responses[id];
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello /a?b=1");
  EXPECT_EQ(HeaderValue(r.headers, "content-length"), "12");
  EXPECT_EQ(HeaderValue(r.headers, "x-cache"), "HIT");
  EXPECT_EQ(HeaderValue(r.headers, "connection"), "");
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.error, 0u);
  EXPECT_EQ(p.server.open_streams(), 0u);
  EXPECT_EQ(p.server.outstanding(), 0u);
}

TEST(H2Session, ManyStreamsOnOneConnection) {
  H2Pair p;
  p.handler = [](const ServerRequest& req) -> std::optional<ServerResponse> {
    return Text(req.target);
  };
  std::vector<int32_t> ids;
  for (int i = 0; i < 60; ++i) ids.push_back(p.client.Request("GET", "/" + std::to_string(i)));
  ASSERT_TRUE(p.Pump().ok());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(p.client.responses[ids[i]].status, 200);
    EXPECT_EQ(p.client.responses[ids[i]].body, "/" + std::to_string(i));
  }
}

TEST(H2Session, HeadCarriesTheLengthAndNoBody) {
  H2Pair p;
  auto body = std::make_shared<PatternBody>(1000);
  p.handler = [&](const ServerRequest&) -> std::optional<ServerResponse> {
    ServerResponse r;
    r.head_length = 123456;
    r.stream = body;  // a HEAD's reader is not read: handed back to cancel
    return r;
  };
  const int32_t id = p.client.Request("HEAD", "/x");
  ASSERT_TRUE(p.Pump().ok());
  const auto& r = p.client.responses[id];
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(HeaderValue(r.headers, "content-length"), "123456");
  EXPECT_EQ(body->reads, 0u);
  EXPECT_TRUE(body->cancelled);
}

TEST(H2Session, NotModifiedHasNoBody) {
  H2Pair p;
  p.handler = [](const ServerRequest&) -> std::optional<ServerResponse> {
    ServerResponse r;
    r.status = 304;
    r.headers = {{"ETag", "\"x\""}};
    return r;
  };
  const int32_t id = p.client.Request("GET", "/x", {{"if-none-match", "\"x\""}});
  ASSERT_TRUE(p.Pump().ok());
  EXPECT_EQ(p.client.responses[id].status, 304);
  EXPECT_EQ(HeaderValue(p.client.responses[id].headers, "etag"), "\"x\"");
  EXPECT_TRUE(p.client.responses[id].closed);
}

TEST(H2Session, StreamedBodyIsReadOnlyAsTheClientsWindowsOpen) {
  H2Limits limits;
  limits.stream_buffer = 16 << 10;
  H2Pair p(limits);
  const size_t size = 3 << 20;  // many windows (64 KB each by default)
  auto body = std::make_shared<PatternBody>(size);
  p.handler = [&](const ServerRequest&) -> std::optional<ServerResponse> {
    ServerResponse r;
    r.stream = body;
    r.stream_length = size;
    return r;
  };
  ASSERT_TRUE(p.Pump().ok());  // the SETTINGS exchange
  p.deliver = false;           // the client reads nothing: no WINDOW_UPDATE
  const int32_t id = p.client.Request("GET", "/big");
  ASSERT_TRUE(p.Pump().ok());
  // What was read is what the initial windows let through, plus one piece.
  EXPECT_LE(p.read_bytes, 65535u + limits.stream_buffer);
  EXPECT_EQ(p.max_read, limits.stream_buffer);
  const size_t read_while_stalled = p.read_bytes;
  ASSERT_TRUE(p.Pump().ok());
  EXPECT_EQ(p.read_bytes, read_while_stalled);
  p.deliver = true;
  ASSERT_TRUE(p.Pump().ok());
  const auto& r = p.client.responses[id];
  EXPECT_EQ(HeaderValue(r.headers, "content-length"), std::to_string(size));
  ASSERT_EQ(r.body.size(), size);
  EXPECT_TRUE(r.body == PatternBody::Expected(size));
  EXPECT_TRUE(r.closed);
  EXPECT_FALSE(body->cancelled);
}

TEST(H2Session, ABodyThatFailsResetsTheStream) {
  class Failing : public BodyReader {
   public:
    Result<std::string> Read(size_t) override {
      if (n_++ == 0) return std::string(1000, 'x');
      return Status::Network("upstream reset");
    }
    void Cancel() override {}

   private:
    int n_ = 0;
  };
  H2Pair p;
  p.handler = [](const ServerRequest&) -> std::optional<ServerResponse> {
    ServerResponse r;
    r.stream = std::make_shared<Failing>();
    r.stream_length = 100000;
    return r;
  };
  const int32_t id = p.client.Request("GET", "/cut");
  ASSERT_TRUE(p.Pump().ok());
  const auto& r = p.client.responses[id];
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.error, static_cast<uint32_t>(NGHTTP2_INTERNAL_ERROR));
  EXPECT_LT(r.body.size(), 100000u);
}

TEST(H2Session, WorkOfAResetStreamIsReportedAndItsBodyHandedBack) {
  H2Pair p;
  const int32_t id = p.client.Request("GET", "/slow");
  ASSERT_TRUE(p.Pump().ok());
  ASSERT_EQ(p.unanswered.size(), 1u);
  EXPECT_EQ(p.server.outstanding(), 1u);
  p.client.Reset(id);
  ASSERT_TRUE(p.Pump().ok());
  ASSERT_EQ(p.closed.size(), 1u);  // kClosed: the work may stop
  EXPECT_EQ(p.closed[0], id);
  EXPECT_EQ(p.server.outstanding(), 1u);  // until the worker comes back
  auto body = std::make_shared<PatternBody>(1 << 20);
  ServerResponse late;
  late.stream = body;
  p.server.Respond(id, std::move(late));
  p.Events();
  EXPECT_EQ(p.server.outstanding(), 0u);
  EXPECT_TRUE(body->cancelled);
  EXPECT_EQ(body->reads, 0u);
}

TEST(H2Session, ARequestResetBeforeItIsTakenIsNeverHandedOut) {
  H2Pair p;
  p.handler = [](const ServerRequest&) -> std::optional<ServerResponse> { return Text("x"); };
  ASSERT_TRUE(p.Pump().ok());
  // HEADERS and RST_STREAM arrive in one read: the request is dropped.
  const int32_t id = p.client.Request("GET", "/gone");
  std::string bytes = p.client.Output();
  p.client.Reset(id);
  bytes += p.client.Output();
  ASSERT_TRUE(p.server.Receive(bytes, p.now).ok());
  EXPECT_TRUE(p.server.TakeEvents().empty());
  EXPECT_EQ(p.server.outstanding(), 0u);
  EXPECT_EQ(p.server.open_streams(), 0u);
  // A request that was not reset in the same read is handed out.
  const int32_t kept = p.client.Request("GET", "/kept");
  ASSERT_TRUE(p.server.Receive(p.client.Output(), p.now).ok());
  auto events = p.server.TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].stream, kept);
}

TEST(H2Session, ShutdownLetsOpenStreamsFinish) {
  H2Pair p;
  const int32_t id = p.client.Request("GET", "/slow");
  ASSERT_TRUE(p.Pump().ok());
  p.server.Shutdown();
  ASSERT_TRUE(p.Pump().ok());
  ASSERT_TRUE(p.client.goaway.has_value());
  EXPECT_EQ(*p.client.goaway, static_cast<uint32_t>(NGHTTP2_NO_ERROR));
  EXPECT_FALSE(p.server.Done());  // a stream is still open
  p.server.Respond(id, Text("finished"));
  ASSERT_TRUE(p.Pump().ok());
  EXPECT_EQ(p.client.responses[id].body, "finished");
  EXPECT_TRUE(p.server.Done());
}

TEST(H2Session, ABadPrefaceEndsInGoaway) {
  H2Pair p;
  Status st = p.server.Receive("GET / HTTP/1.1\r\nHost: x\r\n\r\n", p.now);
  EXPECT_FALSE(st.ok());
  std::string out;
  p.server.Send(&out, 1 << 20);
  ASSERT_GE(out.size(), 17u);
  // The server's SETTINGS may go first; the GOAWAY (PROTOCOL_ERROR) ends it.
  EXPECT_EQ(out.substr(out.size() - 17), GoawayFrame(0, NGHTTP2_PROTOCOL_ERROR));
  EXPECT_TRUE(p.server.Done());
  EXPECT_FALSE(p.server.Receive("more", p.now).ok());
}

}  // namespace
}  // namespace ferry::http
