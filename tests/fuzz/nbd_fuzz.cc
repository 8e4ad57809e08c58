// Fuzz target: a hostile NBD client against a real NbdServer (loopback
// TCP, pipelined transmission, structured replies and block status on
// offer). The input is everything the client sends after the server's
// greeting — client flags, options, requests with their payloads — then
// the client closes its side and reads what the server says until it
// closes. Exports: "rw" (1 MiB, writable: inputs write into it) and "ro"
// (256 KiB of known bytes, read-only).
// Invariants: the server greets, and ends every connection whose client
// has sent everything and closed (never hangs on one); it keeps serving:
// every 64 inputs a well-behaved client reads "ro" whole and gets exactly
// its bytes (no input wrote into it or broke the server for others).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>

#include "fuzz_util.h"
#include "nbd/server.h"
#include "nbd/test_client.h"

namespace {

using namespace ferry;
using namespace ferry::nbd;
using ferry::fuzz::Check;

constexpr const char* kName = "nbd_fuzz";

class MemoryDevice : public BlockDevice {
 public:
  MemoryDevice(std::string bytes, bool read_only)
      : bytes_(std::move(bytes)), read_only_(read_only) {}
  uint64_t size() const override { return bytes_.size(); }
  bool read_only() const override { return read_only_; }
  Status Read(uint64_t offset, uint64_t len, char* out) override {
    std::lock_guard lock(mu_);
    std::memcpy(out, bytes_.data() + offset, len);
    return Status::Ok();
  }
  Status Write(uint64_t offset, std::string_view data, bool) override {
    std::lock_guard lock(mu_);
    std::memcpy(bytes_.data() + offset, data.data(), data.size());
    return Status::Ok();
  }
  Status Flush() override { return Status::Ok(); }
  Status Trim(uint64_t offset, uint64_t len, bool fua) override {
    return WriteZeroes(offset, len, fua);
  }
  Status WriteZeroes(uint64_t offset, uint64_t len, bool) override {
    std::lock_guard lock(mu_);
    std::memset(bytes_.data() + offset, 0, len);
    return Status::Ok();
  }
  Status Extents(uint64_t offset, uint64_t len, std::vector<Extent>* out) override {
    out->clear();  // 4 KiB blocks of zeros are holes
    std::lock_guard lock(mu_);
    for (uint64_t at = offset; at < offset + len;) {
      uint64_t end = std::min(offset + len, (at / 4096 + 1) * 4096);
      bool zero =
          std::all_of(bytes_.begin() + at, bytes_.begin() + end, [](char c) { return c == 0; });
      if (!out->empty() && out->back().zero == zero) {
        out->back().length += end - at;
      } else {
        out->push_back({end - at, zero});
      }
      at = end;
    }
    return Status::Ok();
  }

 private:
  std::mutex mu_;
  std::string bytes_;
  const bool read_only_;
};

std::string KnownBytes() {
  std::string s(256 << 10, '\0');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>((i * 2654435761u) >> 13);
  return s;
}

struct Fixture {
  std::unique_ptr<NbdServer> server;
  Fixture() {
    NbdServerOptions o;
    o.listen = "127.0.0.1:0";
    o.worker_threads = 2;
    o.wait_threads = 2;
    o.client_timeout = std::chrono::milliseconds(5000);
    o.max_requests = 16;
    o.max_request_bytes = 4 << 20;
    server = std::make_unique<NbdServer>(o);
    server->AddExport("rw", std::make_shared<MemoryDevice>(std::string(1 << 20, '\0'), false));
    server->AddExport("ro", std::make_shared<MemoryDevice>(KnownBytes(), true));
    Check(server->Start().ok(), kName, "the server did not start");
  }
};

int Dial(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  Check(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0, kName,
        "the server refused a connection");
  timeval tv{10, 0};  // past this, the server hung on a closed client
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

void CheckStillServes(uint16_t port) {
  std::string error;
  auto c = TestClient::Connect(port, "ro", /*structured=*/false, &error);
  Check(c != nullptr, kName, "a well-behaved client cannot connect any more");
  const std::string& known = []() -> const std::string& {
    static const std::string k = KnownBytes();
    return k;
  }();
  Request r;
  r.type = kCmdRead;
  r.handle = 7;
  r.length = static_cast<uint32_t>(known.size());
  TestClient::Reply reply;
  Check(c->Send(r) && c->Receive(&reply, r.length), kName, "a well-behaved read got no reply");
  Check(reply.error == 0 && reply.handle == 7 && reply.payload == known, kName,
        "\"ro\" does not read back its bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fx = new Fixture();
  static int inputs = 0;
  const uint16_t port = fx->server->port();
  if (inputs++ % 64 == 0) CheckStillServes(port);

  int fd = Dial(port);
  // Sends the input while reading what comes back: a client that only
  // sends while the server's replies fill the socket would stall both
  // sides (the server stops reading at its in-flight bound).
  std::string got;
  char buf[65536];
  bool ended = false;  // the server's end seen: poll for writing only
  auto drain = [&] {
    for (;;) {
      ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0) ended = true;
      if (n <= 0) return;
      got.append(buf, static_cast<size_t>(n));
    }
  };
  for (size_t sent = 0; sent < size;) {
    pollfd p{fd, static_cast<short>(ended ? POLLOUT : POLLIN | POLLOUT), 0};
    if (::poll(&p, 1, 10000) <= 0) break;
    if (p.revents & POLLIN) drain();
    if (!(p.revents & POLLOUT)) {
      if (p.revents & (POLLERR | POLLHUP)) break;
      continue;
    }
    ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) break;  // the server closed on a violation: fine
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  const auto start = std::chrono::steady_clock::now();
  for (int timeouts = 0;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) break;
    if (n < 0 && errno == ECONNRESET) break;
    if (n < 0) {  // 10 s without a byte or the end; slow (sanitizers, load) or stuck?
      Check(++timeouts < 4, kName,
            "the server did not end a connection whose client had closed (40 s)");
      continue;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  if (auto waited = std::chrono::steady_clock::now() - start; waited > std::chrono::seconds(5)) {
    std::fprintf(stderr,
                 "nbd_fuzz: a connection took %lld ms to end after its client closed (%zu bytes)\n",
                 static_cast<long long>(
                     std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()),
                 got.size());
  }
  ::close(fd);
  Check(got.rfind("NBDMAGIC", 0) == 0, kName, "no greeting");
  return 0;
}
