#include "counters.h"

#include <nlohmann/json.hpp>

namespace ferry::s3server {
namespace {

void Add(OpStats& into, const OpStats& d) {
  into.requests += d.requests;
  into.errors += d.errors;
  into.bytes_in += d.bytes_in;
  into.bytes_out += d.bytes_out;
  into.faults += d.faults;
}

nlohmann::json ToJsonStats(const OpStats& s) {
  return {{"requests", s.requests},
          {"errors", s.errors},
          {"bytes_in", s.bytes_in},
          {"bytes_out", s.bytes_out},
          {"faults", s.faults}};
}

}  // namespace

void Counters::Record(std::string_view op, const OpStats& delta) {
  std::lock_guard lock(mu_);
  auto it = ops_.find(op);
  if (it == ops_.end()) it = ops_.emplace(std::string(op), OpStats{}).first;
  Add(it->second, delta);
}

void Counters::ConnectionOpened() {
  std::lock_guard lock(mu_);
  ++open_connections_;
  ++accepted_connections_;
}

void Counters::ConnectionClosed() {
  std::lock_guard lock(mu_);
  --open_connections_;
}

void Counters::Reset() {
  std::lock_guard lock(mu_);
  ops_.clear();
  accepted_connections_ = 0;
}

OpStats Counters::Get(std::string_view op) const {
  std::lock_guard lock(mu_);
  auto it = ops_.find(op);
  return it == ops_.end() ? OpStats{} : it->second;
}

nlohmann::json Counters::ToJson() const {
  std::lock_guard lock(mu_);
  nlohmann::json ops = nlohmann::json::object();
  OpStats total;
  for (const auto& [name, s] : ops_) {
    ops[name] = ToJsonStats(s);
    Add(total, s);
  }
  return {{"ops", ops},
          {"total", ToJsonStats(total)},
          {"connections", {{"open", open_connections_}, {"accepted", accepted_connections_}}}};
}

}  // namespace ferry::s3server
