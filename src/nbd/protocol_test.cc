#include "nbd/protocol.h"

#include <gtest/gtest.h>

namespace ferry::nbd {
namespace {

TEST(NbdProtocolTest, RequestsRoundTripAndBadMagicIsRefused) {
  Request r{kCmdFlagFua, kCmdWrite, 0x1122334455667788ull, 1ull << 40, 4096};
  std::string wire = EncodeRequest(r);
  ASSERT_EQ(wire.size(), kRequestSize);
  auto back = DecodeRequest(wire);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->handle, r.handle);
  EXPECT_EQ(back->offset, r.offset);
  EXPECT_EQ(back->length, r.length);
  EXPECT_EQ(back->flags, r.flags);
  wire[0] ^= 1;
  EXPECT_EQ(DecodeRequest(wire).status().code(), ErrorCode::kProtocol);
  EXPECT_FALSE(DecodeRequest("short").ok());
}

TEST(NbdProtocolTest, GreetingAndReplies) {
  std::string g = EncodeGreeting();
  ASSERT_EQ(g.size(), 18u);
  EXPECT_EQ(g.substr(0, 8), "NBDMAGIC");
  EXPECT_EQ(g.substr(8, 8), "IHAVEOPT");
  EXPECT_EQ(EncodeSimpleReply(kEio, 7).size(), 16u);
  EXPECT_EQ(EncodeExportNameReply(1, 0, false).size(), 8u + 2 + 124);
  EXPECT_EQ(EncodeExportNameReply(1, 0, true).size(), 10u);
}

TEST(NbdProtocolTest, OptionHeaders) {
  std::string h;
  Put64(&h, kOptMagic);
  Put32(&h, kOptGo);
  Put32(&h, 10);
  auto d = DecodeOptionHeader(h);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->option, static_cast<uint32_t>(kOptGo));
  EXPECT_EQ(d->length, 10u);
  std::string huge;
  Put64(&huge, kOptMagic);
  Put32(&huge, kOptGo);
  Put32(&huge, kMaxOptionData + 1);
  EXPECT_FALSE(DecodeOptionHeader(huge).ok());
}

TEST(NbdProtocolTest, InfoRequests) {
  std::string d;
  Put32(&d, 3);
  d += "vol";
  Put16(&d, 2);
  Put16(&d, kInfoExport);
  Put16(&d, kInfoBlockSize);
  auto r = DecodeInfoRequest(d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->name, "vol");
  EXPECT_EQ(r->infos.size(), 2u);
  EXPECT_FALSE(DecodeInfoRequest(d.substr(0, d.size() - 1)).ok());  // count says more than there is
  std::string overrun;
  Put32(&overrun, 100);
  overrun += "vol";
  Put16(&overrun, 0);
  EXPECT_FALSE(DecodeInfoRequest(overrun).ok());
}

TEST(NbdProtocolTest, Validation) {
  const uint64_t size = 1 << 20;
  const uint16_t rw = kTxHasFlags | kTxSendFlush | kTxSendFua | kTxSendTrim | kTxSendWriteZeroes;
  struct Case {
    Request r;
    uint16_t flags;
    uint32_t want;
  } cases[] = {
      {{0, kCmdRead, 1, 0, 4096}, rw, 0},
      {{0, kCmdRead, 1, size - 1, 1}, rw, 0},
      {{0, kCmdRead, 1, size - 1, 2}, rw, kEinval},        // past the end
      {{0, kCmdRead, 1, size + 1, 0}, rw, kEinval},
      {{0, kCmdRead, 1, ~0ull - 1, 4}, rw, kEinval},      // offset + length overflows
      {{0, kCmdRead, 1, 0, kMaxRequestLength + 1}, rw, kEoverflow},
      {{kCmdFlagFua, kCmdWrite, 1, 0, 1}, rw, 0},
      {{0, kCmdWrite, 1, 0, 1}, rw | kTxReadOnly, kEperm},
      {{0, kCmdTrim, 1, 0, size}, rw | kTxReadOnly, kEperm},
      {{kCmdFlagNoHole, kCmdWriteZeroes, 1, 0, size}, rw, 0},
      {{kCmdFlagNoHole, kCmdWrite, 1, 0, 1}, rw, kEinval},  // flag not for WRITE
      {{kCmdFlagFua, kCmdRead, 1, 0, 1}, rw, kEinval},
      {{0, kCmdFlush, 1, 0, 0}, rw, 0},
      {{0, kCmdFlush, 1, 0, 1}, rw, kEinval},
      {{0, 99, 1, 0, 0}, rw, kEinval},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ValidateRequest(c.r, size, c.flags), c.want) << c.r.type << " " << c.r.offset << "+" << c.r.length;
  }
}

TEST(NbdProtocolTest, ValidationOfStructuredCommands) {
  const uint64_t size = 1 << 20;
  const uint16_t base = kTxHasFlags | kTxSendFlush;
  // BLOCK_STATUS needs a selected context and some bytes; REQ_ONE is its flag.
  EXPECT_EQ(ValidateRequest({0, kCmdBlockStatus, 1, 0, 4096}, size, base, true), 0u);
  EXPECT_EQ(ValidateRequest({kCmdFlagReqOne, kCmdBlockStatus, 1, 0, 4096}, size, base, true), 0u);
  EXPECT_EQ(ValidateRequest({0, kCmdBlockStatus, 1, 0, 4096}, size, base, false), kEinval);
  EXPECT_EQ(ValidateRequest({0, kCmdBlockStatus, 1, 0, 0}, size, base, true), kEinval);
  EXPECT_EQ(ValidateRequest({0, kCmdBlockStatus, 1, size, 1}, size, base, true), kEinval);
  // CACHE only when offered; DF on READ only with structured replies.
  EXPECT_EQ(ValidateRequest({0, kCmdCache, 1, 0, 4096}, size, base), kEinval);
  EXPECT_EQ(ValidateRequest({0, kCmdCache, 1, 0, 4096}, size, base | kTxSendCache), 0u);
  EXPECT_EQ(ValidateRequest({kCmdFlagDf, kCmdRead, 1, 0, 4096}, size, base), kEinval);
  EXPECT_EQ(ValidateRequest({kCmdFlagDf, kCmdRead, 1, 0, 4096}, size, base | kTxSendDf), 0u);
}

TEST(NbdProtocolTest, MetaContextRequestsAndMatching) {
  std::string d;
  Put32(&d, 3);
  d += "vol";
  Put32(&d, 2);
  Put32(&d, 15);
  d += "base:allocation";
  Put32(&d, 14);
  d += "qemu:dirty-bmp";
  auto r = DecodeMetaContextRequest(d);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "vol");
  ASSERT_EQ(r->queries.size(), 2u);
  EXPECT_EQ(r->queries[1], "qemu:dirty-bmp");
  EXPECT_FALSE(DecodeMetaContextRequest(d.substr(0, d.size() - 1)).ok());  // a query overruns
  EXPECT_FALSE(DecodeMetaContextRequest(d + "x").ok());                    // trailing bytes
  std::string lying;
  Put32(&lying, 0);
  Put32(&lying, 0x40000000);  // a count the data cannot hold
  EXPECT_FALSE(DecodeMetaContextRequest(lying).ok());

  const std::vector<std::string> ours = {"base:allocation"};
  EXPECT_EQ(MatchMetaContexts(r->queries, false), ours);
  EXPECT_EQ(MatchMetaContexts({}, true), ours);  // LIST with no query: all
  EXPECT_EQ(MatchMetaContexts({"base:"}, true), ours);
  EXPECT_TRUE(MatchMetaContexts({"base:"}, false).empty());
  EXPECT_TRUE(MatchMetaContexts({}, false).empty());
  EXPECT_TRUE(MatchMetaContexts({"qemu:dirty-bitmap:x"}, false).empty());
}

TEST(NbdProtocolTest, StructuredReplyChunks) {
  std::string hole = EncodeOffsetHole(kReplyFlagDone, 42, 1 << 20, 4096);
  ASSERT_EQ(hole.size(), kStructuredHeaderSize + 12);
  auto u = reinterpret_cast<const unsigned char*>(hole.data());
  EXPECT_EQ(Get32(u), kStructuredReplyMagic);
  EXPECT_EQ(Get16(u + 4), kReplyFlagDone);
  EXPECT_EQ(Get16(u + 6), kReplyOffsetHole);
  EXPECT_EQ(Get64(u + 8), 42u);
  EXPECT_EQ(Get32(u + 16), 12u);
  EXPECT_EQ(Get64(u + 20), 1u << 20);
  EXPECT_EQ(Get32(u + 28), 4096u);
  std::string data = EncodeOffsetDataHeader(0, 42, 8192, 100);
  EXPECT_EQ(Get32(reinterpret_cast<const unsigned char*>(data.data()) + 16), 108u);  // offset + data
  std::string err = EncodeStructuredError(1, kEio, "boom");
  EXPECT_EQ(err.size(), kStructuredHeaderSize + 4 + 2 + 4);
  std::string bs = EncodeBlockStatus(1, kBaseAllocationId, {{4096, kStateHole | kStateZero}, {8192, 0}});
  EXPECT_EQ(bs.size(), kStructuredHeaderSize + 4 + 16);
}

}  // namespace
}  // namespace ferry::nbd
