#include "cache/access.h"

#include <gtest/gtest.h>

namespace ferry::cache {
namespace {

TEST(AccessTest, AddressesAndBlocks) {
  auto list = ParseAllowList({"127.0.0.1", "10.1.0.0/16", "::1", "fd00::/8", "192.168.7.0/23"});
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  struct Case {
    const char* addr;
    bool allowed;
  } cases[] = {
      {"127.0.0.1", true},        {"127.0.0.2", false},     {"::ffff:127.0.0.1", true},
      {"10.1.200.3", true},       {"10.2.0.1", false},      {"::1", true},
      {"::2", false},             {"fd12:3456::1", true},   {"fe80::1", false},
      {"192.168.6.1", true},      {"192.168.7.255", true},  {"192.168.8.0", false},
      {"not an address", false},  {"", false},
  };
  for (const Case& c : cases) EXPECT_EQ(Allowed(*list, c.addr), c.allowed) << c.addr;
}

TEST(AccessTest, EmptyAllowsNothingAndZeroPrefixAllowsAll) {
  auto none = ParseAllowList({});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(Allowed(*none, "127.0.0.1"));
  auto all = ParseAllowList({"0.0.0.0/0"});
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(Allowed(*all, "203.0.113.9"));
  EXPECT_FALSE(Allowed(*all, "::1"));  // an IPv4 block never matches IPv6
}

TEST(AccessTest, BadItemsAreOneLineErrors) {
  for (const char* bad : {"localhost", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x", "1.2.3"}) {
    auto r = ParseAllowList({bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace ferry::cache
