#include "http/request_body.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace ferry::http {

Result<size_t> RequestBody::Read(char* buf, size_t cap) {
  bool wake = false;
  size_t n = 0;
  {
    std::unique_lock lock(mu_);
    if (!demanded_) {
      demanded_ = true;
      wake = producer_waiting_;
    }
    if (wake) {
      producer_waiting_ = false;
      lock.unlock();
      wake_();
      wake = false;
      lock.lock();
    }
    auto ready = [&] { return buffer_.size() > read_ || finished_ || !error_.ok(); };
    while (!cv_.wait_for(lock, std::chrono::milliseconds(100), ready)) {
      if (!producer_alive_()) error_ = Status::Cancelled("the server stopped mid-body");
    }
    if (buffer_.size() == read_) {
      if (!error_.ok()) return error_;
      return size_t{0};
    }
    n = std::min(cap, buffer_.size() - read_);
    std::memcpy(buf, buffer_.data() + read_, n);
    read_ += n;
    if (read_ == buffer_.size()) {
      buffer_.clear();
      read_ = 0;
    } else if (read_ >= capacity_ / 2) {
      buffer_.erase(0, read_);
      read_ = 0;
    }
    if (producer_waiting_ && buffer_.size() - read_ <= capacity_ / 2) {
      producer_waiting_ = false;
      wake = true;
    }
  }
  if (wake) wake_();
  return n;
}

Result<std::string> RequestBody::ReadAll(uint64_t limit) {
  std::string out;
  if (length_) out.reserve(static_cast<size_t>(std::min(*length_, limit)));
  char piece[64 << 10];
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(size_t n, Read(piece, sizeof piece));
    if (n == 0) return out;
    if (out.size() + n > limit) {
      Abandon();
      return Status::InvalidArgument("request body over " + std::to_string(limit) + " bytes");
    }
    out.append(piece, n);
  }
}

void RequestBody::Abandon() {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    abandoned_ = true;
    buffer_.clear();
    read_ = 0;
    wake = producer_waiting_;
    producer_waiting_ = false;
  }
  if (wake) wake_();
}

bool RequestBody::Full() {
  std::lock_guard lock(mu_);
  return buffer_.size() - read_ >= capacity_;
}

bool RequestBody::demanded() {
  std::lock_guard lock(mu_);
  return demanded_;
}

bool RequestBody::abandoned() {
  std::lock_guard lock(mu_);
  return abandoned_;
}

bool RequestBody::MustWait(bool for_demand) {
  std::lock_guard lock(mu_);
  if (abandoned_) return false;
  if (buffer_.size() - read_ >= capacity_ || (for_demand && !demanded_)) {
    producer_waiting_ = true;
    return true;
  }
  return false;
}

void RequestBody::Push(std::string_view bytes) {
  if (bytes.empty()) return;
  {
    std::lock_guard lock(mu_);
    if (abandoned_) return;
    buffer_.append(bytes);
  }
  cv_.notify_all();
}

void RequestBody::Finish() {
  {
    std::lock_guard lock(mu_);
    finished_ = true;
  }
  cv_.notify_all();
}

void RequestBody::Fail(Status st) {
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
    error_ = std::move(st);
  }
  cv_.notify_all();
}

bool RequestBody::ended() {
  std::lock_guard lock(mu_);
  return finished_ || !error_.ok();
}

}  // namespace ferry::http
