// The boot-set prediction on real ext4 images made with mke2fs -d, checked
// against debugfs (e2fsprogs) for where each file's blocks are.
#include "snapshot/boot_set.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "base/test_shell.h"
#include "base/test_temp_dir.h"

namespace ferry::snapshot {
namespace {

namespace fs = std::filesystem;

void Write(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string Random(size_t n, int seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

class BootSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveTool("/sbin/mke2fs") || !HaveTool("/sbin/debugfs")) {
      FERRY_SKIP_WITHOUT_PEER("e2fsprogs not installed (make setup)");
    }
    // A Debian-like root in miniature: merged /usr, systemd as init, two
    // units, a kernel, /etc, and files a boot never reads.
    const std::string r = dir_.path() + "/root";
    std::string elf = ReadWholeFile("/usr/bin/true");
    Write(r + "/usr/lib/systemd/systemd", elf);
    Write(r + "/usr/lib/x86_64-linux-gnu/libc.so.6",
          ReadWholeFile("/lib/x86_64-linux-gnu/libc.so.6"));
    Write(r + "/usr/lib64/ld-linux-x86-64.so.2", ReadWholeFile("/lib64/ld-linux-x86-64.so.2"));
    Write(r + "/usr/bin/foo", elf);
    Write(r + "/usr/bin/sleep", elf);
    Write(r + "/usr/bin/dash", elf);
    Write(r + "/usr/bin/bar.sh", "#!/bin/sh\nsleep 1\n");
    fs::create_directories(r + "/usr/sbin");
    fs::create_symlink("usr/lib", r + "/lib");
    fs::create_symlink("usr/lib64", r + "/lib64");
    fs::create_symlink("usr/bin", r + "/bin");
    fs::create_symlink("usr/sbin", r + "/sbin");
    fs::create_symlink("../lib/systemd/systemd", r + "/usr/sbin/init");
    fs::create_symlink("dash", r + "/usr/bin/sh");
    Write(r + "/etc/hostname", "guest\n");
    Write(r + "/etc/fstab", "/dev/vda / ext4 defaults 0 1\n");
    Write(r + "/etc/big", Random(2 << 20, 1));
    Write(r + "/usr/lib/systemd/system/multi-user.target", "[Unit]\nWants=foo.service\n");
    Write(r + "/usr/lib/systemd/system/foo.service", "[Service]\nExecStart=/usr/bin/foo --x\n");
    Write(r + "/usr/lib/systemd/system/bar.service", "[Service]\nExecStart=-/usr/bin/bar.sh\n");
    fs::create_directories(r + "/usr/lib/systemd/system/multi-user.target.wants");
    fs::create_symlink("../bar.service",
                       r + "/usr/lib/systemd/system/multi-user.target.wants/bar.service");
    fs::create_directories(r + "/etc/systemd/system");
    fs::create_symlink("/lib/systemd/system/multi-user.target",
                       r + "/etc/systemd/system/default.target");
    Write(r + "/boot/vmlinuz-6.1.0-test", Random(300 << 10, 2));
    Write(r + "/data/junk", Random(8 << 20, 3));
    Write(r + "/usr/bin/unused", elf);
    image_ = dir_.path() + "/root.img";
    auto made = Shell("/sbin/mke2fs -q -F -t ext4 -b 4096 -d " + r + " " + image_ + " 64M");
    ASSERT_EQ(made.code, 0) << made.out;
  }

  // Byte ranges of `path`'s blocks in the bare image, from debugfs.
  std::vector<ByteRange> DebugfsBlocks(const std::string& path) {
    auto run = Shell("/sbin/debugfs -R 'blocks " + path + "' " + image_ + " 2>/dev/null");
    std::istringstream in(run.out);
    std::vector<ByteRange> out;
    uint64_t b;
    while (in >> b) out.push_back({b * 4096, 4096});
    return out;
  }

  static bool Covered(const std::vector<ByteRange>& set, const ByteRange& r, uint64_t shift) {
    for (const ByteRange& s : set) {
      if (s.offset <= r.offset + shift && r.offset + shift + r.length <= s.offset + s.length)
        return true;
    }
    return false;
  }

  void ExpectPredicted(const BootSet& set, uint64_t shift) {
    for (const char* f :
         {"/usr/lib/systemd/systemd", "/usr/lib/x86_64-linux-gnu/libc.so.6",
          "/usr/lib64/ld-linux-x86-64.so.2", "/usr/bin/foo", "/usr/bin/bar.sh", "/usr/bin/dash",
          "/usr/bin/sleep", "/etc/hostname", "/etc/fstab", "/boot/vmlinuz-6.1.0-test",
          "/usr/lib/systemd/system/foo.service", "/usr/lib/systemd/system/bar.service"}) {
      auto blocks = DebugfsBlocks(f);
      ASSERT_FALSE(blocks.empty()) << f;
      for (const ByteRange& b : blocks)
        EXPECT_TRUE(Covered(set.ranges, b, shift)) << f << " block at " << b.offset;
    }
    for (const char* f : {"/data/junk", "/etc/big", "/usr/bin/unused"}) {
      for (const ByteRange& b : DebugfsBlocks(f)) {
        EXPECT_FALSE(Covered(set.ranges, b, shift)) << f << " should not be predicted";
      }
    }
    EXPECT_TRUE(Covered(set.ranges, {1024, 1024}, shift));  // the superblock
    EXPECT_LT(set.bytes, 4u << 20) << "the boot set should be the few files a boot reads";
  }

  TestTempDir dir_;
  std::string image_;
};

TEST_F(BootSetTest, PredictsWhatABootReadsAndNothingElse) {
  auto set = PredictBootSet(image_);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->fs_offset, 0u);
  ExpectPredicted(*set, 0);
  // Mounting it: the journal's superblock, the first group's bitmaps (as
  // debugfs and dumpe2fs place them).
  uint64_t journal =
      std::stoull(Shell("/sbin/debugfs -R 'bmap <8> 0' " + image_ + " 2>/dev/null").out);
  EXPECT_TRUE(Covered(set->ranges, {journal * 4096, 4096}, 0)) << "journal block " << journal;
  auto dump = Shell("/sbin/dumpe2fs " + image_ + " 2>/dev/null | grep -m1 'Block bitmap at'").out;
  uint64_t bitmap = std::stoull(dump.substr(dump.find(" at ") + 4));
  EXPECT_TRUE(Covered(set->ranges, {bitmap * 4096, 4096}, 0)) << dump;
  // In order of need: init and its libraries before the units' programs.
  auto at = [&](const std::string& f) {
    return std::find(set->files.begin(), set->files.end(), f) - set->files.begin();
  };
  EXPECT_LT(at("/sbin/init"), at("/usr/bin/foo"));
  EXPECT_LT(at("/boot/vmlinuz-6.1.0-test"), at("/sbin/init"));
  // As chunks: the first is the superblock's.
  auto order = PrefetchOrder(set->ranges, 64 << 10, 1024);
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order[0], 0u);
  EXPECT_LT(order.size(), 64u);
}

// The same file system in the first partition of an MBR disk, 1 MiB in.
TEST_F(BootSetTest, FindsTheFileSystemInAPartition) {
  std::string disk = dir_.path() + "/disk.img";
  std::string mbr(512, '\0');
  unsigned char* e = reinterpret_cast<unsigned char*>(mbr.data()) + 446;
  e[4] = 0x83;               // Linux
  e[8] = 0x00, e[9] = 0x08;  // first LBA 2048, little-endian
  mbr[510] = 0x55, mbr[511] = static_cast<char>(0xAA);
  {
    std::ofstream out(disk, std::ios::binary);
    out << mbr << std::string((1 << 20) - 512, '\0') << ReadWholeFile(image_);
  }
  EXPECT_EQ(*FindExtFilesystem(disk), 1u << 20);
  auto set = PredictBootSet(disk);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->fs_offset, 1u << 20);
  ExpectPredicted(*set, 1 << 20);
}

TEST_F(BootSetTest, AnImageWithoutAFileSystemSaysSo) {
  std::string raw = dir_.path() + "/raw.img";
  Write(raw, Random(1 << 20, 4));
  auto set = PredictBootSet(raw);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), ErrorCode::kNotFound);
}

TEST(PrefetchOrder, ChunksOnceInOrderOfNeed) {
  std::vector<ByteRange> r = {{200, 100}, {5000, 4000}, {0, 10}, {9000, 1}, {1 << 20, 1}};
  EXPECT_EQ(PrefetchOrder(r, 4096, 100), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(PrefetchOrder(r, 4096, 2), (std::vector<uint32_t>{0, 1}));
}

}  // namespace
}  // namespace ferry::snapshot
