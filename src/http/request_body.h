#pragma once
// A request body that is still arriving: the server's event loop pushes
// what the socket gives, a handler on a worker pulls it. Bounded: the loop
// stops reading the socket while `capacity` bytes wait unread, so a slow
// consumer slows the client (TCP's own back-pressure) instead of filling
// memory. Used by http::Server for requests a Handler takes streamed
// (Handler::StreamBody); HTTP/2 requests always arrive whole.
//
// Thread-safety: Read and Abandon from one consumer thread at a time; the
// producer calls (Push, Finish, Fail, ...) from the event loop. `wake`
// (given by the server) must be callable from any thread: it schedules the
// producer to look again at Full() and demanded().

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::http {

class RequestBody {
 public:
  // `producer_alive` (any thread) is false once the producer can no longer
  // run (its event loop stopped): a reader waiting for bytes then fails
  // instead of waiting for ever.
  RequestBody(
      std::optional<uint64_t> length, size_t capacity, std::function<void()> wake,
      std::function<bool()> producer_alive = [] { return true; })
      : length_(length),
        capacity_(capacity),
        wake_(std::move(wake)),
        producer_alive_(std::move(producer_alive)) {}

  // The consumer's side.
  //
  // Up to `cap` bytes into `buf`, waiting until some arrive; 0 at the end of
  // the body; an error when the body was cut (the client closed, timed out
  // or broke the framing; a 400 IncompleteBody-like kCorruption). The first
  // call is what sends a client's awaited "100 Continue".
  Result<size_t> Read(char* buf, size_t cap);
  // The body's length when the request said it (Content-Length), else
  // nullopt (chunked).
  std::optional<uint64_t> length() const { return length_; }
  // Reads the rest into a string, at most `limit` bytes (413-like
  // kInvalidArgument past it).
  Result<std::string> ReadAll(uint64_t limit);
  // The consumer will read no more: the producer stops, and the rest of
  // the body is not read (the connection is then closed after the answer).
  void Abandon();

  // The producer's side.
  bool Full();
  bool demanded();  // whether the consumer has asked for bytes yet
  bool abandoned();
  // Whether the producer must wait: for room (Full()), or, with
  // `for_demand`, for the consumer's first Read. When true, the consumer
  // calls `wake` once that changes (or it abandons the body).
  bool MustWait(bool for_demand);
  void Push(std::string_view bytes);
  void Finish();
  void Fail(Status st);
  bool ended();  // finished or failed

 private:
  const std::optional<uint64_t> length_;
  const size_t capacity_;
  const std::function<void()> wake_;
  const std::function<bool()> producer_alive_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string buffer_;
  size_t read_ = 0;  // consumed from the front of buffer_
  bool finished_ = false;
  bool abandoned_ = false;
  bool demanded_ = false;
  bool producer_waiting_ = false;
  Status error_;
};

}  // namespace ferry::http
