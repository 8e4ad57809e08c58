#pragma once
// HTTP/2 (RFC 9113) for ferry's server as a state machine over bytes: the
// connection feeds it what the client sent (Receive), writes what it makes
// (Send), and acts on its events — a whole request to answer, a streamed
// body's next piece to read, work to drop. http/h2_connection.cc runs it on
// a server connection; tests run it against nghttp2's client.
//
// nghttp2 does the framing, HPACK, flow control and stream states, and its
// own limits (CONTINUATION frames per header block, queued control frames).
// This class maps streams to ServerRequest and ServerResponse
// (h2_headers.h) and keeps the bounds:
//   - streams: SETTINGS_MAX_CONCURRENT_STREAMS; and a new stream while
//     max_concurrent_streams requests or body reads are still out (those
//     of streams the client reset count too, until their work returns) is
//     refused with RST_STREAM REFUSED_STREAM, so a client cannot queue
//     more work than that;
//   - a request's header list (header_limit: 431) and body (body_limit:
//     413), request bodies held on the connection at once
//     (connection_body_limit: REFUSED_STREAM);
//   - response bytes: a body in memory is sent from where it is (no copy
//     before the output); a streamed body is asked for (kNeedBody) only
//     when the client's windows let it be sent, at most stream_buffer
//     bytes at a time per stream;
//   - stream resets: ResetLimiter (h2_reset_limiter.h); past it, GOAWAY
//     ENHANCE_YOUR_CALM and the end.
// A fatal error (a bad preface, a flood nghttp2 detects) ends in a GOAWAY
// too: Receive fails, Send yields the GOAWAY, then the connection closes.
//
// Not thread-safe: one event loop calls it. No nghttp2 or Asio here.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "http/h2_limits.h"
#include "http/server.h"
#include "http/server_request.h"

namespace ferry::http {

// The client connection preface of h2c with prior knowledge.
inline constexpr std::string_view kH2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

enum class PrefaceMatch { kNo, kPartial, kYes };
// What the first bytes on a plain connection are: the preface whole (kYes),
// a beginning of it (kPartial: read more), or something else (HTTP/1.1).
PrefaceMatch MatchH2Preface(std::string_view first_bytes);

// A GOAWAY frame (RFC 9113 6.8) without debug data: what ends a session
// whose nghttp2 state is past use.
std::string GoawayFrame(int32_t last_stream_id, uint32_t error_code);

class H2Session {
 public:
  using Clock = std::chrono::steady_clock;

  struct Event {
    enum class Kind {
      kRequest,     // answer `request` with Respond (or Abandon when its stream closed meanwhile)
      kNeedBody,    // read up to `max` bytes from `reader` (one read at a time), then AddBody or
                    // FailBody
      kCancelBody,  // `reader` will not be read to its end: Cancel it
      kClosed,      // the stream of an unanswered kRequest closed: its work may stop
    };
    Kind kind;
    int32_t stream = 0;
    ServerRequest request;
    std::shared_ptr<BodyReader> reader;
    size_t max = 0;
  };

  // Queues the server's SETTINGS. `peer` goes into every request.
  H2Session(const H2Limits& limits, std::string peer, Clock::time_point now);
  ~H2Session();
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;

  // Takes bytes the client sent (the preface first). An error means the
  // connection is over (a GOAWAY saying why waits in Send): send it and
  // close; Receive takes nothing more.
  Status Receive(std::string_view bytes, Clock::time_point now);
  // Appends frames ready to go to *out, until it holds about `max` bytes
  // or nothing more is ready.
  void Send(std::string* out, size_t max);
  // The events since the last call, in order.
  std::vector<Event> TakeEvents();

  // The answer to a kRequest. When its stream has closed, only a streamed
  // body is handed back (kCancelBody).
  void Respond(int32_t stream, ServerResponse response);
  // A kRequest that gets no answer (its stream closed before its work ran).
  void Abandon(int32_t stream);
  // What a kNeedBody read ("" when the body is whole). False when the
  // stream has closed meanwhile: the reader is not wanted any more.
  bool AddBody(int32_t stream, std::string data);
  // A kNeedBody read failed: the stream is reset (INTERNAL_ERROR), so the
  // client never takes a short body for a whole one.
  void FailBody(int32_t stream);

  // A graceful end (the server stops): GOAWAY; open streams finish, newer
  // ones are not served.
  void Shutdown();
  // Nothing left to send or receive: close the connection.
  bool Done() const;
  // kRequests and kNeedBody reads not answered yet.
  size_t outstanding() const;
  // Streams open now (for tests and idleness).
  size_t open_streams() const;

  struct Impl;  // (public for nghttp2's callbacks in the .cc)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::http
