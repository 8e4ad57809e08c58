#include "migrate/verify_policy.h"

#include <gtest/gtest.h>

namespace ferry::migrate {
namespace {

TEST(VerifyPolicyTest, JudgePair) {
  const std::string a(32, 'a'), b(32, 'b');
  const int64_t t = 1'700'000'000'000;
  struct Case {
    VerifySide src, dst;
    bool checksummed;
    bool same;
    VerifyBy by;
    const char* why_has;
  } cases[] = {
      {{10, a, t}, {10, a, t + 5000}, false, true, VerifyBy::kMd5, ""},
      {{10, a, t}, {10, b, t + 5000}, false, false, VerifyBy::kMd5, "MD5 aaaa"},
      {{10, a, t}, {10, b, t + 5000}, true, false, VerifyBy::kChecksum, "content"},
      {{10, a, t}, {11, a, t}, false, false, VerifyBy::kSize, "size 10 at the source, 11"},
      {{10, "", t}, {10, a, t + 1000}, false, true, VerifyBy::kSizeAndTime, ""},
      {{10, a, t + 400}, {10, "", t}, false, true, VerifyBy::kSizeAndTime, ""},  // same second
      {{10, a, t}, {10, "", t - 1000}, false, false, VerifyBy::kSizeAndTime, "older than"},
      {{10, "", 0}, {10, "", 5}, false, true, VerifyBy::kSizeAndTime, ""},  // no source time
      {{0, "", t}, {0, "", t}, false, true, VerifyBy::kSizeAndTime, ""},
  };
  int i = 0;
  for (const Case& c : cases) {
    PairVerdict v = JudgePair(c.src, c.dst, c.checksummed);
    EXPECT_EQ(v.same, c.same) << "case " << i;
    EXPECT_EQ(v.by, c.by) << "case " << i;
    EXPECT_NE(v.why.find(c.why_has), std::string::npos) << "case " << i << ": " << v.why;
    if (v.same) {
      EXPECT_TRUE(v.why.empty());
    }
    ++i;
  }
}

TEST(VerifyPolicyTest, Names) {
  EXPECT_STREQ(ToString(Difference::Kind::kMissing), "missing");
  EXPECT_STREQ(ToString(Difference::Kind::kExtra), "extra");
  EXPECT_STREQ(ToString(VerifyBy::kSizeAndTime), "size and time");
}

}  // namespace
}  // namespace ferry::migrate
