#pragma once
// A throwaway self-signed certificate for --tls, made at start with OpenSSL 3
// (EC P-256 key, SHA-256 signature, valid from an hour ago for 30 days).
// Clients trust it by pointing AWS_CA_BUNDLE / curl --cacert at the PEM.

#include <string>

#include "base/status.h"

namespace ferry::s3server {

struct SelfSignedCert {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8, unencrypted
};

// `subject_alt_names` in OpenSSL config syntax, e.g.
// "DNS:localhost,DNS:*.localhost,IP:127.0.0.1,IP:::1".
Result<SelfSignedCert> GenerateSelfSignedCert(const std::string& subject_alt_names);

}  // namespace ferry::s3server
