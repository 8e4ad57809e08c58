#include "store/local/key_path.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace ferry::local {
namespace {

struct Case {
  std::string key;
  std::string path;
};

TEST(KeyPathTest, TableOfEncodings) {
  const std::vector<Case> cases = {
      {"a", "a"},
      {"photos/2024/a b.jpg", "photos/2024/a b.jpg"},
      {"a+b~c", "a+b~c"},
      {"100%", "100%25"},
      {"%25", "%2525"},
      {"%2E%2E", "%252E%252E"},
      {"%+", "%25+"},
      {"dir/", "dir/%"},
      {"/lead", "%/lead"},
      {"a//b", "a/%/b"},
      {"/", "%/%"},
      {".", "%2E"},
      {"..", "%2E%2E"},
      {"../etc/passwd", "%2E%2E/etc/passwd"},
      {"a/../b", "a/%2E%2E/b"},
      {"a/./b", "a/%2E/b"},
      {"...", "..."},
      {".hidden", ".hidden"},
      {"caf\xC3\xA9/\xE6\x97\xA5\xE6\x9C\xAC", "caf\xC3\xA9/\xE6\x97\xA5\xE6\x9C\xAC"},
      {"back\\slash", "back\\slash"},
  };
  for (const Case& c : cases) {
    auto path = EncodeKey(c.key);
    ASSERT_TRUE(path.ok()) << c.key << ": " << path.status().ToString();
    EXPECT_EQ(*path, c.path) << "key " << c.key;
    auto key = DecodeKey(c.path);
    ASSERT_TRUE(key.ok()) << c.path << ": " << key.status().ToString();
    EXPECT_EQ(*key, c.key);
  }
}

TEST(KeyPathTest, RejectsInvalidKeys) {
  const std::vector<std::string> bad = {
      "",
      std::string("a\0b", 3),
      std::string(1025, 'x'),
      "\xFF",
      "\xC0\xAF",          // overlong '/'
      "\xED\xA0\x80",      // surrogate
      "\xF4\x90\x80\x80",  // > U+10FFFF
      "\xE6\x97",          // truncated sequence
  };
  for (const std::string& key : bad) {
    auto path = EncodeKey(key);
    ASSERT_FALSE(path.ok()) << "accepted: " << key;
    EXPECT_EQ(path.status().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(EncodeKey(std::string(1024, 'x')).ok());
}

TEST(KeyPathTest, LongSegmentsAreSplitWithinNameMax) {
  for (size_t len : {239u, 240u, 241u, 500u, 1024u}) {
    std::string key(len, 'k');
    auto path = EncodeKey(key);
    ASSERT_TRUE(path.ok());
    size_t start = 0;
    size_t components = 0;
    while (start <= path->size()) {
      size_t slash = path->find('/', start);
      if (slash == std::string::npos) slash = path->size();
      std::string_view c(path->data() + start, slash - start);
      EXPECT_LE(c.size(), kMaxComponentBytes);
      bool last = slash == path->size();
      EXPECT_EQ(c.ends_with(kContinuationMarker), !last) << c;
      ++components;
      start = slash + 1;
    }
    EXPECT_EQ(components,
              (len <= kMaxComponentBytes) ? 1u : (len + kMaxPieceBytes - 1) / kMaxPieceBytes);
    EXPECT_EQ(*DecodeKey(*path), key);
  }
}

TEST(KeyPathTest, SplitsNeverCutEscapesOrUtf8) {
  // 237 'a' then "%" (3 bytes escaped) does not fit the 238-byte piece.
  std::string key = std::string(237, 'a') + "%" + std::string(10, 'b');
  auto path = EncodeKey(key);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, std::string(237, 'a') + "%+/%25" + std::string(10, 'b'));
  std::string utf = std::string(237, 'a') + "\xE6\x97\xA5" + std::string(10, 'b');
  path = EncodeKey(utf);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, std::string(237, 'a') + "%+/\xE6\x97\xA5" + std::string(10, 'b'));
}

TEST(KeyPathTest, TrailingDotsOfSplitSegmentAreEscaped) {
  // Two full pieces, then a final piece of "..": it must not name the parent.
  std::string piece(kMaxPieceBytes, 'a');
  std::string key = piece + piece + "..";
  auto path = EncodeKey(key);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, piece + "%+/" + piece + "%+/%2E%2E");
  EXPECT_EQ(*DecodeKey(*path), key);
}

TEST(KeyPathTest, DecodeRejectsNonCanonicalAndReservedPaths) {
  const std::vector<std::string> bad = {
      "",        ".",   "..",  "a/../b", "a/./b", "/a",    "a/", "a//b",  "100%.txt", "%mpu",
      ".x%meta", "%zz", "%2e", "%2F",    "a%+",   "a%+/%", "%+", "a%+/b", "%41",      "a/%mpu/b",
  };
  for (const std::string& p : bad) {
    EXPECT_FALSE(DecodeKey(p).ok()) << "decoded: " << p;
  }
}

TEST(KeyPathTest, ReservedNamesNeverCollideWithEncodings) {
  for (std::string_view name : {"%mpu", ".%tmp.0123abcd", ".a%meta", ".%%meta", "%tmp"}) {
    EXPECT_TRUE(IsReservedName(name)) << name;
  }
  for (std::string_view name : {"a", "%", "%2E", "%2E%2E", "x%25", "abc%+"}) {
    EXPECT_FALSE(IsReservedName(name)) << name;
  }
}

// Every component of an encoded path is a plain name: never empty, ".",
// "..", and never longer than NAME_MAX, so the path stays inside the root.
void ExpectConfined(const std::string& key, const std::string& path) {
  ASSERT_FALSE(path.empty()) << key;
  ASSERT_NE(path.front(), '/') << key;
  ASSERT_NE(path.back(), '/') << key;
  size_t start = 0;
  for (;;) {
    size_t slash = path.find('/', start);
    std::string_view c(path.data() + start,
                       (slash == std::string::npos ? path.size() : slash) - start);
    ASSERT_FALSE(c.empty()) << key;
    ASSERT_NE(c, ".") << key;
    ASSERT_NE(c, "..") << key;
    ASSERT_LE(c.size(), kMaxComponentBytes) << key;
    ASSERT_EQ(c.find('\0'), std::string_view::npos);
    ASSERT_FALSE(IsReservedName(c)) << key;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
}

TEST(KeyPathTest, RandomTrickyKeysRoundTripAndStayInside) {
  const std::vector<std::string> alphabet = {"/",
                                             "/",
                                             ".",
                                             ".",
                                             "%",
                                             "+",
                                             "~",
                                             " ",
                                             "a",
                                             "Z",
                                             "2",
                                             "E",
                                             "%2E",
                                             "%25",
                                             "%+",
                                             "\xC3\xA9",
                                             "\xE6\x97\xA5",
                                             "\xF0\x9F\x98\x80",
                                             "\\",
                                             "\n",
                                             "-",
                                             ":"};
  std::mt19937 rng(20240611);
  for (int iter = 0; iter < 20000; ++iter) {
    size_t target = std::uniform_int_distribution<size_t>(1, iter % 10 == 0 ? 1024 : 40)(rng);
    std::string key;
    while (key.size() < target) {
      const std::string& sym = alphabet[rng() % alphabet.size()];
      if (key.size() + sym.size() > target) break;
      key += sym;
    }
    if (key.empty()) continue;
    auto path = EncodeKey(key);
    ASSERT_TRUE(path.ok()) << key;
    ExpectConfined(key, *path);
    auto back = DecodeKey(*path);
    ASSERT_TRUE(back.ok()) << key << " -> " << *path;
    ASSERT_EQ(*back, key);
  }
}

TEST(KeyPathTest, LongRunsOfEscapesStayUnderPathMax) {
  std::string key(1024, '%');
  auto path = EncodeKey(key);
  ASSERT_TRUE(path.ok());
  ExpectConfined(key, *path);
  EXPECT_LT(path->size(), 3300u);
  EXPECT_EQ(*DecodeKey(*path), key);
  std::string slashes(1024, '/');
  path = EncodeKey(slashes);
  ASSERT_TRUE(path.ok());
  ExpectConfined(slashes, *path);
  EXPECT_EQ(*DecodeKey(*path), slashes);
}

}  // namespace
}  // namespace ferry::local
