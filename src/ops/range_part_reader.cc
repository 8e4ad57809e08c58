#include "ops/range_part_reader.h"

#include "crypto/digest.h"
#include "ops/buffer_sink.h"

namespace ferry {

Status RangePartReader::Read(const PartSpan& part, const PartSend& send) {
  BufferSink buf(bwlimit_, buffers_, static_cast<size_t>(part.size), /*hash_md5=*/true);
  GetOptions g;
  g.range = ByteRange{part.offset, part.size};
  g.if_match = etag_;
  FERRY_RETURN_IF_ERROR(src_.Get(key_, g, buf).status());
  if (buf.data().size() != part.size) {
    return Status::Corruption("short range from the source");
  }
  std::string md5 = Base64Encode(buf.Md5Raw());
  ViewSource body(buf.data());
  return send(body, md5);
}

}  // namespace ferry
