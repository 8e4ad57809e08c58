// The server core with a line-echo session, driven by plain POSIX clients:
// TCP and Unix-domain listeners, the connection limit, deadlines, the
// worker pool, a graceful stop, and setup errors.
#include "net/server.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <fstream>
#include <future>
#include <thread>

#include "base/test_temp_dir.h"

namespace ferry::net {
namespace {

namespace asio = boost::asio;
using Ec = boost::system::error_code;
using namespace std::chrono_literals;

// Reads lines and answers each with "echo LINE\n". A line "slow" is
// answered from a worker once `gate` opens.
struct Echo {
  Server* server = nullptr;
  std::shared_future<void> gate;

  asio::awaitable<void> operator()(Connection& c) {
    asio::streambuf in;
    for (;;) {
      Ec ec;
      c.SetIdle(in.size() == 0);
      c.Arm(2s);
      co_await asio::async_read_until(c, in, '\n', asio::redirect_error(asio::use_awaitable, ec));
      c.Disarm();
      c.SetIdle(false);
      if (ec) co_return;
      std::istream is(&in);
      std::string line;
      std::getline(is, line);
      if (line == "slow") {
        auto wait = [g = gate] { g.wait(); return std::string("slow done"); };
        line = co_await server->Blocking(wait);
      }
      std::string out = "echo " + line + "\n";
      co_await asio::async_write(c, asio::buffer(out), asio::redirect_error(asio::use_awaitable, ec));
      if (ec || c.draining()) co_return;
    }
  }
};

// A connected client socket with a 5 s receive timeout, or -1.
int Connect(int family, const sockaddr* a, socklen_t len) {
  int fd = socket(family, SOCK_STREAM, 0);
  if (connect(fd, a, len) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

int ConnectTcp(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return Connect(AF_INET, reinterpret_cast<sockaddr*>(&a), sizeof(a));
}

int ConnectUnix(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, sizeof(a.sun_path) - 1);
  return Connect(AF_UNIX, reinterpret_cast<sockaddr*>(&a), sizeof(a));
}

// Sends `line` and returns what comes back up to a newline ("" on EOF).
std::string Ask(int fd, const std::string& line) {
  std::string out = line + "\n";
  if (write(fd, out.data(), out.size()) != static_cast<ssize_t>(out.size())) return "";
  std::string got;
  char ch;
  while (read(fd, &ch, 1) == 1 && ch != '\n') got += ch;
  return got;
}

// True when the server has closed `fd` (a read sees EOF or a reset).
bool Closed(int fd) {
  char ch;
  return read(fd, &ch, 1) <= 0;
}

struct Running {
  Echo echo;
  std::unique_ptr<Server> server;
  explicit Running(ServerOptions o) {
    server = std::make_unique<Server>(std::move(o), [this](Connection& c) { return echo(c); });
    echo.server = server.get();
  }
};

TEST(NetServer, ServesTcpAndWritesThePortFile) {
  TestTempDir dir;
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.port_file = dir / "port";
  o.io_threads = 2;
  Running r(o);
  ASSERT_TRUE(r.server->Start().ok());
  ASSERT_NE(r.server->port(), 0);
  std::ifstream pf(o.port_file);
  int written = 0;
  pf >> written;
  EXPECT_EQ(written, r.server->port());
  EXPECT_EQ(r.server->address(), "127.0.0.1:" + std::to_string(r.server->port()));
  int a = ConnectTcp(r.server->port()), b = ConnectTcp(r.server->port());
  EXPECT_EQ(Ask(a, "one"), "echo one");
  EXPECT_EQ(Ask(b, "two"), "echo two");
  EXPECT_EQ(Ask(a, "three"), "echo three");
  EXPECT_EQ(r.server->stats().accepted, 2u);
  close(a);
  close(b);
}

TEST(NetServer, ServesAUnixSocketClearsAStaleOneAndRefusesALiveOne) {
  TestTempDir dir;
  std::string path = dir / "s.sock";
  {  // a socket file left behind by a server that died
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, sizeof(a.sun_path) - 1);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    close(fd);
  }
  ServerOptions o;
  o.listen = "unix:" + path;
  Running r(o);
  ASSERT_TRUE(r.server->Start().ok());
  EXPECT_EQ(r.server->port(), 0);
  EXPECT_EQ(r.server->address(), "unix:" + path);
  int fd = ConnectUnix(path);
  EXPECT_EQ(Ask(fd, "hello"), "echo hello");

  Running second(o);  // the path is taken by a live server
  Status st = second.server->Start();
  EXPECT_EQ(st.code(), ErrorCode::kAlreadyExists) << st.ToString();
  EXPECT_NE(st.message().find("a server is listening there"), std::string::npos);
  EXPECT_EQ(Ask(fd, "still"), "echo still");
  close(fd);
  r.server->Stop();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(NetServer, OverTheConnectionLimitOneMoreIsClosedAndTheOthersGoOn) {
  ServerOptions o;
  o.max_connections = 2;
  o.reclaim_idle = false;
  Running r(o);
  ASSERT_TRUE(r.server->Start().ok());
  int a = ConnectTcp(r.server->port()), b = ConnectTcp(r.server->port());
  EXPECT_EQ(Ask(a, "a"), "echo a");
  EXPECT_EQ(Ask(b, "b"), "echo b");
  int c = ConnectTcp(r.server->port());
  EXPECT_TRUE(Closed(c));
  EXPECT_EQ(Ask(a, "a2"), "echo a2");
  EXPECT_EQ(r.server->stats().rejected, 1u);
  close(b);
  // A place is free again once a session ends.
  for (int i = 0; i < 100 && r.server->stats().open > 1; ++i) std::this_thread::sleep_for(10ms);
  int d = ConnectTcp(r.server->port());
  EXPECT_EQ(Ask(d, "d"), "echo d");
  close(a);
  close(c);
  close(d);
}

// At the limit a new client takes the place of the longest-open idle
// one, so idle connections cannot lock others out; a busy connection is
// never taken, and with none idle the newcomer is closed at once.
TEST(NetServer, AtTheLimitANewClientReclaimsTheOldestIdleConnection) {
  std::promise<void> open_gate;
  ServerOptions o;
  o.max_connections = 2;
  Running r(o);
  r.echo.gate = open_gate.get_future().share();
  ASSERT_TRUE(r.server->Start().ok());
  int a = ConnectTcp(r.server->port());
  EXPECT_EQ(Ask(a, "a"), "echo a");
  int b = ConnectTcp(r.server->port());
  EXPECT_EQ(Ask(b, "b"), "echo b");
  int c = ConnectTcp(r.server->port());  // a and b idle: a, the older, goes
  EXPECT_EQ(Ask(c, "c"), "echo c");
  EXPECT_TRUE(Closed(a));
  EXPECT_EQ(Ask(b, "b2"), "echo b2");
  EXPECT_EQ(r.server->stats().reclaimed, 1u);
  // b busy (its answer waits for the gate), c idle: d takes c's place.
  ASSERT_EQ(write(b, "slow\n", 5), 5);
  for (int i = 0; i < 100 && r.server->stats().open > 2; ++i) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(50ms);  // b's line is read: b is busy
  int d = ConnectTcp(r.server->port());
  EXPECT_EQ(Ask(d, "d"), "echo d");
  EXPECT_TRUE(Closed(c));
  // b and d both busy: e finds nothing to reclaim.
  ASSERT_EQ(write(d, "slow\n", 5), 5);
  std::this_thread::sleep_for(50ms);
  int e = ConnectTcp(r.server->port());
  EXPECT_TRUE(Closed(e));
  EXPECT_EQ(r.server->stats().rejected, 1u);
  EXPECT_EQ(r.server->stats().reclaimed, 2u);
  open_gate.set_value();
  EXPECT_EQ(Ask(b, "x"), "echo slow done");  // the answer waiting, then x's
  EXPECT_EQ(Ask(d, "y"), "echo slow done");
  for (int fd : {a, b, c, d, e}) close(fd);
}

TEST(NetServer, ASilentClientIsCutAtItsDeadline) {
  Running r(ServerOptions{});
  ASSERT_TRUE(r.server->Start().ok());
  int fd = ConnectTcp(r.server->port());
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(Closed(fd));  // the echo session arms 2 s
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 1500ms);
  EXPECT_LT(waited, 4500ms);
  close(fd);
}

TEST(NetServer, StopClosesIdleConnectionsAtOnceAndLetsBusyOnesAnswer) {
  std::promise<void> open_gate;
  ServerOptions o;
  o.drain_timeout = 5s;
  Running r(o);
  r.echo.gate = open_gate.get_future().share();
  ASSERT_TRUE(r.server->Start().ok());
  int idle = ConnectTcp(r.server->port()), busy = ConnectTcp(r.server->port());
  EXPECT_EQ(Ask(idle, "hi"), "echo hi");
  std::string slow = "slow\n";
  ASSERT_EQ(write(busy, slow.data(), slow.size()), static_cast<ssize_t>(slow.size()));
  for (int i = 0; i < 100 && r.server->stats().open < 2; ++i) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(100ms);  // the slow line reaches its worker
  std::thread stopper([&] { r.server->Stop(); });
  EXPECT_TRUE(Closed(idle));  // at once, not after the drain timeout
  std::this_thread::sleep_for(200ms);
  open_gate.set_value();
  std::string got;
  char ch;
  while (read(busy, &ch, 1) == 1 && ch != '\n') got += ch;
  EXPECT_EQ(got, "echo slow done");
  EXPECT_TRUE(Closed(busy));
  stopper.join();
  EXPECT_EQ(ConnectTcp(r.server->port()), -1);  // nothing listens any more
  close(idle);
  close(busy);
}

TEST(NetServer, SetupErrorsAreOneLineAndNameTheSetting) {
  struct Case {
    std::string listen, flag, tls_cert, tls_key, expect;
  };
  TestTempDir dir;
  std::ofstream(dir / "junk.pem") << "not a certificate\n";
  const Case cases[] = {
      {"nowhere", "--nbd", "", "", "--nbd"},
      {"127.0.0.1:99999", "--api", "", "", "bad port"},
      {"unix:" + dir.path(), "--listen", "", "", "exists and is not a socket"},
      {"127.0.0.1:0", "--listen", dir / "missing.pem", dir / "missing.key", "TLS certificate"},
      {"127.0.0.1:0", "--listen", dir / "junk.pem", dir / "junk.pem", "TLS certificate"},
      {"127.0.0.1:0", "--listen", dir / "junk.pem", "", "both a certificate and a key"},
  };
  for (const auto& c : cases) {
    ServerOptions o;
    o.listen = c.listen;
    o.flag = c.flag;
    if (!c.tls_cert.empty() || !c.tls_key.empty()) o.tls.certificates.push_back({c.tls_cert, c.tls_key});
    Running r(o);
    Status st = r.server->Start();
    ASSERT_FALSE(st.ok()) << c.listen;
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << st.message();
    EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
  }
  // A port in use.
  Running first(ServerOptions{});
  ASSERT_TRUE(first.server->Start().ok());
  ServerOptions taken;
  taken.listen = "127.0.0.1:" + std::to_string(first.server->port());
  Running second(taken);
  Status st = second.server->Start();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--listen 127.0.0.1:"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ferry::net
