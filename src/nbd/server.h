#pragma once
// An NBD server (fixed newstyle) on ferry's server core (net/server.h: TCP
// or a Unix-domain socket, deadlines, a graceful stop), serving named
// exports of BlockDevices. Asio stays inside the .cc files.
//
// Handshake: EXPORT_NAME, LIST, INFO, GO, ABORT, STRUCTURED_REPLY,
// LIST/SET_META_CONTEXT (base:allocation) and STARTTLS (X.509 through
// OpenSSL; `tls.mode` off, on or require: under require every option but
// STARTTLS and ABORT is refused with TLS_REQD, and EXPORT_NAME closes).
// Transmission is pipelined (transmission.h): a connection's requests run
// concurrently, bounded by count and bytes, and are answered as they
// complete, in any order. Clients that did not ask for structured replies
// (the Linux kernel's) get simple ones.
//
// Protocol violations (a bad magic, oversized option data or requests)
// disconnect that client only; an unknown export name gets an error reply
// (or, for the old EXPORT_NAME option, a closed connection, which is all
// that option allows); I/O past the end gets EINVAL. Device calls run on
// worker threads, so a device may block (a volume waiting for a chunk)
// without stalling other requests or clients.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "nbd/device.h"

namespace ferry::nbd {

enum class TlsMode { kOff, kOn, kRequire };
// "off", "on", "require"; kInvalidArgument otherwise.
Result<TlsMode> ParseTlsMode(const std::string& text);

struct NbdTlsOptions {
  TlsMode mode = TlsMode::kOff;
  std::string cert_file, key_file;  // PEM; needed unless mode is off
  std::string ca_file;              // clients must present a certificate it signed; "": none asked
};

struct NbdServerOptions {
  std::string listen = "127.0.0.1:10809";  // net/listen_address.h (port 0: pick one)
  int io_threads = 1;
  // Device calls that can run at once (their data is here: BlockDevice::
  // Ready) and those that may wait for it (a volume's missing chunk) run on
  // separate pools, so the first never queue behind the second.
  int worker_threads = 8;
  int wait_threads = 64;
  // A client gets this long to finish its handshake, and to take each
  // reply; past it, it is disconnected. (Between requests a client may be
  // idle as long as it likes: a mounted disk often is.)
  std::chrono::milliseconds client_timeout{60'000};
  // Per connection: requests in flight, and their bytes (read lengths and
  // write payloads). Past either, the server stops reading the connection
  // until replies go out. (qemu keeps 16 in flight.)
  int max_requests = 64;
  uint64_t max_request_bytes = 64ull << 20;
  NbdTlsOptions tls;
};

struct NbdServerStats {
  uint64_t requests = 0;           // transmission requests run
  uint64_t most_in_flight = 0;     // most requests of one connection in flight at once
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
  NbdServerStats stats() const;
  // Closes the listener and every connection, and joins the threads.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::nbd
