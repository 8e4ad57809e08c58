// Request bodies taken as they arrive (Handler::StreamBody), and
// "Expect: 100-continue", over real loopback sockets.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "base/test_socket.h"
#include "http/request_body.h"
#include "http/server.h"

namespace ferry::http {
namespace {

using namespace std::chrono_literals;

int Connect(uint16_t port) { return ConnectLoopback(port); }

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until `out` holds `want` (or the peer closes or times out).
bool ReadUntil(int fd, std::string* out, std::string_view want) {
  char buf[4096];
  while (out->find(want) == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    out->append(buf, static_cast<size_t>(n));
  }
  return true;
}

uint64_t Fnv(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131) ^ (i >> 11));
  return s;
}

// Streams PUT bodies: answers "<bytes> <fnv>" of what it read, after
// waiting `hold` first; refuses /refuse unread. Other requests come whole.
class StreamingHandler : public Handler {
 public:
  std::chrono::milliseconds hold{0};
  std::atomic<int> streamed{0};
  std::atomic<int> whole{0};
  std::string LastError() {
    std::lock_guard lock(mu_);
    return last_error_;
  }

 private:
  std::mutex mu_;
  std::string last_error_;

 public:
  bool StreamBody(const ServerRequest& head) override { return head.method == "PUT"; }

  ServerResponse Handle(const ServerRequest& req) override {
    ServerResponse r;
    if (req.target == "/refuse") {
      r.status = 403;
      r.SetBody("refused\n");
      return r;
    }
    if (!req.stream) {
      whole++;
      r.SetBody(std::to_string(req.body.size()) + " " + std::to_string(Fnv(req.body)));
      return r;
    }
    streamed++;
    std::this_thread::sleep_for(hold);
    uint64_t n = 0;
    uint64_t h = Fnv("");
    char buf[7000];
    for (;;) {
      auto got = req.stream->Read(buf, sizeof buf);
      if (!got.ok()) {
        std::lock_guard lock(mu_);
        last_error_ = got.status().ToString();
        r.status = 400;
        r.SetBody("cut\n");
        return r;
      }
      if (*got == 0) break;
      h = Fnv(std::string_view(buf, *got), h);
      n += *got;
    }
    r.SetBody(std::to_string(n) + " " + std::to_string(h));
    return r;
  }
};

class ServerStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.net.listen = "127.0.0.1:0";
    o.limits.body_limit = 1 << 20;
    o.limits.stream_buffer = 256 << 10;
    o.client_timeout = 5s;
    o.net.drain_timeout = 1s;
    server_ = std::make_unique<Server>(o, &handler_);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override { server_->Stop(); }

  StreamingHandler handler_;
  std::unique_ptr<Server> server_;
};

// A 24 MiB body larger than the whole-body limit streams through while the
// handler is slow to read: the client is held back (it cannot have sent it
// all before the handler starts), every byte arrives in order, and the
// connection serves the next request.
TEST_F(ServerStreamTest, ABodyStreamsWithBackPressureAndTheConnectionGoesOn) {
  handler_.hold = 500ms;
  const std::string body = Pattern(24 << 20);
  int fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  std::atomic<size_t> sent{0};
  std::thread sender([&] {
    std::string head =
        "PUT /o HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    SendAll(fd, head);
    for (size_t at = 0; at < body.size(); at += 64 << 10) {
      if (!SendAll(fd, std::string_view(body).substr(at, 64 << 10))) return;
      sent = at + (64 << 10);
    }
  });
  std::this_thread::sleep_for(400ms);
  const size_t before_read = sent.load();
  std::string answer;
  ASSERT_TRUE(ReadUntil(fd, &answer, std::to_string(Fnv(body))));
  sender.join();
  EXPECT_LT(before_read, body.size() / 2) << "the server read ahead of its handler without bound";
  EXPECT_NE(answer.find(std::to_string(body.size()) + " " + std::to_string(Fnv(body))),
            std::string::npos);
  // Same connection: a chunked streamed body, then a whole one.
  answer.clear();
  ASSERT_TRUE(SendAll(fd,
                      "PUT /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n"));
  ASSERT_TRUE(ReadUntil(fd, &answer, std::to_string(Fnv("abcdefg"))));
  EXPECT_NE(answer.find("7 " + std::to_string(Fnv("abcdefg"))), std::string::npos);
  answer.clear();
  ASSERT_TRUE(SendAll(fd, "POST /w HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi"));
  ASSERT_TRUE(ReadUntil(fd, &answer, std::to_string(Fnv("hi"))));
  ::close(fd);
  EXPECT_EQ(handler_.streamed, 2);
  EXPECT_EQ(handler_.whole, 1);
}

// "100 Continue" goes out when the handler reads, never for a request it
// refuses from its header (which then closes: the body was not read); a
// body taken whole gets it before it is read.
TEST_F(ServerStreamTest, ContinueOnlyWhenTheBodyIsWanted) {
  int fd = Connect(server_->port());
  ASSERT_TRUE(SendAll(
      fd, "PUT /refuse HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
  std::string answer;
  ASSERT_TRUE(ReadUntil(fd, &answer, "refused\n"));
  EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0u) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  ::close(fd);

  for (const char* method : {"PUT", "POST"}) {
    fd = Connect(server_->port());
    answer.clear();
    ASSERT_TRUE(SendAll(
        fd, std::string(method) +
                " /o HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
    ASSERT_TRUE(ReadUntil(fd, &answer, "\r\n\r\n"));
    EXPECT_EQ(answer, "HTTP/1.1 100 Continue\r\n\r\n") << method;
    ASSERT_TRUE(SendAll(fd, "hello"));
    ASSERT_TRUE(ReadUntil(fd, &answer, std::to_string(Fnv("hello"))));
    EXPECT_NE(answer.find("HTTP/1.1 200"), std::string::npos) << answer;
    ::close(fd);
  }
}

// A client that goes away mid-body: the handler's read fails (it stores
// nothing), and the server goes on.
TEST_F(ServerStreamTest, ABodyCutShortFailsTheHandlersRead) {
  int fd = Connect(server_->port());
  ASSERT_TRUE(
      SendAll(fd, "PUT /o HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n" + Pattern(5000)));
  std::this_thread::sleep_for(100ms);
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  ReadUntil(fd, &answer, "cut\n");
  ::close(fd);
  for (int i = 0; i < 100 && handler_.LastError().empty(); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_NE(handler_.LastError().find("cut short"), std::string::npos) << handler_.LastError();
  fd = Connect(server_->port());
  answer.clear();
  ASSERT_TRUE(SendAll(fd, "PUT /o HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nok"));
  EXPECT_TRUE(ReadUntil(fd, &answer, std::to_string(Fnv("ok"))));
  ::close(fd);
}

// A chunk line that never ends is not buffered without bound: past the
// header limit the body fails and the connection closes.
TEST_F(ServerStreamTest, AnEndlessChunkLineIsCutAtTheHeaderLimit) {
  int fd = Connect(server_->port());
  ASSERT_TRUE(SendAll(fd, "PUT /o HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5;x="));
  std::string ext(64 << 10, 'a');
  bool cut = false;
  for (int i = 0; i < 64 && !cut; ++i) cut = !SendAll(fd, ext);
  std::string answer;
  ReadUntil(fd, &answer, "cut\n");
  ::close(fd);
  for (int i = 0; i < 100 && handler_.LastError().empty(); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_NE(handler_.LastError().find("cut short"), std::string::npos) << handler_.LastError();
}

// A stop while a body streams and its client has gone quiet: the handler's
// read fails and Stop returns (it joins the handler's worker).
TEST_F(ServerStreamTest, AStopDuringAStalledBodyEnds) {
  int fd = Connect(server_->port());
  ASSERT_TRUE(
      SendAll(fd, "PUT /o HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n" + Pattern(1000)));
  std::this_thread::sleep_for(200ms);
  const auto start = std::chrono::steady_clock::now();
  server_->Stop();
  const auto took = std::chrono::steady_clock::now() - start;
  ::close(fd);
  EXPECT_LT(took, 8s);
  EXPECT_FALSE(handler_.LastError().empty());
}

}  // namespace
}  // namespace ferry::http
