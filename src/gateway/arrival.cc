#include "gateway/arrival.h"

#include <algorithm>

namespace ferry::gateway {

class Arrival::ArrivalReader : public http::BodyReader {
 public:
  ArrivalReader(std::shared_ptr<Arrival> a, uint64_t first, uint64_t length)
      : a_(std::move(a)), next_(first), end_(first + length) {}

  Result<std::string> Read(size_t max) override {
    if (next_ >= end_) return std::string();
    std::unique_lock lock(a_->mu_);
    a_->cv_.wait(lock, [&] { return a_->body_->size() > next_ || a_->ended_; });
    if (a_->body_->size() <= next_) {
      // Ended before these bytes: failed, or (never from a store that
      // checks lengths) short.
      if (!a_->status_.ok()) return a_->status_;
      return Status::Corruption("the source's body ended at " + std::to_string(a_->body_->size()) +
                                " bytes, before " + std::to_string(end_));
    }
    const uint64_t take = std::min<uint64_t>({max, a_->body_->size() - next_, end_ - next_});
    std::string out = a_->body_->substr(next_, take);
    next_ += take;
    return out;
  }
  // The copy goes on without this client: others may read it, and it is
  // written to the destination.
  void Cancel() override {}

 private:
  std::shared_ptr<Arrival> a_;
  uint64_t next_;
  const uint64_t end_;
};

Status Arrival::Over() {
  large_ = true;
  return Status(ErrorCode::kCancelled, "larger than the gateway's inline limit");
}

Status Arrival::Start(const ObjectInfo& info) {
  std::lock_guard lock(mu_);
  if (info.size > cap_) return Over();
  info_ = info;
  body_->reserve(info.size);
  cv_.notify_all();
  return Status::Ok();
}

Status Arrival::Write(std::string_view data) {
  std::lock_guard lock(mu_);
  if (body_->size() + data.size() > cap_) return Over();
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
    info_->size = body_->size();
  } else {
    status_ = large_ ? Status(ErrorCode::kCancelled, "larger than the gateway's inline limit")
                     : r.status();
  }
  cv_.notify_all();
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
  return body_;
}

bool Arrival::large() const {
  std::lock_guard lock(mu_);
  return large_;
}

std::shared_ptr<http::BodyReader> Arrival::Reader(uint64_t first, uint64_t length) {
  return std::make_shared<ArrivalReader>(shared_from_this(), first, length);
}

}  // namespace ferry::gateway
