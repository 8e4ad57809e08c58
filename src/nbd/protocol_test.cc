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

}  // namespace
}  // namespace ferry::nbd
