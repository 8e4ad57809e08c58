#include "snapshot/repository.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/test_temp_dir.h"

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

}  // namespace
}  // namespace ferry::snapshot
