#pragma once
// For tests of http/h2_session.h: nghttp2's own client session, in memory
// (no sockets), and a pump that moves bytes between it and an H2Session.
// The client is nghttp2's, not ours: what it accepts is what real clients
// (curl, browsers through nghttp2-like stacks) accept.

#include <nghttp2/nghttp2.h>

#include <functional>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "http/h2_session.h"
#include "http/headers.h"

namespace ferry::http::testing {

class H2TestClient {
 public:
  struct Response {
    int status = 0;
    Headers headers;
    std::string body;
    bool closed = false;
    uint32_t error = 0;  // of the stream's close: NGHTTP2_NO_ERROR, REFUSED_STREAM...
  };

  // `settings`: the client's SETTINGS (e.g. a small INITIAL_WINDOW_SIZE).
  explicit H2TestClient(std::vector<nghttp2_settings_entry> settings = {}) {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, &OnHeader);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, &OnData);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, &OnClose);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, &OnFrame);
    nghttp2_session_client_new(&session_, cb, this);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
  }
  ~H2TestClient() { nghttp2_session_del(session_); }
  H2TestClient(const H2TestClient&) = delete;
  H2TestClient& operator=(const H2TestClient&) = delete;

  // Submits a request; its stream id. `body`: sent as DATA.
  int32_t Request(const std::string& method, const std::string& path, Headers extra = {},
                  std::optional<std::string> body = std::nullopt) {
    Headers h = {
        {":method", method}, {":scheme", "http"}, {":authority", "cache.test"}, {":path", path}};
    for (auto& f : extra) h.push_back(std::move(f));
    std::vector<nghttp2_nv> nv;
    for (const auto& [k, v] : h) {
      nv.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(k.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(v.data())), k.size(), v.size(),
                    NGHTTP2_NV_FLAG_NONE});
    }
    nghttp2_data_provider provider{};
    if (body) {
      bodies_.push_back(*body);
      provider.source.ptr = &bodies_.back();
      provider.read_callback = &ReadBody;
    }
    return nghttp2_submit_request(session_, nullptr, nv.data(), nv.size(),
                                  body ? &provider : nullptr, nullptr);
  }
  void Reset(int32_t id) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  }

  // What the client would write now.
  std::string Output() {
    std::string out;
    for (;;) {
      const uint8_t* data = nullptr;
      ssize_t n = nghttp2_session_mem_send(session_, &data);
      if (n <= 0) break;
      out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
    }
    return out;
  }
  // Takes what the server wrote; false when the client found it malformed.
  bool Input(const std::string& bytes) {
    return nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(bytes.data()),
                                    bytes.size()) >= 0;
  }

  std::map<int32_t, Response> responses;
  std::optional<uint32_t> goaway;  // the error code of a GOAWAY received

 private:
  static H2TestClient* Self(void* user) { return static_cast<H2TestClient*>(user); }
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t, void* user) {
    std::string n(reinterpret_cast<const char*>(name), namelen),
        v(reinterpret_cast<const char*>(value), valuelen);
    Response& r = Self(user)->responses[frame->hd.stream_id];
    if (n == ":status") {
      r.status = std::stoi(v);
    } else {
      r.headers.emplace_back(n, v);
    }
    return 0;
  }
  static int OnData(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t len,
                    void* user) {
    Self(user)->responses[id].body.append(reinterpret_cast<const char*>(data), len);
    return 0;
  }
  static int OnClose(nghttp2_session*, int32_t id, uint32_t error, void* user) {
    Response& r = Self(user)->responses[id];
    r.closed = true;
    r.error = error;
    return 0;
  }
  static int OnFrame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type == NGHTTP2_GOAWAY) Self(user)->goaway = frame->goaway.error_code;
    return 0;
  }
  static ssize_t ReadBody(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                          nghttp2_data_source* source, void*) {
    auto* body = static_cast<std::string*>(source->ptr);
    const size_t n = std::min(length, body->size());
    std::copy_n(body->data(), n, buf);
    body->erase(0, n);
    if (body->empty()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  nghttp2_session* session_ = nullptr;
  std::list<std::string> bodies_;  // stable addresses for the providers
};

// An H2Session and an H2TestClient joined in memory, with a handler for
// the session's requests and a record of its events.
class H2Pair {
 public:
  using Clock = H2Session::Clock;
  explicit H2Pair(H2Limits limits = {}, std::vector<nghttp2_settings_entry> client_settings = {})
      : client(std::move(client_settings)), server(limits, "192.0.2.1", now) {}

  // Answers a request, or nullopt to leave it unanswered (in `unanswered`).
  std::function<std::optional<ServerResponse>(const ServerRequest&)> handler;
  // Whether kNeedBody reads are done at once (else they wait in `reads`).
  bool read_bodies = true;
  // Whether what the server writes reaches the client (false: a client
  // that stopped reading; what it wrote is kept in `undelivered`).
  bool deliver = true;

  // Moves bytes both ways until nothing moves; the first error Receive gave.
  Status Pump() {
    Status first;
    for (int round = 0; round < 10'000; ++round) {
      bool moved = false;
      std::string up = client.Output();
      if (!up.empty()) {
        moved = true;
        Status st = server.Receive(up, now);
        if (!st.ok() && first.ok()) first = st;
      }
      moved |= Events();
      std::string down;
      server.Send(&down, 1 << 20);
      moved |= Events();
      if (!down.empty()) {
        moved = true;
        undelivered += down;
      }
      if (deliver && !undelivered.empty()) {
        moved = true;
        client.Input(undelivered);
        undelivered.clear();
      }
      if (!moved) break;
    }
    return first;
  }

  bool Events() {
    auto events = server.TakeEvents();
    for (auto& e : events) Act(std::move(e));
    return !events.empty();
  }

  void Act(H2Session::Event e) {
    using Kind = H2Session::Event::Kind;
    switch (e.kind) {
      case Kind::kRequest: {
        requests.push_back(e.request);
        auto r = handler ? handler(e.request) : std::nullopt;
        if (r) {
          server.Respond(e.stream, std::move(*r));
        } else {
          unanswered.push_back(e.stream);
        }
        break;
      }
      case Kind::kNeedBody:
        max_read = std::max(max_read, e.max);
        if (read_bodies) {
          ReadInto(e);
        } else {
          reads.push_back(std::move(e));
        }
        break;
      case Kind::kCancelBody:
        e.reader->Cancel();
        ++cancelled;
        break;
      case Kind::kClosed:
        closed.push_back(e.stream);
        break;
    }
  }
  void ReadInto(const H2Session::Event& e) {
    auto piece = e.reader->Read(e.max);
    if (!piece.ok()) {
      server.FailBody(e.stream);
    } else {
      read_bytes += piece->size();
      server.AddBody(e.stream, std::move(piece).value());
    }
  }

  Clock::time_point now{};
  H2TestClient client;
  H2Session server;
  std::vector<ServerRequest> requests;
  std::vector<int32_t> unanswered, closed;
  std::vector<H2Session::Event> reads;
  std::string undelivered;
  size_t cancelled = 0, read_bytes = 0, max_read = 0;
};

}  // namespace ferry::http::testing
