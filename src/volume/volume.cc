#include "volume/volume.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <thread>

#include <spdlog/spdlog.h>

#include "base/file_io.h"
#include "volume/helper_pools.h"

namespace ferry::volume {
namespace {

constexpr std::string_view kPresentMagic = "FERRYBM1";
constexpr std::string_view kWrittenMagic = "FERRYWR1";

}  // namespace

Volume::Volume(VolumeOptions o, int data_fd, int direct_fd, uint64_t size)
    : options_(std::move(o)), data_fd_(data_fd), direct_fd_(direct_fd), size_(size) {}

Volume::~Volume() {
  {
    std::unique_lock lock(mu_);  // readahead and install threads use this volume
    helpers_cv_.wait(lock, [&] { return helpers_ == 0; });
  }
  present_file_.reset();
  written_file_.reset();
  ::close(data_fd_);
  if (direct_fd_ >= 0) ::close(direct_fd_);
}

Result<std::unique_ptr<Volume>> Volume::Open(VolumeOptions o) {
  const snapshot::Manifest& m = o.manifest;
  uint64_t size = o.size == 0 ? m.image_size : o.size;
  if (size < m.image_size) {
    return Status::InvalidArgument("a volume of " + std::to_string(size) + " bytes is smaller than its snapshot (" +
                                   std::to_string(m.image_size) + ")");
  }
  if (!o.source) return Status::InvalidArgument("a volume needs a chunk source");
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) return Status(ErrorCode::kIoError, o.dir + ": " + ec.message());
  uint64_t chunks = (size + m.chunk_size - 1) / m.chunk_size;
  std::string data_path = o.dir + "/data", bitmap_path = o.dir + "/bitmap";
  struct stat st;
  // A volume is new until its bitmap is there, whole (written atomically).
  bool fresh = ::stat(bitmap_path.c_str(), &st) != 0 || st.st_size == 0;
  int data_fd = ::open(data_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (data_fd < 0) return Status::FromErrno(errno, data_path);
  // Fills write through O_DIRECT where the file system allows it (not
  // tmpfs): -1 when it does not. Then the buffered descriptor, which serves
  // clients, must never read ahead: readahead from a present chunk into a
  // missing one being filled could cache that range's old bytes (zeros)
  // after the direct write's invalidation, and show them once the chunk is
  // present. Without readahead only present chunks are ever cached (clients
  // read and write present chunks only; chunk sizes are page multiples).
  int direct_fd = ::open(data_path.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
  if (direct_fd >= 0 && ::posix_fadvise(data_fd, 0, 0, POSIX_FADV_RANDOM) != 0) {
    ::close(direct_fd);  // cannot rule readahead out: fill through the page cache
    direct_fd = -1;
  }
  std::unique_ptr<Volume> v(new Volume(std::move(o), data_fd, direct_fd, size));
  v->busy_.assign(chunks, false);
  v->hydrating_.assign(chunks, false);
  v->urgent_wanted_.assign(chunks, false);
  v->touched_.assign(chunks, false);
  if (fresh) {
    if (::ftruncate(data_fd, static_cast<off_t>(size)) != 0) return Status::FromErrno(errno, data_path);
    FERRY_RETURN_IF_ERROR(DataSync(data_fd));
  }
  FERRY_RETURN_IF_ERROR(v->OpenBitmaps(fresh));
  return v;
}

Status Volume::OpenBitmaps(bool fresh) {
  const uint64_t chunks = (size_ + chunk_size() - 1) / chunk_size();
  const auto& list = options_.manifest.chunks;
  // New: zero chunks and chunks past the snapshot are present already.
  auto zero = [&](uint64_t i) { return i >= list.size() || list[i].empty(); };
  BitmapHooks present_hooks{[this] { return DataSync(data_fd_); },  // data durable before its bit
                            [this](const std::vector<uint64_t>& group) {
                              std::lock_guard lock(mu_);
                              for (uint64_t j : group) {
                                if (!bits_[j]) ++present_;
                                bits_[j] = true;
                                // Present in the file from now on, where a
                                // writer may change it at once.
                                EraseLandingLocked(j);
                              }
                            }};
  FERRY_ASSIGN_OR_RETURN(present_file_, BitmapFile::Open(options_.dir + "/bitmap", kPresentMagic, chunks, zero,
                                                         std::move(present_hooks)));
  bits_ = present_file_->loaded();
  present_ = static_cast<uint64_t>(std::count(bits_.begin(), bits_.end(), true));
  // A new volume has nothing written (a leftover file of a create that
  // died is replaced); an old one without the file: every present chunk.
  const std::string written_path = options_.dir + "/written";
  if (fresh) FERRY_RETURN_IF_ERROR(BitmapFile::Create(written_path, kWrittenMagic, std::vector<bool>(chunks)));
  BitmapHooks written_hooks{nullptr, [this](const std::vector<uint64_t>& group) {
                              std::lock_guard lock(mu_);
                              for (uint64_t j : group) {
                                if (!written_[j]) ++written_count_;
                                written_[j] = true;
                              }
                            }};
  FERRY_ASSIGN_OR_RETURN(written_file_,
                         BitmapFile::Open(written_path, kWrittenMagic, chunks, [&](uint64_t i) { return bits_[i]; },
                                          std::move(written_hooks)));
  written_ = written_file_->loaded();
  written_count_ = static_cast<uint64_t>(std::count(written_.begin(), written_.end(), true));
  return Status::Ok();
}

bool Volume::Present(uint64_t i) const {
  std::lock_guard lock(mu_);
  return bits_[i];
}

bool Volume::complete() const {
  std::lock_guard lock(mu_);
  return present_ == bits_.size();
}

VolumeStats Volume::stats() const {
  VolumeStats s;
  {
    std::lock_guard lock(mu_);
    s.chunks = bits_.size();
    s.present = present_;
    s.written = written_count_;
  }
  s.triggers = triggers_;
  s.background = background_;
  s.hinted = hinted_;
  s.fetched_bytes = fetched_bytes_;
  s.fetch_errors = fetch_errors_;
  s.written_bytes = written_bytes_;
  s.origin_bytes = origin_bytes_;
  s.cache_bytes = cache_bytes_;
  s.bitmap_commits = present_file_->commits() + written_file_->commits();
  return s;
}

std::vector<uint32_t> Volume::FirstTouches() const {
  std::lock_guard lock(mu_);
  return first_touches_;
}

bool Volume::Claim(uint64_t i) {
  std::unique_lock lock(mu_);
  busy_cv_.wait(lock, [&] { return !busy_[i]; });
  if (bits_[i]) return false;
  busy_[i] = true;
  return true;
}

void Volume::Unclaim(uint64_t i) {
  {
    std::lock_guard lock(mu_);
    busy_[i] = false;
  }
  busy_cv_.notify_all();
}

Status Volume::FillClaimed(uint64_t i, const std::function<Status()>& write_data) {
  Status st = write_data();
  if (st.ok()) st = CommitBit(i);  // its data durable first, then its bit
  Unclaim(i);
  return st;
}

Status Volume::WriteChunk(uint64_t i, const std::string& bytes) {
  // A snapshot's short last chunk in a larger volume: zeros to the chunk's
  // end, over whatever a whole-chunk write cut short by a crash left there.
  const uint64_t cs = chunk_size(), chunk_end = std::min(size_, (i + 1) * cs), bytes_end = i * cs + bytes.size();
  if (bytes_end < chunk_end) FERRY_RETURN_IF_ERROR(ZeroRange(data_fd_, bytes_end, chunk_end - bytes_end, "volume write"));
  // A fill bypasses the page cache when it can (aligned, whole blocks):
  // the bytes go to the disk without a copy, and the sync after it has
  // no dirty pages to write back. The kernel drops any cached pages of
  // the range, which no client has written (the chunk is not present).
  constexpr uint64_t kAlign = 4096;
  if (direct_fd_ >= 0 && (i * cs) % kAlign == 0 && bytes.size() % kAlign == 0 && !bytes.empty()) {
    // One buffer per write, not per thread: pool threads outlive their
    // tasks (helper_pools.h), and 512 of them must not each keep a chunk.
    std::unique_ptr<char, decltype(&std::free)> buffer(nullptr, &std::free);
    void* p = nullptr;
    if (::posix_memalign(&p, kAlign, bytes.size()) == 0) buffer.reset(static_cast<char*>(p));
    if (buffer) {
      std::memcpy(buffer.get(), bytes.data(), bytes.size());
      Status st = PwriteFull(direct_fd_, std::string_view(buffer.get(), bytes.size()), i * cs, "volume write");
      if (st.ok() || st.code() != ErrorCode::kInvalidArgument) return st;
      // EINVAL: this file system refuses direct I/O after all; buffered.
    }
  }
  return PwriteFull(data_fd_, bytes, i * cs, "volume write");
}

Status Volume::Install(uint64_t i, const std::string& bytes) {
  if (!Claim(i)) return Status::Ok();  // a client made it present meanwhile: its data wins
  return FillClaimed(i, [&] { return WriteChunk(i, bytes); });
}

void Volume::Land(uint64_t i, std::string bytes) {
  if (!Claim(i)) return;  // a client made it present meanwhile: its data wins
  auto landed = std::make_shared<const std::string>(std::move(bytes));
  {
    std::lock_guard lock(mu_);
    landing_[i] = landed;
    LandedBytes() += landed->size();
    ++helpers_;
  }
  auto install = [this, i, landed] {
    Status st = options_.before_install ? options_.before_install(i) : Status::Ok();
    if (st.ok()) st = WriteChunk(i, *landed);
    if (st.ok()) st = CommitBit(i);  // shows the bit once durable (and ends the landing)
    if (!st.ok()) {
      // The chunk is missing again: the next touch fetches it. Logged the
      // first time and every 100th (a full disk fails every install).
      if (install_failures_++ % 100 == 0) {
        spdlog::warn("volume {}: chunk {} was read but could not be installed ({} such failures): {}", options_.dir,
                     i, install_failures_.load(), st.ToString());
      }
      fetch_errors_++;
    }
    std::lock_guard lock(mu_);  // held to the end: the destructor waits for helpers_ under it
    EraseLandingLocked(i);  // before the claim ends: a whole-chunk write waiting on it must not be shadowed
    busy_[i] = false;
    --helpers_;
    busy_cv_.notify_all();
    helpers_cv_.notify_all();
  };
  if (!InstallPool().Submit(install)) install();  // no thread to be had: the reader waits for it
}

bool Volume::LandingFull() const {
  // A disk slower than the origin must not pile up chunks in memory and
  // threads: past this many, reads wait for their installs again.
  constexpr size_t kMaxLanding = 64;
  std::lock_guard lock(mu_);
  return landing_.size() >= kMaxLanding || LandedBytes().load() >= kLandedBudget;
}

void Volume::EraseLandingLocked(uint64_t i) {
  auto it = landing_.find(i);
  if (it == landing_.end()) return;
  LandedBytes() -= it->second->size();
  landing_.erase(it);
}

void Volume::Settle() {
  std::unique_lock lock(mu_);
  busy_cv_.wait(lock, [&] { return landing_.empty(); });
}

Status Volume::Ensure(uint64_t i, FetchPriority priority, bool to_read) {
  const bool urgent = priority == FetchPriority::kTrigger;
  {
    std::lock_guard lock(mu_);
    if (urgent && !touched_[i]) {
      touched_[i] = true;
      first_touches_.push_back(static_cast<uint32_t>(i));
    }
    if (bits_[i] || (to_read && landing_.count(i))) return Status::Ok();
  }
  struct Timer {  // a client's wait for a missing chunk, whatever the outcome
    LatencyHistogram* h;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~Timer() {
      if (h) h->Observe(std::chrono::steady_clock::now() - start);
    }
  } timer{urgent ? options_.trigger_waits : nullptr};
  auto priority_now = [&] {
    std::lock_guard lock(mu_);
    return urgent_wanted_[i] ? FetchPriority::kTrigger : priority;
  };
  // A fetch ends with the chunk present, or landed (a reader's): others
  // wait for its install, which, if it fails, leaves it missing again.
  constexpr int kTries = 3;
  for (int tries = 1;; ++tries) {
    {
      std::unique_lock lock(mu_);
      if (!to_read) busy_cv_.wait(lock, [&] { return !landing_.count(i); });
      if (bits_[i] || (to_read && landing_.count(i))) return Status::Ok();
      if (tries > kTries) return Status(ErrorCode::kIoError, "chunk " + std::to_string(i) + " could not be installed");
      if (urgent) urgent_wanted_[i] = true;
    }
    // A background fetch of this chunk waiting at the gate now waits as a
    // trigger: this caller is about to join it.
    if (urgent && options_.gate) options_.gate->Nudge();
    auto [st, led] = flights_.Do(i, [&]() -> Status {
      {
        std::lock_guard lock(mu_);
        if (bits_[i] || landing_.count(i)) return Status::Ok();  // a flight ended meanwhile
      }
      const std::string& hash = options_.manifest.chunks[i];
      if (urgent) triggers_++;
      FetchPriority held = options_.gate ? options_.gate->Acquire(priority_now) : priority;
      ChunkOrigin origin = ChunkOrigin::kSource;
      auto got = options_.source->FetchWithOrigin(hash, priority_now() == FetchPriority::kTrigger, &origin);
      if (options_.gate) options_.gate->Release(held);
      {
        std::lock_guard lock(mu_);
        urgent_wanted_[i] = false;  // this flight is over; a later trigger marks the next
      }
      if (!got.ok()) {
        fetch_errors_++;
        return got.status();
      }
      if (got->size() != options_.manifest.ChunkLength(i)) {
        fetch_errors_++;
        return Status::Corruption("chunk " + std::to_string(i) + " has " + std::to_string(got->size()) + " bytes");
      }
      fetched_bytes_ += got->size();
      (origin == ChunkOrigin::kCache ? cache_bytes_ : origin_bytes_) += got->size();
      if (priority == FetchPriority::kBackground) background_++;
      if (priority == FetchPriority::kPrefetch) hinted_++;
      if (!to_read || LandingFull()) return Install(i, *got);
      Land(i, std::move(got).value());
      return Status::Ok();
    });
    (void)led;
    FERRY_RETURN_IF_ERROR(st);
  }
}

Status Volume::EnsureAll(uint64_t first, uint64_t last, FetchPriority priority, bool to_read) {
  // One missing chunk (the usual case) is fetched on this thread; more are
  // fetched together, a few at a time, so a read spanning N missing chunks
  // waits for about one fetch, not N in a row.
  constexpr uint64_t kParallel = 8;
  std::vector<uint64_t> missing;
  bool sequential = last > first;  // the client reads on from a chunk it read (as Linux's readahead asks)
  {
    std::lock_guard lock(mu_);
    if (first > 0 && touched_[first - 1]) sequential = true;
    for (uint64_t c = first; c <= last; ++c) {
      if (priority == FetchPriority::kTrigger && !touched_[c]) {  // first touches in the order of the range
        touched_[c] = true;
        first_touches_.push_back(static_cast<uint32_t>(c));
      }
      if (!bits_[c]) missing.push_back(c);
    }
  }
  if (!missing.empty() && sequential && priority == FetchPriority::kTrigger && options_.readahead > 0) {
    StartReadahead(last);
  }
  for (size_t at = 0; at < missing.size(); at += kParallel) {
    size_t end = std::min<size_t>(missing.size(), at + kParallel);
    std::vector<std::future<Status>> others;
    for (size_t k = at + 1; k < end; ++k) {
      others.push_back(std::async(std::launch::async,
                                  [this, c = missing[k], priority, to_read] { return Ensure(c, priority, to_read); }));
    }
    Status st = Ensure(missing[at], priority, to_read);
    for (auto& f : others) {
      Status other = f.get();
      if (st.ok()) st = other;
    }
    FERRY_RETURN_IF_ERROR(st);
  }
  if (options_.read_around > 0 && to_read && priority == FetchPriority::kTrigger) {
    const uint64_t r = static_cast<uint64_t>(options_.read_around);
    for (uint64_t m : missing) StartPrefetch(m >= r ? m - r : 0, m + r);
  }
  return Status::Ok();
}

Status Volume::Read(uint64_t offset, uint64_t len, char* out) {
  NoteClientIo();
  if (len == 0) return Status::Ok();
  const uint64_t cs = options_.manifest.chunk_size;
  for (int tries = 1;; ++tries) {
    FERRY_RETURN_IF_ERROR(EnsureAll(offset / cs, (offset + len - 1) / cs, FetchPriority::kTrigger, true));
    Status st;
    if (CopyOut(offset, len, out, &st)) return st;
    if (tries == 3) return Status(ErrorCode::kIoError, "volume read: chunks could not be installed");
  }
}

bool Volume::CopyOut(uint64_t offset, uint64_t len, char* out, Status* st) {
  const uint64_t cs = options_.manifest.chunk_size, first = offset / cs, last = (offset + len - 1) / cs;
  std::vector<std::pair<uint64_t, std::shared_ptr<const std::string>>> landed;
  {
    std::lock_guard lock(mu_);
    for (uint64_t c = first; c <= last; ++c) {
      if (bits_[c]) continue;  // in the file (and a writer may have changed it since)
      auto it = landing_.find(c);
      if (it == landing_.end()) return false;  // its install failed after Ensure
      landed.emplace_back(c, it->second);
    }
  }
  *st = Status::Ok();
  if (landed.empty()) {
    *st = PreadOrZeros(data_fd_, out, len, offset, "volume read");
    return true;
  }
  // Runs of present chunks from the file, landed ones from their bytes (a
  // snapshot's short last chunk reads zeros past its bytes).
  const uint64_t end = offset + len;
  uint64_t at = offset;
  size_t k = 0;
  while (at < end && st->ok()) {
    const uint64_t c = at / cs;
    if (k < landed.size() && landed[k].first == c) {
      const std::string& bytes = *landed[k++].second;
      const uint64_t stop = std::min(end, (c + 1) * cs), from = at - c * cs;
      const uint64_t have = from < bytes.size() ? std::min<uint64_t>(bytes.size() - from, stop - at) : 0;
      std::memcpy(out + (at - offset), bytes.data() + from, have);
      std::memset(out + (at - offset) + have, 0, stop - at - have);
      at = stop;
    } else {
      const uint64_t stop = k < landed.size() ? landed[k].first * cs : end;
      *st = PreadOrZeros(data_fd_, out + (at - offset), stop - at, at, "volume read");
      at = stop;
    }
  }
  return true;
}

Status Volume::EnsureEdges(uint64_t offset, uint64_t end) {
  const uint64_t cs = options_.manifest.chunk_size, first = offset / cs, last = (end - 1) / cs;
  for (uint64_t c : {first, last}) {
    uint64_t c_start = c * cs, c_end = std::min(c_start + cs, size_);
    bool whole = offset <= c_start && end >= c_end;
    if (!whole) FERRY_RETURN_IF_ERROR(Ensure(c, FetchPriority::kTrigger));
    if (first == last) break;
  }
  return Status::Ok();
}

Status Volume::BeforeChange(uint64_t first, uint64_t last) {
  std::vector<uint64_t> unmarked;
  std::shared_ptr<ChunkCapture> capture;
  {
    std::lock_guard lock(mu_);
    for (uint64_t c = first; c <= last; ++c) {
      if (!written_[c]) unmarked.push_back(c);
    }
    capture = capture_;
  }
  FERRY_RETURN_IF_ERROR(written_file_->Set(unmarked));  // durable before the data changes
  if (capture) {
    for (uint64_t c = first; c <= last; ++c) FERRY_RETURN_IF_ERROR(capture->BeforeWrite(c));
  }
  return Status::Ok();
}

Status Volume::Write(uint64_t offset, std::string_view data, bool fua) {
  NoteClientIo();
  if (data.empty()) return Status::Ok();
  written_bytes_ += data.size();
  const uint64_t cs = options_.manifest.chunk_size, end = offset + data.size();
  FERRY_RETURN_IF_ERROR(EnsureEdges(offset, end));
  WriteGate::Writer inside(write_gate_);
  FERRY_RETURN_IF_ERROR(BeforeChange(offset / cs, (end - 1) / cs));
  for (uint64_t c = offset / cs; c <= (end - 1) / cs; ++c) {
    uint64_t c_start = c * cs, c_end = std::min(c_start + cs, size_);
    // A whole chunk written while missing: present without a fetch, once
    // its data is durable. (A partly written one is present: EnsureEdges.)
    if (offset <= c_start && end >= c_end && Claim(c)) {
      FERRY_RETURN_IF_ERROR(FillClaimed(c, [&] {
        return PwriteFull(data_fd_, data.substr(c_start - offset, c_end - c_start), c_start, "volume write");
      }));
    }
  }
  FERRY_RETURN_IF_ERROR(PwriteFull(data_fd_, data, offset, "volume write"));
  return fua ? DataSync(data_fd_) : Status::Ok();
}

Status Volume::Flush() { return DataSync(data_fd_); }

Status Volume::WriteZeroes(uint64_t offset, uint64_t len, bool fua) {
  NoteClientIo();
  if (len == 0) return Status::Ok();
  const uint64_t cs = options_.manifest.chunk_size, end = offset + len;
  FERRY_RETURN_IF_ERROR(EnsureEdges(offset, end));
  WriteGate::Writer inside(write_gate_);
  FERRY_RETURN_IF_ERROR(BeforeChange(offset / cs, (end - 1) / cs));
  for (uint64_t c = offset / cs; c <= (end - 1) / cs; ++c) {
    uint64_t c_start = c * cs, c_end = std::min(c_start + cs, size_);
    uint64_t from = std::max(offset, c_start), to = std::min(end, c_end);
    // A whole chunk: if it is missing it becomes present (zeros) without a
    // fetch — claimed, so no fill lands in between — and its zeros are
    // durable before its bit.
    if (from == c_start && to == c_end && Claim(c)) {
      FERRY_RETURN_IF_ERROR(FillClaimed(c, [&] { return ZeroRange(data_fd_, from, to - from, "volume write"); }));
      continue;
    }
    FERRY_RETURN_IF_ERROR(ZeroRange(data_fd_, from, to - from, "volume write"));
  }
  return fua ? DataSync(data_fd_) : Status::Ok();
}

Status Volume::Trim(uint64_t offset, uint64_t len, bool fua) { return WriteZeroes(offset, len, fua); }

bool Volume::Ready(uint64_t offset, uint64_t len) const {
  if (len == 0) return true;
  uint64_t cs = options_.manifest.chunk_size;
  std::lock_guard lock(mu_);
  for (uint64_t c = offset / cs; c <= (offset + len - 1) / cs; ++c) {
    if (!bits_[c]) return false;  // (a landed one too: a write to it waits for its install)
  }
  return true;
}

Status Volume::Extents(uint64_t offset, uint64_t len, std::vector<nbd::Extent>* out) {
  // A missing chunk is data (the snapshot's zero chunks are present from
  // the start). In a present run the data file tells: a hole there reads
  // as zeros (never written, or trimmed, and never hydrated: hydrated
  // chunks are written whole). Nothing is fetched.
  out->clear();
  auto add = [out](uint64_t length, bool zero) {
    if (length == 0) return;
    if (!out->empty() && out->back().zero == zero) {
      out->back().length += length;
    } else {
      out->push_back(nbd::Extent{length, zero});
    }
  };
  const uint64_t cs = options_.manifest.chunk_size, end = offset + len;
  uint64_t at = offset;
  while (at < end) {
    bool present = Present(at / cs);
    uint64_t run_end = at;
    {
      std::lock_guard lock(mu_);
      while (run_end < end && bits_[run_end / cs] == present) run_end = std::min(end, (run_end / cs + 1) * cs);
    }
    if (!present) {
      add(run_end - at, false);
    } else {
      auto runs = FileRuns(data_fd_, at, run_end - at);
      if (!runs.ok()) return runs.status();
      for (const FileRun& r : *runs) add(r.length, r.hole);
    }
    at = run_end;
  }
  return Status::Ok();
}

Status Volume::Cache(uint64_t offset, uint64_t len) {
  if (len == 0) return Status::Ok();
  uint64_t cs = options_.manifest.chunk_size;
  return EnsureAll(offset / cs, (offset + len - 1) / cs, FetchPriority::kPrefetch);
}

Result<std::shared_ptr<ChunkCapture>> Volume::BeginCapture() {
  const snapshot::Manifest& m = options_.manifest;
  const uint64_t cs = m.chunk_size;
  // In a larger volume the snapshot's short last chunk is whole: the new
  // snapshot needs all of it, present.
  const bool grown_tail = size_ > m.image_size && m.image_size % cs != 0;
  if (grown_tail) FERRY_RETURN_IF_ERROR(Ensure(m.image_size / cs, FetchPriority::kPrefetch));
  Result<std::shared_ptr<ChunkCapture>> out = Status::Internal("no capture");
  write_gate_.Freeze([&] {
    std::vector<bool> frozen(bits_.size());
    {
      std::lock_guard lock(mu_);
      if (capture_) {
        out = Status::AlreadyExists("a snapshot of this volume is being made");
        return;
      }
      for (uint64_t i = 0; i < frozen.size(); ++i) frozen[i] = written_[i] && bits_[i];
    }
    if (grown_tail) frozen[m.image_size / cs] = true;
    auto capture = ChunkCapture::Create(data_fd_, size_, cs, std::move(frozen), options_.dir);
    if (!capture.ok()) {
      out = capture.status();
      return;
    }
    std::shared_ptr<ChunkCapture> shared = std::move(capture).value();
    std::lock_guard lock(mu_);
    capture_ = shared;
    out = shared;
  });
  return out;
}

void Volume::EndCapture(const ChunkCapture* capture) {
  std::lock_guard lock(mu_);
  if (capture_.get() == capture) capture_.reset();
}

}  // namespace ferry::volume
