#include "volume/daemon_requests.h"

#include <gtest/gtest.h>

#include "volume/volume_dir.h"

namespace ferry::volume {
namespace {

TEST(DaemonRequestsTest, CreateNamesOneOrManyVolumes) {
  auto one = ParseCreateRequest(R"({"name": "vm", "from": "/repo/base"})");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->from, "/repo/base");
  EXPECT_EQ(one->size, 0u);
  EXPECT_EQ(one->names, std::vector<std::string>{"vm"});
  auto many =
      ParseCreateRequest(R"({"name": "vm", "from": "s3://b/r/base", "size": 1048576, "count": 3})");
  ASSERT_TRUE(many.ok()) << many.status().ToString();
  EXPECT_EQ(many->size, 1048576u);
  EXPECT_EQ(many->names, (std::vector<std::string>{"vm-0", "vm-1", "vm-2"}));
}

// Every malformed body is a one-line kInvalidArgument; those of the wrong
// types used to throw out of the daemon's handler (nlohmann's value()).
TEST(DaemonRequestsTest, MalformedCreatesAreOneLineErrorsNeverExceptions) {
  for (const char* body :
       {"", "[]", "not json", R"({"name": "vm"})", R"({"from": "/r/s"})",
        R"({"name": 7, "from": "/r/s"})", R"({"name": "vm", "from": "/r/s", "size": "big"})",
        R"({"name": "vm", "from": "/r/s", "size": -1})",
        R"({"name": "vm", "from": "/r/s", "size": 1.5})",
        R"({"name": "vm", "from": "/r/s", "count": "2"})",
        R"({"name": "vm", "from": "/r/s", "count": 0})",
        R"({"name": "vm", "from": "/r/s", "count": 10001})",
        R"({"name": "vm", "from": "/r/s", "count": 18446744073709551615})",
        R"({"name": "vm", "from": "/r/s", "count": -2})", R"({"name": "../up", "from": "/r/s"})",
        R"({"name": "", "from": "/r/s"})"}) {
    auto r = ParseCreateRequest(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << body;
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << body;
  }
}

TEST(DaemonRequestsTest, SnapshotRequestTakesADestination) {
  EXPECT_EQ(*ParseSnapshotRequest(R"({"to": "/repo/next"})"), "/repo/next");
  for (const char* body : {"", "{}", R"({"to": 3})", R"(["to"])"}) {
    EXPECT_EQ(ParseSnapshotRequest(body).status().code(), ErrorCode::kInvalidArgument) << body;
  }
}

// volume.json as the daemon reads it at startup: a damaged one is skipped
// with a warning (kCorruption), not a crash of the daemon.
TEST(DaemonRequestsTest, VolumeDescriptionRoundTripsAndDamageIsCorruption) {
  VolumeDescription d{"vm-3", "s3://b/repo/base", 1 << 30};
  auto back = DecodeVolumeDescription(EncodeVolumeDescription(d));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->name, d.name);
  EXPECT_EQ(back->from, d.from);
  EXPECT_EQ(back->size, d.size);
  EXPECT_EQ(DecodeVolumeDescription(R"({"name": "vm", "from": "/r/s"})")->size, 0u);
  for (const char* text :
       {"", "{", "null", R"({"name": 1, "from": 2})",
        R"({"name": "vm", "from": "/r/s", "size": "x"})", R"({"name": "vm", "from": ["/r/s"]})",
        R"({"name": "a/b", "from": "/r/s"})"}) {
    auto r = DecodeVolumeDescription(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), ErrorCode::kCorruption) << text;
  }
}

}  // namespace
}  // namespace ferry::volume
