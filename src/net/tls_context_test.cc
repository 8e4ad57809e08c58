// TLS in the server core: certificates and keys loaded (names, errors),
// and a server with a plain and a TLS listener that OpenSSL clients reach
// with SNI and ALPN, before and after a reload. Certificates are made with
// the openssl command line for each run.
#include "net/tls_context.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/write.hpp>

#include <csignal>
#include <filesystem>

#include "base/test_tls.h"
#include "base/test_shell.h"
#include "base/test_temp_dir.h"
#include "net/server.h"

namespace ferry::net {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

// What a TLS client saw of the server: the certificate's CN and the ALPN
// protocol agreed ("" when the handshake failed).
struct Seen {
  std::string cn;
  std::string alpn;
};

Seen Handshake(uint16_t port, const std::string& sni, const std::string& alpn_wire) {
  signal(SIGPIPE, SIG_IGN);  // a server that closes mid-handshake must not kill the test
  Seen seen;
  int fd = ConnectLoopback(port);
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  if (fd >= 0) {
    SSL_set_fd(ssl, fd);
    if (!sni.empty()) SSL_set_tlsext_host_name(ssl, sni.c_str());
    if (!alpn_wire.empty()) {
      SSL_set_alpn_protos(ssl, reinterpret_cast<const unsigned char*>(alpn_wire.data()),
                          alpn_wire.size());
    }
    if (SSL_connect(ssl) == 1) {
      X509* cert = SSL_get1_peer_certificate(ssl);
      char cn[256] = {};
      X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
      seen.cn = cn;
      X509_free(cert);
      const unsigned char* p = nullptr;
      unsigned int n = 0;
      SSL_get0_alpn_selected(ssl, &p, &n);
      seen.alpn.assign(reinterpret_cast<const char*>(p), n);
    }
  }
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  if (fd >= 0) close(fd);
  return seen;
}

// What a plain TCP client reads first from `port` (Hello's line, in clear):
// the plain listener answers in clear, so it speaks no TLS. (The corrupted
// heap this test once met at teardown was net::Server destroying its
// listeners after their event loops, since fixed there.)
std::string ReadGreeting(uint16_t port) {
  int fd = ConnectLoopback(port);
  std::string got;
  if (fd < 0) return got;
  char buf[64];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  close(fd);
  return got;
}

class TlsContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveTool("openssl")) FERRY_SKIP_WITHOUT_PEER("openssl not installed (make setup)");
    ASSERT_TRUE(MakeCert(dir_.path(), "a", "a.test", "DNS:a.test,DNS:*.a.test,IP:127.0.0.1"));
    ASSERT_TRUE(MakeCert(dir_.path(), "b", "b.test", "DNS:b.test"));
    ASSERT_TRUE(MakeCert(dir_.path(), "c", "c.test", ""));
  }
  std::string F(const std::string& name) { return dir_ / name; }
  TestTempDir dir_;
};

TEST_F(TlsContextTest, NamesFromSubjectAltNamesElseTheCommonName) {
  TlsFiles files;
  files.certificates = {
      {F("a.pem"), F("a.key")}, {F("b.pem"), F("b.key")}, {F("c.pem"), F("c.key")}};
  auto t = TlsContext::Load(files);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const std::vector<std::vector<std::string>> want = {
      {"a.test", "*.a.test"}, {"b.test"}, {"c.test"}};
  EXPECT_EQ((*t)->names(), want);
}

TEST_F(TlsContextTest, ErrorsNameTheFileInOneLine) {
  struct Case {
    TlsCertificate cert;
    std::string expect;
  };
  const Case cases[] = {
      {{F("missing.pem"), F("a.key")}, "TLS certificate " + F("missing.pem")},
      {{F("a.key"), F("a.key")}, "TLS certificate " + F("a.key")},  // a key is no certificate
      {{F("a.pem"), F("b.key")}, "TLS key " + F("b.key")},          // not its key
      {{F("a.pem"), ""}, "both a certificate and a key"},
  };
  for (const auto& c : cases) {
    TlsFiles files;
    files.certificates = {{F("b.pem"), F("b.key")}, c.cert};
    auto t = TlsContext::Load(files);
    ASSERT_FALSE(t.ok()) << c.expect;
    EXPECT_NE(t.status().message().find(c.expect), std::string::npos) << t.status().message();
    EXPECT_EQ(t.status().message().find('\n'), std::string::npos) << t.status().message();
  }
}

// Answers "ok\n" after the handshake; says which protocol ALPN agreed.
asio::awaitable<void> Hello(Connection& c) {
  std::string out = "ok " + std::string(c.alpn()) + "\n";
  boost::system::error_code ec;
  co_await asio::async_write(c, asio::buffer(out), asio::redirect_error(asio::use_awaitable, ec));
}

TEST_F(TlsContextTest, SniAlpnAndReloadOnATlsListenerBesideAPlainOne) {
  fs::copy_file(F("a.pem"), F("live.pem"));
  fs::copy_file(F("a.key"), F("live.key"));
  ServerOptions o;
  o.tls_listen = "127.0.0.1:0";
  o.tls.certificates = {{F("live.pem"), F("live.key")}, {F("b.pem"), F("b.key")}};
  o.tls.alpn = {"h2", "http/1.1"};
  Server server(o, Hello);
  ASSERT_TRUE(server.Start().ok());
  ASSERT_NE(server.tls_port(), 0);
  ASSERT_NE(server.port(), server.tls_port());
  const std::string both = std::string("\x08http/1.1\x02h2", 12);
  EXPECT_EQ(Handshake(server.tls_port(), "", both).cn, "a.test");  // the default
  EXPECT_EQ(Handshake(server.tls_port(), "b.test", both).cn, "b.test");
  EXPECT_EQ(Handshake(server.tls_port(), "x.a.test", both).cn, "a.test");
  EXPECT_EQ(Handshake(server.tls_port(), "unknown.test", both).cn, "a.test");
  EXPECT_EQ(Handshake(server.tls_port(), "b.test", both).alpn, "h2");  // the server's preference
  EXPECT_EQ(Handshake(server.tls_port(), "", std::string("\x08http/1.1", 9)).alpn, "http/1.1");
  EXPECT_EQ(Handshake(server.tls_port(), "", "").alpn, "");
  EXPECT_EQ(ReadGreeting(server.port()), "ok \n");  // the plain listener speaks no TLS
  // Reload: the files now hold c.test.
  fs::copy_file(F("c.pem"), F("live.pem"), fs::copy_options::overwrite_existing);
  fs::copy_file(F("c.key"), F("live.key"), fs::copy_options::overwrite_existing);
  ASSERT_TRUE(server.ReloadTls().ok());
  EXPECT_EQ(Handshake(server.tls_port(), "", both).cn, "c.test");
  EXPECT_EQ(Handshake(server.tls_port(), "b.test", both).cn, "b.test");
  // A reload that cannot read its files keeps what was loaded.
  fs::copy_file(F("a.pem"), F("live.key"), fs::copy_options::overwrite_existing);
  Status st = server.ReloadTls();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("live.key"), std::string::npos) << st.message();
  EXPECT_EQ(Handshake(server.tls_port(), "", both).cn, "c.test");
  server.Stop();
}

}  // namespace
}  // namespace ferry::net
