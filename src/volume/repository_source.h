#pragma once
// Chunks straight from a snapshot repository. A chunk that does not hash to
// its name is fetched once more, then reported as kCorruption (the volume
// answers EIO); transient errors are retried with exponential backoff and
// full jitter until `deadline`, so an origin that is down makes I/O fail
// in bounded time instead of hanging.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

#include "snapshot/repository.h"
#include "volume/chunk_source.h"

namespace ferry::volume {

struct RepositorySourceOptions {
  std::chrono::milliseconds deadline{30'000};  // per chunk, all attempts
  std::chrono::milliseconds first_backoff{50};
  std::chrono::milliseconds max_backoff{2'000};
};

// One chunk fetch with the policy above: `once` fetches and returns the
// bytes, which are checked against `hash` here, unless `once_verifies`
// (then `once` returns kCorruption for bytes that do not hash to `hash`).
Result<std::string> FetchChecked(const std::function<Result<std::string>()>& once, const std::string& hash,
                                 const RepositorySourceOptions& options, std::atomic<uint64_t>* attempts,
                                 bool once_verifies = false);

class RepositorySource : public ChunkSource {
 public:
  RepositorySource(snapshot::Repository* repo, RepositorySourceOptions options = {})
      : repo_(repo), options_(options) {}
  Result<std::string> Fetch(const std::string& hash, bool urgent) override;
  uint64_t fetches() const { return fetches_; }

 private:
  snapshot::Repository* repo_;
  RepositorySourceOptions options_;
  std::atomic<uint64_t> fetches_{0};
};

}  // namespace ferry::volume
