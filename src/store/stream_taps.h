#pragma once
// Streams that pass another stream's bytes through and watch them on the
// way: how much of a body reached the caller's sink (a retried GET resumes
// after it), the MD5 and length of what a source gave (an upload is checked
// against the service's hash without reading the body twice), and the
// SHA-256 of what a sink took (a chunk checked against its name). The
// inner stream must outlive the tap. One transfer at a time.

#include <cstdint>
#include <string>

#include "crypto/digest.h"
#include "store/stream.h"

namespace ferry {

// Counts the bytes the inner sink accepted, through Write and Commit alike;
// lends the inner sink's memory when it has some.
class CountingSink : public ByteSink {
 public:
  explicit CountingSink(ByteSink& inner) : inner_(inner) {}
  Status Write(std::string_view data) override;
  char* Lend(size_t n) override { return inner_.Lend(n); }
  Status Commit(size_t n) override;
  Status Start(const ObjectInfo& info) override { return inner_.Start(info); }
  uint64_t count() const { return count_; }

 private:
  ByteSink& inner_;
  uint64_t count_ = 0;
};

// Hashes (SHA-256) what the inner sink accepted, through Write and Commit
// alike, as it arrives: a body checked against its content address is
// hashed while the network delivers it, not after its last byte. Lends the
// inner sink's memory when it has some, and hashes committed bytes where
// they were lent, after the inner Commit (ByteSink's contract keeps them
// there until the next call).
class Sha256Sink : public ByteSink {
 public:
  explicit Sha256Sink(ByteSink& inner) : inner_(inner), sha_(StreamingDigest::Kind::kSha256) {}
  Status Write(std::string_view data) override;
  char* Lend(size_t n) override;
  Status Commit(size_t n) override;
  Status Start(const ObjectInfo& info) override { return inner_.Start(info); }
  // The lower-case hex SHA-256 of everything accepted. Resets the hash:
  // call it once, after the transfer.
  std::string HexDigest() { return HexLower(sha_.Finish()); }

 private:
  ByteSink& inner_;
  StreamingDigest sha_;
  const char* lent_ = nullptr;  // the current lend, and how much of it is committed
  size_t lent_committed_ = 0;
};

// Hashes (MD5) and counts what it reads from the inner source. Rewind starts
// both again with the inner source. Never Contiguous(): every byte is read,
// so every byte is hashed.
class Md5Source : public ByteSource {
 public:
  explicit Md5Source(ByteSource& inner) : inner_(inner), md5_(StreamingDigest::Kind::kMd5) {}
  Result<size_t> Read(char* buf, size_t cap) override;
  Status Rewind() override;
  bool MayWait() const override { return inner_.MayWait(); }
  // The lower-case hex MD5 of what was read since the start or the last
  // Rewind. Resets the hash: call it once, after the last Read.
  std::string HexDigest() { return HexLower(md5_.Finish()); }
  // Bytes read since the start or the last Rewind.
  uint64_t count() const { return count_; }

 private:
  ByteSource& inner_;
  StreamingDigest md5_;
  uint64_t count_ = 0;
};

}  // namespace ferry
