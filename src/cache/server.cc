#include "cache/server.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "base/cancel.h"
#include "base/reload.h"
#include "http/server.h"

namespace ferry::cache {
namespace {

class ProxyHandler : public http::Handler {
 public:
  explicit ProxyHandler(Proxy* proxy) : proxy_(proxy) {}
  // Called first, once for every request.
  std::optional<http::ServerResponse> HandleInline(const http::ServerRequest& req) override {
    proxy_->CountRequest(req);
    return proxy_->HandleFromMemory(req);
  }
  http::ServerResponse Handle(const http::ServerRequest& req) override { return proxy_->Handle(req); }

 private:
  Proxy* proxy_;
};

http::ServerOptions HttpOptions(const ServeOptions& o) {
  http::ServerOptions h;
  h.net.listen = o.listen;
  h.net.flag = "--listen";
  h.net.port_file = o.port_file;
  h.net.tls = o.tls;
  h.net.tls_listen = o.listen_tls;
  h.net.tls_port_file = o.tls_port_file;
  h.http2 = o.http2;
  h.net.io_threads = o.io_threads;
  h.net.worker_threads = o.worker_threads;
  h.net.max_connections = o.max_connections;
  h.limits.body_limit = o.max_request_body;
  h.client_timeout = o.client_timeout;
  return h;
}

}  // namespace

Status ServeCache(const ServeOptions& o) {
  SetReloadOnHangup(true);  // from now on SIGHUP reloads, it does not stop
  FERRY_ASSIGN_OR_RETURN(auto store, DiskStore::Open(o.store));
  ProxyOptions proxy_options = o.proxy;
  if (proxy_options.spool_dir.empty()) proxy_options.spool_dir = o.store.dir + "/tmp";
  http::Client client(o.origin);
  ClientUpstream upstream(&client);
  Proxy proxy(proxy_options, store.get(), &upstream);
  ProxyHandler handler(&proxy);
  http::Server server(HttpOptions(o), &handler);
  FERRY_RETURN_IF_ERROR(server.Start());
  if (!o.listen_tls.empty()) {
    spdlog::info("ferry cache: listening on {} and https {}, cache in {}", server.address(), server.tls_address(),
                 o.store.dir);
  } else {
    spdlog::info("ferry cache: listening on {}{}, cache in {}", o.tls.enabled() ? "https " : "", server.address(),
                 o.store.dir);
  }
  // Stop on SIGINT/SIGTERM (the CLI turns them into a cancellation);
  // reload on SIGHUP.
  uint64_t reloads = ReloadRequests();
  while (!CancelRequested()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (ReloadRequests() == reloads) continue;
    reloads = ReloadRequests();
    Status st = o.tls.enabled() ? server.ReloadTls() : Status::InvalidArgument("no TLS certificates to reload");
    if (st.ok()) {
      spdlog::info("ferry cache: TLS certificates reloaded");
    } else {
      spdlog::error("ferry cache: reload failed, the certificates in use stay: {}", st.message());
    }
  }
  server.Stop();
  return Status::Ok();
}

}  // namespace ferry::cache
