#pragma once
// The NBD protocol (https://github.com/NetworkBlockDevice/nbd, doc/proto.md)
// as constants and pure encoders/decoders: the fixed newstyle handshake,
// option haggling (EXPORT_NAME, LIST, INFO, GO, ABORT, STARTTLS,
// STRUCTURED_REPLY, LIST/SET_META_CONTEXT) and the transmission phase with
// simple replies, which every client supports (the kernel's included), and
// structured replies (data, holes, errors, block status) for clients that
// ask. All integers are big-endian on the wire.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::nbd {

inline constexpr uint64_t kNbdMagic = 0x4e42444d41474943ull;       // "NBDMAGIC"
inline constexpr uint64_t kOptMagic = 0x49484156454F5054ull;       // "IHAVEOPT"
inline constexpr uint64_t kOptReplyMagic = 0x0003e889045565a9ull;
inline constexpr uint32_t kRequestMagic = 0x25609513;
inline constexpr uint32_t kSimpleReplyMagic = 0x67446698;

// Handshake flags (server) and client flags.
inline constexpr uint16_t kFlagFixedNewstyle = 1 << 0;
inline constexpr uint16_t kFlagNoZeroes = 1 << 1;
inline constexpr uint32_t kClientFixedNewstyle = 1 << 0;
inline constexpr uint32_t kClientNoZeroes = 1 << 1;

// Options.
enum Option : uint32_t {
  kOptExportName = 1,
  kOptAbort = 2,
  kOptList = 3,
  kOptStartTls = 5,
  kOptInfo = 6,
  kOptGo = 7,
  kOptStructuredReply = 8,
  kOptListMetaContext = 9,
  kOptSetMetaContext = 10,
};

// Option replies.
inline constexpr uint32_t kRepAck = 1;
inline constexpr uint32_t kRepServer = 2;
inline constexpr uint32_t kRepInfo = 3;
inline constexpr uint32_t kRepMetaContext = 4;
inline constexpr uint32_t kRepErrUnsup = 0x80000001;
inline constexpr uint32_t kRepErrPolicy = 0x80000002;
inline constexpr uint32_t kRepErrInvalid = 0x80000003;
inline constexpr uint32_t kRepErrTlsReqd = 0x80000005;
inline constexpr uint32_t kRepErrUnknown = 0x80000006;

inline constexpr uint16_t kInfoExport = 0;
inline constexpr uint16_t kInfoBlockSize = 3;

// Transmission flags.
inline constexpr uint16_t kTxHasFlags = 1 << 0;
inline constexpr uint16_t kTxReadOnly = 1 << 1;
inline constexpr uint16_t kTxSendFlush = 1 << 2;
inline constexpr uint16_t kTxSendFua = 1 << 3;
inline constexpr uint16_t kTxSendTrim = 1 << 5;
inline constexpr uint16_t kTxSendWriteZeroes = 1 << 6;
inline constexpr uint16_t kTxSendDf = 1 << 7;
inline constexpr uint16_t kTxCanMultiConn = 1 << 8;
inline constexpr uint16_t kTxSendCache = 1 << 10;

// Commands and their flags.
enum Command : uint16_t {
  kCmdRead = 0,
  kCmdWrite = 1,
  kCmdDisc = 2,
  kCmdFlush = 3,
  kCmdTrim = 4,
  kCmdCache = 5,
  kCmdWriteZeroes = 6,
  kCmdBlockStatus = 7,
};
inline constexpr uint16_t kCmdFlagFua = 1 << 0;
inline constexpr uint16_t kCmdFlagNoHole = 1 << 1;
inline constexpr uint16_t kCmdFlagDf = 1 << 2;      // READ: one data chunk, no holes
inline constexpr uint16_t kCmdFlagReqOne = 1 << 3;  // BLOCK_STATUS: one extent

// Structured replies.
inline constexpr uint32_t kStructuredReplyMagic = 0x668e33ef;
inline constexpr uint16_t kReplyFlagDone = 1 << 0;
inline constexpr uint16_t kReplyNone = 0;
inline constexpr uint16_t kReplyOffsetData = 1;
inline constexpr uint16_t kReplyOffsetHole = 2;
inline constexpr uint16_t kReplyBlockStatus = 5;
inline constexpr uint16_t kReplyError = (1 << 15) + 1;
inline constexpr size_t kStructuredHeaderSize = 20;

// The one metadata context: base:allocation, with these extent flags.
inline constexpr std::string_view kBaseAllocation = "base:allocation";
inline constexpr uint32_t kBaseAllocationId = 1;
inline constexpr uint32_t kStateHole = 1 << 0;
inline constexpr uint32_t kStateZero = 1 << 1;

// Errors in replies (errno values the protocol fixes).
inline constexpr uint32_t kEperm = 1;
inline constexpr uint32_t kEio = 5;
inline constexpr uint32_t kEnomem = 12;
inline constexpr uint32_t kEinval = 22;
inline constexpr uint32_t kEnospc = 28;
inline constexpr uint32_t kEoverflow = 75;
inline constexpr uint32_t kEnotsup = 95;
inline constexpr uint32_t kEshutdown = 108;

inline constexpr size_t kRequestSize = 28;
inline constexpr size_t kOptionHeaderSize = 16;
inline constexpr uint32_t kMaxOptionData = 64 << 10;  // longer option data: the client is not sane
inline constexpr uint32_t kMaxRequestLength = 32 << 20;

// Big-endian helpers.
void Put16(std::string* out, uint16_t v);
void Put32(std::string* out, uint32_t v);
void Put64(std::string* out, uint64_t v);
uint16_t Get16(const unsigned char* p);
uint32_t Get32(const unsigned char* p);
uint64_t Get64(const unsigned char* p);

// What the server says first: NBDMAGIC, IHAVEOPT, handshake flags.
std::string EncodeGreeting();

struct OptionHeader {
  uint32_t option = 0;
  uint32_t length = 0;  // of the data that follows
};
// The 16 bytes before an option's data; kProtocol on a bad magic or a
// length over kMaxOptionData.
Result<OptionHeader> DecodeOptionHeader(std::string_view bytes16);

// An option reply: magic, option, reply type, length, data.
std::string EncodeOptionReply(uint32_t option, uint32_t type, std::string_view data = {});
// NBD_REP_SERVER's data for LIST: name length + name.
std::string EncodeServerName(std::string_view name);
// NBD_REP_INFO's data for NBD_INFO_EXPORT: size and transmission flags.
std::string EncodeInfoExport(uint64_t size, uint16_t tx_flags);
// NBD_REP_INFO's data for NBD_INFO_BLOCK_SIZE.
std::string EncodeInfoBlockSize(uint32_t minimum, uint32_t preferred, uint32_t maximum);
// The answer to NBD_OPT_EXPORT_NAME: size, flags, and 124 zeros unless the
// client negotiated NO_ZEROES.
std::string EncodeExportNameReply(uint64_t size, uint16_t tx_flags, bool no_zeroes);

struct InfoRequest {
  std::string name;
  std::vector<uint16_t> infos;
};
// The data of NBD_OPT_INFO / NBD_OPT_GO; kInvalidArgument when malformed.
Result<InfoRequest> DecodeInfoRequest(std::string_view data);

struct MetaContextRequest {
  std::string name;                  // the export
  std::vector<std::string> queries;
};
// The data of NBD_OPT_LIST_META_CONTEXT / SET_META_CONTEXT: export name,
// query count, queries; kInvalidArgument when malformed.
Result<MetaContextRequest> DecodeMetaContextRequest(std::string_view data);
// The contexts of ours that `queries` select. LIST: no query selects all,
// and "base:" all of that namespace; SET: only whole names select.
std::vector<std::string> MatchMetaContexts(const std::vector<std::string>& queries, bool list);
// NBD_REP_META_CONTEXT's data: context id and name.
std::string EncodeMetaContext(uint32_t id, std::string_view name);

struct Request {
  uint16_t flags = 0;
  uint16_t type = 0;
  uint64_t handle = 0;
  uint64_t offset = 0;
  uint32_t length = 0;
};
// A request header (28 bytes); kProtocol on a bad magic.
Result<Request> DecodeRequest(std::string_view bytes28);
std::string EncodeRequest(const Request& r);  // for tests
std::string EncodeSimpleReply(uint32_t error, uint64_t handle);

// A structured reply chunk's header; `length` bytes of payload follow.
std::string EncodeStructuredHeader(uint16_t flags, uint16_t type, uint64_t handle, uint32_t length);
// NBD_REPLY_TYPE_OFFSET_DATA's header and offset; `data_length` bytes follow.
std::string EncodeOffsetDataHeader(uint16_t flags, uint64_t handle, uint64_t offset, uint32_t data_length);
// NBD_REPLY_TYPE_OFFSET_HOLE: `length` zero bytes at `offset`.
std::string EncodeOffsetHole(uint16_t flags, uint64_t handle, uint64_t offset, uint32_t length);
// NBD_REPLY_TYPE_ERROR (final) with a message for a human.
std::string EncodeStructuredError(uint64_t handle, uint32_t error, std::string_view message);
// NBD_REPLY_TYPE_NONE with the DONE flag: a successful reply with no data.
std::string EncodeStructuredDone(uint64_t handle);
// One extent of NBD_REPLY_TYPE_BLOCK_STATUS: its length and state flags.
struct BlockStatusDescriptor {
  uint32_t length = 0;
  uint32_t flags = 0;
};
// NBD_REPLY_TYPE_BLOCK_STATUS for context `id` (final).
std::string EncodeBlockStatus(uint64_t handle, uint32_t id, const std::vector<BlockStatusDescriptor>& extents);

// The reply error for a request that is invalid for an export of `size`
// bytes with `tx_flags`, or 0 when it may run: bounds (EINVAL past the
// end, as the issue asks), writes to a read-only export (EPERM), unknown
// commands and flags (EINVAL / ENOTSUP), oversized lengths (EOVERFLOW),
// BLOCK_STATUS without a metadata context or of no bytes (EINVAL).
uint32_t ValidateRequest(const Request& r, uint64_t size, uint16_t tx_flags, bool block_status = false);

}  // namespace ferry::nbd
