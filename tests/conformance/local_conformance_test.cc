// Runs the backend conformance suite against LocalStore, one fresh
// temporary root directory per test.

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "conformance/store_conformance.h"
#include "store/local/local_store.h"

namespace ferry::conformance {
namespace {

class LocalStoreFactory : public StoreFixtureFactory {
 public:
  LocalStoreFactory(std::string name, bool sync, Capabilities caps = {})
      : name_(std::move(name)), sync_(sync), caps_(std::move(caps)) {}

  std::string Name() const override { return name_; }
  Capabilities Caps() const override { return caps_; }

  Result<std::unique_ptr<ObjectStore>> Make() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "ferry-conformance-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return Status::FromErrno(errno, "mkdtemp " + tmpl);
    root_ = tmpl;
    LocalStoreOptions options;
    options.sync = sync_;
    return OpenLocalStore(root_, options);
  }

  void Cleanup() override {
    if (root_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
    root_.clear();
  }

 private:
  const std::string name_;
  const bool sync_;
  const Capabilities caps_;
  std::string root_;
};

// Declares gaps it does not have, so the skip path of the suite is exercised
// the way an s3rver instantiation would use it.
Capabilities DeclaredGaps() {
  Capabilities c;
  c.delimiter = false;
  c.long_key_segments = false;
  c.empty_key_segments = false;  // partial guards (FERRY_HAS_CAPABILITY)
  c.list_parts = false;
  c.gap_note = "declared by the LocalDeclaredGaps fixture to exercise skipping";
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Local, StoreConformanceTest,
    ::testing::Values(std::make_shared<LocalStoreFactory>("Local", /*sync=*/true),
                      std::make_shared<LocalStoreFactory>("LocalNoSync", /*sync=*/false),
                      std::make_shared<LocalStoreFactory>("LocalDeclaredGaps", /*sync=*/false,
                                                          DeclaredGaps())),
    FactoryName);

}  // namespace
}  // namespace ferry::conformance
