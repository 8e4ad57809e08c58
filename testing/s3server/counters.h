#pragma once
// Per-operation request statistics, exposed by GET /_admin/stats.
// Thread-safe.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace ferry::s3server {

struct OpStats {
  uint64_t requests = 0;
  uint64_t errors = 0;       // answered >= 400, or a transport fault was injected
  uint64_t bytes_in = 0;     // request body bytes received (as sent, before decoding)
  uint64_t bytes_out = 0;    // response body bytes sent
  uint64_t faults = 0;       // requests that had a fault injected
};

class Counters {
 public:
  void Record(std::string_view op, const OpStats& delta);
  void ConnectionOpened();
  void ConnectionClosed();
  // Zeroes the per-operation stats and the accepted-connection count (the
  // open-connection gauge is kept).
  void Reset();
  OpStats Get(std::string_view op) const;

  // {"ops": {"get": {"requests":..,"errors":..,"bytes_in":..,"bytes_out":..,
  //  "faults":..}, ...}, "total": {...}, "connections": {"open":..,"accepted":..}}
  nlohmann::json ToJson() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, OpStats, std::less<>> ops_;  // guarded by mu_
  uint64_t open_connections_ = 0;                    // guarded by mu_
  uint64_t accepted_connections_ = 0;                // guarded by mu_
};

}  // namespace ferry::s3server
