// The NBD server against clients we did not write: qemu-img, qemu-io
// (QEMU's NBD client) and libnbd's nbdinfo and nbdcopy, each started as a
// process against an in-process server on loopback. Skipped when the tools
// are missing (make setup installs qemu-utils and libnbd-bin).
#include "nbd/server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "base/test_shell.h"
#include "nbd/file_device.h"
#include "nbd/protocol.h"

namespace ferry::nbd {
namespace {

namespace fs = std::filesystem;

using Ran = ShellRun;
bool Have(const char* tool) { return HaveTool(tool); }
std::string ReadAll(const std::string& path) { return ReadWholeFile(path); }

class NbdServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Have("qemu-io") || !Have("qemu-img") || !Have("nbdinfo") || !Have("nbdcopy")) {
      FERRY_SKIP_WITHOUT_PEER("qemu-utils / libnbd-bin not installed (make setup)");
    }
    char tmpl[] = "/tmp/ferry-nbd-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // A 4 MiB disk with random contents, and an empty 1 MiB one.
    std::string bytes(4 << 20, '\0');
    std::mt19937_64 rng(5);
    for (auto& c : bytes) c = static_cast<char>(rng());
    std::ofstream(dir_ + "/disk.img", std::ios::binary) << bytes;
    auto disk = FileDevice::Open(dir_ + "/disk.img", 0, false);
    auto empty = FileDevice::Open(dir_ + "/empty.img", 1 << 20, false);
    ASSERT_TRUE(disk.ok() && empty.ok());
    NbdServerOptions o;
    o.listen = "127.0.0.1:0";
    server_ = std::make_unique<NbdServer>(o);
    server_->AddExport("disk", std::shared_ptr<BlockDevice>(std::move(disk).value()));
    server_->AddExport("empty", std::shared_ptr<BlockDevice>(std::move(empty).value()));
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string Uri(const std::string& name) {
    return "nbd://127.0.0.1:" + std::to_string(server_->port()) + "/" + name;
  }

  std::string dir_;
  std::unique_ptr<NbdServer> server_;
};

TEST_F(NbdServerTest, NbdinfoSeesTheExports) {
  Ran info = Shell("nbdinfo --json " + Uri("disk"));
  ASSERT_EQ(info.code, 0) << info.out;
  EXPECT_NE(info.out.find("\"export-size\": 4194304"), std::string::npos) << info.out;
  Ran list = Shell("nbdinfo --list --json nbd://127.0.0.1:" + std::to_string(server_->port()));
  ASSERT_EQ(list.code, 0) << list.out;
  EXPECT_NE(list.out.find("\"disk\""), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("\"empty\""), std::string::npos);
  EXPECT_NE(Shell("nbdinfo " + Uri("nosuch")).code, 0);
}

TEST_F(NbdServerTest, ServesOnAUnixSocket) {
  std::string sock = dir_ + "/nbd.sock";
  NbdServerOptions o;
  o.listen = "unix:" + sock;
  NbdServer local(o);
  auto disk = FileDevice::Open(dir_ + "/disk.img", 0, true);
  ASSERT_TRUE(disk.ok());
  local.AddExport("disk", std::shared_ptr<BlockDevice>(std::move(disk).value()));
  ASSERT_TRUE(local.Start().ok());
  Ran info = Shell("nbdinfo --size 'nbd+unix:///disk?socket=" + sock + "'");
  ASSERT_EQ(info.code, 0) << info.out;
  EXPECT_EQ(info.out, "4194304\n");
  std::string out = dir_ + "/unix-copy.raw";
  Ran conv = Shell("qemu-img convert -f raw -O raw 'nbd+unix:///disk?socket=" + sock + "' " + out);
  ASSERT_EQ(conv.code, 0) << conv.out;
  EXPECT_EQ(ReadAll(out), ReadAll(dir_ + "/disk.img"));
  local.Stop();
  EXPECT_FALSE(fs::exists(sock));
}

TEST_F(NbdServerTest, QemuImgReadsTheWholeDisk) {
  std::string out = dir_ + "/copy.raw";
  Ran conv = Shell("qemu-img convert -f raw -O raw " + Uri("disk") + " " + out);
  ASSERT_EQ(conv.code, 0) << conv.out;
  EXPECT_EQ(ReadAll(out), ReadAll(dir_ + "/disk.img"));
  Ran cmp = Shell("qemu-img compare -f raw -F raw " + Uri("disk") + " " + dir_ + "/disk.img");
  EXPECT_EQ(cmp.code, 0) << cmp.out;
}

TEST_F(NbdServerTest, QemuIoWritesReadsZeroesAndFlushes) {
  std::string uri = Uri("empty");
  Ran w = Shell("qemu-io -f raw -c 'write -P 0xab 4096 65536' -c 'write -P 0xcd -f 100000 5000' "
              "-c 'flush' -c 'read -P 0xab 4096 65536' -c 'read -P 0 0 4096' " + uri);
  ASSERT_EQ(w.code, 0) << w.out;
  EXPECT_EQ(w.out.find("Pattern verification failed"), std::string::npos) << w.out;
  std::string file = ReadAll(dir_ + "/empty.img");
  EXPECT_EQ(file.substr(4096, 65536), std::string(65536, '\xab'));
  EXPECT_EQ(file.substr(100000, 5000), std::string(5000, '\xcd'));
  Ran z = Shell("qemu-io -f raw -c 'write -z 4096 8192' -c 'discard 8192 4096' -c 'read -P 0 4096 8192' " + uri);
  ASSERT_EQ(z.code, 0) << z.out;
  EXPECT_EQ(z.out.find("Pattern verification failed"), std::string::npos) << z.out;
  EXPECT_EQ(ReadAll(dir_ + "/empty.img").substr(4096, 8192), std::string(8192, '\0'));
  // Past the end: an error for that request, the connection stays usable.
  Ran past = Shell("qemu-io -f raw -c 'read 1048064 1024' " + uri);
  EXPECT_NE(past.out.find("read failed"), std::string::npos) << past.out;
}

TEST_F(NbdServerTest, NbdcopyRoundTrip) {
  std::string back = dir_ + "/back.img";
  Ran up = Shell("nbdcopy " + dir_ + "/disk.img " + Uri("disk"));  // same bytes onto itself: a write pass
  ASSERT_EQ(up.code, 0) << up.out;
  Ran down = Shell("nbdcopy " + Uri("disk") + " " + back);
  ASSERT_EQ(down.code, 0) << down.out;
  EXPECT_EQ(ReadAll(back), ReadAll(dir_ + "/disk.img"));
  // Into the empty export and back: md5 of what went in and came out.
  std::string small = dir_ + "/small.img";
  { std::ofstream(small, std::ios::binary) << std::string(1 << 20, 'z'); }
  ASSERT_EQ(Shell("nbdcopy " + small + " " + Uri("empty")).code, 0);
  ASSERT_EQ(Shell("nbdcopy " + Uri("empty") + " " + back).code, 0);
  EXPECT_EQ(Shell("md5sum < " + small).out, Shell("md5sum < " + back).out);
}

TEST_F(NbdServerTest, AProtocolViolationDisconnectsThatClientOnly) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(server_->port());
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  char greeting[18];
  ASSERT_EQ(::recv(fd, greeting, sizeof greeting, MSG_WAITALL), 18);
  std::string junk;
  Put32(&junk, kClientFixedNewstyle | kClientNoZeroes);
  junk += "this is not an option header at all";
  ASSERT_GT(::send(fd, junk.data(), junk.size(), 0), 0);
  char c;
  EXPECT_LE(::recv(fd, &c, 1, 0), 0);  // closed (or reset: unread bytes) by the server
  ::close(fd);
  Ran info = Shell("nbdinfo --size " + Uri("disk"));  // others are still served
  EXPECT_EQ(info.code, 0) << info.out;
  EXPECT_EQ(info.out, "4194304\n");
}

}  // namespace
}  // namespace ferry::nbd
