#include "gateway/arrival.h"

#include <algorithm>

namespace ferry::gateway {

// Reads from the body held in memory; in a window it counts as a reader
// (its position holds the bytes it has still to read) until it ends or
// is cancelled.
class Arrival::ArrivalReader : public http::BodyReader {
 public:
  ArrivalReader(std::shared_ptr<Arrival> a, int id, uint64_t first, uint64_t length)
      : a_(std::move(a)), id_(id), next_(first), end_(first + length) {}
  ~ArrivalReader() override { Cancel(); }

  Result<std::string> Read(size_t max) override {
    if (next_ >= end_) {
      Cancel();
      return std::string();
    }
    std::unique_lock lock(a_->mu_);
    a_->cv_.wait(lock, [&] { return a_->End_() > next_ || a_->ended_; });
    if (a_->End_() <= next_) {
      // Ended before these bytes: failed, or (never from a store that
      // checks lengths) short.
      if (!a_->status_.ok()) return a_->status_;
      return Status::Corruption("the source's body ended at " + std::to_string(a_->End_()) +
                                " bytes, before " + std::to_string(end_));
    }
    const uint64_t take = std::min<uint64_t>({max, a_->End_() - next_, end_ - next_});
    std::string out = a_->body_->substr(next_ - a_->base_, take);
    next_ += take;
    if (id_ >= 0) {
      a_->readers_[id_] = next_;
      a_->cv_.notify_all();  // the copy may be waiting for room
    }
    return out;
  }
  // The copy goes on without this client: others may read it, and it is
  // written to the destination.
  void Cancel() override {
    if (id_ < 0) return;
    std::lock_guard lock(a_->mu_);
    a_->readers_.erase(id_);
    id_ = -1;
    a_->cv_.notify_all();
  }

 private:
  std::shared_ptr<Arrival> a_;
  int id_;  // -1: not counted in the window (whole, or done)
  uint64_t next_;
  const uint64_t end_;
};

// A reader that came after the window moved past its first byte: reads
// where the copy landed, once it has.
class Arrival::LateReader : public http::BodyReader {
 public:
  LateReader(std::shared_ptr<Arrival> a, Landed landed, uint64_t first, uint64_t last)
      : a_(std::move(a)), landed_(std::move(landed)), first_(first), last_(last) {}
  Result<std::string> Read(size_t max) override {
    if (!inner_) {
      FERRY_RETURN_IF_ERROR(a_->WaitEnd().status());
      inner_ = landed_(first_, last_);
    }
    return inner_->Read(max);
  }
  void Cancel() override {
    if (inner_) inner_->Cancel();
  }

 private:
  std::shared_ptr<Arrival> a_;
  Landed landed_;
  const uint64_t first_, last_;
  std::shared_ptr<http::BodyReader> inner_;
};

Status Arrival::Over() {
  large_ = true;
  return Status(ErrorCode::kCancelled, "larger than the gateway's inline limit");
}

Status Arrival::Start(const ObjectInfo& info) {
  std::lock_guard lock(mu_);
  if (window_ > 0) return Status::Ok();  // a part's ranged read: the info is known
  if (info.size > cap_) {
    announced_ = info;
    return Over();
  }
  info_ = info;
  body_->reserve(info.size);
  cv_.notify_all();
  return Status::Ok();
}

Status Arrival::Write(std::string_view data) {
  std::lock_guard lock(mu_);
  if (window_ == 0 && body_->size() + data.size() > cap_) return Over();
  body_->append(data);
  cv_.notify_all();
  return Status::Ok();
}

void Arrival::End(const Result<ObjectInfo>& r) {
  std::lock_guard lock(mu_);
  ended_ = true;
  if (r.ok()) {
    // The end's info is the whole truth (a store without Start gives it
    // only now); the size is what arrived.
    info_ = *r;
    info_->size = End_();
  } else {
    status_ = large_ && window_ == 0
                  ? Status(ErrorCode::kCancelled, "larger than the gateway's inline limit")
                  : r.status();
  }
  cv_.notify_all();
}

void Arrival::BeginWindow(const ObjectInfo& info, uint64_t window) {
  std::lock_guard lock(mu_);
  window_ = std::max<uint64_t>(window, 1);
  info_ = info;
  cv_.notify_all();
}

void Arrival::Trim() {
  uint64_t keep = End_();
  for (const auto& [id, pos] : readers_) keep = std::min(keep, pos);
  if (keep <= base_) return;
  body_->erase(0, keep - base_);
  base_ = keep;
}

void Arrival::WaitRoom(uint64_t n) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] {
    Trim();
    return body_->empty() || body_->size() + n <= window_;
  });
}

std::optional<ObjectInfo> Arrival::announced() const {
  std::lock_guard lock(mu_);
  return announced_;
}

Result<ObjectInfo> Arrival::WaitInfo() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return info_.has_value() || ended_; });
  // Failed already: no answer can start. (Failing later, once answers
  // have started, their readers meet it.)
  if (!status_.ok()) return status_;
  return *info_;
}

Result<ObjectInfo> Arrival::WaitEnd() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return ended_; });
  if (!status_.ok()) return status_;
  return *info_;
}

std::shared_ptr<const std::string> Arrival::Body() const {
  std::lock_guard lock(mu_);
  if (window_ > 0) return nullptr;
  return body_;
}

bool Arrival::large() const {
  std::lock_guard lock(mu_);
  return large_;
}

bool Arrival::windowed() const {
  std::lock_guard lock(mu_);
  return window_ > 0;
}

std::shared_ptr<http::BodyReader> Arrival::Reader(uint64_t first, uint64_t length,
                                                  const Landed& landed) {
  std::lock_guard lock(mu_);
  if (window_ == 0) return std::make_shared<ArrivalReader>(shared_from_this(), -1, first, length);
  if (first < base_) {
    return std::make_shared<LateReader>(shared_from_this(), landed, first, first + length - 1);
  }
  const int id = next_reader_++;
  readers_[id] = first;
  return std::make_shared<ArrivalReader>(shared_from_this(), id, first, length);
}

}  // namespace ferry::gateway
