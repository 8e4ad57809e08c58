#include "volume/repository_source.h"

#include <limits>
#include <random>
#include <thread>

#include "base/cancel.h"
#include "crypto/digest.h"
#include "engine/retry.h"

namespace ferry::volume {

Result<std::string> FetchChecked(const std::function<Result<std::string>()>& once, const std::string& hash,
                                 const RepositorySourceOptions& options, std::atomic<uint64_t>* attempts,
                                 bool once_verifies) {
  auto until = std::chrono::steady_clock::now() + options.deadline;
  // The deadline bounds the attempts, not a count.
  const RetryPolicy policy{std::numeric_limits<int>::max(), options.first_backoff, options.max_backoff,
                           options.max_backoff};
  thread_local std::mt19937_64 rng(std::random_device{}());
  int corrupt = 0;
  for (int attempt = 1;; ++attempt) {
    (*attempts)++;
    auto got = once();
    if (got.ok() && !once_verifies && HexLower(Sha256(*got)) != hash) {
      got = Status::Corruption("chunk " + hash.substr(0, 12) + " does not hash to its name");
    }
    if (got.ok()) return got;
    Status st = got.status();
    if (st.code() == ErrorCode::kCorruption) {
      if (++corrupt >= 2) return st;
      continue;  // refetch once at once
    }
    if (!st.retryable()) return st;
    auto wait = BackoffDelay(policy, st, attempt, std::uniform_real_distribution<double>(0.0, 1.0)(rng));
    if (std::chrono::steady_clock::now() + wait >= until) {
      return Status(ErrorCode::kTimeout, "chunk " + hash.substr(0, 12) + ": " + st.ToString());
    }
    if (CancelRequested()) return CancelledStatus();  // a daemon stopping does not wait out a failing origin
    std::this_thread::sleep_for(wait);
  }
}

Result<std::string> RepositorySource::Fetch(const std::string& hash, bool) {
  // GetChunk checks the hash itself.
  return FetchChecked([&] { return repo_->GetChunk(hash); }, hash, options_, &fetches_, true);
}


}  // namespace ferry::volume
