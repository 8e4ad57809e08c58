#pragma once
// For tests: a raw, blocking NBD client over loopback TCP that can do what
// the peers' command-line tools cannot be made to do on cue: keep many
// requests in flight, flood, or read replies byte for byte. It negotiates
// one export with NBD_OPT_GO (structured replies and base:allocation when
// asked) and then sends requests and reads replies as told.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "nbd/protocol.h"

namespace ferry::nbd {

class TestClient {
 public:
  ~TestClient() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Connected and in transmission, or null (why in *error).
  static std::unique_ptr<TestClient> Connect(uint16_t port, const std::string& name, bool structured,
                                             std::string* error) {
    std::unique_ptr<TestClient> c(new TestClient());
    c->fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (::connect(c->fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return Fail(error, "connect");
    std::string greeting;
    if (!c->RecvN(&greeting, 18)) return Fail(error, "greeting");
    std::string flags;
    Put32(&flags, kClientFixedNewstyle | kClientNoZeroes);
    if (!c->SendAll(flags)) return Fail(error, "client flags");
    if (structured) {
      if (!c->Option(kOptStructuredReply, "") || !c->AckOnly(kOptStructuredReply)) return Fail(error, "structured");
      std::string meta;
      Put32(&meta, static_cast<uint32_t>(name.size()));
      meta += name;
      Put32(&meta, 1);
      Put32(&meta, static_cast<uint32_t>(kBaseAllocation.size()));
      meta += kBaseAllocation;
      if (!c->Option(kOptSetMetaContext, meta)) return Fail(error, "set meta context");
      uint32_t type = 0;
      std::string data;
      while (c->OptionReply(&type, &data) && type == kRepMetaContext) c->meta_ = true;
      if (type != kRepAck) return Fail(error, "set meta context reply");
    }
    std::string go;
    Put32(&go, static_cast<uint32_t>(name.size()));
    go += name;
    Put16(&go, 0);
    if (!c->Option(kOptGo, go)) return Fail(error, "go");
    for (;;) {
      uint32_t type = 0;
      std::string data;
      if (!c->OptionReply(&type, &data)) return Fail(error, "go reply");
      if (type == kRepAck) break;
      if (type != kRepInfo) return Fail(error, "go refused");
      if (data.size() >= 12 && Get16(U(data)) == kInfoExport) {
        c->size_ = Get64(U(data) + 2);
        c->tx_flags_ = Get16(U(data) + 10);
      }
    }
    return c;
  }

  uint64_t size() const { return size_; }
  uint16_t tx_flags() const { return tx_flags_; }
  bool meta() const { return meta_; }

  bool Send(const Request& r, std::string_view payload = {}) {
    return SendAll(EncodeRequest(r)) && SendAll(payload);
  }

  // One reply: simple (then, when it succeeded, `read_length` bytes of data
  // follow it: the caller knows the request) or a structured chunk.
  struct Reply {
    bool structured = false;
    uint32_t error = 0;     // simple replies
    uint16_t flags = 0;     // structured chunks
    uint16_t type = 0;
    uint64_t handle = 0;
    std::string payload;    // a simple READ's data, or a chunk's payload
  };
  bool Receive(Reply* r, uint32_t read_length) {
    std::string head;
    if (!RecvN(&head, 4)) return false;
    if (Get32(U(head)) == kSimpleReplyMagic) {
      if (!RecvN(&head, 12)) return false;
      r->structured = false;
      r->error = Get32(U(head));
      r->handle = Get64(U(head) + 4);
      r->payload.clear();
      return r->error != 0 || read_length == 0 || RecvN(&r->payload, read_length);
    }
    if (Get32(U(head)) != kStructuredReplyMagic || !RecvN(&head, 16)) return false;
    r->structured = true;
    r->flags = Get16(U(head));
    r->type = Get16(U(head) + 2);
    r->handle = Get64(U(head) + 4);
    return RecvN(&r->payload, Get32(U(head) + 12));
  }

  void ShutdownSend() { ::shutdown(fd_, SHUT_WR); }

 private:
  TestClient() = default;
  static const unsigned char* U(const std::string& s) { return reinterpret_cast<const unsigned char*>(s.data()); }
  static std::unique_ptr<TestClient> Fail(std::string* error, const char* what) {
    if (error) *error = what;
    return nullptr;
  }
  bool SendAll(std::string_view b) {
    while (!b.empty()) {
      ssize_t n = ::send(fd_, b.data(), b.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      b.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  bool RecvN(std::string* out, size_t n) {
    out->assign(n, '\0');
    size_t got = 0;
    while (got < n) {
      ssize_t k = ::recv(fd_, out->data() + got, n - got, 0);
      if (k <= 0) return false;
      got += static_cast<size_t>(k);
    }
    return true;
  }
  bool Option(uint32_t option, const std::string& data) {
    std::string o;
    Put64(&o, kOptMagic);
    Put32(&o, option);
    Put32(&o, static_cast<uint32_t>(data.size()));
    return SendAll(o + data);
  }
  bool OptionReply(uint32_t* type, std::string* data) {
    std::string h;
    if (!RecvN(&h, 20)) return false;
    *type = Get32(U(h) + 12);
    return RecvN(data, Get32(U(h) + 16));
  }
  bool AckOnly(uint32_t) {
    uint32_t type = 0;
    std::string data;
    return OptionReply(&type, &data) && type == kRepAck;
  }

  int fd_ = -1;
  uint64_t size_ = 0;
  uint16_t tx_flags_ = 0;
  bool meta_ = false;
};

}  // namespace ferry::nbd
