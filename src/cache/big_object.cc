#include "cache/big_object.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <limits>

#include "base/file_io.h"
#include "cache/bytes.h"
#include "cache/checksum.h"
#include "cache/meta_codec.h"
#include "store/local/fs_util.h"

namespace ferry::cache {
namespace {

constexpr uint32_t kHeaderMagic = 0x184D2A50;  // a zstd skippable frame
constexpr std::string_view kBigObjectMagic = "FERRY-BIG-1\n";
// Magic, encoding and padding, frame size, body length, table length and
// checksum, metadata length; then the metadata; then the header checksum.
constexpr size_t kFixedFields = 12 + 4 + 4 + 8 + 8 + 8 + 4;

Status BigObjectDamaged(const std::string& path, const std::string& what) {
  return Status::Corruption("big object " + path + ": " + what);
}

uint32_t Sum4(std::string_view data) { return static_cast<uint32_t>(FormatSum8(data)); }

struct Header {
  bool zstd = false;
  uint32_t frame_size = 0;
  uint64_t body_length = 0;
  uint64_t table_length = 0;
  uint64_t table_sum = 0;
  EntryMeta meta;
};

// The header frame, `size` bytes in all (room reserved at creation).
std::string EncodeHeader(const Header& h, size_t size) {
  std::string m = EncodeMeta(h.meta);
  std::string c(kBigObjectMagic);
  c.push_back(h.zstd ? 1 : 0);
  c.append(3, '\0');
  PutU32(&c, h.frame_size);
  PutU64(&c, h.body_length);
  PutU64(&c, h.table_length);
  PutU64(&c, h.table_sum);
  PutU32(&c, static_cast<uint32_t>(m.size()));
  c.append(m);
  c.resize(size - 8 - 8, '\0');
  PutU64(&c, FormatSum8(c));
  std::string out;
  PutU32(&out, kHeaderMagic);
  PutU32(&out, static_cast<uint32_t>(c.size()));
  return out + c;
}

// The header's content (after its 8-byte frame header).
Result<Header> DecodeHeader(std::string_view c, const std::string& path) {
  if (c.size() < kFixedFields + 8) return BigObjectDamaged(path, "header cut short");
  if (LoadFixed(c.data() + c.size() - 8, 8) != FormatSum8(c.substr(0, c.size() - 8))) {
    return BigObjectDamaged(path, "header checksum mismatch");
  }
  ByteReader r(c.substr(0, c.size() - 8));
  if (r.Take(kBigObjectMagic.size()) != kBigObjectMagic) return BigObjectDamaged(path, "not a big object file");
  Header h;
  uint8_t enc = r.U8();
  if (enc > 1 || r.Fixed(3) != 0) return BigObjectDamaged(path, "unknown encoding");
  h.zstd = enc == 1;
  h.frame_size = r.U32();
  h.body_length = r.U64();
  h.table_length = r.U64();
  h.table_sum = r.U64();
  uint32_t m = r.U32();
  auto meta = DecodeMeta(r.Take(m));
  if (!r.ok() || !meta.ok()) return BigObjectDamaged(path, "metadata: " + meta.status().message());
  h.meta = std::move(meta).value();
  return h;
}

}  // namespace

Result<std::unique_ptr<BigObjectWriter>> BigObjectWriter::Create(std::string path, EntryMeta meta, bool compress,
                                                                 int level, uint32_t frame_size) {
  if (frame_size == 0) return Status::InvalidArgument("big object frame size 0");
  // Room for the header with lengths of any size.
  EntryMeta widest = meta;
  widest.logical_length = widest.stored_length = std::numeric_limits<uint64_t>::max();
  size_t header_size = 8 + kFixedFields + EncodeMeta(widest).size() + 8;
  int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "create " + path);
  return std::unique_ptr<BigObjectWriter>(
      new BigObjectWriter(fd, std::move(path), std::move(meta), compress, level, frame_size, header_size));
}

BigObjectWriter::BigObjectWriter(int fd, std::string path, EntryMeta meta, bool compress, int level,
                                 uint32_t frame_size, size_t header_size)
    : fd_(fd),
      path_(std::move(path)),
      meta_(std::move(meta)),
      compress_(compress),
      frame_size_(frame_size),
      header_size_(header_size),
      encoder_(level),
      table_(/*checksums=*/!compress),
      file_size_(header_size) {}

BigObjectWriter::~BigObjectWriter() {
  ::close(fd_);
  if (!released_) ::unlink(path_.c_str());
}

Status BigObjectWriter::Write(std::string_view data) {
  while (!data.empty()) {
    size_t take = std::min<size_t>(data.size(), frame_size_ - pending_.size());
    pending_.append(data.substr(0, take));
    data.remove_prefix(take);
    logical_ += take;
    if (pending_.size() == frame_size_) FERRY_RETURN_IF_ERROR(FlushFrame());
  }
  return Status::Ok();
}

Status BigObjectWriter::FlushFrame() {
  SeekTable::Frame f;
  f.logical = static_cast<uint32_t>(pending_.size());
  std::string stored;
  if (compress_) {
    auto start = std::chrono::steady_clock::now();
    FERRY_RETURN_IF_ERROR(encoder_.Begin(pending_.size()));
    FERRY_RETURN_IF_ERROR(encoder_.Update(pending_, &stored));
    FERRY_RETURN_IF_ERROR(encoder_.Finish(&stored));
    encode_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
                      .count();
  } else {
    f.checksum = Sum4(pending_);
    stored.swap(pending_);
  }
  f.stored = static_cast<uint32_t>(stored.size());
  FERRY_RETURN_IF_ERROR(PwriteFull(fd_, stored, file_size_, "big object write"));
  file_size_ += stored.size();
  table_.Add(f);
  pending_.clear();
  return Status::Ok();
}

Status BigObjectWriter::Finish(bool sync) {
  if (!pending_.empty()) FERRY_RETURN_IF_ERROR(FlushFrame());
  std::string table = table_.Encode();
  FERRY_RETURN_IF_ERROR(PwriteFull(fd_, table, file_size_, "big object table"));
  file_size_ += table.size();
  meta_.encoding = compress_ ? StoredEncoding::kZstd : StoredEncoding::kIdentity;
  meta_.logical_length = logical_;
  meta_.stored_length = table_.stored_length();
  Header h{compress_, frame_size_, table_.stored_length(), table.size(), FormatSum8(table), meta_};
  FERRY_RETURN_IF_ERROR(PwriteFull(fd_, EncodeHeader(h, header_size_), 0, "big object header"));
  if (sync) FERRY_RETURN_IF_ERROR(DataSync(fd_));
  return Status::Ok();
}

Result<std::shared_ptr<const BigObject>> BigObject::Open(const std::string& path) {
  local::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, "open " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  auto read = [&](uint64_t offset, uint64_t n) -> Result<std::string> {
    if (offset > size || n > size - offset) return BigObjectDamaged(path, "a part runs past the end of the file");
    std::string out(n, '\0');
    FERRY_RETURN_IF_ERROR(local::ReadFull(fd.get(), out.data(), n, offset, path));
    return out;
  };
  FERRY_ASSIGN_OR_RETURN(std::string frame, read(0, 8));
  if (LoadFixed(frame.data(), 4) != kHeaderMagic) return BigObjectDamaged(path, "no header frame");
  uint64_t content = LoadFixed(frame.data() + 4, 4);
  FERRY_ASSIGN_OR_RETURN(std::string c, read(8, content));
  FERRY_ASSIGN_OR_RETURN(Header h, DecodeHeader(c, path));
  const uint64_t body_at = 8 + content;
  if (h.table_length > size || body_at + h.body_length != size - h.table_length) {
    return BigObjectDamaged(path, "lengths disagree with the file's size");
  }
  FERRY_ASSIGN_OR_RETURN(std::string t, read(size - h.table_length, h.table_length));
  if (FormatSum8(t) != h.table_sum) return BigObjectDamaged(path, "seek table checksum mismatch");
  auto table = SeekTable::Decode(t);
  if (!table.ok()) return BigObjectDamaged(path, table.status().message());
  const EntryMeta& m = h.meta;
  if (table->stored_length() != h.body_length || table->logical_length() != m.logical_length ||
      m.stored_length != h.body_length || table->checksums() == h.zstd ||
      (m.encoding == StoredEncoding::kZstd) != h.zstd) {
    return BigObjectDamaged(path, "seek table disagrees with the header");
  }
  return std::shared_ptr<const BigObject>(
      new BigObject(fd.Release(), std::move(h.meta), std::move(table).value(), body_at, size));
}

BigObject::~BigObject() { ::close(fd_); }

uint64_t BigObject::Allocated() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

Result<std::string> BigObject::ReadStored(uint64_t offset, uint64_t n) const {
  uint64_t body = table_.stored_length();
  if (offset >= body) return std::string();
  n = std::min(n, body - offset);
  std::string out(n, '\0');
  FERRY_ASSIGN_OR_RETURN(uint64_t got, PreadUpTo(fd_, out.data(), n, body_offset_ + offset, "big object read"));
  if (got != n) return Status::Corruption("big object: the file ends inside its body");
  return out;
}

Result<std::string> BigObject::ReadFrame(size_t i) const {
  const SeekTable::Frame& f = table_.frame(i);
  FERRY_ASSIGN_OR_RETURN(std::string stored, ReadStored(table_.stored_at(i), f.stored));
  if (meta_.encoding == StoredEncoding::kIdentity) {
    if (Sum4(stored) != f.checksum) return Status::Corruption("big object: block " + std::to_string(i) + " checksum");
    return stored;
  }
  auto plain = codec::ZstdDecompress(stored);
  if (!plain.ok()) return plain.status();
  if (plain->size() != f.logical) {
    return Status::Corruption("big object: frame " + std::to_string(i) + " decodes to the wrong length");
  }
  return plain;
}

}  // namespace ferry::cache
