#include "store/azure/upload_blocks.h"

#include <gtest/gtest.h>

#include "store/azure/upload_ids.h"

namespace ferry::azure {
namespace {

constexpr char kA[] = "018bcfe5687b000000000001";
constexpr char kB[] = "018bcfe5687b000000000002";

Block Of(const char* nonce, int part, uint64_t size, bool committed = false) {
  return Block{BlockId(nonce, part), size, committed};
}

TEST(UploadBlocks, OneUploadsBlocks) {
  std::vector<Block> blocks = {
      Of(kA, kMarkerPart, 1), Of(kA, 2, 20), Of(kA, 1, 10),
      Of(kB, kMarkerPart, 1), Of(kB, 1, 99),
      Block{"not ferry's", 5, false},
  };
  UploadBlocks a = BlocksOf(blocks, kA);
  EXPECT_TRUE(a.marker);
  EXPECT_FALSE(a.tombstone);
  EXPECT_TRUE(a.Open());
  EXPECT_EQ(a.parts, (std::map<int, uint64_t>{{1, 10}, {2, 20}}));
  EXPECT_TRUE(a.committed.empty());
  EXPECT_FALSE(BlocksOf(blocks, "018bcfe5687b000000000003").Open()) << "never created";
}

TEST(UploadBlocks, WhenAnUploadIsOpen) {
  struct Case {
    std::vector<Block> blocks;
    bool open;
  } cases[] = {
      {{Of(kA, kMarkerPart, 1)}, true},  // created, no parts yet
      {{Of(kA, 1, 10)}, true},           // a part without its marker
      {{Of(kA, kMarkerPart, 1), Of(kA, kTombstonePart, 1)}, false},  // aborted
      {{Of(kA, 1, 10, /*committed=*/true)}, false},                  // completed
      {{}, false},
  };
  for (const Case& c : cases) EXPECT_EQ(BlocksOf(c.blocks, kA).Open(), c.open);
}

TEST(UploadBlocks, CommittedAsTheSamePartList) {
  std::vector<Block> blocks = {Of(kA, 1, 10, true), Of(kA, 3, 10, true)};
  UploadBlocks u = BlocksOf(blocks, kA);
  EXPECT_EQ(u.committed, (std::vector<int>{1, 3}));
  EXPECT_TRUE(CommittedAs(u, {{1, "", 10}, {3, "", 10}}));
  EXPECT_FALSE(CommittedAs(u, {{1, "", 10}}));
  EXPECT_FALSE(CommittedAs(u, {{1, "", 10}, {2, "", 10}}));
  EXPECT_FALSE(CommittedAs(BlocksOf({}, kA), {}));
}

TEST(UploadBlocks, CheckParts) {
  UploadBlocks u = BlocksOf({Of(kA, 1, 10), Of(kA, 2, 20), Of(kA, 4, 5)}, kA);
  struct Case {
    std::vector<PartInfo> parts;
    const char* error;  // nullptr: fits
  } cases[] = {
      {{{1, "", 10}, {2, "", 20}, {4, "", 5}}, nullptr},
      {{{2, "", 20}}, nullptr},  // not every uploaded part need be used
      {{{1, "", 0}, {2, "", 0}}, nullptr},  // sizes not given
      {{}, "invalid part list: no parts"},
      {{{2, "", 20}, {1, "", 10}}, "invalid part order"},
      {{{1, "", 10}, {1, "", 10}}, "invalid part order"},
      {{{1, "", 10}, {3, "", 1}}, "invalid part: part 3 was not uploaded"},
      {{{1, "", 11}}, "invalid part: part 1 has another size"},
  };
  for (const Case& c : cases) {
    Status s = CheckParts(c.parts, u);
    if (c.error == nullptr) {
      EXPECT_TRUE(s.ok()) << s.ToString();
    } else {
      EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
      EXPECT_EQ(s.message(), c.error);
    }
  }
}

TEST(UploadBlocks, OpenUploadsInByteOrder) {
  std::vector<Block> blocks = {
      Of(kB, kMarkerPart, 1),
      Of(kA, 1, 10),
      Of("018bcfe5687b000000000003", kMarkerPart, 1),
      Of("018bcfe5687b000000000003", kTombstonePart, 1),  // aborted
      Of("018bcfe5687b000000000004", 1, 10, true),        // completed
      Block{"not ferry's", 5, false},
  };
  EXPECT_EQ(OpenUploads(blocks), (std::vector<std::string>{kA, kB}));
}

}  // namespace
}  // namespace ferry::azure
