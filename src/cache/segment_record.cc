#include "cache/segment_record.h"

#include <cstring>

#include "cache/bytes.h"
#include "cache/checksum.h"
#include "cache/meta_codec.h"

namespace ferry::cache {
namespace {

constexpr std::string_view kRecordMagic = "FRC1";
constexpr std::string_view kRefreshMagic = "FRR1";
constexpr size_t kRefreshBody = 8;

// The head checksum: over bytes 8..15 and the metadata, and the kind.
uint64_t HeadSum(std::string_view lengths, std::string_view meta, bool refresh) {
  if (!refresh) return FormatSum8(lengths, meta);
  return FormatSum8(std::string(lengths) + "refresh", meta);
}

Status RecordDamaged(const std::string& what) { return Status::Corruption("segment record: " + what); }

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
  out.append(kRecordMagic);
  out.push_back(kRecordLive);
  out.append(3, '\0');
  PutU32(&out, static_cast<uint32_t>(m.size()));
  PutU32(&out, static_cast<uint32_t>(body.size()));
  PutU64(&out, FormatSum8(std::string_view(out).substr(8, 8), m));
  out.append(m);
  out.append(body);
  PutU64(&out, FormatSum8(body));
  return out;
}

Result<std::string> EncodeRefreshRecord(const EntryMeta& meta, uint64_t body_sum) {
  std::string m = EncodeMeta(meta);
  if (m.size() > kMaxRecordMeta) return Status::InvalidArgument("entry metadata over 1 MiB");
  std::string ref;
  PutU64(&ref, body_sum);
  std::string out;
  out.reserve(kRecordHeadSize + m.size() + kRefreshBody + kRecordTailSize);
  out.append(kRefreshMagic);
  out.push_back(kRecordLive);
  out.append(3, '\0');
  PutU32(&out, static_cast<uint32_t>(m.size()));
  PutU32(&out, static_cast<uint32_t>(kRefreshBody));
  PutU64(&out, HeadSum(std::string_view(out).substr(8, 8), m, true));
  out.append(m);
  out.append(ref);
  PutU64(&out, FormatSum8(ref));
  return out;
}

Result<RecordHead> ParseRecordHead(std::string_view bytes) {
  if (bytes.size() < kRecordHeadSize) return RecordDamaged("cut short in its head");
  const bool refresh = bytes.substr(0, 4) == kRefreshMagic;
  if (bytes.substr(0, 4) != kRecordMagic && !refresh) return RecordDamaged("bad magic");
  if (bytes[5] != 0 || bytes[6] != 0 || bytes[7] != 0) return RecordDamaged("nonzero padding");
  RecordHead h;
  h.live = bytes[kRecordStateOffset] == kRecordLive;
  h.refresh = refresh;
  h.meta_length = static_cast<uint32_t>(LoadFixed(bytes.data() + 8, 4));
  h.body_length = static_cast<uint32_t>(LoadFixed(bytes.data() + 12, 4));
  if (h.meta_length > kMaxRecordMeta) return RecordDamaged("metadata length " + std::to_string(h.meta_length));
  if (h.refresh && h.body_length != kRefreshBody) return RecordDamaged("a refresh record's reference is not 8 bytes");
  return h;
}

Result<EntryMeta> DecodeRecordMeta(const RecordHead& h, std::string_view prefix) {
  if (prefix.size() < kRecordHeadSize + h.meta_length) return RecordDamaged("cut short in its metadata");
  std::string_view m = prefix.substr(kRecordHeadSize, h.meta_length);
  if (LoadFixed(prefix.data() + 16, 8) != HeadSum(prefix.substr(8, 8), m, h.refresh)) {
    return RecordDamaged("head checksum mismatch");
  }
  auto meta = DecodeMeta(m);
  if (!meta.ok()) return RecordDamaged(meta.status().message());
  if (!h.refresh && meta->stored_length != h.body_length) return RecordDamaged("body length disagrees with the metadata");
  if (meta->encoding == StoredEncoding::kIdentity && meta->logical_length != meta->stored_length) {
    return RecordDamaged("an unencoded body must be its logical length");
  }
  return meta;
}

Result<DecodedRecord> DecodeRecord(std::string_view record) {
  FERRY_ASSIGN_OR_RETURN(RecordHead h, ParseRecordHead(record));
  if (record.size() != h.size()) {
    return RecordDamaged("is " + std::to_string(record.size()) + " bytes, its head says " + std::to_string(h.size()));
  }
  FERRY_ASSIGN_OR_RETURN(EntryMeta meta, DecodeRecordMeta(h, record));
  std::string_view body = record.substr(kRecordHeadSize + h.meta_length, h.body_length);
  const uint64_t sum = LoadFixed(record.data() + record.size() - kRecordTailSize, 8);
  if (sum != FormatSum8(body)) return RecordDamaged("body checksum mismatch");
  return DecodedRecord{h, std::move(meta), body, sum, h.refresh ? LoadFixed(body.data(), 8) : 0};
}

}  // namespace ferry::cache
