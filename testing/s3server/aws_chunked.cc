#include "aws_chunked.h"

#include <algorithm>
#include <charconv>

namespace ferry::s3server {
namespace {

constexpr size_t kMaxLine = 4096;

Status Malformed(std::string_view what) {
  return Status::InvalidArgument("malformed aws-chunked body: " + std::string(what));
}

}  // namespace

Status AwsChunkedDecoder::EndSizeLine() {
  std::string_view line = line_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view hex = line.substr(0, line.find(';'));
  uint64_t size = 0;
  auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), size, 16);
  if (hex.empty() || ec != std::errc() || ptr != hex.data() + hex.size()) {
    return Malformed("bad chunk size line");
  }
  line_.clear();
  remaining_ = size;
  state_ = size == 0 ? State::kTrailer : State::kData;
  return Status::Ok();
}

Status AwsChunkedDecoder::Feed(std::string_view in, const Emit& emit) {
  while (!in.empty()) {
    switch (state_) {
      case State::kSizeLine:
      case State::kTrailer: {
        size_t nl = in.find('\n');
        size_t take = nl == std::string_view::npos ? in.size() : nl;
        line_.append(in.substr(0, take));
        if (line_.size() > kMaxLine) return Malformed("line too long");
        if (nl == std::string_view::npos) return Status::Ok();
        in.remove_prefix(nl + 1);
        if (state_ == State::kSizeLine) {
          FERRY_RETURN_IF_ERROR(EndSizeLine());
        } else {
          if (!line_.empty() && line_.back() == '\r') line_.pop_back();
          if (line_.empty()) {
            state_ = State::kDone;
          } else {
            trailers_ += line_;
            trailers_ += '\n';
          }
          line_.clear();
        }
        break;
      }
      case State::kData: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, in.size()));
        FERRY_RETURN_IF_ERROR(emit(in.substr(0, take)));
        in.remove_prefix(take);
        remaining_ -= take;
        if (remaining_ == 0) state_ = State::kDataCr;
        break;
      }
      case State::kDataCr:
        if (in.front() != '\r') return Malformed("missing CR after chunk data");
        in.remove_prefix(1);
        state_ = State::kDataLf;
        break;
      case State::kDataLf:
        if (in.front() != '\n') return Malformed("missing LF after chunk data");
        in.remove_prefix(1);
        state_ = State::kSizeLine;
        break;
      case State::kDone:
        return Malformed("data after the final chunk");
    }
  }
  return Status::Ok();
}

}  // namespace ferry::s3server
