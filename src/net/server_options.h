#pragma once
// How a ferry server listens: the part of net::Server's setup that daemons
// keep in their own options (no Asio here).

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace ferry::net {

// A certificate chain and its private key, both PEM files.
struct TlsCertificate {
  std::string cert_file;
  std::string key_file;
};

// A server's TLS (net/tls_context.h). No certificates: no TLS.
struct TlsFiles {
  // The first is the default; a client's SNI name picks another whose
  // names (SAN dNSNames, else the CN) match it.
  std::vector<TlsCertificate> certificates;
  // Clients must present a certificate this CA (PEM) signed. "": none asked.
  std::string ca_file;
  // The session starts TLS itself (Server::StartTls, for a protocol's
  // in-band upgrade such as NBD's STARTTLS); otherwise every TCP
  // connection of the TLS listener begins with the TLS handshake.
  bool in_band = false;
  // ALPN protocols, in the server's order of preference (e.g. "h2",
  // "http/1.1"); the one agreed is Connection::alpn(). Empty: no ALPN.
  std::vector<std::string> alpn;
  bool enabled() const { return !certificates.empty(); }
};

struct ServerOptions {
  // net/listen_address.h: HOST:PORT, [V6]:PORT or unix:PATH.
  std::string listen = "127.0.0.1:0";
  // How errors name the setting ("--listen", "--nbd"...).
  std::string flag = "--listen";
  // The bound port is written here (atomically, with a newline) once
  // listening; for scripts that pass port 0.
  std::string port_file;
  // A second listener (TCP) whose connections all begin with TLS, beside
  // `listen`, which then stays plain: one server speaking both. "": none;
  // then, with tls and not tls.in_band, `listen` itself is the TLS one.
  std::string tls_listen;
  std::string tls_flag = "--listen-tls";
  std::string tls_port_file;
  int io_threads = 1;       // event loops, one thread each
  int worker_threads = 4;   // for blocking calls (Server::Blocking)
  // Connections open at once. At the limit a new connection takes the
  // place of the longest-open idle one when `reclaim_idle` (one waiting for
  // its first or next request: nginx reuses idle keep-alive connections the
  // same way), so idle clients cannot lock others out; otherwise, or with
  // none idle, it is accepted and closed at once (counted as rejected), so
  // the kernel's queue never holds it waiting.
  size_t max_connections = 10'000;
  // False for protocols whose idle clients are legitimate and long-lived
  // (an NBD client between requests is a mounted disk).
  bool reclaim_idle = true;
  // A TLS client must finish its handshake within this.
  std::chrono::milliseconds handshake_timeout{10'000};
  // Stop(): connections busy with a request get this long to finish it.
  std::chrono::milliseconds drain_timeout{10'000};
  TlsFiles tls;
};

}  // namespace ferry::net
