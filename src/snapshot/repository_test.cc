#include "snapshot/repository.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/test_temp_dir.h"
#include "crypto/digest.h"
#include "store/local/local_store.h"

namespace ferry::snapshot {
namespace {

TEST(SameRepositoryTest, NamesOneRepositoryWhateverTheSpelling) {
  TestTempDir dir;
  std::filesystem::create_directories(dir / "repo");
  struct Case {
    std::string a, b;
    bool same;
  } cases[] = {
      {"s3://bkt/snaps/", "s3://bkt/snaps", true},
      {"s3://bkt/snaps/", "s3://bkt/snaps//", true},
      {"s3://bkt/", "s3://bkt", true},
      {"s3://bkt/snaps/", "s3://bkt/other/", false},
      {"s3://bkt/snaps/", "s3://bkt2/snaps/", false},
      {"s3://bkt/snaps/", "gs://bkt/snaps/", false},
      {"s3://bkt/snaps/", dir / "repo", false},
      {dir / "repo", dir / "repo/", true},
      {dir / "repo", dir.path() + "/./repo", true},
      {dir / "repo", dir / "missing/../repo", true},
      {dir / "repo", dir / "other", false},
      {"ftp://x/", "ftp://x/", false},
  };
  for (const auto& c : cases) EXPECT_EQ(SameRepository(c.a, c.b), c.same) << c.a << " vs " << c.b;
}

TEST(RepositoryTest, AChunkIsCheckedAgainstItsName) {
  TestTempDir dir;
  Repository repo(std::shared_ptr<ObjectStore>(std::move(OpenLocalStore(dir / "repo", true)).value()), "");
  const std::string bytes(100000, 'c'), hash = HexLower(Sha256(bytes));
  ASSERT_TRUE(repo.PutChunk(hash, bytes).ok());
  auto got = repo.GetChunk(hash);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, bytes);
  // The stored object damaged (one byte changed): refused, not served.
  {
    std::fstream f(std::filesystem::path(dir / "repo") / repo.ChunkKey(hash), std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekp(5000);
    f.put('d');
  }
  auto bad = repo.GetChunk(hash);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kCorruption) << bad.status().ToString();
}

}  // namespace
}  // namespace ferry::snapshot
