#include "nbd/protocol.h"

namespace ferry::nbd {

void Put16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}
void Put32(std::string* out, uint32_t v) {
  Put16(out, static_cast<uint16_t>(v >> 16));
  Put16(out, static_cast<uint16_t>(v));
}
void Put64(std::string* out, uint64_t v) {
  Put32(out, static_cast<uint32_t>(v >> 32));
  Put32(out, static_cast<uint32_t>(v));
}
uint16_t Get16(const unsigned char* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t Get32(const unsigned char* p) {
  return (static_cast<uint32_t>(Get16(p)) << 16) | Get16(p + 2);
}
uint64_t Get64(const unsigned char* p) { return (static_cast<uint64_t>(Get32(p)) << 32) | Get32(p + 4); }

namespace {
const unsigned char* U(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }
}  // namespace

std::string EncodeGreeting() {
  std::string out;
  Put64(&out, kNbdMagic);
  Put64(&out, kOptMagic);
  Put16(&out, kFlagFixedNewstyle | kFlagNoZeroes);
  return out;
}

Result<OptionHeader> DecodeOptionHeader(std::string_view b) {
  if (b.size() != kOptionHeaderSize) return Status(ErrorCode::kProtocol, "short option header");
  if (Get64(U(b)) != kOptMagic) return Status(ErrorCode::kProtocol, "bad option magic");
  OptionHeader h{Get32(U(b) + 8), Get32(U(b) + 12)};
  if (h.length > kMaxOptionData) {
    return Status(ErrorCode::kProtocol, "option data of " + std::to_string(h.length) + " bytes");
  }
  return h;
}

std::string EncodeOptionReply(uint32_t option, uint32_t type, std::string_view data) {
  std::string out;
  Put64(&out, kOptReplyMagic);
  Put32(&out, option);
  Put32(&out, type);
  Put32(&out, static_cast<uint32_t>(data.size()));
  out.append(data);
  return out;
}

std::string EncodeServerName(std::string_view name) {
  std::string out;
  Put32(&out, static_cast<uint32_t>(name.size()));
  out.append(name);
  return out;
}

std::string EncodeInfoExport(uint64_t size, uint16_t tx_flags) {
  std::string out;
  Put16(&out, kInfoExport);
  Put64(&out, size);
  Put16(&out, tx_flags);
  return out;
}

std::string EncodeInfoBlockSize(uint32_t minimum, uint32_t preferred, uint32_t maximum) {
  std::string out;
  Put16(&out, kInfoBlockSize);
  Put32(&out, minimum);
  Put32(&out, preferred);
  Put32(&out, maximum);
  return out;
}

std::string EncodeExportNameReply(uint64_t size, uint16_t tx_flags, bool no_zeroes) {
  std::string out;
  Put64(&out, size);
  Put16(&out, tx_flags);
  if (!no_zeroes) out.append(124, '\0');
  return out;
}

Result<InfoRequest> DecodeInfoRequest(std::string_view d) {
  if (d.size() < 6) return Status::InvalidArgument("INFO/GO data too short");
  uint32_t n = Get32(U(d));
  if (d.size() < 4 + static_cast<uint64_t>(n) + 2) return Status::InvalidArgument("INFO/GO name overruns");
  InfoRequest r;
  r.name.assign(d.substr(4, n));
  uint16_t count = Get16(U(d) + 4 + n);
  if (d.size() != 4 + n + 2 + 2 * static_cast<uint64_t>(count)) {
    return Status::InvalidArgument("INFO/GO request count does not match its length");
  }
  for (uint16_t i = 0; i < count; ++i) r.infos.push_back(Get16(U(d) + 4 + n + 2 + 2 * i));
  return r;
}

Result<MetaContextRequest> DecodeMetaContextRequest(std::string_view d) {
  // Each length is checked against what remains before it is used.
  auto take_string = [&d](std::string* out) -> bool {
    if (d.size() < 4) return false;
    uint32_t n = Get32(U(d));
    if (d.size() - 4 < n) return false;
    out->assign(d.substr(4, n));
    d.remove_prefix(4 + static_cast<size_t>(n));
    return true;
  };
  MetaContextRequest r;
  if (!take_string(&r.name) || d.size() < 4) return Status::InvalidArgument("META_CONTEXT data malformed");
  uint32_t count = Get32(U(d));
  d.remove_prefix(4);
  if (count > d.size() / 4) return Status::InvalidArgument("META_CONTEXT query count overruns its data");
  for (uint32_t i = 0; i < count; ++i) {
    std::string q;
    if (!take_string(&q)) return Status::InvalidArgument("META_CONTEXT query overruns its data");
    r.queries.push_back(std::move(q));
  }
  if (!d.empty()) return Status::InvalidArgument("META_CONTEXT data has trailing bytes");
  return r;
}

std::vector<std::string> MatchMetaContexts(const std::vector<std::string>& queries, bool list) {
  const std::string ours(kBaseAllocation);
  if (list && queries.empty()) return {ours};
  for (const auto& q : queries) {
    if (q == ours || (list && q == "base:")) return {ours};
  }
  return {};
}

std::string EncodeMetaContext(uint32_t id, std::string_view name) {
  std::string out;
  Put32(&out, id);
  out.append(name);
  return out;
}

Result<Request> DecodeRequest(std::string_view b) {
  if (b.size() != kRequestSize) return Status(ErrorCode::kProtocol, "short request");
  if (Get32(U(b)) != kRequestMagic) return Status(ErrorCode::kProtocol, "bad request magic");
  Request r;
  r.flags = Get16(U(b) + 4);
  r.type = Get16(U(b) + 6);
  r.handle = Get64(U(b) + 8);
  r.offset = Get64(U(b) + 16);
  r.length = Get32(U(b) + 24);
  return r;
}

std::string EncodeRequest(const Request& r) {
  std::string out;
  Put32(&out, kRequestMagic);
  Put16(&out, r.flags);
  Put16(&out, r.type);
  Put64(&out, r.handle);
  Put64(&out, r.offset);
  Put32(&out, r.length);
  return out;
}

std::string EncodeSimpleReply(uint32_t error, uint64_t handle) {
  std::string out;
  Put32(&out, kSimpleReplyMagic);
  Put32(&out, error);
  Put64(&out, handle);
  return out;
}

std::string EncodeStructuredHeader(uint16_t flags, uint16_t type, uint64_t handle, uint32_t length) {
  std::string out;
  Put32(&out, kStructuredReplyMagic);
  Put16(&out, flags);
  Put16(&out, type);
  Put64(&out, handle);
  Put32(&out, length);
  return out;
}

std::string EncodeOffsetDataHeader(uint16_t flags, uint64_t handle, uint64_t offset, uint32_t data_length) {
  std::string out = EncodeStructuredHeader(flags, kReplyOffsetData, handle, 8 + data_length);
  Put64(&out, offset);
  return out;
}

std::string EncodeOffsetHole(uint16_t flags, uint64_t handle, uint64_t offset, uint32_t length) {
  std::string out = EncodeStructuredHeader(flags, kReplyOffsetHole, handle, 12);
  Put64(&out, offset);
  Put32(&out, length);
  return out;
}

std::string EncodeStructuredError(uint64_t handle, uint32_t error, std::string_view message) {
  message = message.substr(0, 4096);
  std::string out =
      EncodeStructuredHeader(kReplyFlagDone, kReplyError, handle, static_cast<uint32_t>(6 + message.size()));
  Put32(&out, error);
  Put16(&out, static_cast<uint16_t>(message.size()));
  out.append(message);
  return out;
}

std::string EncodeStructuredDone(uint64_t handle) {
  return EncodeStructuredHeader(kReplyFlagDone, kReplyNone, handle, 0);
}

std::string EncodeBlockStatus(uint64_t handle, uint32_t id, const std::vector<BlockStatusDescriptor>& extents) {
  std::string out = EncodeStructuredHeader(kReplyFlagDone, kReplyBlockStatus, handle,
                                           static_cast<uint32_t>(4 + 8 * extents.size()));
  Put32(&out, id);
  for (const auto& e : extents) {
    Put32(&out, e.length);
    Put32(&out, e.flags);
  }
  return out;
}

namespace {
// The command flags a request of `type` may carry on an export with
// `tx_flags`.
uint16_t AllowedFlags(uint16_t type, uint16_t tx_flags) {
  switch (type) {
    case kCmdWriteZeroes:
      return kCmdFlagFua | kCmdFlagNoHole;
    case kCmdWrite:
    case kCmdTrim:
      return kCmdFlagFua;
    case kCmdRead:
      return (tx_flags & kTxSendDf) ? kCmdFlagDf : 0;
    case kCmdBlockStatus:
      return kCmdFlagReqOne;
    default:
      return 0;
  }
}
}  // namespace

uint32_t ValidateRequest(const Request& r, uint64_t size, uint16_t tx_flags, bool block_status) {
  bool read_only = tx_flags & kTxReadOnly;
  switch (r.type) {
    case kCmdRead:
    case kCmdWrite:
    case kCmdTrim:
    case kCmdWriteZeroes:
      break;
    case kCmdCache:
      if (!(tx_flags & kTxSendCache)) return kEinval;
      break;
    case kCmdBlockStatus:
      if (!block_status || r.length == 0) return kEinval;
      break;
    case kCmdFlush:
      return r.offset == 0 && r.length == 0 ? 0 : kEinval;
    default:
      return kEinval;
  }
  if (r.flags & ~AllowedFlags(r.type, tx_flags)) return kEinval;
  if ((r.type == kCmdRead || r.type == kCmdWrite) && r.length > kMaxRequestLength) return kEoverflow;
  if (r.offset > size || r.length > size - r.offset) return kEinval;
  if (read_only && (r.type == kCmdWrite || r.type == kCmdTrim || r.type == kCmdWriteZeroes)) return kEperm;
  return 0;
}

}  // namespace ferry::nbd
