#pragma once
// The state one server process shares across connections: storage,
// authentication, fault policy and counters, plus the options they came from.
// Thread-safe (each member is).

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "auth.h"
#include "counters.h"
#include "faults.h"
#include "pacer.h"
#include "storage.h"

namespace ferry::s3server {

struct ServiceOptions {
  AuthConfig auth;
  std::vector<std::string> buckets;     // created at start and after /_admin/clear
  uint64_t min_part_size = 5ull << 20;  // every multipart part but the last
  std::string region = "us-east-1";     // reported by GetBucketLocation
};

class Service {
 public:
  Service(ServiceOptions options, std::unique_ptr<Storage> storage);

  // Creates the configured buckets that do not exist yet.
  Status CreateInitialBuckets();
  // Drops all data, then re-creates the configured buckets.
  Status ClearData();

  const ServiceOptions& options() const { return options_; }
  Storage& storage() { return *storage_; }
  const Authenticator& auth() const { return auth_; }
  FaultPolicy& faults() { return faults_; }
  Counters& counters() { return counters_; }
  Pacer& total_pacer() { return total_pacer_; }

  // Unique per process: "0000000000000001"...
  std::string NextRequestId();

 private:
  ServiceOptions options_;
  std::unique_ptr<Storage> storage_;
  Authenticator auth_;
  FaultPolicy faults_;
  Counters counters_;
  Pacer total_pacer_;
  std::atomic<uint64_t> next_request_id_{1};
};

}  // namespace ferry::s3server
