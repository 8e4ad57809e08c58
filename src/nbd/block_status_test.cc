// Block status against clients we did not write: nbdinfo --map (libnbd)
// and qemu-img map see a sparse file export's holes; nbdinfo sees CACHE,
// multi-conn and base:allocation offered.
#include <gtest/gtest.h>

#include <fstream>

#include "base/test_shell.h"
#include "base/test_temp_dir.h"
#include "nbd/file_device.h"
#include "nbd/server.h"

namespace ferry::nbd {
namespace {

class BlockStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveTool("nbdinfo") || !HaveTool("qemu-img") || !HaveTool("qemu-io")) {
      FERRY_SKIP_WITHOUT_PEER("qemu-utils / libnbd-bin not installed (make setup)");
    }
    // 4 MiB: data in [0, 64 KiB) and [2 MiB, 2 MiB + 64 KiB), holes elsewhere.
    path_ = dir_ / "sparse.img";
    auto dev = FileDevice::Open(path_, 4 << 20, false);
    ASSERT_TRUE(dev.ok());
    ASSERT_TRUE((*dev)->Write(0, std::string(64 << 10, 'a'), false).ok());
    ASSERT_TRUE((*dev)->Write(2 << 20, std::string(64 << 10, 'b'), true).ok());
    NbdServerOptions o;
    o.listen = "127.0.0.1:0";
    server_ = std::make_unique<NbdServer>(o);
    server_->AddExport("sparse", std::shared_ptr<BlockDevice>(std::move(dev).value()));
    ASSERT_TRUE(server_->Start().ok());
    uri_ = "nbd://127.0.0.1:" + std::to_string(server_->port()) + "/sparse";
  }
  TestTempDir dir_;
  std::string path_, uri_;
  std::unique_ptr<NbdServer> server_;
};

TEST_F(BlockStatusTest, NbdinfoMapShowsTheHoles) {
  ShellRun map = Shell("nbdinfo --map " + uri_);
  ASSERT_EQ(map.code, 0) << map.out;
  // "offset length type description" lines; type 3 = hole,zero.
  EXPECT_NE(map.out.find("65536"), std::string::npos) << map.out;
  EXPECT_NE(map.out.find("hole,zero"), std::string::npos) << map.out;
  ShellRun total = Shell("nbdinfo --map --totals " + uri_);
  ASSERT_EQ(total.code, 0) << total.out;
  // 128 KiB of data (3.1%) and the rest hole,zero.
  EXPECT_NE(total.out.find("131072"), std::string::npos) << total.out;
  EXPECT_NE(total.out.find("4063232"), std::string::npos) << total.out;
}

TEST_F(BlockStatusTest, QemuImgMapSeesDataAndZeros) {
  ShellRun map = Shell("qemu-img map --output=json -f raw " + uri_);
  ASSERT_EQ(map.code, 0) << map.out;
  EXPECT_NE(map.out.find("\"start\": 0, \"length\": 65536"), std::string::npos) << map.out;
  EXPECT_NE(map.out.find("\"start\": 65536, \"length\": 2031616, \"depth\": 0, \"present\": true, \"zero\": true, "
                         "\"data\": false"),
            std::string::npos)
      << map.out;
  // A copy made through block status is the same bytes, and as sparse.
  std::string copy = dir_ / "copy.qcow2";
  ShellRun conv = Shell("qemu-img convert -f raw -O qcow2 " + uri_ + " " + copy);
  ASSERT_EQ(conv.code, 0) << conv.out;
  ShellRun cmp = Shell("qemu-img compare -f qcow2 -F raw " + copy + " " + path_);
  EXPECT_EQ(cmp.code, 0) << cmp.out;
}

TEST_F(BlockStatusTest, NbdinfoSeesCacheMultiConnAndTheContext) {
  ShellRun info = Shell("nbdinfo --json " + uri_);
  ASSERT_EQ(info.code, 0) << info.out;
  EXPECT_NE(info.out.find("\"can_cache\": true"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("\"can_multi_conn\": true"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("\"base:allocation\""), std::string::npos) << info.out;
}

}  // namespace
}  // namespace ferry::nbd
