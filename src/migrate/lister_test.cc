// The listing stage against an in-memory bucket whose listing can be made to
// misbehave as real servers do: every key is enqueued once whatever the
// server forgets, busy ranges are split, and broken promises fall back to
// one flat listing with a warning.
#include "migrate/lister.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace ferry::migrate {
namespace {

namespace fs = std::filesystem;

// ListObjectsV2 over a sorted key set. Only List is implemented.
class FakeListStore : public ObjectStore {
 public:
  std::set<std::string> keys;
  bool forget_prefixes = false;  // a delimited listing drops every other prefix
  bool ignore_start_after = false;
  std::string disorder_from;  // pages starting at or after this come out of order
  std::string hidden;         // never in a flat listing, but in a delimited one
  std::chrono::microseconds latency{0};
  std::atomic<int> calls{0};

  std::string Describe() const override { return "s3://fake"; }
  StoreFeatures Features() const override {
    StoreFeatures f;
    f.range_listing = true;
    return f;
  }
  Result<ListPage> List(const ListOptions& o) override {
    ++calls;
    if (latency.count() > 0) std::this_thread::sleep_for(latency);
    std::string after = ignore_start_after ? "" : o.start_after;
    if (!o.continuation_token.empty()) after = std::max(after, o.continuation_token);
    ListPage page;
    std::string last;
    int entries = 0, dropped = 0;
    for (auto it = keys.upper_bound(after); it != keys.end(); ++it) {
      const std::string& k = *it;
      if (k == hidden && o.delimiter.empty()) continue;
      if (k.compare(0, o.prefix.size(), o.prefix) != 0) {
        if (k > o.prefix) break;
        continue;
      }
      if (entries == o.max_keys) {
        page.truncated = true;
        break;
      }
      size_t d = o.delimiter.empty() ? std::string::npos : k.find(o.delimiter, o.prefix.size());
      if (d != std::string::npos) {
        std::string cp = k.substr(0, d + o.delimiter.size());
        if (!page.common_prefixes.empty() && page.common_prefixes.back() == cp) continue;
        if (!forget_prefixes || (dropped++ % 2) == 1) page.common_prefixes.push_back(cp);
        last = cp;
        // Past every key of this prefix.
        it = keys.lower_bound(cp + "\xff");
        --it;
      } else {
        ObjectInfo info;
        info.key = k;
        info.size = k.size();
        page.objects.push_back(std::move(info));
        last = k;
      }
      ++entries;
    }
    if (page.truncated) page.next_continuation_token = last;
    if (!disorder_from.empty() && page.objects.size() >= 2 &&
        page.objects.front().key >= disorder_from) {
      std::swap(page.objects[0], page.objects[1]);
    }
    return page;
  }
  Result<ObjectInfo> Head(std::string_view key) override {
    if (keys.count(std::string(key)) == 0) return Status::NotFound("no such key");
    ObjectInfo info;
    info.key = std::string(key);
    info.size = key.size();
    return info;
  }
  Result<ObjectInfo> Get(std::string_view, const GetOptions&, ByteSink&) override {
    return Unsupported();
  }
  Result<ObjectInfo> Put(std::string_view, ByteSource&, uint64_t, const PutOptions&) override {
    return Unsupported();
  }
  Result<std::string> CreateMultipart(std::string_view, const PutOptions&) override {
    return Unsupported();
  }
  Result<PartInfo> UploadPart(std::string_view, std::string_view, int, ByteSource&, uint64_t,
                              const PartOptions&) override {
    return Unsupported();
  }
  Result<ObjectInfo> CompleteMultipart(std::string_view, std::string_view,
                                       const std::vector<PartInfo>&) override {
    return Unsupported();
  }
  Status AbortMultipart(std::string_view, std::string_view) override { return Unsupported(); }
  Result<std::vector<PartInfo>> ListParts(std::string_view, std::string_view) override {
    return Unsupported();
  }
  Result<std::vector<UploadInfo>> ListMultipartUploads(std::string_view) override {
    return Unsupported();
  }
  Result<ObjectInfo> Copy(std::string_view, std::string_view,
                          const std::optional<ObjectHeaders>&) override {
    return Unsupported();
  }
  Status Delete(std::string_view) override { return Unsupported(); }

 private:
  static Status Unsupported() { return Status::Unsupported("fake store lists only"); }
};

class ListerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-lister-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto st = state::OpenSqliteStateStore(dir_ + "/migrate.db");
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    state_ = std::move(*st);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A job whose one shard is the range (lower, upper] of `prefix`.
  void MakeJob(const std::string& prefix = "", const std::string& lower = "",
               const std::string& upper = "") {
    state::JobRecord job;
    job.id = "j";
    state::ShardRecord s;
    s.prefix = prefix;
    s.ranged = true;
    s.lower = lower;
    s.upper = upper;
    ASSERT_TRUE(state_->CreateJob(job, {s}).ok());
  }

  // Lists with a consumer beside it that claims and finishes keys as a
  // runner's transfers would, recording each claim in claimed_.
  Status Run(int concurrency, int page_size = 100, std::function<bool()> room = nullptr) {
    std::atomic<bool> listing{true};
    std::thread consumer([&] {
      while (listing || Drain() > 0) {
        if (Drain() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
    Status s = List(concurrency, page_size, std::move(room));
    listing = false;
    consumer.join();
    return s;
  }

  Status List(int concurrency, int page_size, std::function<bool()> room) {
    ListerContext ctx;
    ctx.src = &store_;
    ctx.state = state_.get();
    ctx.job = "j";
    ctx.list_concurrency = concurrency;
    ctx.page_size = page_size;
    ctx.check_known_keys = true;
    ctx.wait_for_room = std::move(room);
    ctx.on_warning = [this](const std::string& w) {
      std::lock_guard<std::mutex> lock(mu_);
      warnings_.push_back(w);
    };
    return RunListing(ctx);
  }

  // Claims and finishes up to 1000 pending keys; returns how many.
  size_t Drain() {
    auto c = state_->Claim("j", "t", 1000, 1, 1'000'000);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok() || c->empty()) return 0;
    std::vector<state::FinishedObject> done;
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& o : *c) {
      claimed_.insert(o.object.key);
      done.push_back({o.object.key, state::Outcome::kTransferred, 0});
    }
    EXPECT_TRUE(state_->Finish("j", "t", done).ok());
    return c->size();
  }

  // Every key the job enqueued, with repeats.
  std::multiset<std::string> Enqueued() {
    while (Drain() > 0) {
    }
    std::lock_guard<std::mutex> lock(mu_);
    return claimed_;
  }

  int ShardCount() {
    auto s = state_->GetShards("j");
    return s.ok() ? static_cast<int>(s->size()) : -1;
  }

  // 20,000 keys under 50 prefixes, one holding half of them; a few keys at
  // the top level and keys whose prefixes sort among the others' keys.
  void SkewedBucket() {
    for (int p = 0; p < 50; ++p) {
      int n = p == 17 ? 10000 : 200;
      for (int i = 0; i < n; ++i) {
        store_.keys.insert("p" + std::to_string(100 + p) + "/" + (p % 3 ? "a/" : "") +
                           std::to_string(100000 + i));
      }
    }
    for (const char* k : {"top.txt", "p117", "p117.txt", "p117/", "zz"}) store_.keys.insert(k);
  }

  std::multiset<std::string> All() { return {store_.keys.begin(), store_.keys.end()}; }

  std::string dir_;
  std::unique_ptr<state::StateStore> state_;
  FakeListStore store_;
  std::mutex mu_;
  std::vector<std::string> warnings_;   // guarded by mu_
  std::multiset<std::string> claimed_;  // guarded by mu_
};

TEST_F(ListerTest, RangesListEveryKeyOnceWhenTheServerForgetsPrefixes) {
  SkewedBucket();
  store_.forget_prefixes = true;
  MakeJob();
  ASSERT_TRUE(Run(4).ok());
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
  auto job = state_->GetJob("j");
  ASSERT_TRUE(job.ok());
  EXPECT_TRUE(job->listing_done);
  EXPECT_EQ(job->counters.listed, static_cast<int64_t>(store_.keys.size()));
  EXPECT_EQ(Enqueued(), All());
}

// Why ranges: prefix shards (ferry before them, and --list-by prefixes)
// trust the delimiter listing, and lose what it forgets.
TEST_F(ListerTest, PrefixShardsLoseWhatTheServerForgets) {
  SkewedBucket();
  store_.forget_prefixes = true;
  state::JobRecord job;
  job.id = "j";
  state::ShardRecord s;
  s.delimiter = "/";
  ASSERT_TRUE(state_->CreateJob(job, {s}).ok());
  ASSERT_TRUE(Run(4).ok());
  EXPECT_LT(Enqueued().size(), store_.keys.size() * 3 / 4);
}

TEST_F(ListerTest, AnIdleThreadSplitsTheBusiestRange) {
  // One prefix, no delimiter to help: only work stealing can share it.
  for (int i = 0; i < 20000; ++i) store_.keys.insert("big/" + std::to_string(1000000 + i));
  store_.latency = std::chrono::microseconds(300);
  MakeJob("big/");
  ASSERT_TRUE(Run(4).ok());
  EXPECT_GT(ShardCount(), 2) << "the range was never split";
  EXPECT_EQ(state_->GetJob("j")->counters.listed, 20000);
  EXPECT_EQ(Enqueued(), All());
}

TEST_F(ListerTest, AServerThatIgnoresStartAfterIsListedFlatWithAWarning) {
  SkewedBucket();
  store_.ignore_start_after = true;
  MakeJob();
  ASSERT_TRUE(Run(4).ok());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("start-after"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find("one flat listing"), std::string::npos) << warnings_[0];
  EXPECT_EQ(warnings_[0].find("listed again"), std::string::npos) << "nothing was listed before";
  EXPECT_EQ(state_->GetJob("j")->counters.listed, static_cast<int64_t>(store_.keys.size()));
  EXPECT_EQ(Enqueued(), All());
}

TEST_F(ListerTest, DisorderFoundMidJobRelistsEverythingAndLosesNothing) {
  SkewedBucket();
  store_.disorder_from = "p140/";  // the first pages look fine
  MakeJob();
  ASSERT_TRUE(Run(4).ok());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("byte order"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find("listed again"), std::string::npos) << warnings_[0];
  // Every key is there; keys finished before the fallback came again, and
  // the counters started over with the relisting: listed is exact.
  std::multiset<std::string> got = Enqueued();
  std::set<std::string> distinct(got.begin(), got.end());
  EXPECT_EQ(distinct, store_.keys);
  EXPECT_GT(got.size(), distinct.size()) << "nothing was finished before the fallback?";
  auto job = state_->GetJob("j");
  EXPECT_EQ(job->counters.listed, static_cast<int64_t>(store_.keys.size()));
  EXPECT_EQ(job->counters.transferred, static_cast<int64_t>(store_.keys.size()));
}

// A key no flat listing returns, whatever the paging (s3rver loses
// "x.txt" beside "x/" even in its own continuation tokens), but which the
// delimiter listing shows: the range that passes it over falls back, and the
// flat listing's last page brings it in, with a warning.
TEST_F(ListerTest, AKeyNoFlatListingReturnsIsStillEnqueued) {
  SkewedBucket();
  store_.hidden = "top.txt";
  MakeJob();
  ASSERT_TRUE(Run(4).ok());
  ASSERT_EQ(warnings_.size(), 2u) << warnings_.front();
  EXPECT_NE(warnings_[0].find("\"top.txt\", which its delimiter listing shows"), std::string::npos)
      << warnings_[0];
  EXPECT_NE(warnings_[1].find("never returned 1 key that exist"), std::string::npos)
      << warnings_[1];
  std::multiset<std::string> got = Enqueued();
  std::set<std::string> distinct(got.begin(), got.end());
  EXPECT_EQ(distinct, store_.keys);
  EXPECT_EQ(state_->GetJob("j")->counters.listed, static_cast<int64_t>(store_.keys.size()));
}

TEST_F(ListerTest, AStoppedListingResumesFromItsCursorsExactly) {
  SkewedBucket();
  MakeJob();
  std::atomic<int> pages{0};
  ASSERT_TRUE(List(4, 100, [&] { return ++pages <= 40; }).ok());
  auto mid = state_->GetJob("j");
  ASSERT_TRUE(mid.ok());
  EXPECT_FALSE(mid->listing_done);
  EXPECT_GT(mid->counters.listed, 0);
  ASSERT_TRUE(List(3, 100, nullptr).ok());
  EXPECT_EQ(state_->GetJob("j")->counters.listed, static_cast<int64_t>(store_.keys.size()));
  EXPECT_EQ(Enqueued(), All());
}

TEST_F(ListerTest, ARangePartThatFallsBackKeepsToItsRange) {
  SkewedBucket();
  store_.ignore_start_after = true;
  MakeJob("", "p117/", "p130/");
  ASSERT_TRUE(Run(4).ok());
  ASSERT_FALSE(warnings_.empty());
  std::multiset<std::string> want;
  for (const auto& k : store_.keys) {
    if (k > "p117/" && k <= "p130/") want.insert(k);
  }
  EXPECT_EQ(Enqueued(), want) << "a part's flat listing takes its own keys only";
}

TEST_F(ListerTest, ARangePartListsOnlyItsRange) {
  SkewedBucket();
  MakeJob("", "p117/", "p130/");
  ASSERT_TRUE(Run(4).ok());
  std::multiset<std::string> want;
  for (const auto& k : store_.keys) {
    if (k > "p117/" && k <= "p130/") want.insert(k);
  }
  EXPECT_EQ(Enqueued(), want);
}

}  // namespace
}  // namespace ferry::migrate
