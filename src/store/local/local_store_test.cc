// LocalStore behaviour beyond the shared conformance suite
// (tests/conformance): the on-disk layout, conflicts, foreign and stale
// files, confinement to the root, and listing checked against a model.

#include "store/local/local_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "crypto/digest.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

class LocalStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ferry-local-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    work_ = tmpl;
    root_ = work_ / "root";
    auto opened = OpenLocalStore(root_.string(), /*create=*/true);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(*opened);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    fs::remove_all(work_, ec);
  }

  Result<ObjectInfo> Put(const std::string& key, const std::string& data,
                         const PutOptions& options = {}) {
    StringSource source(data);
    return store_->Put(key, source, data.size(), options);
  }
  std::string Get(const std::string& key, const GetOptions& options = {}) {
    StringSink sink;
    auto info = store_->Get(key, options, sink);
    EXPECT_TRUE(info.ok()) << key << ": " << info.status().ToString();
    return sink.data();
  }
  std::vector<std::string> Keys(ListOptions options = {}) {
    std::vector<std::string> keys;
    for (;;) {
      auto page = store_->List(options);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) return keys;
      for (const ObjectInfo& o : page->objects) keys.push_back(o.key);
      if (!page->truncated) return keys;
      options.continuation_token = page->next_continuation_token;
    }
  }
  // Every path below the root (relative), files and directories.
  std::set<std::string> Tree() {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root_)) {
      out.insert(fs::relative(e.path(), root_).string());
    }
    return out;
  }
  static void WriteFile(const fs::path& path, const std::string& data) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << data;
  }

  fs::path work_;
  fs::path root_;
  std::unique_ptr<ObjectStore> store_;
};

TEST_F(LocalStoreTest, OrdinaryKeysMapToPlainPathsWithHiddenSidecars) {
  PutOptions options;
  options.headers.content_type = "image/jpeg";
  ASSERT_TRUE(Put("photos/2024/a b.jpg", "jpeg bytes", options).ok());
  EXPECT_EQ(Tree(), (std::set<std::string>{"photos", "photos/2024", "photos/2024/a b.jpg",
                                           "photos/2024/.a b.jpg%meta"}));
  std::ifstream in(root_ / "photos/2024/a b.jpg", std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "jpeg bytes");
}

TEST_F(LocalStoreTest, OpenRequiresAnExistingDirectoryUnlessCreating) {
  auto missing = OpenLocalStore((work_ / "nope").string(), false);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  WriteFile(work_ / "file", "x");
  auto file = OpenLocalStore((work_ / "file").string(), true);
  ASSERT_FALSE(file.ok());
  auto created = OpenLocalStore((work_ / "new/deep/root").string(), true);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)->Describe(), (work_ / "new/deep/root").string());
  EXPECT_TRUE((*created)->Features().server_side_copy);
  EXPECT_EQ((*created)->Features().min_part_size, 1u);
}

TEST_F(LocalStoreTest, FileDirectoryConflictsAreReportedNotCorrupted) {
  ASSERT_TRUE(Put("a", "file a").ok());
  auto below = Put("a/b", "under a");
  ASSERT_FALSE(below.ok());
  EXPECT_EQ(below.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(below.status().message().find("conflicts"), std::string::npos)
      << below.status().message();
  EXPECT_NE(below.status().message().find("'a/b'"), std::string::npos);

  ASSERT_TRUE(Put("d/x", "under d").ok());
  auto over = Put("d", "file d");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(over.status().message().find("conflicts with directory"), std::string::npos)
      << over.status().message();

  EXPECT_EQ(Get("a"), "file a");
  EXPECT_EQ(Get("d/x"), "under d");
  EXPECT_EQ(Keys(), (std::vector<std::string>{"a", "d/x"}));
  for (const std::string& p : Tree()) EXPECT_EQ(p.find("%tmp"), std::string::npos) << p;
  // Deleting "d" (a directory of longer keys) is deleting a missing key.
  EXPECT_TRUE(store_->Delete("d").ok());
  EXPECT_EQ(Get("d/x"), "under d");
}

TEST_F(LocalStoreTest, NoKeyEscapesTheRoot) {
  const std::vector<std::string> keys = {
      "../escape", "a/../../escape", "/abs/escape", "%2E%2E/escape", "../..",     "./.",
      "./x",       "a/./../b",       "....//..",    "//..//",        "x/..%2F..", "%2e%2e",
  };
  for (const std::string& key : keys) {
    auto put = Put(key, "k=" + key);
    ASSERT_TRUE(put.ok()) << key << ": " << put.status().ToString();
  }
  EXPECT_EQ(fs::directory_iterator(work_)->path(), root_);
  EXPECT_EQ(std::distance(fs::directory_iterator(work_), fs::directory_iterator()), 1)
      << "something was written next to the root";
  for (const std::string& key : keys) EXPECT_EQ(Get(key), "k=" + key);
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(Keys(), sorted);
}

TEST_F(LocalStoreTest, InvalidKeysAreRejected) {
  for (const std::string& key :
       {std::string(), std::string("a\0b", 3), std::string(1025, 'k'), std::string("\xFF\xFE")}) {
    auto put = Put(key, "x");
    ASSERT_FALSE(put.ok());
    EXPECT_EQ(put.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(store_->Head(key).status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(store_->Delete(key).code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(Tree().empty());
}

TEST_F(LocalStoreTest, ForeignFilesAreObjects) {
  WriteFile(root_ / "imported/report.csv", "a,b\n1,2\n");
  ListOptions options;
  auto page = store_->List(options);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "imported/report.csv");
  EXPECT_EQ(page->objects[0].size, 8u);
  EXPECT_EQ(page->objects[0].etag, "") << "List does not hash foreign files";
  const std::string md5 = HexLower(Md5("a,b\n1,2\n"));
  auto head = store_->Head("imported/report.csv");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->etag, md5);
  EXPECT_EQ(head->headers, ObjectHeaders{});
  StringSink sink;
  auto got = store_->Get("imported/report.csv", {}, sink);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->etag, md5);
  EXPECT_EQ(sink.data(), "a,b\n1,2\n");
  GetOptions range;
  range.range = ByteRange{4, 3};
  EXPECT_EQ(Get("imported/report.csv", range), "1,2");
  GetOptions match;
  match.if_match = md5;
  EXPECT_EQ(Get("imported/report.csv", match), "a,b\n1,2\n");
}

TEST_F(LocalStoreTest, StaleSidecarIsIgnored) {
  PutOptions options;
  options.headers.content_type = "text/plain";
  options.headers.user = {{"k", "v"}};
  ASSERT_TRUE(Put("doc.txt", "original", options).ok());
  // Another tool rewrites the file: size and mtime change, the sidecar stays.
  WriteFile(root_ / "doc.txt", "rewritten by hand");
  auto head = store_->Head("doc.txt");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->etag, HexLower(Md5("rewritten by hand")));
  EXPECT_EQ(head->headers, ObjectHeaders{});
  // A corrupt sidecar is ignored too.
  ASSERT_TRUE(Put("doc2.txt", "x", options).ok());
  WriteFile(root_ / ".doc2.txt%meta", "{not json");
  head = store_->Head("doc2.txt");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->etag, HexLower(Md5("x")));
}

TEST_F(LocalStoreTest, InternalAndForeignNamesNeverListed) {
  ASSERT_TRUE(Put("real", "1").ok());
  auto upload = store_->CreateMultipart("pending", {});
  ASSERT_TRUE(upload.ok());
  StringSource part("p");
  ASSERT_TRUE(store_->UploadPart("pending", *upload, 1, part, 1, "").ok());
  WriteFile(root_ / ".%tmp.0123456789abcdef", "temp");
  WriteFile(root_ / "100%.txt", "not canonical");
  WriteFile(root_ / "weird%zz/inside", "below a reserved name");
  WriteFile(root_ / "a%+", "continuation marker on a file");
  fs::create_directories(root_ / "empty/dirs/only");
  EXPECT_EQ(Keys(), std::vector<std::string>{"real"});
  ListOptions delim;
  delim.delimiter = "/";
  auto page = store_->List(delim);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->common_prefixes.empty()) << "empty directories are not prefixes";
  EXPECT_EQ(page->objects.size(), 1u);
}

TEST_F(LocalStoreTest, DeletePrunesEmptyDirectories) {
  ASSERT_TRUE(Put("a/b/c/d", "deep").ok());
  ASSERT_TRUE(Put("a/keep", "k").ok());
  ASSERT_TRUE(store_->Delete("a/b/c/d").ok());
  EXPECT_EQ(Tree(), (std::set<std::string>{"a", "a/keep", "a/.keep%meta"}));
  ASSERT_TRUE(store_->Delete("a/keep").ok());
  EXPECT_TRUE(Tree().empty());
}

TEST_F(LocalStoreTest, BodyOfWrongLengthIsRejectedAndLeavesNothing) {
  StringSource shorter("abc");
  auto put = store_->Put("x/short", shorter, 10, {});
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().code(), ErrorCode::kCorruption);
  StringSource longer("abcdef");
  put = store_->Put("x/long", longer, 3, {});
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Tree().empty());
}

TEST_F(LocalStoreTest, MultipartStagingIsConfinedAndCleanedUp) {
  auto id = store_->CreateMultipart("obj", {});
  ASSERT_TRUE(id.ok());
  StringSource body("x");
  EXPECT_EQ(store_->UploadPart("obj", "../../../etc", 1, body, 1, "").status().code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(store_->ListParts("other-key", *id).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->UploadPart("obj", *id, 0, body, 1, "").status().code(),
            ErrorCode::kInvalidArgument);
  StringSource p1("hello "), p2("world");
  auto a = store_->UploadPart("obj", *id, 1, p1, 6, "");
  auto b = store_->UploadPart("obj", *id, 2, p2, 5, "");
  ASSERT_TRUE(a.ok() && b.ok());
  auto done = store_->CompleteMultipart("obj", *id, {*a, *b});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(Get("obj"), "hello world");
  EXPECT_EQ(Tree(), (std::set<std::string>{"%mpu", "obj", ".obj%meta"}));
}

// Listing compared with a model of S3 semantics over random tricky keys,
// including long segments (continuation directories) and every option.
class ListingModelTest : public LocalStoreTest, public ::testing::WithParamInterface<int> {};

TEST_P(ListingModelTest, ListingMatchesModel) {
  LocalStoreOptions fast;
  fast.sync = false;  // durability is not under test; speed is welcome
  auto opened = OpenLocalStore(root_.string(), fast);
  ASSERT_TRUE(opened.ok());
  store_ = std::move(*opened);
  std::mt19937 rng(static_cast<uint32_t>(GetParam()));
  const std::vector<std::string> alphabet = {"a", "b", "-", "%", "+", " ", ".", "\xC3\xA9", "/"};
  std::set<std::string> model;
  for (int i = 0; i < 300; ++i) {
    std::string key;
    size_t len = 1 + rng() % 8;
    for (size_t j = 0; j < len; ++j) key += alphabet[rng() % alphabet.size()];
    if (rng() % 10 == 0) key = (rng() % 2 ? "q" : "a/") + std::string(230 + rng() % 40, 'q') + key;
    auto put = Put(key, key);
    if (put.ok()) {
      model.insert(key);
    } else {
      ASSERT_EQ(put.status().code(), ErrorCode::kAlreadyExists)
          << "key '" << key << "': " << put.status().ToString();
    }
  }
  ASSERT_GT(model.size(), 100u);
  std::vector<std::string> sorted(model.begin(), model.end());
  for (int q = 0; q < 300; ++q) {
    ListOptions o;
    const std::string& some = sorted[rng() % sorted.size()];
    o.prefix = rng() % 4 == 0 ? "" : some.substr(0, rng() % (some.size() + 1));
    const char* delimiters[] = {"", "/", "-", "a/", "q"};
    o.delimiter = delimiters[rng() % 5];
    if (rng() % 3 == 0) o.start_after = sorted[rng() % sorted.size()];
    o.max_keys = 1 + static_cast<int>(rng() % 7);
    // The model: S3's ListObjectsV2 over the sorted keys, as one sequence.
    std::vector<std::string> want;
    std::string last_prefix;
    for (const std::string& k : sorted) {
      if (k <= o.start_after || !k.starts_with(o.prefix)) continue;
      size_t pos = o.delimiter.empty() ? std::string::npos : k.find(o.delimiter, o.prefix.size());
      if (pos == std::string::npos) {
        want.push_back("O:" + k);
        continue;
      }
      std::string common = k.substr(0, pos + o.delimiter.size());
      if (common != last_prefix) want.push_back("P:" + common);
      last_prefix = common;
    }
    std::vector<std::string> got;
    ListOptions page_options = o;
    for (int pages = 0; pages < 1000; ++pages) {
      auto page = store_->List(page_options);
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      ASSERT_LE(static_cast<int>(page->objects.size() + page->common_prefixes.size()), o.max_keys);
      // Merge the page's objects and prefixes back into one ordered sequence.
      std::vector<std::string> merged;
      for (const ObjectInfo& obj : page->objects) merged.push_back("O:" + obj.key);
      for (const std::string& p : page->common_prefixes) merged.push_back("P:" + p);
      std::sort(merged.begin(), merged.end(), [](const std::string& x, const std::string& y) {
        return x.substr(2) < y.substr(2);
      });
      got.insert(got.end(), merged.begin(), merged.end());
      if (!page->truncated) break;
      page_options.continuation_token = page->next_continuation_token;
    }
    ASSERT_EQ(got, want) << "prefix='" << o.prefix << "' delimiter='" << o.delimiter
                         << "' start_after='" << o.start_after << "' max_keys=" << o.max_keys;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ListingModelTest, ::testing::Values(77, 78));

}  // namespace
}  // namespace ferry
