#pragma once
// An NBD server (fixed newstyle; simple replies) on ferry's server core
// (net/server.h: TCP or a Unix-domain socket, deadlines, a graceful stop),
// serving named exports of BlockDevices. Asio stays inside server.cc. Protocol violations (a bad magic, oversized option data or
// requests) disconnect that client only; an unknown export name gets an
// error reply (or, for the old EXPORT_NAME option, a closed connection,
// which is all that option allows); I/O past the end gets EINVAL.
// Device calls run on a worker pool, so a device may block (a volume
// waiting for a chunk) without stalling other clients.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "nbd/device.h"

namespace ferry::nbd {

struct NbdServerOptions {
  std::string listen = "127.0.0.1:10809";  // net/listen_address.h (port 0: pick one)
  int io_threads = 1;
  int worker_threads = 8;  // device calls (a read may wait for its chunk)
  // A client gets this long to finish its handshake, and to take each
  // reply; past it, it is disconnected. (Between requests a client may be
  // idle as long as it likes: a mounted disk often is.)
  std::chrono::milliseconds client_timeout{60'000};
};

class NbdServer {
 public:
  explicit NbdServer(NbdServerOptions options);
  ~NbdServer();  // stops
  NbdServer(const NbdServer&) = delete;
  NbdServer& operator=(const NbdServer&) = delete;

  // Exports can be added and removed while serving; a removed export's
  // open connections keep their device until they close.
  void AddExport(const std::string& name, std::shared_ptr<BlockDevice> device);
  void RemoveExport(const std::string& name);

  // Binds and starts serving on background threads.
  Status Start();
  uint16_t port() const;
  // Closes the listener and every connection, and joins the threads.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::nbd
