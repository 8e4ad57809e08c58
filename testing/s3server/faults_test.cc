#include "faults.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ferry::s3server {
namespace {

FaultConfig Config(FaultKind kind) {
  FaultConfig c;
  c.kind = kind;
  return c;
}

TEST(FaultPolicy, NoneNeverFaults) {
  FaultPolicy p;
  ASSERT_TRUE(p.Configure(FaultConfig{}).ok());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(p.Decide("get", "k"), FaultKind::kNone);
  EXPECT_EQ(p.injected(), 0u);
}

TEST(FaultPolicy, EveryNthCandidate) {
  FaultPolicy p;
  FaultConfig c = Config(FaultKind::kHttp503);
  c.every = 3;
  ASSERT_TRUE(p.Configure(c).ok());
  std::vector<bool> got;
  for (int i = 0; i < 7; ++i) got.push_back(p.Decide("put", "k") != FaultKind::kNone);
  EXPECT_EQ(got, (std::vector<bool>{false, false, true, false, false, true, false}));
}

TEST(FaultPolicy, OpFilterAndCountLimit) {
  FaultPolicy p;
  FaultConfig c = Config(FaultKind::kHttp500);
  c.op = "upload-part";
  c.count = 2;
  ASSERT_TRUE(p.Configure(c).ok());
  EXPECT_EQ(p.Decide("put", "k"), FaultKind::kNone);
  EXPECT_EQ(p.Decide("upload-part", "k"), FaultKind::kHttp500);
  EXPECT_EQ(p.Decide("get", "k"), FaultKind::kNone);
  EXPECT_EQ(p.Decide("upload-part", "k"), FaultKind::kHttp500);
  EXPECT_EQ(p.Decide("upload-part", "k"), FaultKind::kNone);  // count exhausted
  EXPECT_EQ(p.injected(), 2u);
  p.ResetCounters();
  EXPECT_EQ(p.Decide("upload-part", "k"), FaultKind::kHttp500);
}

TEST(FaultPolicy, KeyRegex) {
  FaultPolicy p;
  FaultConfig c = Config(FaultKind::kReset);
  c.key_regex = "^big/.*\\.bin$";
  ASSERT_TRUE(p.Configure(c).ok());
  EXPECT_EQ(p.Decide("get", "big/a.bin"), FaultKind::kReset);
  EXPECT_EQ(p.Decide("get", "small/a.bin"), FaultKind::kNone);
  EXPECT_EQ(p.Decide("get", "big/a.txt"), FaultKind::kNone);
}

TEST(FaultPolicy, KindsOnlyApplyWhereTheyMakeSense) {
  FaultPolicy p;
  ASSERT_TRUE(p.Configure(Config(FaultKind::kComplete200Error)).ok());
  EXPECT_EQ(p.Decide("put", "k"), FaultKind::kNone);
  EXPECT_EQ(p.Decide("complete", "k"), FaultKind::kComplete200Error);
  ASSERT_TRUE(p.Configure(Config(FaultKind::kWrongEtag)).ok());
  EXPECT_EQ(p.Decide("list", ""), FaultKind::kNone);
  EXPECT_EQ(p.Decide("upload-part", "k"), FaultKind::kWrongEtag);
}

TEST(FaultPolicy, RejectsBadConfig) {
  FaultPolicy p;
  FaultConfig c = Config(FaultKind::kHttp500);
  c.key_regex = "(";
  EXPECT_FALSE(p.Configure(c).ok());
  c.key_regex = "";
  c.op = "frobnicate";
  EXPECT_FALSE(p.Configure(c).ok());
}

TEST(FaultPolicy, LatencyWithinJitter) {
  FaultPolicy p;
  FaultConfig c;
  c.latency_ms = 10;
  c.latency_jitter_ms = 5;
  ASSERT_TRUE(p.Configure(c).ok());
  for (int i = 0; i < 50; ++i) {
    auto l = p.Latency().count();
    EXPECT_GE(l, 10);
    EXPECT_LE(l, 15);
  }
}

TEST(FaultConfigJson, RoundTripAndErrors) {
  FaultConfig c;
  c.kind = FaultKind::kTruncate;
  c.every = 4;
  c.op = "get";
  c.count = 1;
  c.bandwidth = 1000;
  auto back = FaultConfigFromJson(FaultConfigToJson(c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->kind, FaultKind::kTruncate);
  EXPECT_EQ(back->every, 4u);
  EXPECT_EQ(back->op, "get");
  EXPECT_EQ(back->count, 1);
  EXPECT_EQ(back->bandwidth, 1000u);

  auto numeric = FaultConfigFromJson(nlohmann::json{{"kind", 503}});
  ASSERT_TRUE(numeric.ok());
  EXPECT_EQ(numeric->kind, FaultKind::kHttp503);
  EXPECT_FALSE(FaultConfigFromJson(nlohmann::json{{"kind", "explode"}}).ok());
  EXPECT_FALSE(FaultConfigFromJson(nlohmann::json{{"latency", 1}}).ok());
  EXPECT_FALSE(FaultConfigFromJson(nlohmann::json{{"every", "x"}}).ok());
}

}  // namespace
}  // namespace ferry::s3server
