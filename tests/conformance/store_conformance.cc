// The fixture and helpers of the conformance suite (store_conformance.h).
// The cases live in conformance_*_cases.cc, grouped by concern.

#include "conformance/store_conformance.h"

#include <algorithm>
#include <iostream>
#include <random>

#include "conformance/conformance_util.h"

namespace ferry::conformance {

std::string FactoryName(const ::testing::TestParamInfo<StoreFactoryPtr>& info) {
  return info.param->Name();
}

void PrintTo(const StoreFactoryPtr& factory, std::ostream* os) { *os << factory->Name(); }

void StoreConformanceTest::SetUp() {
  caps_ = GetParam()->Caps();
  auto made = GetParam()->Make();
  if (!made.ok() && made.status().code() == ErrorCode::kUnsupported) {
    GTEST_SKIP() << GetParam()->Name() << ": " << made.status().message();
  }
  ASSERT_TRUE(made.ok()) << GetParam()->Name() << ": " << made.status().ToString();
  store_ = std::move(*made);
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info->name();
  // "Case/Backend" -> "Case": keep prefixes readable and free of '/'.
  test = test.substr(0, test.find('/'));
  std::random_device rd;
  prefix_ = "conformance/" + test + "/" + std::to_string(rd()) + std::to_string(rd()) + "/";
}

void StoreConformanceTest::TearDown() {
  if (store_ != nullptr) {
    // Best effort: leave a shared bucket as we found it.
    ListOptions options;
    options.prefix = prefix_;
    for (int guard = 0; guard < 100; ++guard) {
      auto page = store_->List(options);
      if (!page.ok()) break;
      for (const ObjectInfo& o : page->objects) (void)store_->Delete(o.key);
      if (!page->truncated) break;
      options.continuation_token = page->next_continuation_token;
    }
  }
  store_.reset();
  GetParam()->Cleanup();
}

bool StoreConformanceTest::NoteCapability(bool supported, const char* name) {
  if (supported) return true;
  if (std::find(noted_.begin(), noted_.end(), name) == noted_.end()) {
    noted_.emplace_back(name);
    std::cout << "[   GAP    ] " << GetParam()->Name() << " declares no support for `" << name
              << "`" << (caps_.gap_note.empty() ? "" : " (" + caps_.gap_note + ")")
              << ": those checks are left out\n";
  }
  return false;
}

ObjectInfo StoreConformanceTest::PutString(const std::string& key, const std::string& data,
                                           const PutOptions& options) {
  StringSource source(data);
  auto info = store_->Put(key, source, data.size(), options);
  EXPECT_TRUE(info.ok()) << "put '" << key << "': " << info.status().ToString();
  return info.ok() ? *info : ObjectInfo{};
}

std::string StoreConformanceTest::GetString(const std::string& key, const GetOptions& options) {
  StringSink sink;
  auto info = store_->Get(key, options, sink);
  EXPECT_TRUE(info.ok()) << "get '" << key << "': " << info.status().ToString();
  return sink.data();
}

StoreConformanceTest::Listing StoreConformanceTest::ListAll(ListOptions options) {
  Listing all;
  for (;;) {
    auto page = store_->List(options);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) break;
    ++all.pages;
    EXPECT_LE(static_cast<int>(page->objects.size() + page->common_prefixes.size()),
              options.max_keys);
    for (const ObjectInfo& o : page->objects) all.keys.push_back(o.key);
    for (const std::string& p : page->common_prefixes) all.common_prefixes.push_back(p);
    if (!page->truncated) break;
    EXPECT_FALSE(page->next_continuation_token.empty());
    if (page->next_continuation_token.empty() || all.pages > 10000) break;
    options.continuation_token = page->next_continuation_token;
  }
  return all;
}

}  // namespace ferry::conformance
