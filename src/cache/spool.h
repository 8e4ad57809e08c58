#pragma once
// A body too large to hold in memory, on its way from upstream to its
// readers: the upstream side writes it to an unlinked temporary file at its
// own pace (it never waits for a reader, so it never holds up the upstream
// client's event loop), and each reader reads the file from its start as it
// grows — nginx's proxy_temp_path. Several readers may follow one spool:
// the client that asked, clients that asked for the same object meanwhile,
// and the cache writing the body to disk (proxy_big.cc). The file goes when
// the last reference does.
//
// One writer (Write/Finish, from the upstream transfer); readers each on
// one thread at a time. Thread-safe.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "http/server.h"
#include "store/stream.h"

namespace ferry::cache {

class Spool : public ByteSink, public std::enable_shared_from_this<Spool> {
 public:
  // A spool in `dir` (which must exist). kIoError when no file can be made.
  static Result<std::shared_ptr<Spool>> Create(const std::string& dir);
  ~Spool() override;
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  // Writer: appends; kCancelled once the spool is abandoned (below).
  Status Write(std::string_view data) override;
  // Writer: the body is complete (ok) or will never be (an error).
  void Finish(Status status);

  // A reader from the first byte. Its Read waits for bytes, "" at the end
  // of a complete body, the writer's error after the bytes before it; its
  // Cancel (or its destruction before the end) says the reader left. The
  // spool is abandoned when no reader is left and a client has come and
  // gone (or AbandonIfUnread said none will come). A reader that is not a
  // client (the cache's disk writer) may thus come and go before the first
  // client does without cutting it off.
  std::shared_ptr<http::BodyReader> NewReader(bool client = true);
  // No client will read (a HEAD, an answer refused): abandons the spool
  // unless someone is reading it, and once they are done.
  void AbandonIfUnread();

  uint64_t written() const;

 private:
  class Reader;
  explicit Spool(int fd) : fd_(fd) {}
  // The bytes at `offset`, at most `max`, waiting until there are some.
  Result<std::string> ReadAt(uint64_t offset, size_t max);
  void ReaderLeft();

  const int fd_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t written_ = 0;     // guarded by mu_
  bool finished_ = false;    // guarded by mu_
  bool abandoned_ = false;   // guarded by mu_
  int readers_ = 0;          // guarded by mu_: reading now
  bool client_came_ = false; // guarded by mu_: a client reader was made, or none will be
  Status status_;            // guarded by mu_
};

}  // namespace ferry::cache
