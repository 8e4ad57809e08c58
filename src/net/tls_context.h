#pragma once
// A server's TLS configuration, loaded from its files (net/server_options.h
// TlsFiles): one OpenSSL context per certificate chain, TLS 1.2 and 1.3
// only; during the handshake the client's server name (SNI) moves the
// connection to the certificate that names it (net/tls_names.h:
// PickCertificate, the first certificate by default), ALPN picks the
// protocol from TlsFiles::alpn in the server's order (SelectAlpn), and with
// a CA file clients must present a certificate it signed.
//
// Immutable once loaded. A reload (net::Server::ReloadTls) loads a new one
// for new handshakes; a connection keeps the one it started with alive (it
// holds a reference) for as long as it lasts. OpenSSL inside, no Asio.

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "net/server_options.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX
struct ssl_st;      // OpenSSL's SSL

namespace ferry::net {

class TlsContext {
 public:
  // Reads every chain and key; a missing or unreadable file, a key that
  // does not match its certificate, or a pair with a file missing is a
  // one-line kInvalidArgument naming the file. An expired certificate
  // loads (clients refuse it) and is logged once.
  static Result<std::shared_ptr<const TlsContext>> Load(const TlsFiles& files);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // The context a new connection's SSL is made from (the default
  // certificate's; SNI may switch it during the handshake).
  ssl_ctx_st* handle() const { return contexts_.front(); }
  // Each certificate's names (SAN dNSNames, else the subject CN), in the
  // order of TlsFiles::certificates.
  const std::vector<std::vector<std::string>>& names() const { return names_; }

 private:
  TlsContext() = default;
  Status AddCertificate(const TlsFiles& files, const TlsCertificate& cert);
  static int OnServerName(ssl_st* ssl, int* alert, void* arg);
  static int OnAlpn(ssl_st* ssl, const unsigned char** out, unsigned char* out_len,
                    const unsigned char* in, unsigned int in_len, void* arg);

  std::vector<ssl_ctx_st*> contexts_;  // owned
  std::vector<std::vector<std::string>> names_;
  std::vector<std::string> alpn_;
};

}  // namespace ferry::net
