#include "storage.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "crypto/digest.h"
#include "dir_store.h"

namespace ferry::s3server {
namespace {

std::shared_ptr<const Blob> MakeBlob(Storage& s, const std::string& data) {
  auto w = s.blobs().NewWriter(data.size());
  EXPECT_TRUE(w.ok());
  EXPECT_TRUE((*w)->Append(data).ok());
  auto b = (*w)->Finish();
  EXPECT_TRUE(b.ok());
  return *b;
}

PartRecord Part(Storage& s, int n, const std::string& data) {
  PartRecord p;
  p.number = n;
  p.blob = MakeBlob(s, data);
  p.size = data.size();
  p.etag = HexLower(Md5(data));
  return p;
}

TEST(MultipartEtag, MatchesS3Definition) {
  // md5(md5("a") || md5("b")) + "-2", computed independently.
  EXPECT_EQ(MultipartEtag({HexLower(Md5("a")), HexLower(Md5("b"))}),
            "96e024ba2074fe77e8e965ba43a704be-2");
  EXPECT_EQ(StripQuotes("\"abc\""), "abc");
  EXPECT_EQ(StripQuotes("abc"), "abc");
}

class StorageTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      root_ = std::filesystem::temp_directory_path() /
              ("ferry-s3server-test-" + std::to_string(::getpid()));
      std::filesystem::remove_all(root_);
      auto opened = OpenDirectoryStorage(root_);
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      storage_ = std::move(opened).value();
    } else {
      storage_ = NewMemoryStorage();
    }
    ASSERT_TRUE(storage_->CreateBucket("bkt").ok());
  }
  void TearDown() override {
    storage_.reset();
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }

  std::filesystem::path root_;
  std::unique_ptr<Storage> storage_;
};

TEST_P(StorageTest, CompleteValidatesAndConcatenates) {
  Storage& s = *storage_;
  ObjectMeta meta;
  meta.content_type = "text/plain";
  auto id = s.CreateUpload("bkt", "k", meta);
  ASSERT_TRUE(id.ok());
  std::string p1(10, '1'), p2(10, '2'), p3 = "tail";
  ASSERT_TRUE(s.PutPart("bkt", "k", *id, Part(s, 1, p1)).ok());
  ASSERT_TRUE(s.PutPart("bkt", "k", *id, Part(s, 2, p2)).ok());
  ASSERT_TRUE(s.PutPart("bkt", "k", *id, Part(s, 3, p3)).ok());
  std::string e1 = HexLower(Md5(p1)), e2 = HexLower(Md5(p2)), e3 = HexLower(Md5(p3));

  auto code = [&](std::vector<CompletedPart> parts, uint64_t min) {
    auto r = s.CompleteUpload("bkt", "k", *id, parts, min);
    return r.ok() ? std::string("OK") : r.status().remote_code();
  };
  EXPECT_EQ(code({{2, e2}, {1, e1}}, 0), "InvalidPartOrder");
  EXPECT_EQ(code({{1, e1}, {1, e1}}, 0), "InvalidPartOrder");
  EXPECT_EQ(code({{1, e2}}, 0), "InvalidPart");
  EXPECT_EQ(code({{1, e1}, {4, e1}}, 0), "InvalidPart");
  EXPECT_EQ(code({{1, e1}, {2, e2}}, 11), "EntityTooSmall");
  EXPECT_EQ(code({}, 0), "MalformedXML");
  EXPECT_EQ(s.upload_count(), 1u);  // failed completes leave the upload

  auto rec = s.CompleteUpload("bkt", "k", *id, {{1, "\"" + e1 + "\""}, {3, e3}}, 10);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  EXPECT_EQ(rec->etag, MultipartEtag({e1, e3}));
  EXPECT_EQ(rec->size, 14u);
  EXPECT_EQ(s.upload_count(), 0u);

  auto got = s.GetObject("bkt", "k");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*ReadAll(*got->blob), p1 + p3);
  EXPECT_EQ(got->meta.content_type, "text/plain");
  EXPECT_EQ(s.CompleteUpload("bkt", "k", *id, {{1, e1}}, 0).status().remote_code(),
            "NoSuchUpload");
}

TEST_P(StorageTest, UploadsAreScopedToBucketAndKey) {
  Storage& s = *storage_;
  auto id = s.CreateUpload("bkt", "k", {});
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(s.CheckUpload("bkt", "other", *id).remote_code(), "NoSuchUpload");
  EXPECT_EQ(s.CheckUpload("nobkt", "k", *id).remote_code(), "NoSuchBucket");
  auto uploads = s.ListUploads("bkt", "");
  ASSERT_TRUE(uploads.ok());
  ASSERT_EQ(uploads->size(), 1u);
  EXPECT_EQ((*uploads)[0].upload_id, *id);
  EXPECT_EQ(s.DeleteBucket("bkt").remote_code(), "BucketNotEmpty");
  ASSERT_TRUE(s.AbortUpload("bkt", "k", *id).ok());
  EXPECT_EQ(s.AbortUpload("bkt", "k", *id).remote_code(), "NoSuchUpload");
  EXPECT_TRUE(s.DeleteBucket("bkt").ok());
}

TEST_P(StorageTest, ObjectsAndBuckets) {
  Storage& s = *storage_;
  EXPECT_EQ(s.CreateBucket("bkt").remote_code(), "BucketAlreadyOwnedByYou");
  EXPECT_EQ(s.CreateBucket("Bad_Name").remote_code(), "InvalidBucketName");
  ObjectRecord rec;
  rec.key = "dir//odd key+%";
  rec.blob = MakeBlob(s, "hello");
  rec.size = 5;
  rec.etag = HexLower(Md5("hello"));
  ASSERT_TRUE(s.PutObject("bkt", rec).ok());
  EXPECT_EQ(s.GetObject("bkt", "nope").status().remote_code(), "NoSuchKey");
  EXPECT_EQ(s.GetObject("nobkt", "x").status().remote_code(), "NoSuchBucket");
  EXPECT_EQ(s.DeleteBucket("bkt").remote_code(), "BucketNotEmpty");
  EXPECT_TRUE(s.DeleteObject("bkt", "nope").ok());
  EXPECT_TRUE(s.DeleteObject("bkt", rec.key).ok());
  EXPECT_EQ(s.object_count(), 0u);
}

// The unordered list quirk's walk index, built by the first unordered
// listing, follows every later write: PUT, multipart complete, DELETE.
TEST_P(StorageTest, UnorderedListingFollowsWrites) {
  Storage& s = *storage_;
  ListQuirks unordered;
  unordered.unordered = true;
  auto list = [&]() {
    auto r = s.ListObjects("bkt", ListRequest{}, unordered);
    EXPECT_TRUE(r.ok());
    std::vector<std::string> keys;
    for (const auto& o : r->objects) keys.push_back(o.key);
    return keys;
  };
  auto put = [&](const std::string& key) {
    ObjectRecord rec;
    rec.key = key;
    rec.blob = MakeBlob(s, "v");
    rec.size = 1;
    rec.etag = HexLower(Md5("v"));
    ASSERT_TRUE(s.PutObject("bkt", rec).ok());
  };
  put("x-1");
  EXPECT_EQ(list(), (std::vector<std::string>{"x-1"}));
  put("x/1");
  put("x/1");
  auto id = s.CreateUpload("bkt", "x!", {});
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(s.PutPart("bkt", "x!", *id, Part(s, 1, "p")).ok());
  ASSERT_TRUE(s.CompleteUpload("bkt", "x!", *id, {{1, HexLower(Md5("p"))}}, 0).ok());
  EXPECT_EQ(list(), (std::vector<std::string>{"x/1", "x!", "x-1"}));
  ASSERT_TRUE(s.DeleteObject("bkt", "x/1").ok());
  EXPECT_EQ(list(), (std::vector<std::string>{"x!", "x-1"}));
  EXPECT_EQ(s.ListObjects("nobkt", ListRequest{}, unordered).status().remote_code(),
            "NoSuchBucket");
}

TEST(DirectoryStorage, SurvivesReopen) {
  auto root = std::filesystem::temp_directory_path() /
              ("ferry-s3server-reopen-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::string big(3 << 20, 'q');
  {
    auto s = OpenDirectoryStorage(root);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->CreateBucket("keep").ok());
    ObjectRecord rec;
    rec.key = std::string("\xff/../x", 6);
    rec.blob = MakeBlob(**s, big);
    rec.size = big.size();
    rec.etag = "e";
    rec.meta.user["color"] = "blue";
    ASSERT_TRUE((*s)->PutObject("keep", rec).ok());
    // An upload in progress at shutdown leaves an orphan part file.
    auto id = (*s)->CreateUpload("keep", "u", {});
    ASSERT_TRUE((*s)->PutPart("keep", "u", *id, Part(**s, 1, "part")).ok());
  }
  auto s = OpenDirectoryStorage(root);
  ASSERT_TRUE(s.ok());
  auto got = (*s)->GetObject("keep", std::string("\xff/../x", 6));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*ReadAll(*got->blob), big);
  EXPECT_EQ(got->meta.user.at("color"), "blue");
  EXPECT_EQ((*s)->upload_count(), 0u);
  size_t blob_files = 0;
  for (auto& e : std::filesystem::directory_iterator(root / ".ferry-blobs")) {
    (void)e;
    ++blob_files;
  }
  EXPECT_EQ(blob_files, 1u);  // the orphan part was collected
  // Deleting the object deletes its file.
  ASSERT_TRUE((*s)->DeleteObject("keep", got->key).ok());
  got = Result<ObjectRecord>(Status::NotFound(""));
  EXPECT_TRUE(std::filesystem::is_empty(root / ".ferry-blobs"));
  s = Result<std::unique_ptr<Storage>>(Status::NotFound(""));
  std::filesystem::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(MemoryAndDirectory, StorageTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Directory" : "Memory"; });

}  // namespace
}  // namespace ferry::s3server
