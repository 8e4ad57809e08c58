#include "cache/fill_encoder.h"

#include <algorithm>
#include <vector>

#include "base/thread_cpu.h"
#include "codec/zstd_codec.h"

namespace ferry::cache {

namespace {

FillEncoderOptions Checked(FillEncoderOptions o) {  // at least one body a turn, one waiting
  o.max_batch = std::max<size_t>(o.max_batch, 1);
  o.max_jobs = std::max<size_t>(o.max_jobs, 1);
  return o;
}

}  // namespace

FillEncoder::FillEncoder(FillEncoderOptions options, Sink sink)
    : options_(Checked(options)), sink_(std::move(sink)), thread_([this] { Run(); }) {}

FillEncoder::~FillEncoder() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

bool FillEncoder::Submit(std::shared_ptr<const CachedObject> plain) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    const uint64_t size = plain->body.size();
    if (stopping_ || queue_.size() >= options_.max_jobs || queued_bytes_ + size > options_.max_bytes) return false;
    queued_bytes_ += size;
    queue_.push_back(std::move(plain));
    submitted_++;
    // The thread waits for a first body, then for a full batch.
    wake = queue_.size() == 1 || queue_.size() == options_.max_batch;
  }
  if (wake) wake_.notify_one();
  return true;
}

void FillEncoder::Drain() {
  std::unique_lock lock(mu_);
  const uint64_t target = submitted_;
  if (finished_ >= target) return;
  draining_++;  // no gathering meanwhile
  wake_.notify_one();
  idle_.wait(lock, [&] { return finished_ >= target; });
  draining_--;
}

uint64_t FillEncoder::batches() const {
  std::lock_guard lock(mu_);
  return batches_;
}

void FillEncoder::Run() {
  std::vector<std::shared_ptr<const CachedObject>> batch;
  std::vector<Done> done;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      // Gather: a turn starts once max_batch bodies wait or the first has
      // waited `gather` (at once when stopping).
      wake_.wait_for(lock, options_.gather,
                     [&] { return stopping_ || draining_ > 0 || queue_.size() >= options_.max_batch; });
      while (!queue_.empty() && batch.size() < options_.max_batch) {
        queued_bytes_ -= queue_.front()->body.size();
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      batches_++;
    }
    // Every body of the batch first, then the sink's work (disk, memory
    // sets) for each: the sink's work would evict the coder's tables.
    for (auto& plain : batch) {
      const uint64_t start = ThreadCpuNanos();
      auto frame = codec::ZstdCompress(plain->body, options_.level);
      const uint64_t cpu = ThreadCpuNanos() - start;
      done.push_back(Done{std::move(plain), std::move(frame), cpu});
    }
    const size_t n = batch.size();
    sink_(std::move(done));
    {
      std::lock_guard lock(mu_);
      finished_ += n;
    }
    idle_.notify_all();
    batch.clear();
    done.clear();
  }
}

}  // namespace ferry::cache
