#include "snapshot/chunk_store.h"

#include <gtest/gtest.h>

#include "base/test_temp_dir.h"
#include "crypto/digest.h"
#include "store/local/local_store.h"

namespace ferry::snapshot {
namespace {

TEST(ChunkStorerTest, ZerosAreNotStoredAndEachChunkIsUploadedOnce) {
  TestTempDir dir;
  auto store = OpenLocalStore(dir / "repo", true);
  ASSERT_TRUE(store.ok());
  Repository repo(std::shared_ptr<ObjectStore>(std::move(store).value()), "");
  ChunkStorer storer(repo);
  const std::string a(4096, 'a'), b(4096, 'b'), c(4096, 'c');
  storer.KnownPresent(HexLower(Sha256(c)));  // a parent's chunk: not asked, not uploaded
  EXPECT_EQ(*storer.Store(std::string(4096, '\0')), "");
  EXPECT_EQ(*storer.Store(a), HexLower(Sha256(a)));
  EXPECT_EQ(*storer.Store(a), HexLower(Sha256(a)));
  EXPECT_EQ(*storer.Store(c), HexLower(Sha256(c)));
  ChunkStorer again(repo);  // another run: the repository has a
  EXPECT_EQ(*again.Store(a), HexLower(Sha256(a)));
  EXPECT_EQ(*again.Store(b), HexLower(Sha256(b)));
  StoreCounts n = storer.counts();
  EXPECT_EQ(n.zero, 1u);
  EXPECT_EQ(n.uploaded, 1u);
  EXPECT_EQ(n.present, 2u);
  EXPECT_EQ(n.uploaded_bytes, 4096u);
  EXPECT_EQ(again.counts().uploaded, 1u);
  EXPECT_EQ(again.counts().present, 1u);
  EXPECT_TRUE(*repo.HasChunk(HexLower(Sha256(b))));
  EXPECT_FALSE(*repo.HasChunk(HexLower(Sha256(c))));
}

TEST(CheckNewSnapshotTest, ABadOrTakenNameIsRefused) {
  TestTempDir dir;
  Repository repo(std::shared_ptr<ObjectStore>(std::move(OpenLocalStore(dir / "repo", true)).value()), "");
  EXPECT_TRUE(CheckNewSnapshot(repo, "new").ok());
  EXPECT_EQ(CheckNewSnapshot(repo, ".hidden").code(), ErrorCode::kInvalidArgument);
  Manifest m;
  m.name = "taken";
  m.image_size = 4096;
  m.chunk_size = 4096;
  m.created = "2026-01-01T00:00:00Z";
  m.chunks = {""};
  ASSERT_TRUE(repo.PutManifest(m).ok());
  EXPECT_EQ(CheckNewSnapshot(repo, "taken").code(), ErrorCode::kAlreadyExists);
}

}  // namespace
}  // namespace ferry::snapshot
