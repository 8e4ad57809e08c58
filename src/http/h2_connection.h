#pragma once
// Runs an H2Session (http/h2_session.h) on one server connection, for
// http/server.cc only (Asio inside): reads the client's bytes into the
// session, writes its frames, and does what its events ask, on the same
// paths as HTTP/1.1 — Handler::HandleInline on the event loop first, else
// Handler::Handle on a worker (Server::Blocking); a streamed body read on
// workers piece by piece as the client's windows open. Work of a stream
// the client reset is dropped before it starts, or its answer discarded.
//
// Deadlines (the client timeout): every write must progress within it;
// while no request is being worked on, the client must send something
// within it (an idle connection ends there). A server stop sends GOAWAY
// and lets the streams open finish. After a GOAWAY the connection half
// closes and reads what the client still sends for a moment, so that the
// client reads the GOAWAY before the close.

#include <utility>  // before Boost.Asio under g++ 12

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <string>

#include "http/h2_session.h"
#include "http/server.h"
#include "net/connection.h"
#include "net/server.h"

namespace ferry::http {

struct H2Config {
  Handler* handler = nullptr;
  net::Server* server = nullptr;  // its workers run Handle and body reads
  std::chrono::milliseconds client_timeout{60'000};
  H2Limits limits;
};

// Serves HTTP/2 on `c` until the client or the server ends it. `received`:
// bytes already read from the client (h2c: the preface and what followed).
boost::asio::awaitable<void> ServeH2(net::Connection& c, const H2Config& config,
                                     std::string received);

}  // namespace ferry::http
