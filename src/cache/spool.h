#pragma once
// A body too large to hold in memory, on its way from upstream to one
// client: the upstream side writes it to an unlinked temporary file at its
// own pace (it never waits for the client, so it never holds up the
// upstream client's event loop), and the client side reads the file as it
// grows — nginx's proxy_temp_path. The file goes when the last reference
// does.
//
// One writer (Write/Finish, from the upstream transfer) and one reader
// (Read/Cancel, from the client's connection). Thread-safe.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "http/server.h"
#include "store/stream.h"

namespace ferry::cache {

class Spool : public ByteSink, public http::BodyReader {
 public:
  // A spool in `dir` (which must exist). kIoError when no file can be made.
  static Result<std::shared_ptr<Spool>> Create(const std::string& dir);
  ~Spool() override;
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  // Writer: appends; kCancelled once the reader has cancelled.
  Status Write(std::string_view data) override;
  // Writer: the body is complete (ok) or will never be (an error).
  void Finish(Status status);

  // Reader: the next bytes after those already read, at most `max`,
  // waiting until there are some. "" when the body is complete; the
  // writer's error when it ended short.
  Result<std::string> Read(size_t max) override;
  // Reader: the client is gone; the writer's next Write fails.
  void Cancel() override;

  uint64_t written() const;

 private:
  explicit Spool(int fd) : fd_(fd) {}

  const int fd_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t written_ = 0;   // guarded by mu_
  uint64_t read_ = 0;      // reader's offset (reader thread only)
  bool finished_ = false;  // guarded by mu_
  bool cancelled_ = false; // guarded by mu_
  Status status_;          // guarded by mu_
};

}  // namespace ferry::cache
