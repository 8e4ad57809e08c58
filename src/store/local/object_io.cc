#include "store/local/object_io.h"

#include <algorithm>
#include <memory>

#include "store/local/fs_util.h"

namespace ferry::local {
namespace {

class DiscardSink : public ByteSink {
 public:
  Status Write(std::string_view) override { return Status::Ok(); }
};

}  // namespace

Result<std::string> StreamBodyToFile(ByteSource& body, uint64_t size, int fd,
                                     std::string_view path) {
  std::unique_ptr<char[]> buf(new char[kIoBufferBytes]);
  StreamingDigest md5(StreamingDigest::Kind::kMd5);
  uint64_t left = size;
  while (left > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, kIoBufferBytes));
    FERRY_ASSIGN_OR_RETURN(size_t n, body.Read(buf.get(), want));
    if (n == 0) {
      return Status::Corruption("body ended after " + std::to_string(size - left) + " of " +
                                std::to_string(size) + " bytes");
    }
    std::string_view chunk(buf.get(), n);
    md5.Update(chunk);
    FERRY_RETURN_IF_ERROR(WriteAll(fd, chunk, path));
    left -= n;
  }
  char extra;
  FERRY_ASSIGN_OR_RETURN(size_t more, body.Read(&extra, 1));
  if (more != 0) {
    return Status::InvalidArgument("body is longer than the declared " + std::to_string(size) +
                                   " bytes");
  }
  return md5.Finish();
}

Status CheckContentMd5(std::string_view content_md5, std::string_view raw_md5,
                       std::string_view key) {
  if (content_md5.empty()) return Status::Ok();
  std::string expected;
  if (!Base64Decode(content_md5, &expected) || expected.size() != 16) {
    return Status::InvalidArgument("malformed Content-MD5 '" + std::string(content_md5) +
                                   "' for '" + std::string(key) + "'");
  }
  if (expected != raw_md5) {
    return Status::Corruption("Content-MD5 mismatch for '" + std::string(key) + "': sent " +
                              std::string(content_md5) + ", body has " + Base64Encode(raw_md5));
  }
  return Status::Ok();
}

Status StreamFileToSink(int fd, uint64_t offset, uint64_t length, ByteSink& sink,
                        StreamingDigest* md5, std::string_view path) {
  std::unique_ptr<char[]> buf(
      new char[std::min<uint64_t>(std::max<uint64_t>(length, 1), kIoBufferBytes)]);
  while (length > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(length, kIoBufferBytes));
    FERRY_RETURN_IF_ERROR(ReadFull(fd, buf.get(), want, offset, path));
    std::string_view chunk(buf.get(), want);
    if (md5 != nullptr) md5->Update(chunk);
    FERRY_RETURN_IF_ERROR(sink.Write(chunk));
    offset += want;
    length -= want;
  }
  return Status::Ok();
}

Result<std::string> Md5HexOfFile(int fd, uint64_t size, std::string_view path) {
  StreamingDigest md5(StreamingDigest::Kind::kMd5);
  DiscardSink discard;
  FERRY_RETURN_IF_ERROR(StreamFileToSink(fd, 0, size, discard, &md5, path));
  std::string raw = md5.Finish();
  return HexLower(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
}

}  // namespace ferry::local
