#include "base/strings.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(SplitLines, KeepsEmptyLinesAndNoneAfterTheLastNewline) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(SplitLines(""), V{});
  EXPECT_EQ(SplitLines("a"), V{"a"});
  EXPECT_EQ(SplitLines("a\n"), V{"a"});
  EXPECT_EQ(SplitLines("a\n\nb\r\nc"), (V{"a", "", "b\r", "c"}));
  EXPECT_EQ(SplitLines("\n"), V{""});
}

}  // namespace
}  // namespace ferry
