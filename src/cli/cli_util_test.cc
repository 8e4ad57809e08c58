#include "cli/cli_util.h"

#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

TEST(ParseSize, UnitsAndErrors) {
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("16k"), 16u * 1024);
  EXPECT_EQ(*ParseSize("64M"), 64u << 20);
  EXPECT_EQ(*ParseSize("1.5GiB"), 3u << 29);
  EXPECT_EQ(*ParseSize("2tb"), 2ull << 40);
  EXPECT_FALSE(ParseSize("").ok());
  EXPECT_FALSE(ParseSize("M").ok());
  EXPECT_FALSE(ParseSize("12parsecs").ok());
  EXPECT_FALSE(ParseSize(".").ok());
  EXPECT_FALSE(ParseSize("-5M").ok());
  EXPECT_FALSE(ParseSize("1e30").ok());
  EXPECT_FALSE(ParseSize("99999999999T").ok());
}

}  // namespace
}  // namespace ferry::cli
