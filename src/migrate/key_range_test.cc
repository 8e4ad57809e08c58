#include "migrate/key_range.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace ferry::migrate {
namespace {

bool ValidUtf8(const std::string& s) {
  // A string survives MidKey's own decoder only when valid: use it.
  return MidKey(s, std::nullopt).has_value();
}

TEST(KeyRangeTest, InRangeIsLowerExclusiveUpperInclusive) {
  struct Case {
    const char* key;
    const char* lower;
    const char* upper;
    bool want;
  } cases[] = {
      {"a", "", "", true},        {"a", "a", "", false},   {"b", "a", "b", true},
      {"b/", "a", "b", false},    {"ab", "a", "b", true},  {"plain/", "p", "plain/", true},
      {"plain/x", "p", "plain/", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(InRange(c.key, c.lower, c.upper), c.want) << c.key << " in (" << c.lower << ", "
                                                        << c.upper << "]";
  }
}

TEST(KeyRangeTest, PrefixEndIsTheLeastStringAboveThePrefix) {
  EXPECT_EQ(PrefixEnd("big/"), "big0");
  EXPECT_EQ(PrefixEnd("a"), "b");
  EXPECT_EQ(PrefixEnd("ü/"), "ü0");
  EXPECT_EQ(PrefixEnd("\xf4\x8f\xbf\xbf"), std::nullopt);   // U+10FFFF alone
  EXPECT_EQ(PrefixEnd("a\xf4\x8f\xbf\xbf"), "b");            // U+10FFFF at the end
  EXPECT_EQ(PrefixEnd("\xed\x9f\xbf"), "\xee\x80\x80");     // U+D7FF -> U+E000
  EXPECT_EQ(PrefixEnd(""), std::nullopt);
  EXPECT_EQ(PrefixEnd("\xff"), std::nullopt);               // not UTF-8
}

TEST(KeyRangeTest, MidKeyFallsStrictlyBetween) {
  struct Case {
    const char* lo;
    const char* hi;  // nullptr: no upper end
  } cases[] = {
      {"", nullptr},        {"a", nullptr},         {"big/000123", "big0"},
      {"a", "c"},           {"a", "b"},             {"a", "a0"},
      {"abc", "abd"},       {"x/1", "x/10"},        {"ü/ñ/a", "ü/ñ/b"},
      {"", "a"},            {"照片/1", "照片/9"},   {"照", "片"},
      {"a~~~", "b"},        {"\x7f", nullptr},      {"z\xf4\x8f\xbf\xbf", nullptr},
  };
  for (const auto& c : cases) {
    auto m = MidKey(c.lo, c.hi ? std::optional<std::string_view>(c.hi) : std::nullopt);
    ASSERT_TRUE(m.has_value()) << c.lo << " .. " << (c.hi ? c.hi : "+inf");
    EXPECT_GT(*m, std::string(c.lo));
    if (c.hi) {
      EXPECT_LT(*m, std::string(c.hi));
    }
    EXPECT_TRUE(ValidUtf8(*m)) << *m;
  }
}

TEST(KeyRangeTest, MidKeyHasNoAnswerWhenNothingFitsBetween) {
  EXPECT_EQ(MidKey("a", "a\x01"), std::nullopt);  // only "a" + U+0000 would
  EXPECT_EQ(MidKey("b", "a"), std::nullopt);       // hi below lo
  EXPECT_EQ(MidKey("a", "a"), std::nullopt);
  EXPECT_EQ(MidKey("a\xff", std::nullopt), std::nullopt);  // not UTF-8
}

TEST(KeyRangeTest, MidKeyAvoidsControlCharactersWhenThereIsRoom) {
  auto m = MidKey("", "b");
  ASSERT_TRUE(m);
  EXPECT_GE(static_cast<unsigned char>((*m)[0]), 0x20);
}

// Random pairs, including non-ASCII and neighbouring characters.
TEST(KeyRangeTest, MidKeyPropertyOnRandomPairs) {
  std::mt19937 rng(7);
  const char* alphabet[] = {"a", "b", "/", "0", "9", "~", " ", "ü", "ñ", "照", "\xf0\x9f\x98\x80",
                            "\x7f", "\xc2\x80", "\xee\x80\x80"};
  auto word = [&] {
    std::string s;
    int n = static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) s += alphabet[rng() % std::size(alphabet)];
    return s;
  };
  for (int i = 0; i < 20000; ++i) {
    std::string a = word(), b = word();
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    auto m = MidKey(a, std::string_view(b));
    if (!m) continue;  // e.g. "a" and "a " with nothing between but controls
    ASSERT_GT(*m, a);
    ASSERT_LT(*m, b) << a << " .. " << b;
    ASSERT_TRUE(ValidUtf8(*m));
  }
}

// The bisection a lister runs to split a range it is listing: probe a
// boundary, and if nothing lies above it, probe lower. It must find keys in
// a few probes, with ASCII, numeric and non-ASCII keys alike.
TEST(KeyRangeTest, BisectionFindsTheKeysAboveACursorInFewProbes) {
  struct Case {
    std::vector<std::string> keys;
    std::string prefix;
    int max_probes;
  };
  std::vector<std::string> numbers, cjk;
  for (int i = 0; i < 100000; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "big/%06d", i);
    numbers.push_back(buf);
  }
  for (const char* k : {"照片/1", "照片/2", "照片/3", "照片/4"}) cjk.push_back(k);
  // About seven probes per character position the keys share beyond the
  // cursor's: "big/0xxxxx" takes two positions.
  for (const Case& c : {Case{numbers, "big/", 16}, Case{cjk, "照片/", 24}}) {
    std::set<std::string> keys(c.keys.begin(), c.keys.end());
    std::string cursor = *keys.begin();
    std::optional<std::string> hi = PrefixEnd(c.prefix);
    int probes = 0;
    std::optional<std::string> split;
    while (probes < 32) {
      auto s = MidKey(cursor, hi ? std::optional<std::string_view>(*hi) : std::nullopt);
      ASSERT_TRUE(s);
      ++probes;
      if (keys.upper_bound(*s) != keys.end()) {
        split = s;
        break;
      }
      hi = *s;
    }
    ASSERT_TRUE(split) << c.prefix;
    EXPECT_LE(probes, c.max_probes) << c.prefix;
    // Both sides of the split hold keys.
    EXPECT_GT(*split, cursor);
    EXPECT_NE(keys.upper_bound(*split), keys.end());
  }
}

TEST(KeyRangeTest, SuccessorBoundsDescendFromTheCoarsest) {
  EXPECT_EQ(SuccessorBounds("o0019", 1),
            (std::vector<std::string>{"o1", "o01", "o002", "o001:"}));
  EXPECT_EQ(SuccessorBounds("ab", 0), (std::vector<std::string>{"b", "ac"}));
  EXPECT_EQ(SuccessorBounds("照/", 0), (std::vector<std::string>{"\xe7\x85\xa8", "照0"}));
  EXPECT_EQ(SuccessorBounds("a\xf4\x8f\xbf\xbf", 0), (std::vector<std::string>{"b"}));
  EXPECT_TRUE(SuccessorBounds("ab", 5).empty());
  EXPECT_TRUE(SuccessorBounds("a\xff", 0).empty());
  for (const auto& t : SuccessorBounds("p00/d0/o00001999", 4)) EXPECT_GT(t, "p00/d0/o00001999");
}

TEST(KeyRangeTest, ThinBoundsKeepsWhatIsInsideSortedAndEvenlyThinned) {
  EXPECT_EQ(ThinBounds({"c/", "a/", "b/", "a/"}, "", "", 10),
            (std::vector<std::string>{"a/", "b/", "c/"}));
  EXPECT_EQ(ThinBounds({"a/", "b/", "c/", "d/"}, "a/", "d/", 10),
            (std::vector<std::string>{"b/", "c/"}));
  std::vector<std::string> many;
  for (int i = 0; i < 100; ++i) many.push_back(std::to_string(1000 + i));
  auto thin = ThinBounds(many, "", "", 4);
  EXPECT_EQ(thin, (std::vector<std::string>{"1020", "1040", "1060", "1080"}));
  EXPECT_TRUE(ThinBounds(many, "", "", 0).empty());
}

ObjectInfo O(const char* key) {
  ObjectInfo o;
  o.key = key;
  return o;
}

TEST(KeyRangeTest, CheckRangePageFindsBrokenPromisesAndTheEndOfTheRange) {
  auto ok = CheckRangePage({O("p/a"), O("p/b"), O("p/c")}, "p/", "", "p/b");
  EXPECT_TRUE(ok.in_order);
  EXPECT_EQ(ok.keep, 2u);
  EXPECT_TRUE(ok.past_upper);

  auto all = CheckRangePage({O("p/a"), O("p/b")}, "p/", "p/", "");
  EXPECT_TRUE(all.in_order);
  EXPECT_EQ(all.keep, 2u);
  EXPECT_FALSE(all.past_upper);

  auto ignored = CheckRangePage({O("p/a"), O("p/b")}, "p/", "p/b", "");
  EXPECT_FALSE(ignored.in_order);
  EXPECT_NE(ignored.why.find("start-after"), std::string::npos) << ignored.why;

  // Out of order after the range's end still counts: keys below upper may
  // be hiding behind it.
  auto late = CheckRangePage({O("p/a"), O("p/x/1"), O("p/x-1")}, "p/", "", "p/x");
  EXPECT_FALSE(late.in_order);
  EXPECT_NE(late.why.find("byte order"), std::string::npos) << late.why;

  auto outside = CheckRangePage({O("q/a")}, "p/", "", "");
  EXPECT_FALSE(outside.in_order);

  auto empty = CheckRangePage({}, "p/", "p/a", "");
  EXPECT_TRUE(empty.in_order);
  EXPECT_EQ(empty.keep, 0u);
}

}  // namespace
}  // namespace ferry::migrate
