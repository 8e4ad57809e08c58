#pragma once
// HTTP/2's header fields to ferry's request and back (RFC 9113 8.2, 8.3),
// as pure functions. nghttp2 has already checked what a client sent
// (pseudo-header fields first and once each, lower-case names, no
// connection-specific fields, TE only "trailers"), so these only map.

#include <string_view>

#include "base/status.h"
#include "http/headers.h"
#include "http/server.h"
#include "http/server_request.h"

namespace ferry::http {

// A request from its header list in arrival order: :method, :path as the
// target, :authority as the Host field (replacing a Host sent beside it,
// RFC 9113 8.3.1), cookie crumbs joined with "; " into one field (8.2.3),
// other pseudo-header fields dropped; version 20. kInvalidArgument (the
// stream is answered 400) without :method or :path, without :authority and
// Host, or for CONNECT (ferry is not a tunnel).
Result<ServerRequest> RequestFromH2(const Headers& fields);

// The response's fields as HTTP/2 sends them after ":status": names
// lower-cased, connection-specific fields dropped (Connection and the
// fields it names, Keep-Alive, Proxy-Connection, Transfer-Encoding,
// Upgrade, TE...: RFC 9113 8.2.2), and content-length as HTTP/1.1 would
// carry it: the body's length, head_length or stream_length; none for a
// body of unknown length, 1xx, 204 or 304.
Headers ResponseFieldsForH2(const ServerResponse& r);

// Whether DATA frames follow the HEADERS: not for a HEAD request (nor a
// response marked as one), 1xx, 204 or 304.
bool H2ResponseHasBody(const ServerResponse& r, bool head_request);

}  // namespace ferry::http
