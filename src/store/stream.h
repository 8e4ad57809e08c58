#pragma once
// Byte streams for object bodies. A source is pulled by the store that writes
// an object; a sink is pushed to by the store that reads one.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry {

struct ObjectInfo;

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `cap` bytes into `buf`; 0 means end of stream.
  virtual Result<size_t> Read(char* buf, size_t cap) = 0;
  // Starts again from the first byte, so a failed upload can be retried.
  // Sources that cannot (a pipe) return kUnsupported.
  virtual Status Rewind() = 0;
  // Optional: every byte from the start to the end when the source holds
  // them in memory, so a writer can send them without copying. Does not
  // move the read position. nullopt: use Read().
  virtual std::optional<std::string_view> Contiguous() const { return std::nullopt; }
  // Whether a Read may wait on something other than this process's disk or
  // memory (a client's body still arriving): an event loop must not call
  // it, but hand it to a thread that may wait (http::Client does).
  virtual bool MayWait() const { return false; }
};

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Consumes the next bytes of the body. An error aborts the transfer.
  virtual Status Write(std::string_view data) = 0;
  // Optional zero-copy path for a sink that keeps the body in its own
  // memory: lends the space for the next `n` bytes (nullptr: it does not,
  // or they would not fit; use Write). The reader fills that space in
  // order and passes each filled piece to Commit() (in all at most `n`
  // bytes) instead of Write(); no other call comes between. Commit has
  // Write's checks and errors, and leaves the committed bytes where they
  // were lent until the next call (a tap may read them after it).
  virtual char* Lend(size_t /*n*/) { return nullptr; }
  virtual Status Commit(size_t /*n*/) {
    return Status(ErrorCode::kInternal, "this sink lends no buffer");
  }
  // Optional: the object's info (size, ETag, headers) as soon as the store
  // knows it, before the first byte, at most once per Get; a sink that
  // answers a client while the body arrives (the gateway) starts there.
  // Stores that learn the info only at the end (a local file whose ETag is
  // hashed as it is read, Azure) do not call it. An error aborts the
  // transfer as Write's do.
  virtual Status Start(const ObjectInfo& /*info*/) { return Status::Ok(); }
};

// A source over bytes held in memory (tests, small bodies).
class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string data) : data_(std::move(data)) {}
  Result<size_t> Read(char* buf, size_t cap) override;
  Status Rewind() override {
    pos_ = 0;
    return Status::Ok();
  }
  std::optional<std::string_view> Contiguous() const override { return std::string_view(data_); }

 private:
  std::string data_;
  size_t pos_ = 0;
};

// A source over bytes held by the caller, which must outlive it.
class ViewSource : public ByteSource {
 public:
  explicit ViewSource(std::string_view data) : data_(data) {}
  Result<size_t> Read(char* buf, size_t cap) override;
  Status Rewind() override {
    pos_ = 0;
    return Status::Ok();
  }
  std::optional<std::string_view> Contiguous() const override { return data_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// A sink that collects a body in a string (small objects and parts, chunks,
// XML). It lends its own memory, so a sized body is read from the socket
// straight into the string; data() holds exactly the bytes committed.
class StringSink : public ByteSink {
 public:
  Status Write(std::string_view data) override {
    Settle();
    data_.append(data);
    return Status::Ok();
  }
  char* Lend(size_t n) override {
    Settle();
    filled_ = data_.size();
    lent_ = true;
    data_.resize(filled_ + n);
    return data_.data() + filled_;
  }
  Status Commit(size_t n) override {
    filled_ += n;
    return Status::Ok();
  }
  const std::string& data() const {
    Settle();
    return data_;
  }
  std::string& data() {
    Settle();
    return data_;
  }

 private:
  // Drops what a lend left unfilled (a body cut short).
  void Settle() const {
    if (!lent_) return;
    data_.resize(filled_);
    lent_ = false;
  }
  mutable std::string data_;
  mutable bool lent_ = false;
  size_t filled_ = 0;  // while lent_: the bytes of data_ committed
};

// A source reading [offset, offset + length) of an open file with pread, so
// several can share one descriptor (parallel multipart parts). Does not own fd.
class FileRangeSource : public ByteSource {
 public:
  FileRangeSource(int fd, uint64_t offset, uint64_t length)
      : fd_(fd), offset_(offset), length_(length) {}
  Result<size_t> Read(char* buf, size_t cap) override;
  Status Rewind() override {
    pos_ = 0;
    return Status::Ok();
  }

 private:
  int fd_;
  uint64_t offset_;
  uint64_t length_;
  uint64_t pos_ = 0;
};

}  // namespace ferry
