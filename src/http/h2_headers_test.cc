#include "http/h2_headers.h"

#include <gtest/gtest.h>

namespace ferry::http {
namespace {

class NoBody : public BodyReader {
 public:
  Result<std::string> Read(size_t) override { return std::string(); }
  void Cancel() override {}
};

TEST(RequestFromH2, PseudoHeadersMapToTheRequest) {
  auto r = RequestFromH2({{":method", "GET"},
                          {":scheme", "https"},
                          {":authority", "cdn.example:8443"},
                          {":path", "/a/b?c=1"},
                          {"accept-encoding", "zstd"},
                          {"cookie", "a=1"},
                          {"user-agent", "t"},
                          {"cookie", "b=2"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->target, "/a/b?c=1");
  EXPECT_EQ(r->version, 20);
  EXPECT_EQ(HeaderValue(r->headers, "host"), "cdn.example:8443");
  EXPECT_EQ(HeaderValue(r->headers, "accept-encoding"), "zstd");
  EXPECT_EQ(HeaderValue(r->headers, "cookie"), "a=1; b=2");  // crumbs joined (RFC 9113 8.2.3)
  for (const auto& [k, v] : r->headers) EXPECT_NE(k[0], ':') << k;
}

TEST(RequestFromH2, AuthorityWinsOverHostAndHostAloneServes) {
  auto both = RequestFromH2(
      {{":method", "GET"}, {":path", "/"}, {":authority", "a.test"}, {"host", "b.test"}});
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(HeaderValue(both->headers, "host"), "a.test");
  size_t hosts = 0;
  for (const auto& [k, v] : both->headers) hosts += k == "host";
  EXPECT_EQ(hosts, 1u);
  auto host_only = RequestFromH2({{":method", "HEAD"}, {":path", "/x"}, {"host", "b.test"}});
  ASSERT_TRUE(host_only.ok());
  EXPECT_EQ(host_only->method, "HEAD");
  EXPECT_EQ(HeaderValue(host_only->headers, "host"), "b.test");
}

TEST(RequestFromH2, RefusedRequests) {
  const Headers bad[] = {
      {{":path", "/"}, {":authority", "a"}},                              // no :method
      {{":method", "GET"}, {":authority", "a"}},                          // no :path
      {{":method", "GET"}, {":path", "/"}},                               // no authority at all
      {{":method", "CONNECT"}, {":authority", "a:443"}, {":path", "/"}},  // not a tunnel
  };
  for (const auto& h : bad) {
    auto r = RequestFromH2(h);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  }
}

TEST(ResponseFieldsForH2, DropsConnectionFieldsLowerCasesAndFramesTheLength) {
  ServerResponse r;
  r.headers = {{"Content-Type", "text/html"},
               {"Connection", "keep-alive, X-Hop"},
               {"Keep-Alive", "timeout=5"},
               {"Transfer-Encoding", "chunked"},
               {"Upgrade", "h2c"},
               {"X-Hop", "1"},
               {"Proxy-Connection", "close"},
               {"X-Cache", "HIT"},
               {"Content-Length", "999"}};
  r.SetBody("hello");
  Headers f = ResponseFieldsForH2(r);
  Headers want = {{"content-type", "text/html"}, {"x-cache", "HIT"}, {"content-length", "5"}};
  EXPECT_EQ(f, want);
}

TEST(ResponseFieldsForH2, LengthsAsHttp11WouldCarryThem) {
  ServerResponse head;
  head.head_length = 1234;
  EXPECT_EQ(HeaderValue(ResponseFieldsForH2(head), "content-length"), "1234");
  ServerResponse head_chunked;
  head_chunked.head_chunked = true;
  EXPECT_EQ(HeaderValue(ResponseFieldsForH2(head_chunked), "content-length"), "");
  ServerResponse streamed;
  streamed.stream = std::make_shared<NoBody>();
  streamed.stream_length = 10'000'000;
  EXPECT_EQ(HeaderValue(ResponseFieldsForH2(streamed), "content-length"), "10000000");
  streamed.stream_length.reset();
  EXPECT_EQ(HeaderValue(ResponseFieldsForH2(streamed), "content-length"), "");  // length unknown
  ServerResponse not_modified;
  not_modified.status = 304;
  EXPECT_EQ(HeaderValue(ResponseFieldsForH2(not_modified), "content-length"), "");
  ServerResponse empty;
  EXPECT_EQ(HeaderValue(ResponseFieldsForH2(empty), "content-length"), "0");
}

TEST(H2ResponseHasBody, HeadAndBodilessStatuses) {
  ServerResponse ok;
  EXPECT_TRUE(H2ResponseHasBody(ok, false));
  EXPECT_FALSE(H2ResponseHasBody(ok, true));
  ServerResponse head;
  head.head_length = 5;
  EXPECT_FALSE(H2ResponseHasBody(head, false));
  for (int status : {100, 204, 304}) {
    ServerResponse r;
    r.status = status;
    EXPECT_FALSE(H2ResponseHasBody(r, false)) << status;
  }
  ServerResponse not_found;
  not_found.status = 404;
  EXPECT_TRUE(H2ResponseHasBody(not_found, false));
}

}  // namespace
}  // namespace ferry::http
