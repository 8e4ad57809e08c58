// A cache tier with several parents (--parent more than once): each key's
// fill goes to one of them, and to its next when that one is down.
#include <gtest/gtest.h>

#include "base/test_temp_dir.h"
#include "cache/proxy.h"
#include "cache/proxy_test_util.h"

namespace ferry::cache {
namespace {

class ParentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenTestStore(dir_.path());
    ProxyOptions o;
    o.routing = std::move(ParseRouting("http://origin.test:8000", {})).value();
    for (const char* p : {"http://p1.test:9000", "http://p2.test:9000", "http://p3.test:9000"}) {
      o.parents.push_back(*http::ParseEndpoint(p));
    }
    for (int i = 0; i < 300; ++i) {
      upstream_.answers["/k" + std::to_string(i)] = {
          200,
          {{"Content-Type", "text/plain"}, {"Cache-Control", "max-age=60"}},
          "body " + std::to_string(i)};
    }
    proxy_ = std::make_unique<Proxy>(o, store_.get(), &upstream_);
  }
  void TearDown() override { proxy_.reset(); }
  // Asks for keys [from, to); each must answer its body.
  void Ask(int from, int to) {
    for (int i = from; i < to; ++i) {
      auto r = proxy_->Handle(GetRequest("/k" + std::to_string(i)));
      ASSERT_EQ(r.status, 200) << i;
      ASSERT_EQ(r.body, "body " + std::to_string(i));
    }
  }

  TestTempDir dir_;
  std::unique_ptr<DiskStore> store_;
  FakeUpstream upstream_;
  std::unique_ptr<Proxy> proxy_;
};

TEST_F(ParentsTest, EachKeyGoesToOneParentAndToTheNextWhenItIsDown) {
  Ask(0, 150);
  EXPECT_EQ(upstream_.calls, 150);  // one fill per key
  for (const char* h : {"p1.test", "p2.test", "p3.test"})
    EXPECT_GT(upstream_.calls_by_host[h], 25) << h;
  EXPECT_EQ(proxy_->Metrics().parent_failovers, 0u);
  upstream_.down_hosts.insert("p2.test");
  upstream_.calls_by_host.clear();
  Ask(150, 300);
  const int tried_p2 = upstream_.calls_by_host["p2.test"];
  EXPECT_GT(tried_p2, 25);
  EXPECT_EQ(proxy_->Metrics().parent_failovers,
            static_cast<uint64_t>(tried_p2));  // each went on, once
  EXPECT_EQ(upstream_.calls_by_host["p1.test"] + upstream_.calls_by_host["p3.test"], 150);
  // A request that may not be sent twice is not sent on: the key's first
  // choice down, a POST fails rather than reach a second parent.
  auto post = GetRequest("/k0");
  post.method = "POST";
  upstream_.down_hosts = {"p1.test", "p2.test", "p3.test"};
  upstream_.calls_by_host.clear();
  EXPECT_GE(proxy_->Handle(post).status, 500);
  int tried = 0;
  for (const auto& [h, n] : upstream_.calls_by_host) tried += n;
  EXPECT_EQ(tried, 1);
  // All parents down: the fill fails (502), after trying each once.
  upstream_.down_hosts = {"p1.test", "p2.test", "p3.test"};
  upstream_.answers["/new"] = {200, {}, "x"};
  upstream_.calls_by_host.clear();
  auto r = proxy_->Handle(GetRequest("/new"));
  EXPECT_GE(r.status, 500);
  for (const char* h : {"p1.test", "p2.test", "p3.test"})
    EXPECT_EQ(upstream_.calls_by_host[h], 1) << h;
}

}  // namespace
}  // namespace ferry::cache
