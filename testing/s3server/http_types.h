#pragma once
// Beast-free views of one HTTP exchange, so routing, authentication and the
// S3 handlers compile without Boost.Beast (which only server.cc includes)
// and can be unit-tested.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "blob.h"
#include "s3/sigv4.h"

namespace ferry::s3server {

struct HttpRequest {
  std::string method;    // "GET"
  std::string target;    // as received: "/b/k%20x?list-type=2"
  s3::KeyValues headers;  // names lower-cased, in arrival order

  // First value of header `name` (lower-case), or nullptr.
  const std::string* Header(std::string_view name) const;
  std::string HeaderOr(std::string_view name, std::string fallback = "") const;
};

// How the server puts the response on the wire; faults use the others.
enum class Delivery {
  kNormal,
  kReset,           // headers and half the body, then RST
  kTruncate,        // headers and half the body, then FIN
  kDropConnection,  // no response at all: FIN right away
  kCorrupt,         // the whole body with its first byte flipped (a bit rot)
};

struct HttpResponse {
  int status = 200;
  s3::KeyValues headers;  // Content-Length is added by the server
  std::string body;       // used when `blob` is empty
  // When set the body is [blob_offset, blob_offset + blob_length) of blob.
  std::shared_ptr<const Blob> blob;
  uint64_t blob_offset = 0;
  uint64_t blob_length = 0;
  bool head = false;  // HEAD: advertise Content-Length, send no body
  Delivery delivery = Delivery::kNormal;
  bool close = false;  // send Connection: close and end the connection

  uint64_t BodyLength() const { return blob ? blob_length : body.size(); }
  // Replaces any existing header of that name (case-insensitive).
  void SetHeader(std::string_view name, std::string value);
};

}  // namespace ferry::s3server
