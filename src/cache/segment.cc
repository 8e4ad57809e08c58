#include "cache/segment.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "base/atomic_file.h"
#include "base/crash_point.h"
#include "base/file_io.h"
#include "cache/bytes.h"

namespace ferry::cache {
namespace {

constexpr std::string_view kSegmentMagic = "FERRY-SEGMENT-1\n";
// A scan reads this much at each record first: the head and, nearly
// always, the metadata.
constexpr size_t kScanRead = 4096;

std::string Header(uint64_t seq) {
  std::string h(kSegmentMagic);
  PutU64(&h, seq);
  PutU64(&h, 0);
  return h;
}

}  // namespace

std::string Segment::NameOf(uint64_t seq) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(seq));
  return std::string(buf) + ".seg";
}

std::optional<uint64_t> Segment::SeqOf(std::string_view name) {
  if (name.size() != 20 || name.substr(16) != ".seg") return std::nullopt;
  uint64_t seq = 0;
  for (char c : name.substr(0, 16)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  auto [p, ec] = std::from_chars(name.data(), name.data() + 16, seq, 16);
  if (ec != std::errc() || p != name.data() + 16) return std::nullopt;
  return seq;
}

Result<std::shared_ptr<Segment>> Segment::Create(const std::string& dir, uint64_t seq, bool sync) {
  std::string path = dir + "/" + NameOf(seq);
  int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "create " + path);
  std::shared_ptr<Segment> s(new Segment(fd, path, seq, kSegmentHeaderSize));
  FERRY_RETURN_IF_ERROR(PwriteFull(fd, Header(seq), 0, "segment header"));
  if (sync) {
    FERRY_RETURN_IF_ERROR(DataSync(fd));
    FERRY_RETURN_IF_ERROR(FsyncDir(dir));
  }
  return s;
}

Result<std::shared_ptr<Segment>> Segment::Open(const std::string& path, uint64_t seq) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::FromErrno(err, "stat " + path);
  }
  std::shared_ptr<Segment> s(new Segment(fd, path, seq, static_cast<uint64_t>(st.st_size)));
  auto header = s->Read(0, kSegmentHeaderSize);
  if (!header.ok() || *header != Header(seq)) return Status::Corruption(path + ": not a cache segment");
  return s;
}

Segment::~Segment() { ::close(fd_); }

Result<uint64_t> Segment::Append(std::string_view record) {
  const uint64_t at = size_.load();
  // In two writes with a crash point between them, so that tests can leave
  // a record cut short exactly where a crash would.
  size_t first = std::min(record.size(), kRecordHeadSize + (record.size() - kRecordHeadSize) / 2);
  Status st = PwriteFull(fd_, record.substr(0, first), at, "segment append");
  if (st.ok()) {
    CrashPoint("segment-append");
    st = PwriteFull(fd_, record.substr(first), at + first, "segment append");
  }
  if (!st.ok()) {
    (void)::ftruncate(fd_, static_cast<off_t>(at));
    return st;
  }
  size_.store(at + record.size());
  return at;
}

Result<std::string> Segment::Read(uint64_t offset, uint64_t length) const {
  std::string out(length, '\0');
  FERRY_ASSIGN_OR_RETURN(uint64_t n, PreadUpTo(fd_, out.data(), length, offset, "segment read"));
  if (n != length) return Status::Corruption(path_ + ": ends inside a record");
  return out;
}

Status Segment::MarkDead(uint64_t offset) {
  return PwriteFull(fd_, std::string_view(&kRecordDead, 1), offset + kRecordStateOffset, "segment mark");
}

Status Segment::Sync() const { return DataSync(fd_); }

Result<Segment::ScanResult> Segment::Scan(bool verify_bodies, const FoundRecord& found) const {
  ScanResult r;
  const uint64_t size = size_.load();
  uint64_t at = kSegmentHeaderSize;
  while (at < size) {
    uint64_t left = size - at;
    std::string buf(std::min<uint64_t>(left, kScanRead), '\0');
    FERRY_ASSIGN_OR_RETURN(uint64_t n, PreadUpTo(fd_, buf.data(), buf.size(), at, "segment scan"));
    buf.resize(n);
    auto head = ParseRecordHead(buf);
    if (!head.ok() || head->size() > left) break;  // the torn tail
    if (buf.size() < kRecordHeadSize + head->meta_length) {
      FERRY_ASSIGN_OR_RETURN(buf, Read(at, kRecordHeadSize + head->meta_length));
    }
    auto meta = DecodeRecordMeta(*head, buf);
    if (!meta.ok()) break;  // a head that does not check: nothing after it is trusted
    if (!head->live) {       // removed: its bytes are of no interest
      at += head->size();
      continue;
    }
    if (verify_bodies) {
      FERRY_ASSIGN_OR_RETURN(std::string whole, Read(at, head->size()));
      if (!DecodeRecord(whole).ok()) {
        r.corrupt++;  // its lengths checked, so the records after it are found
        at += head->size();
        continue;
      }
    }
    found(at, *head, std::move(meta).value());
    at += head->size();
  }
  r.end = at;
  r.torn_bytes = size - at;
  return r;
}

Status Segment::Truncate(uint64_t end) {
  if (::ftruncate(fd_, static_cast<off_t>(end)) != 0) return Status::FromErrno(errno, "truncate " + path_);
  size_.store(end);
  return Status::Ok();
}

uint64_t Segment::Allocated() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

}  // namespace ferry::cache
