#include "faults.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

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
  ASSERT_TRUE(p.Configure(Config(FaultKind::kCorrupt)).ok());
  EXPECT_EQ(p.Decide("put", "k"), FaultKind::kNone);
  EXPECT_EQ(p.Decide("head", "k"), FaultKind::kNone);
  EXPECT_EQ(p.Decide("get", "k"), FaultKind::kCorrupt);
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
    EXPECT_GE(l, 10'000);
    EXPECT_LE(l, 15'000);
  }
}

// requests_per_second books each request a turn: the 10th of 10 at once,
// at 100 per second, waits about 100 ms; unset, nobody waits.
TEST(FaultPolicy, RequestRateQueuesTurns) {
  FaultPolicy p;
  FaultConfig c;
  c.requests_per_second = 100;
  ASSERT_TRUE(p.Configure(c).ok());
  std::chrono::microseconds last{0};
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) last = p.Latency();
  auto spent = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  // The 10th turn ends 100 ms after the first call (less the time the
  // calls took, on a slow machine).
  EXPECT_GE((last + spent).count(), 99'000);
  EXPECT_LE(last.count(), 101'000);
  c.requests_per_second = 0;
  ASSERT_TRUE(p.Configure(c).ok());
  EXPECT_EQ(p.Latency().count(), 0);
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

FaultRule Rule(FaultKind kind, double probability = 1.0) {
  FaultRule r;
  r.kind = kind;
  r.probability = probability;
  return r;
}

// The single-fault fields alone must select exactly the requests they did
// before rules existed: same sequence, same counters.
TEST(FaultRules, OldSingleFaultConfigUnchanged) {
  FaultPolicy p;
  FaultConfig c = Config(FaultKind::kHttp503);
  c.op = "put";
  c.key_regex = "^a/";
  c.every = 2;
  c.count = 2;
  ASSERT_TRUE(p.Configure(c).ok());
  std::vector<FaultKind> got;
  for (int i = 0; i < 6; ++i) {
    got.push_back(p.Decide("put", "a/x"));
    got.push_back(p.Decide("get", "a/x"));  // other op: not a candidate
    got.push_back(p.Decide("put", "b/x"));  // other key: not a candidate
  }
  std::vector<FaultKind> want(18, FaultKind::kNone);
  want[3] = FaultKind::kHttp503;  // 2nd candidate
  want[9] = FaultKind::kHttp503;  // 4th candidate; count 2 reached after it
  EXPECT_EQ(got, want);
  EXPECT_EQ(p.injected(), 2u);
  auto stats = p.rule_stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_TRUE(stats[0].implicit);
  EXPECT_EQ(stats[0].candidates, 6u);
  EXPECT_EQ(stats[0].injected, 2u);
}

TEST(FaultRules, NoRulesWhenKindIsNone) {
  FaultPolicy p;
  ASSERT_TRUE(p.Configure(FaultConfig{}).ok());
  EXPECT_TRUE(p.rule_stats().empty());
}

TEST(FaultRules, EvaluatedInOrderFirstFiringWins) {
  FaultPolicy p;
  FaultConfig c = Config(FaultKind::kHttp500);  // implicit rule: first
  c.key_regex = "^boom$";
  FaultRule deny = Rule(FaultKind::kHttp403);
  deny.key_regex = "^deny/";
  c.rules = {deny, Rule(FaultKind::kHttp503)};
  ASSERT_TRUE(p.Configure(c).ok());
  EXPECT_EQ(p.Decide("put", "boom"), FaultKind::kHttp500);
  EXPECT_EQ(p.Decide("put", "deny/k1"), FaultKind::kHttp403);
  EXPECT_EQ(p.Decide("get", "other"), FaultKind::kHttp503);
  auto stats = p.rule_stats();
  ASSERT_EQ(stats.size(), 3u);
  // A rule only sees requests that no earlier rule took.
  EXPECT_EQ(stats[0].candidates, 1u);
  EXPECT_EQ(stats[1].candidates, 1u);
  EXPECT_EQ(stats[2].candidates, 1u);
  EXPECT_EQ(stats[2].kind, FaultKind::kHttp503);
  EXPECT_FALSE(stats[2].implicit);
  EXPECT_EQ(p.injected(), 3u);
}

TEST(FaultRules, RuleThatDoesNotApplyFallsThrough) {
  FaultPolicy p;
  FaultConfig c;
  c.rules = {Rule(FaultKind::kComplete200Error), Rule(FaultKind::kWrongEtag),
             Rule(FaultKind::kHttp500)};
  ASSERT_TRUE(p.Configure(c).ok());
  EXPECT_EQ(p.Decide("complete", "k"), FaultKind::kComplete200Error);
  EXPECT_EQ(p.Decide("get", "k"), FaultKind::kWrongEtag);
  EXPECT_EQ(p.Decide("list", ""), FaultKind::kHttp500);
}

TEST(FaultRules, PerRuleEveryAndCount) {
  FaultPolicy p;
  FaultConfig c;
  FaultRule every3 = Rule(FaultKind::kHttp503);
  every3.every = 3;
  FaultRule twice = Rule(FaultKind::kHttp500);
  twice.count = 2;
  c.rules = {every3, twice};
  ASSERT_TRUE(p.Configure(c).ok());
  std::vector<FaultKind> got;
  for (int i = 0; i < 7; ++i) got.push_back(p.Decide("put", "k"));
  using K = FaultKind;
  EXPECT_EQ(got, (std::vector<K>{K::kHttp500, K::kHttp500, K::kHttp503, K::kNone, K::kNone,
                                 K::kHttp503, K::kNone}));
  auto stats = p.rule_stats();
  EXPECT_EQ(stats[0].candidates, 7u);
  EXPECT_EQ(stats[0].injected, 2u);
  EXPECT_EQ(stats[1].candidates, 5u);
  EXPECT_EQ(stats[1].injected, 2u);
  p.ResetCounters();
  EXPECT_EQ(p.Decide("put", "k"), FaultKind::kHttp500);
}

TEST(FaultRules, ProbabilityIsRespected) {
  FaultPolicy p;
  FaultConfig c;
  c.seed = 42;
  c.rules = {Rule(FaultKind::kHttp503, 0.05), Rule(FaultKind::kHttp500, 0.01),
             Rule(FaultKind::kReset, 0.005)};
  ASSERT_TRUE(p.Configure(c).ok());
  constexpr int kDraws = 20000;
  std::map<FaultKind, int> n;
  for (int i = 0; i < kDraws; ++i) ++n[p.Decide("put", "k")];
  EXPECT_GE(n[FaultKind::kHttp503], kDraws * 4 / 100);
  EXPECT_LE(n[FaultKind::kHttp503], kDraws * 6 / 100);
  // The 500 rule sees the 95% the 503 rule left: ~0.95%.
  EXPECT_GE(n[FaultKind::kHttp500], kDraws * 6 / 1000);
  EXPECT_LE(n[FaultKind::kHttp500], kDraws * 14 / 1000);
  EXPECT_GE(n[FaultKind::kReset], kDraws * 2 / 1000);
  EXPECT_LE(n[FaultKind::kReset], kDraws * 8 / 1000);
  EXPECT_EQ(p.injected(), static_cast<uint64_t>(kDraws - n[FaultKind::kNone]));
}

TEST(FaultRules, SeedMakesRunsRepeatable) {
  FaultConfig c;
  c.seed = 7;
  c.rules = {Rule(FaultKind::kHttp503, 0.3)};
  auto run = [](FaultPolicy& p) {
    std::vector<FaultKind> got;
    for (int i = 0; i < 200; ++i) got.push_back(p.Decide("get", "k"));
    return got;
  };
  FaultPolicy a, b;
  ASSERT_TRUE(a.Configure(c).ok());
  ASSERT_TRUE(b.Configure(c).ok());
  auto first = run(a);
  EXPECT_EQ(first, run(b));
  a.ResetCounters();  // re-seeds
  EXPECT_EQ(first, run(a));
  c.seed = 8;
  ASSERT_TRUE(b.Configure(c).ok());
  EXPECT_NE(first, run(b));
}

TEST(FaultRules, Http403AppliesEverywhere) {
  for (std::string_view op :
       {"list-buckets", "create-bucket", "delete-bucket", "head-bucket", "list", "list-uploads",
        "bucket-location", "delete-objects", "put", "copy", "get", "head", "delete",
        "create-multipart", "upload-part", "complete", "abort", "list-parts"}) {
    EXPECT_TRUE(FaultApplies(FaultKind::kHttp403, op)) << op;
  }
  EXPECT_EQ(FaultKindName(FaultKind::kHttp403), "403");
  auto parsed = ParseFaultKind("403");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, FaultKind::kHttp403);
  FaultPolicy p;
  FaultConfig c;
  FaultRule deny = Rule(FaultKind::kHttp403);
  deny.key_regex = "^deny/";
  c.rules = {deny};
  ASSERT_TRUE(p.Configure(c).ok());
  EXPECT_EQ(p.Decide("head", "deny/k"), FaultKind::kHttp403);
  EXPECT_EQ(p.Decide("put", "deny/k"), FaultKind::kHttp403);
  EXPECT_EQ(p.Decide("put", "allow/k"), FaultKind::kNone);
}

TEST(FaultRulesJson, RoundTrip) {
  auto parsed = FaultConfigFromJson(nlohmann::json::parse(R"({
    "seed": 7, "kind": "500", "count": 1,
    "rules": [{"kind": 403, "key_regex": "^deny/"},
              {"kind": "503", "probability": 0.05, "op": "put", "every": 2, "count": 9},
              {"kind": "reset", "probability": 1}]})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const FaultConfig& c = *parsed;
  EXPECT_EQ(c.seed, std::optional<uint64_t>(7));
  ASSERT_EQ(c.rules.size(), 3u);
  EXPECT_EQ(c.rules[0].kind, FaultKind::kHttp403);
  EXPECT_EQ(c.rules[0].key_regex, "^deny/");
  EXPECT_EQ(c.rules[0].op, "any");
  EXPECT_EQ(c.rules[0].probability, 1.0);
  EXPECT_EQ(c.rules[1].probability, 0.05);
  EXPECT_EQ(c.rules[1].op, "put");
  EXPECT_EQ(c.rules[1].every, 2u);
  EXPECT_EQ(c.rules[1].count, 9);
  EXPECT_EQ(c.rules[2].kind, FaultKind::kReset);

  nlohmann::json j = FaultConfigToJson(c);
  EXPECT_EQ(j["rules"][0]["kind"], "403");
  EXPECT_EQ(j["seed"], 7);
  auto back = FaultConfigFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(FaultConfigToJson(*back), j);

  // No rules and no seed: "rules" is an empty array, "seed" absent.
  nlohmann::json plain = FaultConfigToJson(FaultConfig{});
  EXPECT_EQ(plain["rules"], nlohmann::json::array());
  EXPECT_FALSE(plain.contains("seed"));
  EXPECT_TRUE(FaultConfigFromJson(plain).ok());

  auto rule = ParseFaultRule(R"({"kind":"503","probability":0.5})");
  ASSERT_TRUE(rule.ok());
  EXPECT_EQ(rule->kind, FaultKind::kHttp503);
  EXPECT_EQ(rule->probability, 0.5);
  EXPECT_FALSE(ParseFaultRule("{kind").ok());
}

TEST(FaultConfigJson, ListQuirks) {
  auto parsed = FaultConfigFromJson(
      nlohmann::json::parse(R"({"list_quirks": ["unordered", "forget-prefixes"]})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->list_quirks.unordered && parsed->list_quirks.forget_prefixes &&
              !parsed->list_quirks.ignore_start_after);
  nlohmann::json j = FaultConfigToJson(*parsed);
  EXPECT_EQ(j["list_quirks"], nlohmann::json::parse(R"(["forget-prefixes", "unordered"])"));
  FaultPolicy p;
  ASSERT_TRUE(p.Configure(*parsed).ok());
  EXPECT_EQ(p.list_quirks(), parsed->list_quirks);
  // Absent means none, as for every other field.
  EXPECT_EQ(FaultConfigToJson(FaultConfig{})["list_quirks"], nlohmann::json::array());
  ASSERT_TRUE(p.Configure(*FaultConfigFromJson(nlohmann::json::object())).ok());
  EXPECT_FALSE(p.list_quirks().any());
  for (const char* bad : {R"({"list_quirks": ["sorted"]})", R"({"list_quirks": "unordered"})",
                          R"({"list_quirks": [1]})"}) {
    EXPECT_FALSE(FaultConfigFromJson(nlohmann::json::parse(bad)).ok()) << bad;
  }
}

// A config is refused when FromJson or Configure refuses it, which is what
// POST /_admin/faults answers with 400.
Status Install(FaultPolicy& p, std::string_view text) {
  auto c = FaultConfigFromJson(nlohmann::json::parse(text));
  if (!c.ok()) return c.status();
  return p.Configure(*c);
}

TEST(FaultRulesJson, ValidationErrors) {
  FaultPolicy p;
  ASSERT_TRUE(Install(p, R"({"rules":[{"kind":"503","probability":0.5}]})").ok());
  for (const char* bad : {
           R"({"rules":[{"kind":"503","probability":0}]})",
           R"({"rules":[{"kind":"503","probability":1.5}]})",
           R"({"rules":[{"kind":"503","probability":-0.1}]})",
           R"({"rules":[{"kind":"503","probability":"high"}]})",
           R"({"rules":[{"kind":"503","chance":0.5}]})",
           R"({"rules":[{"kind":"503","key_regex":"("}]})",
           R"({"rules":[{"kind":"explode"}]})",
           R"({"rules":[{"kind":404}]})",
           R"({"rules":[{"kind":"none"}]})",
           R"({"rules":[{"probability":0.5}]})",
           R"({"rules":[{"kind":"503","op":"frobnicate"}]})",
           R"({"rules":[{"kind":"503","every":"x"}]})",
           R"({"rules":{"kind":"503"}})",
           R"({"rules":["503"]})",
           R"({"seed":-1})",
           R"({"seed":"x"})",
       }) {
    EXPECT_FALSE(Install(p, bad).ok()) << bad;
  }
  // A refused config leaves the previous one in force.
  ASSERT_EQ(p.config().rules.size(), 1u);
  EXPECT_EQ(p.config().rules[0].probability, 0.5);
}

}  // namespace
}  // namespace ferry::s3server
