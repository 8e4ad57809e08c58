// Proxy's big objects (bodies over max_object): cached from their spool as
// they stream in, by a reader of the spool's own on the big fill pool, and
// answered from disk a frame at a time, so an answer reads (and decodes)
// only the frames it covers.
#include <spdlog/spdlog.h>

#include <functional>

#include "cache/fill.h"
#include "cache/proxy_internal.h"

namespace ferry::cache {

using namespace proxy_detail;  // NOLINT: the Proxy's own helpers

namespace {

// Stored bytes read per Read of a zstd client's answer.
constexpr uint64_t kStoredChunk = 256 << 10;
// Spool bytes taken per read by the disk writer.
constexpr size_t kSpoolChunk = 1 << 20;

// A zstd client's whole answer: the stored frames as they are.
class StoredReader : public http::BodyReader {
 public:
  StoredReader(std::shared_ptr<const BigObject> big, ProxyCounters* counters)
      : big_(std::move(big)), counters_(counters) {}
  Result<std::string> Read(size_t max) override {
    auto piece = big_->ReadStored(at_, std::min<uint64_t>(max, kStoredChunk));
    if (piece.ok()) {
      at_ += piece->size();
      counters_->big_read_bytes += piece->size();
    }
    return piece;
  }
  void Cancel() override {}

 private:
  std::shared_ptr<const BigObject> big_;
  ProxyCounters* counters_;
  uint64_t at_ = 0;
};

// Logical bytes [first, first + count): the frames holding them, read
// (and, for a zstd body, decoded) one at a time, in order.
class FrameReader : public http::BodyReader {
 public:
  using OnDamage = std::function<void(const Status&)>;
  FrameReader(std::shared_ptr<const BigObject> big, uint64_t first, uint64_t count, ProxyCounters* counters,
              OnDamage on_damage)
      : big_(std::move(big)), counters_(counters), on_damage_(std::move(on_damage)), at_(first), left_(count) {
    if (count > 0) next_ = big_->table().Covering(first, count).first;
  }
  Result<std::string> Read(size_t max) override {
    if (left_ == 0) return std::string();
    while (pos_ == frame_.size()) FERRY_RETURN_IF_ERROR(NextFrame());
    size_t take = static_cast<size_t>(std::min<uint64_t>({max, frame_.size() - pos_, left_}));
    std::string out = frame_.substr(pos_, take);
    pos_ += take;
    at_ += take;
    left_ -= take;
    return out;
  }
  void Cancel() override {}

 private:
  Status NextFrame() {
    const SeekTable& t = big_->table();
    if (next_ >= t.size()) return Status::Internal("big object: a range past its last frame");
    auto start = SteadyClock::now();
    auto frame = big_->ReadFrame(next_);
    if (!frame.ok()) {
      on_damage_(frame.status());
      return frame.status();
    }
    counters_->big_read_bytes += t.frame(next_).stored;
    if (big_->meta().encoding == StoredEncoding::kZstd) {
      counters_->decode_ns += NanosSince(start);
      counters_->decode_bytes += frame->size();
    }
    pos_ = static_cast<size_t>(at_ - t.logical_at(next_));  // into the first frame: where the range starts
    frame_ = std::move(frame).value();
    next_++;
    return Status::Ok();
  }

  std::shared_ptr<const BigObject> big_;
  ProxyCounters* counters_;
  OnDamage on_damage_;
  uint64_t at_;    // logical offset of the next byte to send
  uint64_t left_;  // bytes still to send
  size_t next_ = 0;
  std::string frame_;
  size_t pos_ = 0;
};

}  // namespace

std::shared_ptr<http::BodyReader> Proxy::BigBody(const std::shared_ptr<const CachedObject>& object, bool stored,
                                                 uint64_t first, uint64_t count) {
  if (stored) return std::make_shared<StoredReader>(object->big, &counters_);
  std::string key = object->meta.key;
  return std::make_shared<FrameReader>(object->big, first, count, &counters_,
                                       [this, key](const Status& why) { DropDamaged(key, why); });
}

void Proxy::DropDamaged(const std::string& key, const Status& why) {
  counters_.errors++;
  spdlog::warn("cache: a stored big object failed to read; removed: {}", why.ToString());
  Forget(key);
  (void)store_->Remove(key);
}

std::shared_ptr<Proxy::Fetched> Proxy::BigFillFor(const std::string& key) {
  std::lock_guard lock(big_mu_);
  auto it = big_fills_.find(key);
  return it == big_fills_.end() ? nullptr : it->second;
}

bool Proxy::AbandonBigFill(const std::string& key) {
  std::lock_guard lock(big_mu_);
  return big_fills_.erase(key) > 0;
}

bool Proxy::StartBigFill(const EntryMeta& meta, const std::shared_ptr<Fetched>& fetched) {
  // Its length when the origin said; at least past max_object either way.
  uint64_t size = ContentLengthOf(fetched->response.headers).value_or(options_.max_object + 1);
  bool compress = ShouldCompress(meta, size, options_.transcode);
  auto writer = store_->BeginBig(meta, compress, options_.level);
  if (!writer.ok()) {
    counters_.store_failures++;
    spdlog::warn("cache: a big object not stored: {}", writer.status().ToString());
    return false;
  }
  {
    std::lock_guard lock(big_mu_);
    if (!big_fills_.try_emplace(meta.key, fetched).second) return false;  // one fill at a time is cached
  }
  struct Job {
    std::unique_ptr<BigObjectWriter> writer;
    std::shared_ptr<http::BodyReader> spool;
    std::shared_ptr<Fetched> fetched;
  };
  // The reader is made now, before any client's: the spool goes on while it
  // reads, whoever else leaves.
  auto job = std::make_shared<Job>(Job{std::move(writer).value(), fetched->spool->NewReader(/*client=*/false), fetched});
  if (big_fill_pool_.TrySubmit([this, job] { RunBigFill(std::move(job->writer), job->spool, job->fetched); })) {
    return true;
  }
  counters_.store_failures++;
  spdlog::warn("cache: a big object not stored: {} writers busy and {} waiting", options_.big_fill_threads,
               options_.big_fill_queue);
  job->spool->Cancel();
  std::lock_guard lock(big_mu_);
  big_fills_.erase(meta.key);
  return false;
}

void Proxy::RunBigFill(std::unique_ptr<BigObjectWriter> writer, std::shared_ptr<http::BodyReader> spool,
                       const std::shared_ptr<Fetched>& fetched) {
  const std::string key = writer->meta().key;
  Status st;
  for (;;) {
    auto piece = spool->Read(kSpoolChunk);
    if (!piece.ok()) st = piece.status();
    if (!piece.ok() || piece->empty()) break;
    st = writer->Write(*piece);
    if (!st.ok()) break;
  }
  if (!st.ok()) spool->Cancel();
  uint64_t logical = writer->logical_written(), encode_ns = writer->encode_ns();
  bool compressed = writer->compressing();
  // Not when a PURGE came meanwhile (it drops the fill from big_fills_
  // before it removes the entry; so one that came during the commit is
  // seen after it).
  auto purged = [&] { return BigFillFor(key) != fetched; };
  if (st.ok() && purged()) st = Status::Cancelled("purged while it was being filled");
  if (st.ok()) {
    DropPending(key);  // an older small version's store under way ends first, a later one never starts
    st = store_->CommitBig(std::move(writer));
  }
  if (st.ok() && purged()) {
    (void)store_->Remove(key);
    st = Status::Cancelled("purged while it was being filled");
  }
  if (st.ok()) {
    counters_.big_fills++;
    if (compressed) {
      counters_.encode_ns += encode_ns;
      counters_.encode_bytes += logical;
    }
    Forget(key);  // whatever memory held for the key is older
    // Into the memory tier: its header and seek table, not its body.
    if (auto object = FromDisk(key)) {
      counters_.logical_bytes += object->meta.logical_length;
      counters_.stored_bytes += object->meta.stored_length;
    }
  } else {
    counters_.store_failures++;
    spdlog::warn("cache: a big object ({} bytes read) not stored: {}", logical, st.ToString());
  }
  std::lock_guard lock(big_mu_);
  auto it = big_fills_.find(key);
  if (it != big_fills_.end() && it->second == fetched) big_fills_.erase(it);
}

}  // namespace ferry::cache
