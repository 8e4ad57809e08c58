#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "volume/chunk_source.h"
#include "volume/repository_source.h"

namespace ferry::volume {

// Chunks through an HTTP cache tier (`--cache URL`, e.g. `ferry cache
// serve` in front of the repository served over HTTP): GET
// URL/chunks/XY/<hash>, so every clone of every daemon behind that tier
// asks for the same keys. Same checks and retries as RepositorySource.
class HttpChunkSource : public ChunkSource {
 public:
  // `url`: http://HOST:PORT[/PATH] where PATH/chunks/... are the chunks.
  static Result<std::unique_ptr<HttpChunkSource>> Create(const std::string& url, RepositorySourceOptions options = {});
  ~HttpChunkSource() override;
  Result<std::string> Fetch(const std::string& hash, bool urgent) override;
  uint64_t fetches() const { return fetches_; }

 private:
  HttpChunkSource() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  RepositorySourceOptions options_;
  std::atomic<uint64_t> fetches_{0};
};

}  // namespace ferry::volume
