#pragma once
// The NBD protocol (https://github.com/NetworkBlockDevice/nbd, doc/proto.md)
// as constants and pure encoders/decoders: the fixed newstyle handshake,
// option haggling (EXPORT_NAME, LIST, INFO, GO, ABORT) and the transmission
// phase with simple replies, which every client supports (the kernel's
// included). All integers are big-endian on the wire.

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
};

// Option replies.
inline constexpr uint32_t kRepAck = 1;
inline constexpr uint32_t kRepServer = 2;
inline constexpr uint32_t kRepInfo = 3;
inline constexpr uint32_t kRepErrUnsup = 0x80000001;
inline constexpr uint32_t kRepErrPolicy = 0x80000002;
inline constexpr uint32_t kRepErrInvalid = 0x80000003;
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
inline constexpr uint16_t kTxCanMultiConn = 1 << 8;

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

// Errors in replies (errno values the protocol fixes).
inline constexpr uint32_t kEperm = 1;
inline constexpr uint32_t kEio = 5;
inline constexpr uint32_t kEnomem = 12;
inline constexpr uint32_t kEinval = 22;
inline constexpr uint32_t kEnospc = 28;
inline constexpr uint32_t kEoverflow = 75;
inline constexpr uint32_t kEnotsup = 95;

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

// The reply error for a request that is invalid for an export of `size`
// bytes with `tx_flags`, or 0 when it may run: bounds (EINVAL past the
// end, as the issue asks), writes to a read-only export (EPERM), unknown
// commands and flags (EINVAL / ENOTSUP), oversized lengths (EOVERFLOW).
uint32_t ValidateRequest(const Request& r, uint64_t size, uint16_t tx_flags);

}  // namespace ferry::nbd
