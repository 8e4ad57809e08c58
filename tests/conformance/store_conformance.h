#pragma once
// The backend conformance suite: one set of gtest cases that every
// ObjectStore backend must pass, in the spirit of rclone's fstest/fstests.
//
// To run it against a backend, implement StoreFixtureFactory and instantiate
// the value-parameterised suite in an executable linked with the
// `ferry_conformance` library and GTest::gtest_main:
//
//   class MyFactory : public ferry::conformance::StoreFixtureFactory {
//    public:
//     std::string Name() const override { return "S3Server"; }
//     ferry::Result<std::unique_ptr<ferry::ObjectStore>> Make() override { ... }
//     ferry::conformance::Capabilities Caps() const override {
//       ferry::conformance::Capabilities c;
//       c.delimiter = false;  // with a reason in `gap_note`
//       return c;
//     }
//   };
//   using ferry::conformance::StoreConformanceTest;  // the macro wants a bare name
//   INSTANTIATE_TEST_SUITE_P(My, StoreConformanceTest,
//                            ::testing::Values(std::make_shared<MyFactory>()),
//                            ferry::conformance::FactoryName);
//
// Each test works below its own unique key prefix
// ("conformance/<test>/<random>/"), so one bucket or directory can serve all
// tests, even concurrently; the fixture deletes what it wrote afterwards.
// Cases a backend cannot pass by design are declared in Capabilities and
// skipped for that backend only, with a message naming the gap
// (FERRY_REQUIRE_CAPABILITY); where the rest of a case is still meaningful,
// only the affected checks are left out (FERRY_HAS_CAPABILITY), with a note.

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/object_store.h"

namespace ferry::conformance {

// What a backend (or the server it talks to) supports. Defaults describe a
// complete S3-compatible store; a factory clears the fields for its gaps.
struct Capabilities {
  // ListObjectsV2 honours `delimiter` and returns common prefixes.
  // (s3rver 3.7 honours it only partly: it drops prefixes of keys with a '/'
  // below the delimiter and overfills max-keys pages.)
  bool delimiter = true;
  // ListObjectsV2 returns keys in byte order, so continuation tokens resume
  // exactly. (s3rver 3.7 walks directories, "x/1" before "x-", and a paged
  // listing then loses keys.)
  bool list_byte_order = true;
  // A key segment (the text between two '/') may be longer than 255 bytes.
  // (s3rver 3.7 stores keys as files and fails such keys.)
  bool long_key_segments = true;
  // Keys with empty segments ("a//b") are stored verbatim.
  // (s3rver 3.7 answers such a PUT with 404 NoSuchKey.)
  bool empty_key_segments = true;
  // Keys with "." or ".." segments ("a/../b") are stored verbatim (HTTP
  // stacks that normalise URL paths break this).
  bool dot_segment_keys = true;
  // Keys longer than 1024 bytes are rejected. (s3rver 3.7 stores them.)
  bool key_length_limit = true;
  // Get honours GetOptions::if_match. (s3rver 3.7 ignores If-Match and
  // returns the object.)
  bool get_if_match = true;
  // Put and UploadPart reject a body whose MD5 differs from Content-MD5.
  // (s3rver 3.7 stores the body without checking.)
  bool content_md5 = true;
  // Multipart uploads (Create/UploadPart/ListParts/Complete/Abort).
  bool multipart = true;
  // ListParts works. (s3rver 3.7 answers 405 MethodNotAllowed.)
  bool list_parts = true;
  // AbortMultipartUpload works. (s3rver 3.7 answers 405 MethodNotAllowed.)
  bool abort_multipart = true;
  // ListMultipartUploads works.
  bool list_uploads = true;
  // ListParts on an aborted upload answers kNotFound.
  bool abort_forgets_upload = true;
  // A completed upload's ETag is S3's MD5 of the part MD5s plus "-N".
  // (s3rver 3.7 gives the plain MD5 of the whole object.)
  bool multipart_etag = true;
  // CompleteMultipart checks the part list: wrong ETags, descending or
  // missing parts and unknown upload ids fail with InvalidPart /
  // InvalidPartOrder / NoSuchUpload. (s3rver 3.7 sorts the list, ignores
  // ETags, crashes on a missing part, answers an unknown id with 500.)
  bool complete_validates_parts = true;
  // CompleteMultipart refuses a part whose ETag is not the one UploadPart
  // returned. (Azure's Put Block List names blocks by id only.)
  bool complete_checks_part_etags = true;
  // ListParts reports each part's ETag. (Azure's block list has none.)
  bool part_etags_listed = true;
  // A '\\' in a key is kept. (Azurite turns it into '/'.)
  bool backslash_keys = true;
  // Expires is stored and returned. (Azure has no such blob property.)
  bool expires_header = true;
  // Several threads may use one store instance at once.
  bool concurrency = true;
  // An overwrite is atomic: a concurrent Get sees the old or the new object
  // whole. (s3rver 3.7 rewrites the file in place: readers get torn bodies.)
  bool atomic_overwrite = true;
  // A listing right after a Put shows the object's final size. (s3rver 3.7
  // answers the PUT before its file is complete: a busy machine lists the
  // object with size 0 for a moment.)
  bool read_after_write = true;
  // Get tells its sink the object's info (ByteSink::Start) before the
  // first byte. (Azure's backend gives it only at the end.)
  bool get_announces_info = true;
  // Shown in every skip message, e.g. "s3rver 3.7".
  std::string gap_note;
};

class StoreFixtureFactory {
 public:
  virtual ~StoreFixtureFactory() = default;
  // A short name for test names and messages: letters, digits and '_' only.
  virtual std::string Name() const = 0;
  // A store for one test, called from SetUp. Stores may share state (one
  // bucket) across tests: each test keeps to its own key prefix. A
  // kUnsupported error (the server the backend needs is not installed)
  // skips the test.
  virtual Result<std::unique_ptr<ObjectStore>> Make() = 0;
  // Called from TearDown after the store from Make() is destroyed, to free
  // what Make() allocated (a temp directory...).
  virtual void Cleanup() {}
  virtual Capabilities Caps() const { return {}; }
};

using StoreFactoryPtr = std::shared_ptr<StoreFixtureFactory>;

// For INSTANTIATE_TEST_SUITE_P: names each instantiation after Name().
std::string FactoryName(const ::testing::TestParamInfo<StoreFactoryPtr>& info);
// Prints Name() wherever gtest shows the parameter (failure messages,
// --gtest_list_tests and so the ctest names).
void PrintTo(const StoreFactoryPtr& factory, std::ostream* os);

class StoreConformanceTest : public ::testing::TestWithParam<StoreFactoryPtr> {
 protected:
  void SetUp() override;
  void TearDown() override;

  ObjectStore& store() { return *store_; }
  const Capabilities& caps() const { return caps_; }
  // `supported`; when false, also prints (once per test and capability) that
  // the checks needing `name` are left out. Use through FERRY_HAS_CAPABILITY.
  bool NoteCapability(bool supported, const char* name);
  // `prefix_ + name`: every key a test uses goes through this.
  std::string K(std::string_view name) const { return prefix_ + std::string(name); }
  const std::string& prefix() const { return prefix_; }

  // Small helpers that fail the test on error.
  ObjectInfo PutString(const std::string& key, const std::string& data,
                       const PutOptions& options = {});
  std::string GetString(const std::string& key, const GetOptions& options = {});
  // Every page of a listing, following continuation tokens.
  struct Listing {
    std::vector<std::string> keys;
    std::vector<std::string> common_prefixes;
    int pages = 0;
  };
  Listing ListAll(ListOptions options);

 private:
  std::unique_ptr<ObjectStore> store_;
  Capabilities caps_;
  std::string prefix_;
  std::vector<std::string> noted_;
};

}  // namespace ferry::conformance

// Skips the current test unless the backend has capability `field`.
#define FERRY_REQUIRE_CAPABILITY(field)                                              \
  do {                                                                               \
    if (!caps().field) {                                                             \
      GTEST_SKIP() << GetParam()->Name() << " declares no support for `" #field "`"  \
                   << (caps().gap_note.empty() ? "" : " (" + caps().gap_note + ")"); \
    }                                                                                \
  } while (0)

// True if the backend has capability `field`. If not, prints a note naming
// the gap and is false, so the checks in `if (FERRY_HAS_CAPABILITY(x)) {...}`
// are left out while the rest of the case still runs.
#define FERRY_HAS_CAPABILITY(field) NoteCapability(caps().field, #field)
