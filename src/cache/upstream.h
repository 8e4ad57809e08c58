#pragma once
// Where the proxy's fills and pass-through requests go: an origin or a
// parent tier, over HTTP. An interface so that tests can stand in a
// scripted upstream (one that blocks, fails or counts) for the real client.

#include "http/client.h"

namespace ferry::cache {

class Upstream {
 public:
  virtual ~Upstream() = default;
  // http::Client::Send's contract: a transport failure is a Status; any
  // HTTP answer is `*out`, its 2xx body streamed into `sink`.
  virtual Status Send(const http::Endpoint& endpoint, const http::Request& req, ByteSink* sink,
                      http::Response* out) = 0;
};

class ClientUpstream : public Upstream {
 public:
  explicit ClientUpstream(http::Client* client) : client_(client) {}
  Status Send(const http::Endpoint& endpoint, const http::Request& req, ByteSink* sink,
              http::Response* out) override {
    return client_->Send(endpoint, req, sink, out);
  }

 private:
  http::Client* client_;
};

}  // namespace ferry::cache
