#include "store/stream_taps.h"

namespace ferry {

Status CountingSink::Write(std::string_view data) {
  Status s = inner_.Write(data);
  if (s.ok()) count_ += data.size();
  return s;
}

Status CountingSink::Commit(size_t n) {
  Status s = inner_.Commit(n);
  if (s.ok()) count_ += n;
  return s;
}

Status Sha256Sink::Write(std::string_view data) {
  Status s = inner_.Write(data);
  if (s.ok()) sha_.Update(data);
  return s;
}

char* Sha256Sink::Lend(size_t n) {
  char* at = inner_.Lend(n);
  lent_ = at;
  lent_committed_ = 0;
  return at;
}

Status Sha256Sink::Commit(size_t n) {
  Status s = inner_.Commit(n);
  if (s.ok() && lent_ != nullptr) {
    sha_.Update(std::string_view(lent_ + lent_committed_, n));
    lent_committed_ += n;
  }
  return s;
}

Result<size_t> Md5Source::Read(char* buf, size_t cap) {
  auto n = inner_.Read(buf, cap);
  if (n.ok()) {
    md5_.Update(std::string_view(buf, *n));
    count_ += *n;
  }
  return n;
}

Status Md5Source::Rewind() {
  md5_.Finish();  // resets
  count_ = 0;
  return inner_.Rewind();
}

}  // namespace ferry
