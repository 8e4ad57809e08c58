// Runs the backend conformance suite against the S3 backend talking to two
// servers: ferry-test-s3 (our own, verifying signatures) and s3rver (npm, an
// independent implementation with known gaps declared in its Capabilities).
// Each server is started on a loopback port by the first test that uses its
// factory and stopped at exit. gtest evaluates the generator below once per
// TEST_P, so every case gets fresh factories and so its own pair of servers
// (which also keeps one case that crashes s3rver from failing the rest).

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "conformance/store_conformance.h"
#include "conformance/test_server.h"
#include "store/s3/s3_store.h"

namespace ferry::conformance {
namespace {

struct Server {
  std::unique_ptr<ChildProcess> process;
  std::string endpoint;
  std::string access_key, secret_key;
  std::string dir;  // removed when the server is done with (it was left behind)
  std::string error;
  ~Server() {
    process.reset();  // stopped first: it writes in dir
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

class S3Factory : public StoreFixtureFactory {
 public:
  S3Factory(std::string name, Capabilities caps) : name_(std::move(name)), caps_(std::move(caps)) {}
  std::string Name() const override { return name_; }
  Capabilities Caps() const override { return caps_; }

  Result<std::unique_ptr<ObjectStore>> Make() override {
    if (!server_) server_ = Start();
    if (!server_->error.empty()) return Status::Internal(server_->error);
    S3StoreOptions o;
    o.bucket = "conformance";
    o.config.credentials = {server_->access_key, server_->secret_key, ""};
    o.config.region = "us-east-1";
    o.config.endpoint_url = server_->endpoint;
    o.retry.max_attempts = 2;
    return OpenS3Store(std::move(o));
  }

 protected:
  virtual std::unique_ptr<Server> Start() = 0;

 private:
  std::string name_;
  Capabilities caps_;
  std::unique_ptr<Server> server_;
};


class TestServerFactory : public S3Factory {
 public:
  TestServerFactory() : S3Factory("TestS3", {}) {}

 protected:
  std::unique_ptr<Server> Start() override {
    auto s = std::make_unique<Server>();
    s->access_key = "conformance";
    s->secret_key = "conformance-secret";
    s->dir = TempDir("ferry-conf-s3");
    std::string port_file = s->dir + "/port";
    s->process = std::make_unique<ChildProcess>(
        std::vector<std::string>{FERRY_TEST_S3_BIN, "--listen", "127.0.0.1:0", "--port-file",
                                 port_file, "--bucket", "conformance", "--access-key",
                                 s->access_key, "--secret-key", s->secret_key},
        std::vector<std::string>{});
    int port = 0;
    for (int i = 0; i < 200 && port == 0; ++i) {
      std::ifstream in(port_file);
      if (!(in >> port)) port = 0;
      if (port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (port == 0 || !WaitForPort(port)) s->error = "ferry-test-s3 did not start";
    s->endpoint = "http://127.0.0.1:" + std::to_string(port);
    return s;
  }
};

Capabilities S3rverCaps() {
  Capabilities c;
  c.gap_note = "s3rver 3.7";
  c.delimiter = false;                 // drops some prefixes, overfills max-keys pages
  c.list_byte_order = false;           // lists in directory-walk order
  c.long_key_segments = false;         // keys are file names
  c.empty_key_segments = false;        // PUT "a//b" answers 404 NoSuchKey
  c.dot_segment_keys = false;          // koa normalises "a/../b"
  c.key_length_limit = false;          // stores keys over 1024 bytes
  c.get_if_match = false;              // ignores If-Match on GET
  c.content_md5 = false;               // never checks Content-MD5
  c.list_parts = false;                // ListParts: 405 MethodNotAllowed
  c.abort_multipart = false;           // AbortMultipartUpload: 405 MethodNotAllowed
  c.list_uploads = false;              // ListMultipartUploads: 501 NotImplemented
  c.multipart_etag = false;            // plain MD5 of the whole object
  c.complete_validates_parts = false;  // sorts parts, ignores ETags, dies on a missing one
  c.atomic_overwrite = false;          // rewrites the object file in place
  c.read_after_write = false;          // answers the PUT before the file is complete
  return c;
}

class S3rverFactory : public S3Factory {
 public:
  S3rverFactory() : S3Factory("S3rver", S3rverCaps()) {}

 protected:
  std::unique_ptr<Server> Start() override {
    auto s = std::make_unique<Server>();
    s->access_key = s->secret_key = "S3RVER";
    std::string bin = std::string(FERRY_SOURCE_DIR) + "/testing/peers/node_modules/.bin/s3rver";
    if (::access(bin.c_str(), X_OK) != 0) {
      s->error = "s3rver not installed (make setup)";
      return s;
    }
    s->dir = TempDir("ferry-conf-s3rver");
    int port = FreePort();
    s->process = std::make_unique<ChildProcess>(
        std::vector<std::string>{bin, "-d", s->dir, "-a", "127.0.0.1", "-p", std::to_string(port),
                                 "-s", "--configure-bucket", "conformance"},
        // s3rver 3.7's continuation tokens use DES: OpenSSL 3's legacy provider.
        std::vector<std::string>{"NODE_OPTIONS=--openssl-legacy-provider"});
    if (port == 0 || !WaitForPort(port)) s->error = "s3rver did not start";
    s->endpoint = "http://127.0.0.1:" + std::to_string(port);
    return s;
  }
};

INSTANTIATE_TEST_SUITE_P(S3, StoreConformanceTest,
                         ::testing::Values(std::make_shared<TestServerFactory>(),
                                           std::make_shared<S3rverFactory>()),
                         FactoryName);

}  // namespace
}  // namespace ferry::conformance
