// Conformance cases for multipart uploads.

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "conformance/conformance_util.h"
#include "conformance/store_conformance.h"

namespace ferry::conformance {
namespace {

// Part bodies: every part but the last has the store's minimum size (at
// least 64 KiB, so parts are not trivially small), the last is shorter.
std::vector<std::string> MakeParts(const StoreFeatures& f, int count, uint32_t seed) {
  size_t full = static_cast<size_t>(std::max<uint64_t>(f.min_part_size, 64 << 10));
  std::vector<std::string> parts;
  for (int i = 0; i < count; ++i) {
    parts.push_back(TestBytes(i + 1 == count ? 1000 : full, seed + static_cast<uint32_t>(i)));
  }
  return parts;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string all;
  for (const std::string& p : parts) all += p;
  return all;
}

class MultipartUpload {
 public:
  MultipartUpload(ObjectStore& store, std::string key) : store_(store), key_(std::move(key)) {}

  Status Create(const PutOptions& options = {}) {
    auto id = store_.CreateMultipart(key_, options);
    if (!id.ok()) return id.status();
    id_ = *id;
    return Status::Ok();
  }
  Result<PartInfo> Upload(int number, const std::string& data, std::string content_md5 = "") {
    StringSource body(data);
    return store_.UploadPart(key_, id_, number, body, data.size(), content_md5);
  }
  const std::string& id() const { return id_; }
  const std::string& key() const { return key_; }

 private:
  ObjectStore& store_;
  std::string key_;
  std::string id_;
};

TEST_P(StoreConformanceTest, MultipartOutOfOrderUploadCompletes) {
  FERRY_REQUIRE_CAPABILITY(multipart);
  const std::vector<std::string> parts = MakeParts(store().Features(), 3, 10);
  const std::string key = K("multi/object.bin");
  PutOptions options;
  options.headers.content_type = "application/x-test";
  options.headers.user = {{"origin", "multipart"}};
  MultipartUpload up(store(), key);
  ASSERT_TRUE(up.Create(options).ok());
  ASSERT_FALSE(up.id().empty());

  std::vector<PartInfo> uploaded(3);
  for (int number : {3, 1, 2}) {
    auto part = up.Upload(number, parts[number - 1]);
    ASSERT_TRUE(part.ok()) << "part " << number << ": " << part.status().ToString();
    EXPECT_EQ(part->number, number);
    EXPECT_EQ(part->etag, Md5Hex(parts[number - 1]));
    uploaded[number - 1] = *part;
  }
  if (FERRY_HAS_CAPABILITY(list_parts)) {
    auto listed = store().ListParts(key, up.id());
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    ASSERT_EQ(listed->size(), 3u);
    const bool etags = FERRY_HAS_CAPABILITY(part_etags_listed);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ((*listed)[i].number, i + 1);
      if (etags) {
        EXPECT_EQ((*listed)[i].etag, Md5Hex(parts[i]));
      }
      EXPECT_EQ((*listed)[i].size, parts[i].size());
    }
  }
  auto head_before = store().Head(key);
  EXPECT_FALSE(head_before.ok()) << "nothing is visible before Complete";

  auto done = store().CompleteMultipart(key, up.id(), uploaded);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  const bool s3_etag = FERRY_HAS_CAPABILITY(multipart_etag);
  if (s3_etag) {
    EXPECT_EQ(done->etag, MultipartEtag(parts));
    EXPECT_TRUE(done->etag.ends_with("-3"));
  }
  auto head = store().Head(key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, Join(parts).size());
  EXPECT_EQ(head->etag, done->etag) << "Head reports the ETag Complete returned";
  if (s3_etag) {
    EXPECT_EQ(head->etag, MultipartEtag(parts));
  }
  EXPECT_EQ(head->headers, options.headers);
  EXPECT_TRUE(GetString(key) == Join(parts)) << "assembled bytes differ";

  GetOptions range;  // a range across the part 1/2 boundary
  range.range = ByteRange{parts[0].size() - 10, 20};
  EXPECT_TRUE(GetString(key, range) == Join(parts).substr(parts[0].size() - 10, 20));

  ListOptions list;
  list.prefix = K("");
  EXPECT_EQ(ListAll(list).keys, std::vector<std::string>{key}) << "no staging leaks";
}

TEST_P(StoreConformanceTest, MultipartReuploadedPartWins) {
  FERRY_REQUIRE_CAPABILITY(multipart);
  const std::vector<std::string> parts = MakeParts(store().Features(), 2, 20);
  const std::string key = K("multi/reupload");
  MultipartUpload up(store(), key);
  ASSERT_TRUE(up.Create().ok());
  ASSERT_TRUE(up.Upload(1, TestBytes(parts[0].size(), 99)).ok());
  auto p1 = up.Upload(1, parts[0]);
  auto p2 = up.Upload(2, parts[1]);
  ASSERT_TRUE(p1.ok() && p2.ok());
  EXPECT_EQ(p1->etag, Md5Hex(parts[0]));
  if (FERRY_HAS_CAPABILITY(list_parts)) {
    auto listed = store().ListParts(key, up.id());
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    ASSERT_EQ(listed->size(), 2u);
    if (FERRY_HAS_CAPABILITY(part_etags_listed)) {
      EXPECT_EQ((*listed)[0].etag, Md5Hex(parts[0]));
    }
    EXPECT_EQ((*listed)[0].size, parts[0].size());
  }
  auto done = store().CompleteMultipart(key, up.id(), {*p1, *p2});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_TRUE(GetString(key) == Join(parts));
}

TEST_P(StoreConformanceTest, MultipartSinglePart) {
  FERRY_REQUIRE_CAPABILITY(multipart);
  const std::string data = TestBytes(5000, 30);
  MultipartUpload up(store(), K("multi/single"));
  ASSERT_TRUE(up.Create().ok());
  auto p = up.Upload(1, data);
  ASSERT_TRUE(p.ok());
  auto done = store().CompleteMultipart(K("multi/single"), up.id(), {*p});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  if (FERRY_HAS_CAPABILITY(multipart_etag)) {
    EXPECT_EQ(done->etag, MultipartEtag({data}));
  }
  EXPECT_TRUE(GetString(K("multi/single")) == data);
}

TEST_P(StoreConformanceTest, MultipartAbortLeavesNothing) {
  FERRY_REQUIRE_CAPABILITY(multipart);
  FERRY_REQUIRE_CAPABILITY(abort_multipart);
  const std::string key = K("multi/aborted");
  MultipartUpload up(store(), key);
  ASSERT_TRUE(up.Create().ok());
  ASSERT_TRUE(up.Upload(1, TestBytes(70'000, 40)).ok());
  ASSERT_TRUE(store().AbortMultipart(key, up.id()).ok());
  auto head = store().Head(key);
  ASSERT_FALSE(head.ok());
  EXPECT_EQ(head.status().code(), ErrorCode::kNotFound);
  ListOptions list;
  list.prefix = K("");
  EXPECT_TRUE(ListAll(list).keys.empty());
  if (caps().abort_forgets_upload) {
    auto parts = store().ListParts(key, up.id());
    ASSERT_FALSE(parts.ok());
    EXPECT_EQ(parts.status().code(), ErrorCode::kNotFound) << parts.status().ToString();
    auto late = up.Upload(2, "late");
    ASSERT_FALSE(late.ok()) << "an aborted upload takes no parts";
    EXPECT_EQ(late.status().code(), ErrorCode::kNotFound) << late.status().ToString();
  }
}

TEST_P(StoreConformanceTest, ListMultipartUploadsNamesThoseOfExactlyTheKey) {
  FERRY_REQUIRE_CAPABILITY(multipart);
  FERRY_REQUIRE_CAPABILITY(list_uploads);
  const std::string key = K("multi/open"), longer = K("multi/open2");
  MultipartUpload a(store(), key), b(store(), key), other(store(), longer);
  ASSERT_TRUE(a.Create().ok());
  ASSERT_TRUE(b.Create().ok());
  ASSERT_TRUE(other.Create().ok());
  auto open = store().ListMultipartUploads(key);
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  std::set<std::string> ids;
  for (const UploadInfo& u : *open) {
    EXPECT_EQ(u.key, key);
    auto age = std::chrono::system_clock::now() - u.initiated;
    EXPECT_LT(std::chrono::abs(age), std::chrono::hours(1)) << "initiated is the create's time";
    ids.insert(u.upload_id);
  }
  EXPECT_EQ(ids, (std::set<std::string>{a.id(), b.id()}));  // not the longer key's
  if (FERRY_HAS_CAPABILITY(abort_multipart)) {
    for (auto* up : {&a, &b, &other}) ASSERT_TRUE(store().AbortMultipart(up->key(), up->id()).ok());
    auto after = store().ListMultipartUploads(key);
    ASSERT_TRUE(after.ok());
    EXPECT_TRUE(after->empty());
  }
}

TEST_P(StoreConformanceTest, MultipartCompleteWithWrongEtagFailsAndKeepsUpload) {
  FERRY_REQUIRE_CAPABILITY(multipart);
  const std::vector<std::string> parts = MakeParts(store().Features(), 2, 50);
  const std::string key = K("multi/wrong-etag");
  MultipartUpload up(store(), key);
  ASSERT_TRUE(up.Create().ok());
  auto p1 = up.Upload(1, parts[0]);
  auto p2 = up.Upload(2, parts[1]);
  ASSERT_TRUE(p1.ok() && p2.ok());
  if (FERRY_HAS_CAPABILITY(complete_validates_parts) &&
      FERRY_HAS_CAPABILITY(complete_checks_part_etags)) {
    PartInfo wrong = *p2;
    wrong.etag = Md5Hex("not the part");
    auto failed = store().CompleteMultipart(key, up.id(), {*p1, wrong});
    ASSERT_FALSE(failed.ok()) << "wrong part ETag";
    EXPECT_EQ(failed.status().code(), ErrorCode::kInvalidArgument) << failed.status().ToString();
    EXPECT_FALSE(store().Head(key).ok()) << "a failed Complete stores nothing";
    // The contract: errors leave the upload in place to be retried.
    if (FERRY_HAS_CAPABILITY(list_parts)) {
      auto listed = store().ListParts(key, up.id());
      ASSERT_TRUE(listed.ok()) << listed.status().ToString();
      EXPECT_EQ(listed->size(), 2u);
    }
  }
  auto done = store().CompleteMultipart(key, up.id(), {*p1, *p2});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_TRUE(GetString(key) == Join(parts));
}

TEST_P(StoreConformanceTest, MultipartCompleteRejectsBadPartLists) {
  FERRY_REQUIRE_CAPABILITY(multipart);
  const std::vector<std::string> parts = MakeParts(store().Features(), 2, 60);
  const std::string key = K("multi/bad-order");
  MultipartUpload up(store(), key);
  ASSERT_TRUE(up.Create().ok());
  auto p1 = up.Upload(1, parts[0]);
  auto p2 = up.Upload(2, parts[1]);
  ASSERT_TRUE(p1.ok() && p2.ok());
  // Without validation only the unknown upload id is tried, and only its
  // failure checked: s3rver 3.7 completes a descending list and dies (the
  // process exits) on a missing part.
  const bool validates = FERRY_HAS_CAPABILITY(complete_validates_parts);
  if (validates) {
    auto descending = store().CompleteMultipart(key, up.id(), {*p2, *p1});
    ASSERT_FALSE(descending.ok()) << "descending";
    EXPECT_EQ(descending.status().code(), ErrorCode::kInvalidArgument)
        << "descending: " << descending.status().ToString();
    PartInfo missing = *p2;
    missing.number = 3;
    auto no_part = store().CompleteMultipart(key, up.id(), {*p1, missing});
    ASSERT_FALSE(no_part.ok()) << "no part 3";
    EXPECT_EQ(no_part.status().code(), ErrorCode::kInvalidArgument)
        << "no part 3: " << no_part.status().ToString();
  }
  auto no_upload = store().CompleteMultipart(key, "no-such-upload-id", {*p1});
  ASSERT_FALSE(no_upload.ok()) << "no such upload";
  if (validates) {
    EXPECT_EQ(no_upload.status().code(), ErrorCode::kNotFound)
        << "no such upload: " << no_upload.status().ToString();
  }
  EXPECT_FALSE(store().Head(key).ok());
  if (FERRY_HAS_CAPABILITY(abort_multipart)) {
    EXPECT_TRUE(store().AbortMultipart(key, up.id()).ok());
  }
}

TEST_P(StoreConformanceTest, UploadPartContentMd5Mismatch) {
  FERRY_REQUIRE_CAPABILITY(multipart);
  MultipartUpload up(store(), K("multi/md5"));
  ASSERT_TRUE(up.Create().ok());
  if (FERRY_HAS_CAPABILITY(content_md5)) {
    auto bad = up.Upload(1, "part body", Md5Base64("other body"));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), ErrorCode::kCorruption) << bad.status().ToString();
  }
  // A matching Content-MD5 is accepted (after a rejected attempt, if any).
  auto good = up.Upload(1, "part body", Md5Base64("part body"));
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->etag, Md5Hex("part body"));
  if (FERRY_HAS_CAPABILITY(abort_multipart)) {
    EXPECT_TRUE(store().AbortMultipart(K("multi/md5"), up.id()).ok());
  }
}

TEST_P(StoreConformanceTest, MultipartPartsUploadedConcurrently) {
  FERRY_REQUIRE_CAPABILITY(multipart);
  FERRY_REQUIRE_CAPABILITY(concurrency);
  const std::vector<std::string> parts = MakeParts(store().Features(), 6, 70);
  const std::string key = K("multi/parallel");
  MultipartUpload up(store(), key);
  ASSERT_TRUE(up.Create().ok());
  std::vector<Result<PartInfo>> results(parts.size(), Status::Internal("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < parts.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = up.Upload(static_cast<int>(i + 1), parts[i]); });
  }
  for (std::thread& t : threads) t.join();
  std::vector<PartInfo> infos;
  for (auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    infos.push_back(*r);
  }
  auto done = store().CompleteMultipart(key, up.id(), infos);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  if (FERRY_HAS_CAPABILITY(multipart_etag)) {
    EXPECT_EQ(done->etag, MultipartEtag(parts));
  }
  EXPECT_TRUE(GetString(key) == Join(parts));
}

}  // namespace
}  // namespace ferry::conformance
