#include "nbd/trace.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "base/test_temp_dir.h"
#include "nbd/file_device.h"
#include "nbd/traced_device.h"

namespace ferry::nbd {
namespace {

TEST(Trace, FormatsAndParsesBack) {
  std::string text = TraceHeader(1 << 20) +
                     FormatTraceRecord({5, 9, TraceOp::kWrite, 4096, 512, true}) +
                     FormatTraceRecord({0, 7, TraceOp::kRead, 0, 4096, false}) + "\n# a comment\n" +
                     FormatTraceRecord({6, 6, TraceOp::kFlush, 0, 0, false});
  auto t = ParseTrace(text);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->size, 1u << 20);
  ASSERT_EQ(t->records.size(), 3u);
  // Sorted by issue time.
  EXPECT_EQ(t->records[0].op, TraceOp::kRead);
  EXPECT_EQ(t->records[1].op, TraceOp::kWrite);
  EXPECT_TRUE(t->records[1].fua);
  EXPECT_EQ(t->records[1].offset, 4096u);
  EXPECT_EQ(t->records[1].length, 512u);
  EXPECT_EQ(t->records[2].op, TraceOp::kFlush);
  EXPECT_EQ(FormatTraceRecord(t->records[1]), "5 9 W 4096 512 fua\n");
}

TEST(Trace, RefusesMalformedLinesByNumber) {
  for (std::string bad : {"1 2 R 0", "1 2 X 0 4096", "3 2 R 0 4096", "1 2 R 0 4096 sync",
                          "a b R 0 1", "1 2 R 0 4096 fua extra", "1 2 RR 0 1"}) {
    auto t = ParseTrace("0 1 R 0 512\n" + bad + "\n");
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().message().find("trace line 2"), std::string::npos) << t.status().message();
  }
  EXPECT_FALSE(ParseTrace("# ferry-nbd-trace 1 size=12x\n").ok());
}

// A client that waits for each reply, then one that keeps two in flight.
TEST(Trace, PlanKeepsWaitsAndThinkTimes) {
  std::vector<TraceRecord> serial = {
      {0, 100, TraceOp::kRead, 0, 1, false},
      {150, 300, TraceOp::kRead, 0, 1, false},  // sent 50 after the first reply
      {300, 310, TraceOp::kRead, 0, 1, false},  // at once after the second
  };
  auto p = PlanReplay(serial);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].after, -1);
  EXPECT_EQ(p[0].think_us, 0u);
  EXPECT_EQ(p[1].after, 0);
  EXPECT_EQ(p[1].think_us, 50u);
  EXPECT_EQ(p[2].after, 1);
  EXPECT_EQ(p[2].think_us, 0u);

  std::vector<TraceRecord> pipelined = {
      {0, 500, TraceOp::kRead, 0, 1, false},
      {10, 200, TraceOp::kRead, 0, 1, false},   // in flight with the first
      {220, 400, TraceOp::kRead, 0, 1, false},  // after the second's reply (the first still out)
      {600, 700, TraceOp::kRead, 0, 1, false},  // after the first's reply, 100 later
  };
  p = PlanReplay(pipelined);
  EXPECT_EQ(p[1].after, -1);
  EXPECT_EQ(p[1].think_us, 10u);
  EXPECT_EQ(p[2].after, 1);
  EXPECT_EQ(p[2].think_us, 20u);
  EXPECT_EQ(p[3].after, 0);
  EXPECT_EQ(p[3].think_us, 100u);
}

// The device records each request with its bytes passed through.
TEST(TracedDevice, RecordsEveryRequestAndPassesItOn) {
  TestTempDir dir;
  auto file = FileDevice::Open(dir.path() + "/disk", 1 << 20, false);
  ASSERT_TRUE(file.ok());
  const std::string path = dir.path() + "/disk.trace";
  auto traced = TracedDevice::Open(std::shared_ptr<BlockDevice>(std::move(*file)), path);
  ASSERT_TRUE(traced.ok()) << traced.status().message();
  ASSERT_TRUE((*traced)->Write(8192, std::string(4096, 'x'), true).ok());
  std::string out(4096, '\0');
  ASSERT_TRUE((*traced)->Read(8192, 4096, out.data()).ok());
  EXPECT_EQ(out, std::string(4096, 'x'));
  ASSERT_TRUE((*traced)->Flush().ok());
  ASSERT_TRUE((*traced)->Trim(0, 4096, false).ok());
  ASSERT_TRUE((*traced)->WriteZeroes(4096, 4096, false).ok());
  ASSERT_TRUE((*traced)->Cache(0, 512).ok());
  traced->reset();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto t = ParseTrace(text.str());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->size, 1u << 20);
  ASSERT_EQ(t->records.size(), 6u);
  std::string ops;
  for (const auto& r : t->records) ops += static_cast<char>(r.op);
  EXPECT_EQ(ops, "WRFTZC");
  EXPECT_EQ(t->records[0].issue_us, 0u);
  EXPECT_TRUE(t->records[0].fua);
  EXPECT_EQ(t->records[1].offset, 8192u);
  // A trace is never overwritten.
  auto file2 = FileDevice::Open(dir.path() + "/disk", 0, true);
  ASSERT_TRUE(file2.ok());
  auto again = TracedDevice::Open(std::shared_ptr<BlockDevice>(std::move(*file2)), path);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), ErrorCode::kAlreadyExists);
}

}  // namespace
}  // namespace ferry::nbd
