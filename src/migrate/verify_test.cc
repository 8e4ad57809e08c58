// verify between local directories: the differences it must find, the
// filters, and the same answers whether it compares key ranges in parallel
// or sorts whole listings on disk (also when a side lists out of order).
#include "migrate/verify.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>

#include "store/forwarding_store.h"
#include "store/local/local_store.h"

namespace ferry::migrate {
namespace {

namespace fs = std::filesystem;

// A store whose listings come out of byte order (each page reversed), as a
// broken server's would; everything else passes through.
class ReversingStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Result<ListPage> List(const ListOptions& o) override {
    auto page = inner().List(o);
    if (page.ok()) std::reverse(page->objects.begin(), page->objects.end());
    return page;
  }
};

class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-verify-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ + "/src");
    fs::create_directories(root_ + "/dst");
    fs::create_directories(root_ + "/spill");
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& side, const std::string& rel, const std::string& body) {
    fs::path p = fs::path(root_) / side / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << body;
  }
  // `n` files in both trees, under a few prefixes of very different sizes.
  void Twins(int n) {
    std::mt19937 rng(5);
    for (int i = 0; i < n; ++i) {
      std::string rel = (i % 10 < 7 ? "big/" : "d" + std::to_string(i % 10) + "/") + "f" +
                        std::to_string(100000 + i);
      std::string body(rng() % 200, 'x');
      for (auto& c : body) c = static_cast<char>('a' + rng() % 26);
      Write("src", rel, body);
      Write("dst", rel, body);
    }
  }

  struct Outcome {
    VerifyCounts counts;
    std::vector<Difference> diffs;
    std::vector<std::string> warnings;
  };
  Outcome Verify(VerifyOptions o, bool reverse_dst = false) {
    auto src = OpenLocalStore(root_ + "/src", false);
    auto dst = OpenLocalStore(root_ + "/dst", false);
    EXPECT_TRUE(src.ok() && dst.ok());
    ReversingStore reversed(**dst);
    Outcome out;
    std::mutex mu;
    o.src = src->get();
    o.dst = reverse_dst ? static_cast<ObjectStore*>(&reversed) : dst->get();
    o.spill_dir = root_ + "/spill";
    o.list_chunk = 50;
    o.on_difference = [&](const Difference& d) { out.diffs.push_back(d); };
    o.on_warning = [&](const std::string& w) {
      std::lock_guard<std::mutex> lock(mu);
      out.warnings.push_back(w);
    };
    auto r = RunVerify(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) out.counts = *r;
    return out;
  }

  // The four kinds of damage the issue names, and one of each kind reported.
  void Damage() {
    fs::remove(fs::path(root_) / "dst/big/f100000");                     // deleted
    Write("dst", "d7/f100007", "");                                        // truncated
    std::string body;
    std::ifstream(fs::path(root_) / "src/d8/f100008", std::ios::binary) >> body;
    std::string changed = body;
    if (!changed.empty()) changed[0] = changed[0] == 'a' ? 'b' : 'a';
    Write("dst", "d8/f100008", changed);                                   // same size, other bytes
    Write("dst", "zz/extra", "only here");                                 // extra
  }
  void ExpectDamageFound(const Outcome& out) {
    EXPECT_EQ(out.counts.missing, 1);
    EXPECT_EQ(out.counts.differing, 2);
    EXPECT_EQ(out.counts.extra, 1);
    EXPECT_FALSE(out.counts.ok());
    std::map<std::string, Difference::Kind> got;
    for (const auto& d : out.diffs) got[d.key] = d.kind;
    std::map<std::string, Difference::Kind> want = {
        {"big/f100000", Difference::Kind::kMissing},
        {"d7/f100007", Difference::Kind::kDiffers},
        {"d8/f100008", Difference::Kind::kDiffers},
        {"zz/extra", Difference::Kind::kExtra}};
    EXPECT_EQ(got, want);
    EXPECT_TRUE(std::is_sorted(out.diffs.begin(), out.diffs.end(),
                               [](const auto& a, const auto& b) { return a.key < b.key; }))
        << "differences are reported in key order";
  }

  std::string root_;
};

TEST_F(VerifyTest, TwinTreesMatchKeyForKey) {
  Twins(3000);
  VerifyOptions o;
  o.concurrency = 8;
  auto out = Verify(o);
  EXPECT_TRUE(out.counts.ok());
  EXPECT_EQ(out.counts.matched, 3000);
  EXPECT_EQ(out.counts.by_md5, 3000);
  EXPECT_EQ(out.counts.extra, 0);
  EXPECT_TRUE(out.diffs.empty());
  EXPECT_FALSE(out.counts.sorted_on_disk);
}

TEST_F(VerifyTest, FindsTheDeletedTheTruncatedTheChangedAndTheExtra) {
  Twins(3000);
  Damage();
  VerifyOptions o;
  o.concurrency = 8;
  ExpectDamageFound(Verify(o));
}

TEST_F(VerifyTest, SortingOnDiskGivesTheSameAnswer) {
  Twins(3000);
  Damage();
  VerifyOptions o;
  o.force_spill = true;
  o.spill_records = 400;  // many runs
  auto out = Verify(o);
  EXPECT_TRUE(out.counts.sorted_on_disk);
  ExpectDamageFound(out);
  EXPECT_TRUE(fs::is_empty(root_ + "/spill")) << "no run file is left behind";
}

TEST_F(VerifyTest, ASideOutOfOrderIsSortedOnDiskWithAWarning) {
  Twins(3000);
  Damage();
  VerifyOptions o;
  o.concurrency = 4;
  auto out = Verify(o, /*reverse_dst=*/true);
  EXPECT_TRUE(out.counts.sorted_on_disk);
  ASSERT_EQ(out.warnings.size(), 1u);
  EXPECT_NE(out.warnings[0].find("destination"), std::string::npos) << out.warnings[0];
  EXPECT_NE(out.warnings[0].find("byte order"), std::string::npos) << out.warnings[0];
  ExpectDamageFound(out);
}

TEST_F(VerifyTest, AJobsFiltersDecideWhatIsExpected) {
  Twins(300);
  Damage();
  VerifyOptions o;
  o.filter.exclude = {"big/**", "zz/**"};
  auto out = Verify(o);
  EXPECT_EQ(out.counts.missing, 0) << "big/ is not part of the job";
  EXPECT_EQ(out.counts.extra, 0) << "nor is zz/";
  EXPECT_EQ(out.counts.differing, 2);
  EXPECT_EQ(out.counts.matched, 300 - 210 - 2);
}

TEST_F(VerifyTest, ChecksumReadsWhatNoMetadataProves) {
  // Sidecar-less local files: their MD5 comes from reading them (a lookup);
  // --checksum counts the same when both sides are read.
  Twins(50);
  VerifyOptions o;
  auto plain = Verify(o);
  EXPECT_EQ(plain.counts.matched, 50);
  EXPECT_GE(plain.counts.lookups, 50);
}

}  // namespace
}  // namespace ferry::migrate
