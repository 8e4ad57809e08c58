#pragma once
// Reads one HTTP/1.1 request from a client's bytes, incrementally: the
// server feeds it what the socket gives, the fuzz target feeds it anything.
// It applies the server's limits (header bytes, body bytes), accepts
// sized and chunked bodies, and turns the message into a ServerRequest. Beast's parser does the
// parsing; it stays inside request_reader.cc.
//
//   RequestReader r(limits);
//   while (r.state() == RequestReader::State::kNeedMore) {
//     size_t used = r.Feed(buffered);   // may use none until a header is whole
//     ... drop `used` bytes, read more, or r.FeedEof() when the client closed
//   }
//
// A server that may take a body as it arrives calls PauseAtHeader() first:
// the state is then kHeader once the header is whole (and the body not
// yet parsed), and it chooses ReadWhole() (Feed on, the body in
// TakeRequest) or ReadStreamed() (FeedBody hands the body's bytes out as
// they are parsed, chunked framing removed).
//
// Not thread-safe; one request per reader.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "http/server_request.h"

namespace ferry::http {

struct RequestLimits {
  size_t header_limit = 16 << 10;    // bytes of request line and fields
  uint64_t body_limit = 8ull << 20;  // bytes of body
  // Of a body taken as it arrives (Handler::StreamBody): its bound, and the
  // bytes read ahead of the handler.
  uint64_t streamed_body_limit = 5ull << 30;
  size_t stream_buffer = 1 << 20;
};

class RequestReader {
 public:
  enum class State { kNeedMore, kHeader, kDone, kError };
  enum class Error {
    kNone,
    kBadRequest,      // malformed: answer 400
    kHeaderTooLarge,  // answer 431
    kBodyTooLarge,    // answer 413
    kClosed,          // the client closed before a whole request (nothing to answer)
  };

  explicit RequestReader(RequestLimits limits);
  ~RequestReader();
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  // Parses from `bytes` and returns how many it used; bytes not used must
  // be offered again, followed by more (a header is parsed only when it is
  // whole). Does nothing once the state is not kNeedMore.
  size_t Feed(std::string_view bytes);
  // The client closed its side: a request in progress is an error.
  void FeedEof();

  State state() const { return state_; }
  Error error() const { return error_; }
  const std::string& error_message() const { return message_; }
  // Whether nothing at all has been fed yet (a clean close between requests).
  bool empty() const { return fed_ == 0; }

  // When kDone: the request, and whether the connection may stay open.
  ServerRequest TakeRequest();
  bool keep_alive() const;

  // Before the first Feed: stop at kHeader once the header is whole, unless
  // the request has no body (then kDone as before).
  void PauseAtHeader();
  // When kHeader: the request without its body; whether the client waits
  // for "100 Continue" before it sends the body; the body's declared length
  // (nullopt when chunked).
  ServerRequest Head() const;
  bool expects_continue() const;
  std::optional<uint64_t> content_length() const;
  // When kHeader: read the body whole (state kNeedMore; Feed on), or
  // kError when its declared length is over the limit.
  void ReadWhole();
  // When kHeader: the body goes out through FeedBody, at most `body_limit`
  // bytes (kBodyTooLarge past it). The state is kNeedMore until its end
  // (kDone) or an error.
  void ReadStreamed(uint64_t body_limit);
  // Parses body bytes from `bytes`, appending what they carry to `out`;
  // returns how many of `bytes` it used (the rest are the next request's
  // or must be offered again).
  size_t FeedBody(std::string_view bytes, std::string* out);

 private:
  void Fail(Error e, std::string message);
  // kBodyTooLarge when the declared length is over `limit`.
  bool BodyOver(uint64_t limit);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  State state_ = State::kNeedMore;
  Error error_ = Error::kNone;
  std::string message_;
  uint64_t fed_ = 0;
};

}  // namespace ferry::http
