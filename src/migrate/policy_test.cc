#include "migrate/policy.h"

#include <gtest/gtest.h>

#include "migrate/create.h"

namespace ferry::migrate {
namespace {

TEST(KeyMapTest, MapsRelativeKeys) {
  struct Case {
    const char *src_prefix, *dst_prefix, *key, *want;
  } cases[] = {
      {"", "", "a/b.txt", "a/b.txt"},
      {"src/", "", "src/a/b.txt", "a/b.txt"},
      {"", "dst/", "a b+c%.txt", "dst/a b+c%.txt"},
      {"src/", "dst/x/", "src//double", "dst/x//double"},
      {"src/", "dst/", "src/", "dst/"},
      {"p/", "q/", "p/ünï/код", "q/ünï/код"},
  };
  for (const auto& c : cases) {
    KeyMap m{c.src_prefix, c.dst_prefix};
    EXPECT_EQ(m.DstKey(c.key), c.want) << c.key;
  }
}

TEST(KeyMapTest, AsPrefix) {
  EXPECT_EQ(AsPrefix(""), "");
  EXPECT_EQ(AsPrefix("a"), "a/");
  EXPECT_EQ(AsPrefix("a/"), "a/");
  EXPECT_EQ(AsPrefix("a/b"), "a/b/");
}

TEST(OverwriteTest, NeedDestinationCheck) {
  struct Case {
    Overwrite mode;
    bool empty;
    int claims;
    bool want;
  } cases[] = {
      {Overwrite::kChanged, true, 1, false},  {Overwrite::kChanged, false, 1, true},
      {Overwrite::kChanged, true, 2, true},   {Overwrite::kAlways, false, 1, false},
      {Overwrite::kAlways, false, 3, true},   {Overwrite::kNever, false, 1, true},
      {Overwrite::kNever, true, 1, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(NeedDestinationCheck(c.mode, c.empty, c.claims), c.want)
        << ToString(c.mode) << " empty=" << c.empty << " claims=" << c.claims;
  }
}

TEST(OverwriteTest, Decisions) {
  const int64_t start = 1'700'000'000'500;  // the job started half way into a second
  const std::string md5 = "0123456789abcdef0123456789abcdef";
  DstObject same{10, md5, start - 60'000};
  DstObject other_md5{10, "ffffffffffffffffffffffffffffffff", start - 60'000};
  DstObject other_size{11, md5, start - 60'000};
  DstObject unknown_md5{10, "", start - 60'000};
  DstObject ours{10, "", start - 500};      // same second as the start: ours
  // Written since the start, but not a whole copy: what a PUT cut short left.
  DstObject cut_short{0, "d41d8cd98f00b204e9800998ecf8427e", start + 500};
  DstObject other_bytes{10, "ffffffffffffffffffffffffffffffff", start + 500};
  DstObject before{10, "ffffffffffffffffffffffffffffffff", start - 1'000};  // the second before: not ours
  struct Case {
    Overwrite mode;
    std::optional<DstObject> dst;
    std::string src_md5;
    Decision want;
  } cases[] = {
      {Overwrite::kChanged, std::nullopt, md5, Decision::kCopy},
      {Overwrite::kChanged, same, md5, Decision::kSkip},
      {Overwrite::kChanged, same, "", Decision::kSkip},  // newer copy, same size
      {Overwrite::kChanged, other_md5, md5, Decision::kCopy},
      {Overwrite::kChanged, other_size, md5, Decision::kCopy},
      {Overwrite::kChanged, unknown_md5, md5, Decision::kSkip},
      {Overwrite::kChanged, ours, md5, Decision::kSkip},
      {Overwrite::kChanged, before, md5, Decision::kCopy},
      {Overwrite::kAlways, same, md5, Decision::kCopy},
      {Overwrite::kAlways, ours, md5, Decision::kSkip},
      {Overwrite::kAlways, std::nullopt, md5, Decision::kCopy},
      {Overwrite::kNever, other_md5, md5, Decision::kSkip},
      {Overwrite::kNever, std::nullopt, md5, Decision::kCopy},
      {Overwrite::kChanged, cut_short, md5, Decision::kCopy},
      {Overwrite::kAlways, cut_short, md5, Decision::kCopy},
      {Overwrite::kNever, cut_short, md5, Decision::kCopy},
      {Overwrite::kNever, other_bytes, md5, Decision::kCopy},
  };
  int i = 0;
  for (const auto& c : cases) {
    EXPECT_EQ(
        DecideOverwrite(c.mode, 10, c.src_md5, start - 3'600'000, c.dst, true, start).decision,
        c.want)
        << "case " << i;
    ++i;
  }
  EXPECT_STREQ(DecideOverwrite(Overwrite::kAlways, 10, md5, 0, ours, true, start).reason,
               "copied by this job");
  // A first claim: the object cannot be this job's copy, whatever its time.
  EXPECT_EQ(DecideOverwrite(Overwrite::kAlways, 10, md5, 0, ours, false, start).decision,
            Decision::kCopy);
  // Unknown MD5 and a destination older than the source: copied.
  DstObject stale{10, "", start - 7'200'000};
  EXPECT_EQ(
      DecideOverwrite(Overwrite::kChanged, 10, "", start - 3'600'000, stale, true, start).decision,
      Decision::kCopy);
  // Unknown source time: never guessed unchanged.
  EXPECT_EQ(DecideOverwrite(Overwrite::kChanged, 10, "", 0, unknown_md5, true, start).decision,
            Decision::kCopy);
}

Status WithHttp(Status s, int http) { return s.set_remote(http, ""); }

TEST(FailureTest, Plans) {
  RetryPolicy b;
  struct Case {
    Status s;
    int attempts;
    bool outage;
    FailureAction want;
    std::string reason;
  } cases[] = {
      {Status::AccessDenied("403"), 0, false, FailureAction::kDeadLetter, "access denied"},
      {Status::NotFound("gone"), 0, false, FailureAction::kDeadLetter,
       "deleted from source after listing"},
      {Status::InvalidArgument("bad"), 0, false, FailureAction::kDeadLetter, "rejected as invalid"},
      {Status(ErrorCode::kThrottled, "503"), 9, false, FailureAction::kRelease, ""},
      {Status(ErrorCode::kServerError, "500"), 3, false, FailureAction::kRetry, ""},
      {Status(ErrorCode::kServerError, "500"), 9, false, FailureAction::kDeadLetter,
       "retries exhausted"},
      {Status::Network("refused"), 9, true, FailureAction::kRelease, ""},
      {Status::Timeout("slow"), 0, true, FailureAction::kRelease, ""},
      {Status::Cancelled("ctrl-c"), 9, false, FailureAction::kRelease, ""},
      {Status::Corruption("md5"), 0, false, FailureAction::kRetry, ""},
      {Status(ErrorCode::kPreconditionFailed, "changed"), 0, false, FailureAction::kRetry, ""},
      {WithHttp(Status::AccessDenied("x"), 403), 0, true, FailureAction::kDeadLetter,
       "access denied"},
  };
  int i = 0;
  for (const auto& c : cases) {
    FailurePlan p = PlanFailure(c.s, c.attempts, 10, c.outage, b, 0.5);
    EXPECT_EQ(p.action, c.want) << "case " << i;
    EXPECT_EQ(p.reason, c.reason) << "case " << i;
    ++i;
  }
}

TEST(FailureTest, BackoffHonoursRetryAfter) {
  RetryPolicy b;
  Status s(ErrorCode::kThrottled, "slow down");
  s.set_retry_after(std::chrono::milliseconds(3000));
  FailurePlan p = PlanFailure(s, 0, 10, false, b, 0.0);
  EXPECT_EQ(p.action, FailureAction::kRelease);
  EXPECT_GE(p.delay_ms, 3000);
}

TEST(JobSpecTest, RoundTrip) {
  JobSpec s;
  s.src = "s3://a/b";
  s.dst = "/tmp/x y";
  s.concurrency = 7;
  s.filter.include = {"*.txt", "**/ö"};
  s.filter.exclude = {"tmp/**"};
  s.filter.min_size = 5;
  s.filter.newer_than_ms = 123;
  s.overwrite = Overwrite::kNever;
  s.bwlimit = 1e6;
  s.dry_run = true;
  s.dst_empty_at_start = true;
  auto back = SpecFromJson(SpecToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->src, s.src);
  EXPECT_EQ(back->dst, s.dst);
  EXPECT_EQ(back->concurrency, 7);
  EXPECT_EQ(back->filter.include, s.filter.include);
  EXPECT_EQ(back->filter.exclude, s.filter.exclude);
  EXPECT_EQ(back->filter.min_size, s.filter.min_size);
  EXPECT_FALSE(back->filter.max_size.has_value());
  EXPECT_EQ(back->filter.newer_than_ms, s.filter.newer_than_ms);
  EXPECT_EQ(back->overwrite, Overwrite::kNever);
  EXPECT_EQ(back->bwlimit, 1e6);
  EXPECT_TRUE(back->dry_run);
  EXPECT_TRUE(back->dst_empty_at_start);
  EXPECT_EQ(SpecFromJson("{not json").status().code(), ErrorCode::kCorruption);
  EXPECT_EQ(SpecFromJson("{\"src\":1}").status().code(), ErrorCode::kCorruption);
  EXPECT_EQ(SpecFromJson("{\"src\":\"a\",\"dst\":\"b\",\"overwrite\":\"x\"}").status().code(),
            ErrorCode::kCorruption);
}

TEST(CreateTest, CheckNotInside) {
  EXPECT_TRUE(CheckNotInside(false, "", "/a/", "", "/b/").ok());
  EXPECT_FALSE(CheckNotInside(false, "", "/a/b/", "", "/a/").ok());  // source inside dst
  EXPECT_FALSE(CheckNotInside(false, "", "/a/", "", "/a/").ok());
  EXPECT_FALSE(CheckNotInside(false, "", "/a/", "", "/a/b/").ok());
  EXPECT_TRUE(CheckNotInside(false, "", "/a/", "", "/ab/").ok());
  EXPECT_FALSE(CheckNotInside(true, "s3:x|b", "", "s3:x|b", "copy/").ok());
  EXPECT_FALSE(CheckNotInside(true, "s3:x|b", "a/x/", "s3:x|b", "a/").ok());
  EXPECT_TRUE(CheckNotInside(true, "s3:x|b", "", "s3:x|c", "").ok());
  EXPECT_TRUE(CheckNotInside(true, "s3:x|b", "src/", "s3:x|b", "dst/").ok());
}

}  // namespace
}  // namespace ferry::migrate
