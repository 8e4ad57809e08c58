#include "volume/repository_source.h"

#include <random>
#include <thread>

namespace ferry::volume {

Result<std::string> RepositorySource::Fetch(const std::string& hash, bool urgent) {
  (void)urgent;
  auto until = std::chrono::steady_clock::now() + options_.deadline;
  auto backoff = options_.first_backoff;
  thread_local std::mt19937_64 rng(std::random_device{}());
  int corrupt = 0;
  for (;;) {
    fetches_++;
    auto got = repo_->GetChunk(hash);
    if (got.ok()) return got;
    Status st = got.status();
    if (st.code() == ErrorCode::kCorruption) {
      if (++corrupt >= 2) return st;
      continue;  // refetch once at once
    }
    if (!st.retryable()) return st;
    auto wait = std::chrono::milliseconds(
        std::uniform_int_distribution<int64_t>(0, backoff.count())(rng));  // full jitter
    if (std::chrono::steady_clock::now() + wait >= until) {
      return Status(ErrorCode::kTimeout, "chunk " + hash.substr(0, 12) + ": " + st.ToString());
    }
    std::this_thread::sleep_for(wait);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace ferry::volume
