#pragma once
// An object's body as it arrives from the source for an on-demand copy.
// The fetch writes into it (it is the Get's ByteSink); any number of
// clients read it meanwhile, each from its own offset, waiting for bytes
// not there yet. So a client's answer starts with the source's first
// bytes, and however many clients ask, the source is read once.
//
// Two ways to hold the body:
//  - whole (bodies up to `cap`): every byte stays, and the body is written
//    to the destination from here once it is in;
//  - a window (larger bodies, after BeginWindow): the copy fetches it part
//    by part and uploads each part as it goes; only the bytes some reader
//    still needs are held, at most `window` beyond them, so memory stays
//    bounded whatever the size. The copy waits for room (WaitRoom) before
//    each part, so the slowest reader sets the pace (a client that stops
//    reading is cut by the server's timeout, and then no longer counts).
//    A reader that starts behind the window (a late client) reads the
//    destination once the copy has landed there.
// Without BeginWindow, a body announced (Start) or grown past `cap` fails
// the fetch with kCancelled and large() tells the owner so.
//
// Thread-safe: one writer, any readers.

#include <condition_variable>
#include <functional>
#include <map>
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
  // The fetch is over: `r` is its result (for a window, the object as it
  // landed at the destination). Wakes every waiter.
  void End(const Result<ObjectInfo>& r);

  // For a body over `cap` (after the fetch failed as large, before End):
  // from now on it arrives part by part through Write into a window of
  // `window` bytes; `info` is the source object's. Readers start now.
  void BeginWindow(const ObjectInfo& info, uint64_t window);
  // Waits until `n` more bytes fit in the window beside those a reader
  // still needs (readers that have gone need none).
  void WaitRoom(uint64_t n);
  // The info the source announced for a body over `cap` (after large()).
  std::optional<ObjectInfo> announced() const;

  // Waits until the object's info is known (Start, BeginWindow, or the end
  // of a fetch from a store that gives it only then) or the fetch failed
  // first: the info, or why there is none (kCancelled: too large to hold).
  Result<ObjectInfo> WaitInfo();
  // Waits for the end: the whole body's info (for a window, the landed
  // object's), or why the fetch failed.
  Result<ObjectInfo> WaitEnd();
  // The whole body, after WaitEnd() gave ok (it never changes then); null
  // for a window.
  std::shared_ptr<const std::string> Body() const;
  // True once the fetch failed for the body being over `cap`.
  bool large() const;
  bool windowed() const;

  // A client's reader of bytes [first, first + length), waiting for them to
  // arrive; an error if the fetch fails before they do (the server then
  // cuts the connection, so a short body is never taken as whole). For a
  // window already past `first`: the bytes from `landed(first, last)` once
  // the copy has landed.
  using Landed = std::function<std::shared_ptr<http::BodyReader>(uint64_t first, uint64_t last)>;
  std::shared_ptr<http::BodyReader> Reader(uint64_t first, uint64_t length, const Landed& landed);

 private:
  class ArrivalReader;
  class LateReader;
  Status Over();
  void Trim();  // needs mu_: drops window bytes no reader needs
  uint64_t End_() const { return base_ + body_->size(); }  // needs mu_

  const uint64_t cap_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<ObjectInfo> info_;       // guarded by mu_
  std::optional<ObjectInfo> announced_;  // guarded by mu_
  // Guarded by mu_: bytes [base_, base_ + size); whole, it only grows, and
  // not at all once ended.
  std::shared_ptr<std::string> body_ = std::make_shared<std::string>();
  uint64_t base_ = 0;                // guarded by mu_
  uint64_t window_ = 0;              // guarded by mu_; 0: whole
  std::map<int, uint64_t> readers_;  // guarded by mu_: window readers, by id: their next byte
  int next_reader_ = 0;              // guarded by mu_
  bool ended_ = false;               // guarded by mu_
  bool large_ = false;               // guarded by mu_
  Status status_;                    // guarded by mu_; the fetch's, once ended
};

}  // namespace ferry::gateway
