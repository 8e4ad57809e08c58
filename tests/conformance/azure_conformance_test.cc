// Runs the backend conformance suite against the Azure backend talking to
// Azurite (npm, Microsoft's emulator; blob service only, in memory, on a
// loopback port). As in s3_conformance_test.cc each case gets its own
// Azurite. Without Azurite installed (make setup) every case is skipped.

#include <unistd.h>

#include <memory>
#include <string>

#include "conformance/store_conformance.h"
#include "conformance/test_server.h"
#include "store/azure/azure_config.h"
#include "store/azure/azure_requester.h"
#include "store/azure/azure_store.h"

namespace ferry::conformance {
namespace {

constexpr char kContainer[] = "conformance";

Capabilities AzureCaps() {
  Capabilities c;
  c.get_announces_info = false;
  c.gap_note = "Azure Blob Storage";
  c.multipart_etag = false;  // Put Block List's ETag is Azure's, not S3's MD5-of-MD5s
  c.complete_checks_part_etags = false;  // blocks are named by id; sizes are checked
  c.part_etags_listed = false;           // Get Block List has names and sizes only
  c.abort_forgets_upload = false;  // uncommitted blocks cannot be deleted (a tombstone
                                   // hides the upload; a late Put Block is not refused)
  c.expires_header = false;        // no Expires blob property
  // Azurite's own gaps (Azure itself limits names to 1,024 characters).
  c.list_byte_order = false;  // compares UTF-16 code units: U+1F600 before U+FF21
  c.key_length_limit = false;  // stores names over 1,024 bytes
  c.backslash_keys = false;    // turns '\' in a name into '/'
  return c;
}

class AzuriteFactory : public StoreFixtureFactory {
 public:
  std::string Name() const override { return "Azurite"; }
  Capabilities Caps() const override { return AzureCaps(); }

  Result<std::unique_ptr<ObjectStore>> Make() override {
    if (!started_) Start();
    if (!error_.empty()) return Status(skip_ ? ErrorCode::kUnsupported : ErrorCode::kInternal, error_);
    AzureStoreOptions o;
    o.container = kContainer;
    o.config = config_;
    o.retry.max_attempts = 2;
    o.copy_poll = std::chrono::milliseconds(20);
    return OpenAzureStore(std::move(o));
  }

 private:
  void Start() {
    started_ = true;
    std::string bin =
        std::string(FERRY_SOURCE_DIR) + "/testing/peers/node_modules/.bin/azurite-blob";
    if (::access(bin.c_str(), X_OK) != 0) {
      error_ = "azurite not installed (make setup)";
      skip_ = true;
      return;
    }
    int port = FreePort();
    // Telemetry off: the tests reach nothing beyond loopback.
    process_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{bin, "--silent", "--inMemoryPersistence", "--disableTelemetry",
                                 "--blobHost", "127.0.0.1", "--blobPort", std::to_string(port)},
        std::vector<std::string>{});
    if (port == 0 || !WaitForPort(port)) {
      error_ = "azurite did not start";
      return;
    }
    config_.account = azure::kDevAccount;
    config_.key = azure::kDevAccountKey;
    config_.endpoint_url = "http://127.0.0.1:" + std::to_string(port) + "/" + azure::kDevAccount;
    config_.source = "test";
    Status made = CreateContainer();
    if (!made.ok()) error_ = "creating the container: " + made.ToString();
  }

  Status CreateContainer() {
    auto client = std::make_shared<http::Client>(http::ClientOptions{});
    FERRY_ASSIGN_OR_RETURN(auto rq, azure::AzureRequester::Make(config_, kContainer, client,
                                                                nullptr, RetryPolicy{}));
    azure::AzureCall c;
    c.method = "PUT";
    c.query = {{"restype", "container"}};
    return rq->Run(c).status();
  }

 public:
  ~AzuriteFactory() override {
    process_.reset();
  }

 private:
  bool started_ = false;
  bool skip_ = false;
  std::string error_;
  std::unique_ptr<ChildProcess> process_;
  azure::AzureConfig config_;
};

INSTANTIATE_TEST_SUITE_P(Azure, StoreConformanceTest,
                         ::testing::Values(std::make_shared<AzuriteFactory>()), FactoryName);

}  // namespace
}  // namespace ferry::conformance
