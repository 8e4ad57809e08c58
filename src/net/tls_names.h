#pragma once
// The choices a TLS server makes from what a client's hello says, as pure
// functions (net/tls_context.cc applies them inside OpenSSL's callbacks):
// which certificate answers a server name (SNI, RFC 6066), and which
// application protocol is spoken (ALPN, RFC 7301).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::net {

// Whether a certificate name (a SAN dNSName, or the subject CN) covers
// `host`, as RFC 6125 6.4 has it: case-blind, a trailing dot ignored, and
// a wildcard only as the whole left-most label ("*.example.com" covers
// "a.example.com", not "example.com" nor "a.b.example.com"; "f*.com" and
// "*.com"-style names of fewer than three labels cover nothing).
bool HostNameMatches(std::string_view pattern, std::string_view host);

// The certificate for a client's server name: the first whose names match
// it exactly, else the first a wildcard of which matches, else the first
// certificate (the default; also when the client sent no name). `names[i]`
// are certificate i's names. Requires !names.empty().
size_t PickCertificate(const std::vector<std::vector<std::string>>& names,
                       std::string_view server_name);

// ALPN's wire form: each protocol as one length byte and its name. Names
// must be 1..255 bytes.
std::string AlpnWire(const std::vector<std::string>& protocols);

// The protocol to speak: the first of `ours` (the server's order of
// preference) that the client offered in `offered` (wire form); nullopt
// when none is, or `offered` is malformed (a zero length, or one running
// past the end).
std::optional<std::string> SelectAlpn(std::string_view offered,
                                      const std::vector<std::string>& ours);

}  // namespace ferry::net
