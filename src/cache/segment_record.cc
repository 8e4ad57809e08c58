#include "cache/segment_record.h"

#include <cstring>

#include "cache/bytes.h"
#include "cache/meta_codec.h"
#include "crypto/digest.h"

namespace ferry::cache {
namespace {

constexpr std::string_view kMagic = "FRC1";

Status Damaged(const std::string& what) { return Status::Corruption("segment record: " + what); }

uint64_t Sum8(std::string_view a, std::string_view b = {}) {
  StreamingDigest d(StreamingDigest::Kind::kSha256);
  d.Update(a);
  d.Update(b);
  std::string raw = d.Finish();
  return LoadFixed(raw.data(), 8);
}

}  // namespace

Result<std::string> EncodeRecord(EntryMeta meta, std::string_view body) {
  if (body.size() > kMaxRecordBody) {
    return Status::InvalidArgument("a body of " + std::to_string(body.size()) + " bytes does not fit a record");
  }
  meta.stored_length = body.size();
  std::string m = EncodeMeta(meta);
  if (m.size() > kMaxRecordMeta) return Status::InvalidArgument("entry metadata over 1 MiB");
  std::string out;
  out.reserve(kRecordHeadSize + m.size() + body.size() + kRecordTailSize);
  out.append(kMagic);
  out.push_back(kRecordLive);
  out.append(3, '\0');
  PutU32(&out, static_cast<uint32_t>(m.size()));
  PutU32(&out, static_cast<uint32_t>(body.size()));
  PutU64(&out, Sum8(std::string_view(out).substr(8, 8), m));
  out.append(m);
  out.append(body);
  PutU64(&out, Sum8(body));
  return out;
}

Result<RecordHead> ParseRecordHead(std::string_view bytes) {
  if (bytes.size() < kRecordHeadSize) return Damaged("cut short in its head");
  if (bytes.substr(0, 4) != kMagic) return Damaged("bad magic");
  if (bytes[5] != 0 || bytes[6] != 0 || bytes[7] != 0) return Damaged("nonzero padding");
  RecordHead h;
  h.live = bytes[kRecordStateOffset] == kRecordLive;
  h.meta_length = static_cast<uint32_t>(LoadFixed(bytes.data() + 8, 4));
  h.body_length = static_cast<uint32_t>(LoadFixed(bytes.data() + 12, 4));
  if (h.meta_length > kMaxRecordMeta) return Damaged("metadata length " + std::to_string(h.meta_length));
  return h;
}

Result<EntryMeta> DecodeRecordMeta(const RecordHead& h, std::string_view prefix) {
  if (prefix.size() < kRecordHeadSize + h.meta_length) return Damaged("cut short in its metadata");
  std::string_view m = prefix.substr(kRecordHeadSize, h.meta_length);
  if (LoadFixed(prefix.data() + 16, 8) != Sum8(prefix.substr(8, 8), m)) return Damaged("head checksum mismatch");
  auto meta = DecodeMeta(m);
  if (!meta.ok()) return Damaged(meta.status().message());
  if (meta->stored_length != h.body_length) return Damaged("body length disagrees with the metadata");
  if (meta->encoding == StoredEncoding::kIdentity && meta->logical_length != h.body_length) {
    return Damaged("an unencoded body must be its logical length");
  }
  return meta;
}

Result<DecodedRecord> DecodeRecord(std::string_view record) {
  FERRY_ASSIGN_OR_RETURN(RecordHead h, ParseRecordHead(record));
  if (record.size() != h.size()) {
    return Damaged("is " + std::to_string(record.size()) + " bytes, its head says " + std::to_string(h.size()));
  }
  FERRY_ASSIGN_OR_RETURN(EntryMeta meta, DecodeRecordMeta(h, record));
  std::string_view body = record.substr(kRecordHeadSize + h.meta_length, h.body_length);
  if (LoadFixed(record.data() + record.size() - kRecordTailSize, 8) != Sum8(body)) {
    return Damaged("body checksum mismatch");
  }
  return DecodedRecord{h, std::move(meta), body};
}

}  // namespace ferry::cache
