#pragma once
// A gateway (gateway/gateway.h) served over HTTP for one migration job, as
// `ferry gateway` runs it and as `ferry migrate --serve` runs it beside the
// job in the same process (cli/ internal).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/migrate_args.h"

namespace ferry::cli {

// The gateway's flags.
struct GatewayArgs {
  MigrateArgs migrate;  // --state and the network settings of the stores
  std::string job;
  std::string listen = "127.0.0.1:7480";
  std::string listen_tls;
  std::vector<std::string> tls_certs, tls_keys;
  std::string port_file, tls_port_file;
  std::string credentials;
  std::string bucket;
  std::string region = "us-east-1";
  double lease_s = 60;
  double busy_wait_s = 30;
  std::string inline_limit = "64M";
  std::string max_body = "512M";
  int threads = 2;
  int workers = 32;
  double client_timeout_s = 60;
  std::vector<std::string> cors_origins;
  double cors_max_age_s = 600;
};

// A gateway serving: its job's stores opened from the state, the gateway and
// its HTTP server started. Destroying it stops the server and waits for the
// on-demand copies in flight to be written and marked.
class ServingGateway {
 public:
  virtual ~ServingGateway() = default;
  // Where it listens ("127.0.0.1:7480"), and the bucket name clients use.
  virtual std::string address() const = 0;
  virtual std::string bucket() const = 0;
  // Serves until SIGINT or SIGTERM; SIGHUP reloads the TLS certificates.
  virtual void ServeUntilInterrupted() = 0;
};

// Checks `a` (one-line errors), opens the job `a.job` (its own connection
// to --state) and starts serving.
Result<std::unique_ptr<ServingGateway>> StartGateway(const GatewayArgs& a);

}  // namespace ferry::cli
