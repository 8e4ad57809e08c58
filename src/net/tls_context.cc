#include "net/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>

#include "net/tls_names.h"

namespace ferry::net {
namespace {

// The last OpenSSL error's reason ("key values mismatch"), the queue cleared.
std::string OpenSslReason() {
  unsigned long last = 0;
  while (unsigned long e = ERR_get_error()) last = e;
  const char* reason = last ? ERR_reason_error_string(last) : nullptr;
  return reason ? reason : "unreadable";
}

std::vector<std::string> NamesOf(X509* cert) {
  std::vector<std::string> names;
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(sans, i);
    if (n->type != GEN_DNS) continue;
    const ASN1_IA5STRING* s = n->d.dNSName;
    names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                       ASN1_STRING_length(s));
  }
  if (sans) GENERAL_NAMES_free(sans);
  if (!names.empty()) return names;
  char cn[256];
  int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
  if (n > 0) names.emplace_back(cn, static_cast<size_t>(n));
  return names;
}

}  // namespace

Result<std::shared_ptr<const TlsContext>> TlsContext::Load(const TlsFiles& files) {
  if (files.certificates.empty())
    return Status::InvalidArgument("TLS needs a certificate and a key file");
  std::shared_ptr<TlsContext> t(new TlsContext());
  t->alpn_ = files.alpn;
  for (const auto& cert : files.certificates) FERRY_RETURN_IF_ERROR(t->AddCertificate(files, cert));
  return std::shared_ptr<const TlsContext>(std::move(t));
}

Status TlsContext::AddCertificate(const TlsFiles& files, const TlsCertificate& cert) {
  if (cert.cert_file.empty() || cert.key_file.empty()) {
    return Status::InvalidArgument("TLS needs both a certificate and a key file");
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return Status::Internal("TLS: " + OpenSslReason());
  contexts_.push_back(ctx);
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(
      ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  static const unsigned char kSessionContext[] = "ferry";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  ERR_clear_error();
  if (SSL_CTX_use_certificate_chain_file(ctx, cert.cert_file.c_str()) != 1) {
    return Status::InvalidArgument("TLS certificate " + cert.cert_file + ": " + OpenSslReason());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, cert.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Status::InvalidArgument("TLS key " + cert.key_file + ": " + OpenSslReason());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Status::InvalidArgument("TLS key " + cert.key_file + " does not match the certificate");
  }
  if (!files.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, files.ca_file.c_str(), nullptr) != 1) {
      return Status::InvalidArgument("TLS CA " + files.ca_file + ": " + OpenSslReason());
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  X509* x = SSL_CTX_get0_certificate(ctx);
  if (X509_cmp_current_time(X509_get0_notAfter(x)) < 0) {
    spdlog::warn("TLS certificate {} has expired: clients will refuse it", cert.cert_file);
  }
  names_.push_back(NamesOf(x));
  // Every context carries the callbacks: SNI runs on the first, ALPN on
  // whichever the connection was moved to.
  SSL_CTX_set_tlsext_servername_callback(ctx, &TlsContext::OnServerName);
  SSL_CTX_set_tlsext_servername_arg(ctx, this);
  if (!alpn_.empty()) SSL_CTX_set_alpn_select_cb(ctx, &TlsContext::OnAlpn, this);
  return Status::Ok();
}

TlsContext::~TlsContext() {
  // SSL objects still open hold their own references.
  for (SSL_CTX* ctx : contexts_) SSL_CTX_free(ctx);
}

int TlsContext::OnServerName(SSL* ssl, int* /*alert*/, void* arg) {
  const auto* self = static_cast<const TlsContext*>(arg);
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  const size_t i = PickCertificate(self->names_, name ? name : "");
  if (i != 0) SSL_set_SSL_CTX(ssl, self->contexts_[i]);
  return SSL_TLSEXT_ERR_OK;
}

int TlsContext::OnAlpn(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_len,
                       const unsigned char* in, unsigned int in_len, void* arg) {
  const auto* self = static_cast<const TlsContext*>(arg);
  auto chosen =
      SelectAlpn(std::string_view(reinterpret_cast<const char*>(in), in_len), self->alpn_);
  if (!chosen) return SSL_TLSEXT_ERR_NOACK;  // go on without ALPN (HTTP/1.1)
  for (const auto& p : self->alpn_) {
    if (p == *chosen) {
      *out = reinterpret_cast<const unsigned char*>(p.data());
      *out_len = static_cast<unsigned char>(p.size());
      break;
    }
  }
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace ferry::net
