#include "migrate/spill_sort.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ferry::migrate {

struct SpillSorter::Run {
  std::FILE* f = nullptr;
  std::vector<char> buffer;
  std::optional<std::pair<uint64_t, SpillRecord>> head;  // (order, record)
  ~Run() {
    if (f != nullptr) std::fclose(f);
  }
};

namespace {

bool Put32(std::FILE* f, uint32_t v) { return std::fwrite(&v, sizeof v, 1, f) == 1; }
bool Put64(std::FILE* f, uint64_t v) { return std::fwrite(&v, sizeof v, 1, f) == 1; }
bool PutBytes(std::FILE* f, const std::string& s) {
  return Put32(f, static_cast<uint32_t>(s.size())) &&
         (s.empty() || std::fwrite(s.data(), 1, s.size(), f) == s.size());
}
bool GetBytes(std::FILE* f, std::string* s) {
  uint32_t n = 0;
  if (std::fread(&n, sizeof n, 1, f) != 1) return false;
  s->resize(n);
  return n == 0 || std::fread(s->data(), 1, n, f) == n;
}

Status FileError(const char* what) { return Status::FromErrno(errno, std::string("spill file: ") + what); }

}  // namespace

Status SpillSorter::Advance(Run& r) {
  uint64_t order = 0;
  SpillRecord rec;
  if (std::fread(&order, sizeof order, 1, r.f) != 1) {
    if (std::ferror(r.f)) return FileError("read");
    r.head.reset();
    return Status::Ok();
  }
  if (!GetBytes(r.f, &rec.key) || !GetBytes(r.f, &rec.payload)) return FileError("truncated run");
  r.head.emplace(order, std::move(rec));
  return Status::Ok();
}

SpillSorter::SpillSorter(std::string dir, size_t max_in_memory)
    : dir_(std::move(dir)), max_in_memory_(std::max<size_t>(1, max_in_memory)) {
  if (dir_.empty()) {
    const char* t = std::getenv("TMPDIR");
    dir_ = t != nullptr && *t != '\0' ? t : "/tmp";
  }
}

SpillSorter::~SpillSorter() = default;

Status SpillSorter::Add(SpillRecord r) {
  if (merging_) return Status::Internal("SpillSorter::Add after reading began");
  memory_.emplace_back(seq_++, std::move(r));
  ++count_;
  if (memory_.size() >= max_in_memory_) return WriteRun();
  return Status::Ok();
}

Status SpillSorter::WriteRun() {
  std::stable_sort(memory_.begin(), memory_.end(),
                   [](const auto& a, const auto& b) { return a.second.key < b.second.key; });
  std::string path = dir_ + "/ferry-spill-XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0) return Status::FromErrno(errno, "spill file in " + dir_);
  ::unlink(path.c_str());  // gone with the process, whatever happens
  auto run = std::make_unique<Run>();
  run->f = ::fdopen(fd, "w+b");
  if (run->f == nullptr) {
    ::close(fd);
    return FileError("open");
  }
  for (const auto& [order, rec] : memory_) {
    if (!Put64(run->f, order) || !PutBytes(run->f, rec.key) || !PutBytes(run->f, rec.payload)) {
      return FileError("write (is the disk full?)");
    }
  }
  if (std::fflush(run->f) != 0) return FileError("write (is the disk full?)");
  runs_.push_back(std::move(run));
  memory_.clear();
  return Status::Ok();
}

Status SpillSorter::StartMerge() {
  merging_ = true;
  std::stable_sort(memory_.begin(), memory_.end(),
                   [](const auto& a, const auto& b) { return a.second.key < b.second.key; });
  for (auto& run : runs_) {
    if (std::fseek(run->f, 0, SEEK_SET) != 0) return FileError("rewind");
    run->buffer.resize(64 << 10);
    std::setvbuf(run->f, run->buffer.data(), _IOFBF, run->buffer.size());
    FERRY_RETURN_IF_ERROR(Advance(*run));
  }
  return Status::Ok();
}

Result<std::optional<SpillRecord>> SpillSorter::Next() {
  if (!merging_) FERRY_RETURN_IF_ERROR(StartMerge());
  // The smallest head (ties: the earlier added). Runs are few (a run per
  // max_in_memory records), so a linear scan beats a heap's bookkeeping.
  std::pair<uint64_t, SpillRecord>* best = nullptr;
  size_t from = runs_.size();
  if (memory_at_ < memory_.size()) best = &memory_[memory_at_];
  for (size_t i = 0; i < runs_.size(); ++i) {
    auto& h = runs_[i]->head;
    if (!h) continue;
    if (best == nullptr || h->second.key < best->second.key ||
        (h->second.key == best->second.key && h->first < best->first)) {
      best = &*h;
      from = i;
    }
  }
  if (best == nullptr) return std::optional<SpillRecord>();
  SpillRecord out = std::move(best->second);
  if (from == runs_.size()) {
    ++memory_at_;
  } else {
    FERRY_RETURN_IF_ERROR(Advance(*runs_[from]));
  }
  return std::optional<SpillRecord>(std::move(out));
}

}  // namespace ferry::migrate
