#pragma once
// A BlockDevice that records every request it runs into a trace file
// (trace.h) and passes it on to the device it wraps. The recording starts
// at the first request; each line is written with one append as its
// request ends, so a trace survives the process being killed. For
// `ferry volume serve --trace-dir`: a real guest's boot, recorded once, is
// what the replay client plays back many times over.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "nbd/device.h"
#include "nbd/trace.h"

namespace ferry::nbd {

class TracedDevice : public BlockDevice {
 public:
  // Creates `path` (kAlreadyExists if it exists: a trace is never
  // overwritten) and writes its header.
  static Result<std::shared_ptr<TracedDevice>> Open(std::shared_ptr<BlockDevice> inner,
                                                    const std::string& path);
  ~TracedDevice() override;

  uint64_t size() const override { return inner_->size(); }
  bool read_only() const override { return inner_->read_only(); }
  Status Read(uint64_t offset, uint64_t len, char* out) override;
  Status Write(uint64_t offset, std::string_view data, bool fua) override;
  Status Flush() override;
  Status Trim(uint64_t offset, uint64_t len, bool fua) override;
  Status WriteZeroes(uint64_t offset, uint64_t len, bool fua) override;
  bool Ready(uint64_t offset, uint64_t len) const override { return inner_->Ready(offset, len); }
  Status Extents(uint64_t offset, uint64_t len, std::vector<Extent>* out) override {
    return inner_->Extents(offset, len, out);
  }
  Status Cache(uint64_t offset, uint64_t len) override;

 private:
  using Clock = std::chrono::steady_clock;
  TracedDevice(std::shared_ptr<BlockDevice> inner, int fd) : inner_(std::move(inner)), fd_(fd) {}
  // Microseconds since the first request (which starts the clock).
  uint64_t Now();
  // Appends the record of a request issued at `issue_us` that ends now.
  void Record(uint64_t issue_us, TraceOp op, uint64_t offset, uint64_t length, bool fua);

  std::shared_ptr<BlockDevice> inner_;
  const int fd_;
  std::mutex mu_;
  bool started_ = false;  // guarded by mu_
  Clock::time_point t0_;  // guarded by mu_
};

}  // namespace ferry::nbd
