#pragma once
// Reads one HTTP/1.1 request from a client's bytes, incrementally: the
// server feeds it what the socket gives, the fuzz target feeds it anything.
// It applies the server's limits (header bytes, body bytes), accepts
// sized and chunked bodies, and turns the message into a ServerRequest. Beast's parser does the parsing; it stays inside
// request_reader.cc.
//
//   RequestReader r(limits);
//   while (r.state() == RequestReader::State::kNeedMore) {
//     size_t used = r.Feed(buffered);   // may use none until a header is whole
//     ... drop `used` bytes, read more, or r.FeedEof() when the client closed
//   }
//
// Not thread-safe; one request per reader.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "http/server_request.h"

namespace ferry::http {

struct RequestLimits {
  size_t header_limit = 16 << 10;    // bytes of request line and fields
  uint64_t body_limit = 8ull << 20;  // bytes of body
};

class RequestReader {
 public:
  enum class State { kNeedMore, kDone, kError };
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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  State state_ = State::kNeedMore;
  Error error_ = Error::kNone;
  std::string message_;
  uint64_t fed_ = 0;
};

}  // namespace ferry::http
