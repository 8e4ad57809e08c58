// Coroutine implementation of http::Client. See client.h for the contract.
#include "http/client.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>  // must precede Asio's awaitable.hpp under g++ 12

#include "base/await.h"
#include "base/strings.h"

namespace ferry::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::awaitable;
using asio::ip::tcp;
using boost::system::error_code;

constexpr size_t kChunk = 256 * 1024;
constexpr size_t kMaxErrorBody = 1 << 20;      // non-2xx bodies kept (the rest dropped)
constexpr size_t kMaxBufferedBody = 64 << 20;  // 2xx bodies without a sink

// Maps a socket-level error to a classified Status.
Status TransportError(const error_code& ec, std::string_view during) {
  std::string what = std::string(during) + ": ";
  if (ec == beast::error::timeout || ec == asio::error::timed_out) {
    return Status::Timeout(what + "timed out");
  }
  if (ec == asio::error::connection_refused) return Status::Network(what + "connection refused");
  if (ec == asio::error::connection_reset || ec == asio::error::broken_pipe) {
    return Status::Network(what + "connection reset by peer");
  }
  if (ec == asio::error::eof || ec == bhttp::error::end_of_stream ||
      ec == asio::ssl::error::stream_truncated) {
    return Status::Network(what + "connection closed by peer");
  }
  if (ec == bhttp::error::partial_message) {
    return Status::Corruption(what + "connection closed mid-body");
  }
  if (ec == asio::error::host_not_found || ec == asio::error::host_not_found_try_again) {
    return Status::Network(what + "cannot resolve host");
  }
  if (ec.category() == asio::error::get_ssl_category()) {
    // Retryable like any transport error mid-stream; Connect() marks
    // handshake and certificate failures permanent.
    return Status::Network(what + (during.substr(0, 3) == "TLS" ? "" : "TLS: ") + ec.message());
  }
  if (ec.category() == bhttp::make_error_code(bhttp::error::bad_version).category()) {
    Status s = Status::Protocol(what + "bad HTTP from peer: " + ec.message());
    return s;
  }
  return Status::Network(what + ec.message());
}

// One pooled connection, plain or TLS. Used by one coroutine at a time.
struct Connection {
  explicit Connection(asio::any_io_executor ex) : tcp(ex) {}
  beast::tcp_stream tcp;
  std::optional<beast::ssl_stream<beast::tcp_stream&>> tls;
  beast::flat_buffer buffer;
  bool reused = false;
};

}  // namespace

const std::string* Response::Find(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return &v;
  }
  return nullptr;
}

// One event loop per thread, each run by exactly one thread: a request and
// its connection stay on one loop, so completions never hop between threads
// (with one shared loop, every 64 KiB read woke another thread).
struct Loop {
  Loop() : ioc(1), work(asio::make_work_guard(ioc)) {}
  asio::io_context ioc;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  std::thread thread;
  std::atomic<int> active{0};  // Send()s running on this loop
};

struct Client::Impl {
  explicit Impl(ClientOptions o) : options(std::move(o)), ssl_ctx(asio::ssl::context::tls_client) {
    if (options.verify_tls) {
      ssl_ctx.set_verify_mode(asio::ssl::verify_peer);
      error_code ec;
      if (!options.ca_file.empty()) {
        if (::access(options.ca_file.c_str(), R_OK) != 0) {
          ca_error = "cannot load CA bundle " + options.ca_file + ": " + std::strerror(errno);
        } else {
          ssl_ctx.load_verify_file(options.ca_file, ec);
          if (ec)
            ca_error = "cannot load CA bundle " + options.ca_file + ": not a PEM certificate file";
        }
      } else {
        ssl_ctx.set_default_verify_paths(ec);
      }
    } else {
      ssl_ctx.set_verify_mode(asio::ssl::verify_none);
    }
    int n = std::max(1, options.io_threads);
    for (int i = 0; i < n; ++i) loops.push_back(std::make_unique<Loop>());
    for (auto& l : loops) l->thread = std::thread([loop = l.get()] { loop->ioc.run(); });
  }

  // Reads of request bodies that may wait (ByteSource::MayWait): never on a
  // loop, where every other request of that loop would wait with them.
  // Made on first use: most clients never send such a body.
  std::once_flag body_readers_once;
  std::unique_ptr<asio::thread_pool> body_readers;
  asio::thread_pool& BodyReaders() {
    std::call_once(body_readers_once, [this] {
      body_readers = std::make_unique<asio::thread_pool>(
          static_cast<size_t>(std::max(1, options.body_reader_threads)));
    });
    return *body_readers;
  }

  ~Impl() {
    if (body_readers) body_readers->join();
    for (auto& l : loops) {
      l->work.reset();
      l->ioc.stop();
    }
    for (auto& l : loops) l->thread.join();
  }

  // Chooses the loop for a request to `ep` and, when one is idle there,
  // takes a pooled connection for it (a connection lives on the loop that
  // opened it): an idle connection on any loop first, else the least busy
  // loop and a new connection. Taking under the lock means concurrent
  // requests never both count on one idle connection.
  size_t PickLoop(const Endpoint& ep, std::unique_ptr<Connection>* conn) {
    std::string base = ep.ToString() + "#";
    std::lock_guard<std::mutex> lock(mu);
    size_t best = 0;
    for (size_t i = 0; i < loops.size(); ++i) {
      auto it = idle.find(base + std::to_string(i));
      if (it != idle.end() && !it->second.empty()) {
        *conn = std::move(it->second.back());
        it->second.pop_back();
        return i;
      }
      if (loops[i]->active < loops[best]->active) best = i;
    }
    return best;
  }

  void ReturnIdle(const std::string& key, std::unique_ptr<Connection> c) {
    std::lock_guard<std::mutex> lock(mu);
    auto& list = idle[key];
    if (list.size() >= options.max_idle_per_endpoint) return;
    c->reused = true;
    list.push_back(std::move(c));
  }

  awaitable<Status> Connect(const Endpoint& ep, std::unique_ptr<Connection>* out) {
    if (ep.tls && !ca_error.empty()) co_return Status::InvalidArgument(ca_error);
    auto ex = co_await asio::this_coro::executor;
    error_code ec;
    tcp::resolver resolver(ex);
    // getaddrinfo has no deadline of its own: a timer cancels the lookup.
    asio::steady_timer resolve_deadline(ex, options.connect_timeout);
    bool resolve_timed_out = false;
    resolve_deadline.async_wait([&](const error_code& e) {
      if (!e) {
        resolve_timed_out = true;
        resolver.cancel();
      }
    });
    auto results = co_await resolver.async_resolve(ep.host, std::to_string(ep.port),
                                                   asio::redirect_error(asio::use_awaitable, ec));
    resolve_deadline.cancel();
    if (resolve_timed_out)
      co_return Status::Timeout("connect " + ep.ToString() + ": name lookup timed out");
    if (ec) co_return TransportError(ec, "connect " + ep.ToString());
    auto c = std::make_unique<Connection>(ex);
    c->tcp.expires_after(options.connect_timeout);
    co_await c->tcp.async_connect(results, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return TransportError(ec, "connect " + ep.ToString());
    c->tcp.socket().set_option(tcp::no_delay(true), ec);
    if (ep.tls) {
      c->tls.emplace(c->tcp, ssl_ctx);
      error_code addr_ec;
      asio::ip::make_address(ep.host, addr_ec);
      if (addr_ec) SSL_set_tlsext_host_name(c->tls->native_handle(), ep.host.c_str());
      if (options.verify_tls)
        c->tls->set_verify_callback(asio::ssl::host_name_verification(ep.host));
      co_await c->tls->async_handshake(asio::ssl::stream_base::client,
                                       asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        Status st = TransportError(ec, "TLS handshake with " + ep.ToString());
        if (ec.category() != asio::error::get_ssl_category()) co_return st;  // e.g. a reset
        // Certificate and protocol problems do not go away on retry.
        long verify = SSL_get_verify_result(c->tls->native_handle());
        Status permanent(st.code(),
                         verify == X509_V_OK
                             ? st.message()
                             : st.message() + " (" + X509_verify_cert_error_string(verify) + ")");
        permanent.set_retryable(false);
        co_return permanent;
      }
    }
    stats.connections_opened++;
    *out = std::move(c);
    co_return Status::Ok();
  }

  // The one buffer an exchange uses for the request body and then the
  // response body, no larger than either needs: most objects are small,
  // and a 256 KiB buffer per request was a large share of the client's
  // malloc time.
  struct ChunkBuffer {
    std::unique_ptr<char[]> data;
    size_t size = 0;
    void Reserve(uint64_t need) {
      size_t want = static_cast<size_t>(std::clamp<uint64_t>(need, 4096, kChunk));
      if (size < want) {
        data.reset(new char[want]);
        size = want;
      }
    }
  };

  // Where response body bytes go: the sink for a 2xx with one, else
  // resp->body (a 2xx up to kMaxBufferedBody, an error's first
  // kMaxErrorBody bytes).
  struct BodyDelivery {
    ByteSink* sink;
    Response* resp;
    ClientStats* stats;
    bool to_sink;
    Status operator()(const char* data, size_t n) {
      stats->bytes_received += n;
      if (to_sink) return sink->Write(std::string_view(data, n));
      bool success = resp->status >= 200 && resp->status < 300;
      if (success && resp->body.size() + n > kMaxBufferedBody) {
        return Status::Protocol("response body larger than " +
                                std::to_string(kMaxBufferedBody >> 20) + " MiB");
      }
      size_t cap = success ? kMaxBufferedBody : kMaxErrorBody;
      if (resp->body.size() < cap) resp->body.append(data, std::min(n, cap - resp->body.size()));
      return Status::Ok();
    }
  };

  static Status BodyReadError(const error_code& ec) {
    if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
      return Status::Corruption("read body: connection closed mid-body");
    }
    return TransportError(ec, "read body");
  }

  // One request/response on an established connection, in phases: send the
  // request, read the header, read the body (sized into a sink's own memory
  // or through the chunk buffer, else through the parser). *got_response_bytes
  // tells the caller whether a retry on a fresh connection is still safe;
  // *reusable whether the connection may go back to the pool.
  template <class Stream>
  awaitable<Status> Exchange(Stream& stream, Connection& c, const Endpoint& ep, const Request& req,
                             ByteSink* sink, Response* resp, bool* got_response_bytes,
                             bool* reusable) {
    ChunkBuffer chunk;
    Status st = co_await SendRequest(stream, c, ep, req, chunk);
    if (!st.ok()) co_return st;
    bhttp::response_parser<bhttp::buffer_body> p;
    // Not boost::none: Beast 1.74 compares Content-Length against the
    // optional itself, and any length is "greater" than an empty one.
    p.body_limit(std::numeric_limits<std::uint64_t>::max());
    p.header_limit(64 * 1024);
    if (req.method == "HEAD") p.skip(true);
    error_code ec;
    c.tcp.expires_after(options.io_timeout);
    co_await bhttp::async_read_header(stream, c.buffer, p,
                                      asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return TransportError(ec, "read response");
    *got_response_bytes = true;
    resp->status = static_cast<int>(p.get().result_int());
    for (const auto& f : p.get())
      resp->headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    const bool success = resp->status >= 200 && resp->status < 300;
    if (req.check_headers && success) {
      st = req.check_headers(*resp);
      if (!st.ok()) co_return st;  // *reusable stays false: the body is unread
    }
    BodyDelivery deliver{sink, resp, &stats, sink != nullptr && success};
    if (!p.is_done() && p.content_length()) {
      uint64_t left = *p.content_length();
      char* lent = deliver.to_sink && left > 0 ? sink->Lend(static_cast<size_t>(left)) : nullptr;
      // (Not a conditional expression: g++ 12 miscompiles co_await in one.)
      if (lent != nullptr) {
        st = co_await ReadIntoLent(stream, c, sink, lent, left);
      } else {
        st = co_await ReadSized(stream, c, left, chunk, deliver);
      }
    } else {
      st = co_await ReadParsed(stream, c, p, chunk, deliver);
    }
    if (!st.ok()) co_return st;
    // Bytes beyond the body would be read as the next response.
    *reusable = p.get().keep_alive() && c.buffer.size() == 0;
    co_return Status::Ok();
  }

  // One Read of a body that may wait, on a body reader thread; the caller
  // resumes on its loop.
  awaitable<Result<size_t>> ReadOffLoop(ByteSource& body, char* buf, size_t n) {
    struct Got {
      Status status;
      size_t n = 0;
    };
    auto read = [&body, buf, n]() -> awaitable<Got> {
      auto r = body.Read(buf, n);
      co_return r.ok() ? Got{Status::Ok(), *r} : Got{r.status(), 0};
    };
    Got got = co_await asio::co_spawn(BodyReaders(), read, asio::use_awaitable);
    if (!got.status.ok()) co_return got.status;
    co_return got.n;
  }

  // The request line, header and body. A body held in memory goes out with
  // the header in one write, straight from where it is; a streamed one in
  // pieces, the header with the first (a small object is one write, one
  // segment, not two).
  template <class Stream>
  awaitable<Status> SendRequest(Stream& stream, Connection& c, const Endpoint& ep,
                                const Request& req, ChunkBuffer& chunk) {
    error_code ec;
    bhttp::request<bhttp::buffer_body> r;
    r.version(11);
    r.method_string(req.method);
    r.target(req.target);
    bool has_host = false;
    for (const auto& [k, v] : req.headers) {
      if (EqualsIgnoreCase(k, "host")) has_host = true;
      r.set(k, v);
    }
    if (!has_host) r.set(bhttp::field::host, ep.HostHeader());
    if (req.body != nullptr || req.method == "PUT" || req.method == "POST") {
      r.content_length(req.body ? req.body_size : 0);
    }
    bhttp::request_serializer<bhttp::buffer_body> sr{r};
    std::optional<std::string_view> whole;
    if (req.body != nullptr) whole = req.body->Contiguous();
    if (req.body == nullptr || req.body_size == 0 || (whole && whole->size() == req.body_size)) {
      r.body().data = whole && req.body_size > 0 ? const_cast<char*>(whole->data()) : nullptr;
      r.body().size = r.body().data != nullptr ? req.body_size : 0;
      r.body().more = false;
      c.tcp.expires_after(options.io_timeout);
      co_await bhttp::async_write(stream, sr, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return TransportError(ec, sr.is_header_done() ? "send body" : "send request");
      stats.bytes_sent += r.body().size;
      co_return Status::Ok();
    }
    chunk.Reserve(req.body_size);
    uint64_t left = req.body_size;
    while (left > 0) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(chunk.size, left));
      // Not a conditional expression: g++ 12 destroys a co_await's result
      // twice in one ("free(): invalid size").
      Result<size_t> n = size_t{0};
      if (req.body->MayWait()) {
        n = co_await ReadOffLoop(*req.body, chunk.data.get(), want);
      } else {
        n = req.body->Read(chunk.data.get(), want);
      }
      if (!n.ok()) co_return n.status();
      if (*n == 0) co_return Status::Corruption("request body ended before Content-Length");
      left -= *n;
      stats.bytes_sent += *n;
      r.body().data = chunk.data.get();
      r.body().size = *n;
      r.body().more = left > 0;
      c.tcp.expires_after(options.io_timeout);
      co_await bhttp::async_write(stream, sr, asio::redirect_error(asio::use_awaitable, ec));
      if (ec == bhttp::error::need_buffer) ec = {};
      if (ec) co_return TransportError(ec, sr.is_header_done() ? "send body" : "send request");
    }
    if (!sr.is_done()) {
      r.body().data = nullptr;
      r.body().size = 0;
      r.body().more = false;
      co_await bhttp::async_write(stream, sr, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return TransportError(ec, "send body");
    }
    co_return Status::Ok();
  }

  // A sized body straight into the sink's own memory (no copy in
  // between); bytes that arrived with the header are in c.buffer first.
  template <class Stream>
  awaitable<Status> ReadIntoLent(Stream& stream, Connection& c, ByteSink* sink, char* lent,
                                 uint64_t left) {
    error_code ec;
    auto head = c.buffer.data();
    size_t have = static_cast<size_t>(std::min<uint64_t>(left, head.size()));
    size_t off = 0;
    if (have > 0) {
      std::memcpy(lent, head.data(), have);
      c.buffer.consume(have);
    }
    for (size_t filled = have;;) {
      if (filled > off) {
        stats.bytes_received += filled - off;
        Status st = sink->Commit(filled - off);
        if (!st.ok()) co_return st;
        left -= filled - off;
        off = filled;
      }
      if (left == 0) co_return Status::Ok();
      c.tcp.expires_after(options.io_timeout);
      size_t n =
          co_await stream.async_read_some(asio::buffer(lent + off, static_cast<size_t>(left)),
                                          asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return BodyReadError(ec);
      filled = off + n;
    }
  }

  // A sized body read from the socket in large pieces (the parser would
  // copy it through its buffer 64 KiB at a time).
  template <class Stream>
  awaitable<Status> ReadSized(Stream& stream, Connection& c, uint64_t left, ChunkBuffer& chunk,
                              BodyDelivery& deliver) {
    error_code ec;
    chunk.Reserve(left);
    auto head = c.buffer.data();
    size_t have = static_cast<size_t>(std::min<uint64_t>(left, head.size()));
    if (have > 0) {
      Status st = deliver(static_cast<const char*>(head.data()), have);
      if (!st.ok()) co_return st;
      c.buffer.consume(have);
      left -= have;
    }
    while (left > 0) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(chunk.size, left));
      c.tcp.expires_after(options.io_timeout);
      size_t n = co_await stream.async_read_some(asio::buffer(chunk.data.get(), want),
                                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return BodyReadError(ec);
      left -= n;
      Status st = deliver(chunk.data.get(), n);
      if (!st.ok()) co_return st;
    }
    co_return Status::Ok();
  }

  // Chunked or close-delimited bodies, through the parser.
  template <class Stream, class Parser>
  awaitable<Status> ReadParsed(Stream& stream, Connection& c, Parser& p, ChunkBuffer& chunk,
                               BodyDelivery& deliver) {
    error_code ec;
    chunk.Reserve(kChunk);
    while (!p.is_done()) {
      p.get().body().data = chunk.data.get();
      p.get().body().size = chunk.size;
      c.tcp.expires_after(options.io_timeout);
      co_await bhttp::async_read(stream, c.buffer, p,
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec == bhttp::error::need_buffer) ec = {};
      if (ec) co_return TransportError(ec, "read body");
      size_t n = chunk.size - p.get().body().size;
      if (n == 0) continue;
      Status st = deliver(chunk.data.get(), n);
      if (!st.ok()) co_return st;
    }
    co_return Status::Ok();
  }

  awaitable<Status> DoSend(Endpoint ep, const Request& req, ByteSink* sink, Response* resp,
                           size_t loop_index, std::unique_ptr<Connection> pooled) {
    std::string key = ep.ToString() + "#" + std::to_string(loop_index);
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<Connection> c = attempt == 0 ? std::move(pooled) : nullptr;
      if (c) {
        stats.connections_reused++;
      } else {
        Status s = co_await Connect(ep, &c);
        if (!s.ok()) co_return s;
      }
      *resp = Response();
      bool got_bytes = false, reusable = false;
      // (No co_await inside ?: — g++ 12 miscompiles it.)
      Status s;
      if (c->tls) {
        s = co_await Exchange(*c->tls, *c, ep, req, sink, resp, &got_bytes, &reusable);
      } else {
        s = co_await Exchange(c->tcp, *c, ep, req, sink, resp, &got_bytes, &reusable);
      }
      if (s.ok()) {
        if (reusable) ReturnIdle(key, std::move(c));
        co_return s;
      }
      // A pooled connection the server closed while idle: try once more on a
      // fresh one, if nothing of the response arrived and the body can rewind.
      bool stale = c->reused && !got_bytes &&
                   s.code() == ErrorCode::kNetwork;  // not a timeout: that peer is slow, not gone
      if (stale && attempt == 0 && (req.body == nullptr || req.body->Rewind().ok())) continue;
      co_return s;
    }
  }

  ClientOptions options;
  asio::ssl::context ssl_ctx;
  std::vector<std::unique_ptr<Loop>> loops;
  std::string ca_error;
  std::mutex mu;
  std::unordered_map<std::string, std::vector<std::unique_ptr<Connection>>> idle;
  ClientStats stats;
  std::atomic<size_t> next_timer_loop{0};
};

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Client::~Client() = default;

const ClientStats& Client::stats() const { return impl_->stats; }

void Client::SendAsync(const Endpoint& endpoint, const Request& req, ByteSink* sink, Response* out,
                       std::function<void(Status)> done) {
  *out = Response();
  std::unique_ptr<Connection> pooled;
  size_t loop = impl_->PickLoop(endpoint, &pooled);
  Loop* l = impl_->loops[loop].get();
  l->active++;
  asio::co_spawn(l->ioc, impl_->DoSend(endpoint, req, sink, out, loop, std::move(pooled)),
                 [l, done = std::move(done)](std::exception_ptr e, Status s) {
                   if (e) {
                     try {
                       std::rethrow_exception(e);
                     } catch (const std::exception& ex) {
                       s = Status::Internal(std::string("http client: ") + ex.what());
                     } catch (...) {
                       s = Status::Internal("http client: unknown exception");
                     }
                   }
                   l->active--;
                   done(std::move(s));
                 });
}

void Client::RunAfter(std::chrono::nanoseconds delay, std::function<void()> fn) {
  size_t i = impl_->next_timer_loop.fetch_add(1, std::memory_order_relaxed) % impl_->loops.size();
  auto timer = std::make_shared<asio::steady_timer>(impl_->loops[i]->ioc, delay);
  timer->async_wait([timer, fn = std::move(fn)](const error_code&) { fn(); });
}

Status Client::Send(const Endpoint& endpoint, const Request& req, ByteSink* sink, Response* out) {
  return AwaitCallback<Status>(
      [&](auto done) { SendAsync(endpoint, req, sink, out, std::move(done)); });
}

Result<Response> Client::Send(const Endpoint& endpoint, const Request& req, ByteSink* sink) {
  Response resp;
  Status s = Send(endpoint, req, sink, &resp);
  if (!s.ok()) return s;
  return resp;
}

}  // namespace ferry::http
