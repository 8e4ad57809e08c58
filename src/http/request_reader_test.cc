#include "http/request_reader.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/strings.h"

namespace ferry::http {
namespace {

using State = RequestReader::State;
using Error = RequestReader::Error;

// Feeds `bytes` in pieces of `step`, keeping unused bytes as a server does.
RequestReader& FeedAll(RequestReader& r, std::string_view bytes, size_t step,
                       size_t* left = nullptr) {
  std::string buffered;
  size_t at = 0;
  while (r.state() == State::kNeedMore && at < bytes.size()) {
    buffered.append(bytes.substr(at, step));
    at += step;
    buffered.erase(0, r.Feed(buffered));
  }
  if (left) *left = buffered.size() + (at < bytes.size() ? bytes.size() - at : 0);
  return r;
}

TEST(RequestReaderTest, ReadsARequestFedInAnyPieces) {
  const std::string req =
      "GET /a/b?c=d HTTP/1.1\r\nHost: site.test\r\nAccept-Encoding: zstd\r\nX-Two: 1\r\nX-Two: "
      "2\r\n\r\n";
  for (size_t step : {1, 3, 7, 1000}) {
    RequestReader r({});
    FeedAll(r, req, step);
    ASSERT_EQ(r.state(), State::kDone) << step;
    EXPECT_TRUE(r.keep_alive());
    ServerRequest p = r.TakeRequest();
    EXPECT_EQ(p.method, "GET");
    EXPECT_EQ(p.target, "/a/b?c=d");
    auto host = std::find_if(p.headers.begin(), p.headers.end(),
                             [](const auto& h) { return EqualsIgnoreCase(h.first, "host"); });
    ASSERT_NE(host, p.headers.end());
    EXPECT_EQ(host->second, "site.test");
    EXPECT_EQ(p.headers.size(), 4u);
  }
}

TEST(RequestReaderTest, SizedAndChunkedBodies) {
  RequestReader sized({});
  FeedAll(sized, "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", 2);
  ASSERT_EQ(sized.state(), State::kDone);
  EXPECT_EQ(sized.TakeRequest().body, "hello");
  RequestReader chunked({});
  FeedAll(chunked,
          "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
          "chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
          4);
  ASSERT_EQ(chunked.state(), State::kDone);
  EXPECT_EQ(chunked.TakeRequest().body, "abcde");
}

// Paused at the header, then the body handed out as it is parsed: sized
// and chunked, fed in any pieces; the bytes after it are the next request's.
TEST(RequestReaderTest, StreamsABodyAfterPausingAtItsHeader) {
  const std::string next = "GET /next HTTP/1.1\r\nHost: h\r\n\r\n";
  const std::string sized =
      "PUT /p HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\nhello world";
  const std::string chunked =
      "PUT /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n "
      "world\r\n0\r\n\r\n";
  for (bool is_sized : {true, false}) {
    const std::string& req = is_sized ? sized : chunked;
    for (size_t step : {1, 5, 1000}) {
      const std::string all = req + next;
      RequestReader r({});
      r.PauseAtHeader();
      std::string buffered;
      size_t at = 0;
      auto more = [&] {
        buffered.append(all.substr(at, step));
        at += step;
      };
      while (r.state() == State::kNeedMore) {
        more();
        buffered.erase(0, r.Feed(buffered));
      }
      ASSERT_EQ(r.state(), State::kHeader) << step;
      EXPECT_EQ(r.Head().target, "/p");
      EXPECT_EQ(r.Head().body, "");
      EXPECT_EQ(r.expects_continue(), is_sized);
      EXPECT_EQ(r.content_length(), is_sized ? std::optional<uint64_t>(11) : std::nullopt);
      r.ReadStreamed(100);
      std::string body;
      while (r.state() == State::kNeedMore) {
        if (buffered.empty()) more();
        size_t used = r.FeedBody(buffered, &body);
        buffered.erase(0, used);
        if (used == 0 && r.state() == State::kNeedMore) more();
      }
      ASSERT_EQ(r.state(), State::kDone) << step;
      EXPECT_EQ(body, "hello world");
      EXPECT_TRUE(r.keep_alive());
      EXPECT_EQ(buffered + all.substr(std::min(at, all.size())), next) << step;
    }
  }
}

TEST(RequestReaderTest, AStreamedBodyHasItsOwnLimitAndCannotEndByAClose) {
  RequestReader big({});
  big.PauseAtHeader();
  big.Feed("PUT /p HTTP/1.1\r\nHost: h\r\nContent-Length: 20\r\n\r\n");
  ASSERT_EQ(big.state(), State::kHeader);
  big.ReadStreamed(10);
  std::string body;
  big.FeedBody("0123456789", &body);
  EXPECT_EQ(big.error(), Error::kBodyTooLarge);
  RequestReader cut({});
  cut.PauseAtHeader();
  cut.Feed("PUT /p HTTP/1.1\r\nHost: h\r\nContent-Length: 20\r\n\r\n");
  cut.ReadStreamed(100);
  cut.FeedBody("0123", &body);
  EXPECT_EQ(cut.state(), State::kNeedMore);
  cut.FeedEof();
  EXPECT_EQ(cut.error(), Error::kClosed);
  // A request without a body is whole at once, paused or not.
  RequestReader get({});
  get.PauseAtHeader();
  get.Feed("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(get.state(), State::kDone);
}

TEST(RequestReaderTest, StopsAtTheEndOfOneRequest) {
  RequestReader r({});
  std::string two = "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n";
  size_t used = r.Feed(two);
  ASSERT_EQ(r.state(), State::kDone);
  EXPECT_EQ(used, two.size() / 2);
  RequestReader next({});
  next.Feed(std::string_view(two).substr(used));
  ASSERT_EQ(next.state(), State::kDone);
  EXPECT_EQ(next.TakeRequest().target, "/2");
}

TEST(RequestReaderTest, LimitsAndMalformedInput) {
  RequestLimits small;
  small.header_limit = 256;
  small.body_limit = 10;
  RequestReader big_header(small);
  FeedAll(big_header, "GET / HTTP/1.1\r\nX: " + std::string(1000, 'a') + "\r\n\r\n", 64);
  EXPECT_EQ(big_header.error(), Error::kHeaderTooLarge);
  RequestReader big_body(small);
  FeedAll(big_body, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world", 64);
  EXPECT_EQ(big_body.error(), Error::kBodyTooLarge);
  for (const char* bad :
       {"GARBAGE\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        // Framing that could smuggle a second request (RFC 9112 6.3).
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\nGET /x HTTP/1.1\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
        "gzip\r\n\r\n",
        "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        // Host (RFC 9112 3.2).
        "GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n"}) {
    RequestReader r({});
    FeedAll(r, bad, 5);
    EXPECT_EQ(r.state(), State::kError) << bad;
    EXPECT_EQ(r.error(), Error::kBadRequest) << bad;
    EXPECT_EQ(r.error_message().find('\n'), std::string::npos);
  }
}

TEST(RequestReaderTest, HostRulesLeaveValidRequestsAlone) {
  for (const char* good :
       {"GET / HTTP/1.0\r\n\r\n", "GET / HTTP/1.1\r\nHost:\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: xn--bcher-kva.example:80\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n0\r\n\r\n"}) {
    RequestReader r({});
    FeedAll(r, good, 3);
    EXPECT_EQ(r.state(), State::kDone) << good << r.error_message();
  }
}

TEST(RequestReaderTest, ACloseMidRequestIsNotARequest) {
  RequestReader r({});
  size_t left = 0;
  FeedAll(r, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nonly this", 8, &left);
  EXPECT_EQ(r.state(), State::kNeedMore);
  r.FeedEof();
  EXPECT_EQ(r.error(), Error::kClosed);
  RequestReader idle({});
  EXPECT_TRUE(idle.empty());
  idle.FeedEof();  // a connection closed before its first byte
  EXPECT_EQ(idle.error(), Error::kClosed);
  RequestReader partial({});
  partial.Feed("GET / HT");  // a header never finished: nothing used yet
  partial.FeedEof();
  EXPECT_EQ(partial.error(), Error::kClosed);
}

}  // namespace
}  // namespace ferry::http
