#pragma once
// An object's body as it arrives from the source for an on-demand copy.
// The fetch writes into it (it is the Get's ByteSink); any number of
// clients read it meanwhile, each from its own offset, waiting for bytes
// not there yet; once whole it is written to the destination from here.
// So a client's answer starts with the source's first bytes, and however
// many clients ask, the source is read once.
//
// Holds at most `cap` bytes: a body announced (Start) or grown past it
// fails the fetch with kCancelled, and large() tells the owner to copy it
// store to store instead. Thread-safe: one writer, any readers.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "http/server.h"
#include "store/object_store.h"

namespace ferry::gateway {

class Arrival : public ByteSink, public std::enable_shared_from_this<Arrival> {
 public:
  explicit Arrival(uint64_t cap) : cap_(cap) {}

  // ByteSink, for the fetch.
  Status Start(const ObjectInfo& info) override;
  Status Write(std::string_view data) override;
  // The fetch is over: `r` is the Get's result. Wakes every waiter.
  void End(const Result<ObjectInfo>& r);

  // Waits until the object's info is known (Start, or the end of a fetch
  // from a store that gives it only then) or the fetch failed first: the
  // info, or why there is none (kCancelled when too large to hold).
  Result<ObjectInfo> WaitInfo();
  // Waits for the end: the whole body's info, or why the fetch failed.
  Result<ObjectInfo> WaitEnd();
  // The whole body, after WaitEnd() gave ok (it never changes then).
  std::shared_ptr<const std::string> Body() const;
  // True once the fetch failed for the body being over `cap`.
  bool large() const;

  // A client's reader of bytes [first, first + length), waiting for them to
  // arrive; an error if the fetch fails before they do (the server then
  // cuts the connection, so a short body is never taken as whole).
  std::shared_ptr<http::BodyReader> Reader(uint64_t first, uint64_t length);

 private:
  class ArrivalReader;
  Status Over();

  const uint64_t cap_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<ObjectInfo> info_;  // guarded by mu_
  // Guarded by mu_; only grows, and not at all once ended.
  std::shared_ptr<std::string> body_ = std::make_shared<std::string>();
  bool ended_ = false;  // guarded by mu_
  bool large_ = false;  // guarded by mu_
  Status status_;       // guarded by mu_; the fetch's, once ended
};

}  // namespace ferry::gateway
