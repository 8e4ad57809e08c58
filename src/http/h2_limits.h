#pragma once
// The bounds of one HTTP/2 connection (http/h2_session.h says what each
// does when exceeded). Defaults as nginx and h2o choose them.

#include <cstddef>
#include <cstdint>

#include "http/h2_reset_limiter.h"

namespace ferry::http {

struct H2Limits {
  uint32_t max_concurrent_streams = 100;  // SETTINGS_MAX_CONCURRENT_STREAMS, and work out at once
  size_t header_limit = 16 << 10;         // a request's header list (name + value + 32 per field)
  uint64_t body_limit = 8ull << 20;       // a request's body
  uint64_t connection_body_limit = 16ull << 20;  // request bodies held at once per connection
  size_t stream_buffer = 64 << 10;  // a streamed response's bytes read ahead per stream
  ResetLimit resets;                // stream resets the client may send
};

}  // namespace ferry::http
