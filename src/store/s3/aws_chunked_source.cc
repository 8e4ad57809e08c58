#include "store/s3/aws_chunked_source.h"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <cstring>

namespace ferry {
namespace {

size_t HexDigits(uint64_t n) { return fmt::format("{:x}", n).size(); }

std::string TrailerLine(ChecksumAlgorithm a, std::string_view value) {
  return std::string(ChecksumHeaderName(a)) + ":" + std::string(value) + "\r\n";
}

}  // namespace

AwsChunkedSource::AwsChunkedSource(ByteSource& inner, uint64_t size, ChecksumAlgorithm algorithm)
    : inner_(inner), size_(size), algorithm_(algorithm), sum_(std::in_place, algorithm) {}

uint64_t AwsChunkedSource::EncodedLength(uint64_t size, ChecksumAlgorithm algorithm) {
  const uint64_t full = size / kChunk;
  const uint64_t rest = size % kChunk;
  uint64_t n = full * (HexDigits(kChunk) + 2 + kChunk + 2);
  if (rest > 0) n += HexDigits(rest) + 2 + rest + 2;
  const std::string empty_sum = Checksummer(algorithm).FinishBase64();  // fixed width
  return n + 3 + TrailerLine(algorithm, empty_sum).size() + 2;
}

void AwsChunkedSource::AddHeaders(uint64_t size, ChecksumAlgorithm algorithm,
                                  std::vector<std::pair<std::string, std::string>>* headers) {
  std::string encoding = "aws-chunked";
  for (auto it = headers->begin(); it != headers->end(); ++it) {
    if (it->first.size() == 16 && strncasecmp(it->first.c_str(), "content-encoding", 16) == 0) {
      encoding += "," + it->second;
      headers->erase(it);
      break;
    }
  }
  headers->emplace_back("Content-Encoding", encoding);
  headers->emplace_back("x-amz-decoded-content-length", std::to_string(size));
  headers->emplace_back("x-amz-trailer", std::string(ChecksumHeaderName(algorithm)));
}

Status AwsChunkedSource::Refill() {
  out_.clear();
  at_ = 0;
  const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, size_ - sent_));
  if (want == 0) {
    out_ = "0\r\n" + TrailerLine(algorithm_, sum_->FinishBase64()) + "\r\n";
    ended_ = true;
    return Status::Ok();
  }
  out_ = fmt::format("{:x}\r\n", want);
  const size_t head = out_.size();
  out_.resize(head + want);
  size_t got = 0;
  while (got < want) {
    FERRY_ASSIGN_OR_RETURN(size_t n, inner_.Read(out_.data() + head + got, want - got));
    if (n == 0) return Status::Corruption("body ended before its length");
    got += n;
  }
  sum_->Update(std::string_view(out_).substr(head, want));
  sent_ += want;
  out_ += "\r\n";
  return Status::Ok();
}

Result<size_t> AwsChunkedSource::Read(char* buf, size_t cap) {
  if (at_ == out_.size()) {
    if (ended_) return size_t{0};
    FERRY_RETURN_IF_ERROR(Refill());
  }
  const size_t n = std::min(cap, out_.size() - at_);
  std::memcpy(buf, out_.data() + at_, n);
  at_ += n;
  return n;
}

Status AwsChunkedSource::Rewind() {
  FERRY_RETURN_IF_ERROR(inner_.Rewind());
  sum_.emplace(algorithm_);
  sent_ = 0;
  ended_ = false;
  out_.clear();
  at_ = 0;
  return Status::Ok();
}

}  // namespace ferry
