#pragma once
// The NBD transmission phase of one connection, pipelined: requests are
// read as they come and run concurrently; each reply is written when its
// request completes (any order: the client matches handles), one write at
// a time. In flight per connection: at most max_requests requests and
// max_request_bytes bytes (reads' lengths, writes' payloads); past either
// the connection is not read until replies go out, so a client that floods
// is held by TCP, not by our memory. A FLUSH covers every write completed
// before it (the device's Flush covers every Write that returned). Device
// calls go to the ready pool when BlockDevice::Ready says so, else to the
// wait pool. Internal to the nbd layer (Asio inside).

#include <utility>  // before Boost.Asio under g++ 12

#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <cstdint>
#include <memory>

#include "nbd/device.h"
#include "nbd/server.h"
#include "net/server.h"

namespace ferry::nbd {

// What the handshake agreed on.
struct Negotiated {
  std::shared_ptr<BlockDevice> dev;
  uint16_t tx_flags = 0;
  bool structured = false;       // NBD_OPT_STRUCTURED_REPLY
  bool base_allocation = false;  // base:allocation selected for this export
};

// What the server lends each connection's transmission.
struct TransmissionContext {
  net::Server* server = nullptr;             // Blocking(): the ready pool
  boost::asio::thread_pool* waiters = nullptr;  // calls that may wait for data
  const NbdServerOptions* options = nullptr;
  std::atomic<uint64_t>* requests = nullptr;        // counted here
  std::atomic<uint64_t>* most_in_flight = nullptr;  // raised here
};

// Reads exactly `n` bytes into *out (resized to n): false when the
// connection failed or closed first. The handshake and transmission both
// read this way.
boost::asio::awaitable<bool> ReadExactly(net::Connection& c, std::string* out, size_t n);

// Serves requests until the client disconnects (NBD_CMD_DISC or a closed
// socket), a protocol violation, or a drain; returns only when every
// request it started has finished, so `c` outlives them.
boost::asio::awaitable<void> Transmit(const TransmissionContext& context, net::Connection& c, Negotiated n);

}  // namespace ferry::nbd
