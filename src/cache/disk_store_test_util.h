#pragma once
// For the disk store's tests (disk_store_test.cc, disk_store_refresh_test.cc):
// a store in a temporary directory, opened again at will, and its files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/test_temp_dir.h"
#include "cache/disk_store.h"

namespace ferry::cache {

class DiskStoreTestBase : public ::testing::Test {
 protected:
  // The store in dir_, unsynced, compacting only when told.
  std::unique_ptr<DiskStore> OpenStore(uint64_t max_bytes, uint64_t segment_bytes = 16 << 20) {
    DiskStoreOptions o;
    o.dir = dir_.path();
    o.max_bytes = max_bytes;
    o.sync = false;
    o.segment_bytes = segment_bytes;
    o.background_compaction = false;
    auto s = DiskStore::Open(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  // Its segment files, oldest first.
  std::vector<std::string> SegmentFiles() {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_ / "segments"))
      out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

  TestTempDir dir_;
};

}  // namespace ferry::cache
