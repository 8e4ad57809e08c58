// net::TlsStream against OpenSSL's own blocking client on another thread:
// bytes round-trip both ways, a header and its body share a record, a
// write larger than the socket takes completes, completions never run
// inside the call that starts them, the peer's close_notify is eof and a
// bare TCP close is stream_truncated, a closed stream fails without
// touching its old descriptor, and a peer gone mid-write is an error, not
// a SIGPIPE.
#include "net/tls_stream.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "base/test_tls.h"
#include "base/test_temp_dir.h"

namespace ferry::net {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Ec = boost::system::error_code;

std::string RandomBytes(size_t n) {
  std::mt19937_64 rng(n);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// A blocking OpenSSL client on its own thread; counts the records it
// receives (after the handshake).
class Client {
 public:
  explicit Client(uint16_t port) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    ssl_ = SSL_new(ctx_);
    fd_ = ConnectLoopback(port);
    connected_ = fd_ >= 0;
    SSL_set_fd(ssl_, fd_);
    SSL_set_msg_callback(ssl_, &Client::OnMessage);
    SSL_set_msg_callback_arg(ssl_, this);
  }
  ~Client() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    if (fd_ >= 0) close(fd_);
  }
  bool Connect() { return connected_ && SSL_connect(ssl_) == 1 && (records_ = 0, true); }
  bool Write(const std::string& s) {
    size_t n = 0;
    return SSL_write_ex(ssl_, s.data(), s.size(), &n) == 1 && n == s.size();
  }
  std::string Read(size_t want) {
    std::string got(want, '\0');
    size_t have = 0;
    while (have < want) {
      size_t n = 0;
      if (SSL_read_ex(ssl_, got.data() + have, want - have, &n) != 1) break;
      have += n;
    }
    got.resize(have);
    return got;
  }
  void CloseNotify() { SSL_shutdown(ssl_); }
  void CloseTcp() {
    close(fd_);
    fd_ = -1;
  }
  int records() const { return records_; }

 private:
  static void OnMessage(int write_p, int, int content_type, const void*, size_t, SSL*, void* arg) {
    if (!write_p && content_type == SSL3_RT_HEADER) static_cast<Client*>(arg)->records_++;
  }
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool connected_ = false;
  std::atomic<int> records_{0};
};

class TlsStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveTool("openssl")) FERRY_SKIP_WITHOUT_PEER("openssl not installed (make setup)");
    ASSERT_TRUE(MakeCert(dir_.path(), "s", "localhost", "IP:127.0.0.1"));
    context_.use_certificate_chain_file(dir_ / "s.pem");
    context_.use_private_key_file(dir_ / "s.key", asio::ssl::context::pem);
    SSL_CTX_set_num_tickets(context_.native_handle(), 0);  // no records after the handshake but ours
    acceptor_.open(tcp::v4());
    acceptor_.bind({asio::ip::address_v4::loopback(), 0});
    acceptor_.listen();
  }
  uint16_t port() { return acceptor_.local_endpoint().port(); }
  // Runs `server` (given the accepted, handshaken stream) on the loop while
  // `client` runs on a thread.
  template <class Server, class ClientFn>
  void Run(Server server, ClientFn client) {
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          tcp::socket s = co_await acceptor_.async_accept(asio::use_awaitable);
          TlsStream tls(std::move(s), context_);
          Ec ec;
          co_await tls.async_handshake(asio::ssl::stream_base::server, asio::redirect_error(asio::use_awaitable, ec));
          EXPECT_FALSE(ec) << ec.message();
          if (!ec) co_await server(tls);
        },
        asio::detached);
    std::thread t([&] { client(); });
    io_.run();
    t.join();
  }
  TestTempDir dir_;
  asio::io_context io_;
  asio::ssl::context context_{asio::ssl::context::tls_server};
  tcp::acceptor acceptor_{io_};
};

TEST_F(TlsStreamTest, BytesRoundTripAndAHeaderSharesARecordWithItsBody) {
  const std::string header(100, 'h');
  const std::string body = RandomBytes(1024 * 1024 - 100);  // 64 full records with the header
  const std::string request = RandomBytes(300 * 1024);
  std::string got_request, got_answer;
  int records = 0;
  Run(
      [&](TlsStream& tls) -> asio::awaitable<void> {
        got_request.resize(request.size());
        Ec ec;
        co_await asio::async_read(tls, asio::buffer(got_request), asio::redirect_error(asio::use_awaitable, ec));
        EXPECT_FALSE(ec) << ec.message();
        const std::vector<asio::const_buffer> answer{asio::buffer(header), asio::buffer(body)};
        size_t n = co_await asio::async_write(tls, answer, asio::redirect_error(asio::use_awaitable, ec));
        EXPECT_FALSE(ec) << ec.message();
        EXPECT_EQ(n, header.size() + body.size());
      },
      [&] {
        Client c(port());
        ASSERT_TRUE(c.Connect());
        ASSERT_TRUE(c.Write(request));
        got_answer = c.Read(header.size() + body.size());
        records = c.records();
      });
  EXPECT_TRUE(got_request == request);
  ASSERT_EQ(got_answer.size(), header.size() + body.size());
  EXPECT_TRUE(got_answer == header + body);
  // asio::ssl::stream sends the header as a record of its own: 65.
  EXPECT_EQ(records, 64);
}

TEST_F(TlsStreamTest, CompletionsNeverRunInsideTheCallThatStartsThem) {
  bool in_call = false, completed = false;
  Run(
      [&](TlsStream& tls) -> asio::awaitable<void> {
        static const std::string hello = "hello";
        in_call = true;
        tls.async_write_some(asio::buffer(hello), [&](Ec ec, size_t n) {
          EXPECT_FALSE(in_call);
          EXPECT_FALSE(ec);
          EXPECT_EQ(n, hello.size());
          completed = true;
        });
        in_call = false;
        co_return;
      },
      [&] {
        Client c(port());
        ASSERT_TRUE(c.Connect());
        EXPECT_EQ(c.Read(5), "hello");
      });
  EXPECT_TRUE(completed);
}

TEST_F(TlsStreamTest, CloseNotifyIsEofAndABareTcpCloseIsTruncated) {
  for (bool notify : {true, false}) {
    Ec seen;
    Run(
        [&](TlsStream& tls) -> asio::awaitable<void> {
          char b[16];
          co_await tls.async_read_some(asio::buffer(b), asio::redirect_error(asio::use_awaitable, seen));
        },
        [&] {
          Client c(port());
          ASSERT_TRUE(c.Connect());
          if (notify) c.CloseNotify();
          c.CloseTcp();
        });
    io_.restart();
    if (notify) {
      EXPECT_EQ(seen, asio::error::eof) << seen.message();
    } else {
      EXPECT_EQ(seen, asio::ssl::error::stream_truncated) << seen.message();
    }
  }
}

TEST_F(TlsStreamTest, AClosedStreamFailsPendingAndLaterOperations) {
  Ec pending, later;
  Run(
      [&](TlsStream& tls) -> asio::awaitable<void> {
        char b[16];
        // Nothing comes: the read waits until the socket is closed.
        asio::steady_timer t(tls.get_executor(), std::chrono::milliseconds(50));
        t.async_wait([&](Ec) { tls.next_layer().close(); });
        co_await tls.async_read_some(asio::buffer(b), asio::redirect_error(asio::use_awaitable, pending));
        co_await tls.async_write_some(asio::buffer(b), asio::redirect_error(asio::use_awaitable, later));
      },
      [&] {
        Client c(port());
        ASSERT_TRUE(c.Connect());
        c.Read(1);  // ends when the server closes
      });
  EXPECT_EQ(pending, asio::error::operation_aborted) << pending.message();
  EXPECT_EQ(later, asio::error::bad_descriptor) << later.message();
}

TEST_F(TlsStreamTest, APeerGoneMidWriteIsAnErrorNotASignal) {
  const std::string body = RandomBytes(16 * 1024 * 1024);
  Ec ec;
  Run(
      [&](TlsStream& tls) -> asio::awaitable<void> {
        co_await asio::async_write(tls, asio::buffer(body), asio::redirect_error(asio::use_awaitable, ec));
      },
      [&] {
        Client c(port());
        ASSERT_TRUE(c.Connect());
        EXPECT_EQ(c.Read(1000).size(), 1000u);
        c.CloseTcp();  // with most of the body unread: the server's sends meet a reset
      });
  EXPECT_TRUE(ec == asio::error::broken_pipe || ec == asio::error::connection_reset) << ec.message();
}

}  // namespace
}  // namespace ferry::net
