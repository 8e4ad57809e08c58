// The only file that talks to nghttp2 (its callbacks below forward to Impl).
#include "http/h2_session.h"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <map>
#include <set>

#include "http/h2_headers.h"

namespace ferry::http {

PrefaceMatch MatchH2Preface(std::string_view first_bytes) {
  const size_t n = std::min(first_bytes.size(), kH2Preface.size());
  if (first_bytes.substr(0, n) != kH2Preface.substr(0, n)) return PrefaceMatch::kNo;
  return n == kH2Preface.size() ? PrefaceMatch::kYes : PrefaceMatch::kPartial;
}

std::string GoawayFrame(int32_t last_stream_id, uint32_t error_code) {
  std::string f(17, '\0');
  f[2] = 8;    // length
  f[3] = 0x7;  // GOAWAY; flags 0, stream 0
  const uint32_t last = static_cast<uint32_t>(last_stream_id) & 0x7fffffffu;
  for (int i = 0; i < 4; ++i) {
    f[9 + i] = static_cast<char>((last >> (24 - 8 * i)) & 0xff);
    f[13 + i] = static_cast<char>((error_code >> (24 - 8 * i)) & 0xff);
  }
  return f;
}

namespace {

// What a fatal nghttp2 error says to the client.
uint32_t GoawayCode(int lib_error) {
  switch (lib_error) {
    case NGHTTP2_ERR_BAD_CLIENT_MAGIC:
      return NGHTTP2_PROTOCOL_ERROR;
    case NGHTTP2_ERR_FLOODED:
    case NGHTTP2_ERR_TOO_MANY_CONTINUATIONS:
      return NGHTTP2_ENHANCE_YOUR_CALM;
    default:
      return NGHTTP2_INTERNAL_ERROR;
  }
}

nghttp2_nv Nv(const std::string& name, const std::string& value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

struct H2Session::Impl {
  struct Stream {
    Headers fields;
    size_t header_bytes = 0;
    bool header_too_large = false;
    std::string body;       // the request's, while it arrives
    bool refused = false;   // RST_STREAM REFUSED_STREAM sent or queued
    bool answered = false;  // a response was submitted
    bool handed = false;    // a kRequest is queued or out, not answered yet
    bool taken = false;     // ...and TakeEvents has handed it out
    bool head = false;      // a HEAD request
    ServerResponse response;
    size_t body_sent = 0;  // of response.body
    std::string piece;     // of response.stream, read and not sent yet
    size_t piece_sent = 0;
    bool stream_end = false;  // response.stream was read to its end
    bool reading = false;     // a kNeedBody is out
  };

  H2Limits limits;
  std::string peer;
  ResetLimiter resets;
  nghttp2_session* session = nullptr;
  std::map<int32_t, Stream> streams;
  std::map<int32_t, uint64_t> handed;  // kRequests out: their body bytes
  std::set<int32_t> reads;             // kNeedBody reads out
  std::set<int32_t> dropped;           // kRequests queued whose stream closed before TakeEvents
  std::vector<Event> events;
  uint64_t body_bytes = 0;  // request bodies held (arriving and handed)
  Clock::time_point now;
  bool calm = false;     // over the reset limit: GOAWAY ENHANCE_YOUR_CALM queued
  bool dead = false;     // nghttp2 failed: only `farewell` is left to send
  std::string farewell;  // the GOAWAY of a dead session
  bool shut_down = false;
  std::string* out = nullptr;  // Send's output, for OnSendData
  size_t out_max = 0;

  Impl(const H2Limits& l, std::string p, Clock::time_point t)
      : limits(l), peer(std::move(p)), resets(l.resets, t), now(t) {}

  Stream* Find(int32_t id) {
    auto it = streams.find(id);
    return it == streams.end() ? nullptr : &it->second;
  }
  size_t Outstanding() const { return handed.size() + reads.size(); }

  void Emit(Event::Kind kind, int32_t id, std::shared_ptr<BodyReader> reader = nullptr) {
    Event e{kind, id, {}, std::move(reader), 0};
    if (kind == Event::Kind::kNeedBody) e.max = limits.stream_buffer;
    events.push_back(std::move(e));
  }

  void Refuse(int32_t id, Stream& s) {
    s.refused = true;
    nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
  }

  void ReleaseBody(Stream& s) {
    body_bytes -= s.body.size();
    std::string().swap(s.body);
  }

  void Submit(int32_t id, Stream& s, ServerResponse r);
  void Simple(int32_t id, Stream& s, int status, const std::string& text) {
    ServerResponse r;
    r.status = status;
    r.headers = {{"content-type", "text/plain; charset=utf-8"}};
    r.SetBody(text + "\n");
    Submit(id, s, std::move(r));
  }

  void RequestComplete(int32_t id, Stream& s);
  void AskBody(int32_t id, Stream& s) {
    if (s.reading || s.stream_end) return;
    s.reading = true;
    reads.insert(id);
    Emit(Event::Kind::kNeedBody, id, s.response.stream);
  }

  // nghttp2's callbacks.
  int OnBeginHeaders(const nghttp2_frame* frame);
  int OnHeader(const nghttp2_frame* frame, std::string_view name, std::string_view value);
  int OnDataChunk(int32_t id, const uint8_t* data, size_t len);
  int OnFrame(const nghttp2_frame* frame);
  int OnClose(int32_t id);
  ssize_t OnRead(int32_t id, size_t length, uint32_t* flags);
  int OnSendData(const nghttp2_frame* frame, const uint8_t* header);
};

namespace {

H2Session::Impl* Self(void* user) { return static_cast<H2Session::Impl*>(user); }

int BeginHeadersCb(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  return Self(user)->OnBeginHeaders(frame);
}
int HeaderCb(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t namelen,
             const uint8_t* value, size_t valuelen, uint8_t /*flags*/, void* user) {
  return Self(user)->OnHeader(frame, std::string_view(reinterpret_cast<const char*>(name), namelen),
                              std::string_view(reinterpret_cast<const char*>(value), valuelen));
}
int DataChunkCb(nghttp2_session*, uint8_t /*flags*/, int32_t id, const uint8_t* data, size_t len,
                void* user) {
  return Self(user)->OnDataChunk(id, data, len);
}
int FrameRecvCb(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  return Self(user)->OnFrame(frame);
}
int StreamCloseCb(nghttp2_session*, int32_t id, uint32_t /*error_code*/, void* user) {
  return Self(user)->OnClose(id);
}
ssize_t ReadCb(nghttp2_session*, int32_t id, uint8_t* /*buf*/, size_t length, uint32_t* flags,
               nghttp2_data_source* /*source*/, void* user) {
  return Self(user)->OnRead(id, length, flags);
}
int SendDataCb(nghttp2_session*, nghttp2_frame* frame, const uint8_t* header, size_t /*length*/,
               nghttp2_data_source* /*source*/, void* user) {
  return Self(user)->OnSendData(frame, header);
}

}  // namespace

int H2Session::Impl::OnBeginHeaders(const nghttp2_frame* frame) {
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  const int32_t id = frame->hd.stream_id;
  Stream& s = streams[id];
  // Work still out, of open streams and of streams the client reset.
  if (Outstanding() >= limits.max_concurrent_streams) Refuse(id, s);
  return 0;
}

int H2Session::Impl::OnHeader(const nghttp2_frame* frame, std::string_view name,
                              std::string_view value) {
  Stream* s = Find(frame->hd.stream_id);
  // Trailers (a second HEADERS) are read and dropped.
  if (!s || s->refused || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  const size_t size = name.size() + value.size() + 32;  // RFC 9113 6.5.2's accounting
  if (s->header_too_large || s->header_bytes + size > limits.header_limit) {
    s->header_too_large = true;
    Headers().swap(s->fields);
    return 0;
  }
  s->header_bytes += size;
  s->fields.emplace_back(name, value);
  return 0;
}

int H2Session::Impl::OnDataChunk(int32_t id, const uint8_t* data, size_t len) {
  Stream* s = Find(id);
  if (!s || s->refused || s->answered) return 0;
  if (s->body.size() + len > limits.body_limit) {
    ReleaseBody(*s);
    Simple(id, *s, 413, "request body over " + std::to_string(limits.body_limit) + " bytes");
    return 0;
  }
  if (body_bytes + len > limits.connection_body_limit) {
    ReleaseBody(*s);
    Refuse(id, *s);
    return 0;
  }
  s->body.append(reinterpret_cast<const char*>(data), len);
  body_bytes += len;
  return 0;
}

int H2Session::Impl::OnFrame(const nghttp2_frame* frame) {
  const int32_t id = frame->hd.stream_id;
  switch (frame->hd.type) {
    case NGHTTP2_RST_STREAM:
      if (!calm && !resets.Allow(now)) {
        calm = true;
        nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM);
      }
      return 0;
    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA: {
      Stream* s = Find(id);
      if (!s) return 0;
      if (frame->hd.type == NGHTTP2_HEADERS && s->header_too_large && !s->answered && !s->refused) {
        Simple(id, *s, 431,
               "request header fields over " + std::to_string(limits.header_limit) + " bytes");
      }
      if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) RequestComplete(id, *s);
      return 0;
    }
    default:
      return 0;
  }
}

void H2Session::Impl::RequestComplete(int32_t id, Stream& s) {
  if (s.refused || s.answered || s.handed) return;
  auto req = RequestFromH2(s.fields);
  Headers().swap(s.fields);
  if (!req.ok()) {
    ReleaseBody(s);
    Simple(id, s, 400, req.status().message());
    return;
  }
  req->body = std::move(s.body);  // still counted in body_bytes, now through `handed`
  s.body.clear();
  req->peer = peer;
  s.head = req->method == "HEAD";
  s.handed = true;
  handed[id] = req->body.size();
  Event e{Event::Kind::kRequest, id, std::move(req).value(), nullptr, 0};
  events.push_back(std::move(e));
}

int H2Session::Impl::OnClose(int32_t id) {
  auto it = streams.find(id);
  if (it == streams.end()) return 0;
  Stream& s = it->second;
  if (s.handed && !s.taken) {
    dropped.insert(id);  // still queued: never handed out after all
    body_bytes -= handed[id];
    handed.erase(id);
  } else if (s.handed) {
    Emit(Event::Kind::kClosed, id);
  }
  if (s.response.stream && !s.stream_end && !s.reading)
    Emit(Event::Kind::kCancelBody, id, s.response.stream);
  ReleaseBody(s);
  streams.erase(it);
  return 0;
}

void H2Session::Impl::Submit(int32_t id, Stream& s, ServerResponse r) {
  s.answered = true;
  const bool body = H2ResponseHasBody(r, s.head) && (!r.body.empty() || r.stream);
  if (!body && r.stream) {
    Emit(Event::Kind::kCancelBody, id, std::move(r.stream));
    r.stream.reset();
  }
  const std::string status = std::to_string(r.status);
  const Headers fields = ResponseFieldsForH2(r);
  static const std::string kStatus = ":status";
  std::vector<nghttp2_nv> nv;
  nv.reserve(fields.size() + 1);
  nv.push_back(Nv(kStatus, status));
  for (const auto& [name, value] : fields) nv.push_back(Nv(name, value));
  s.response = std::move(r);
  nghttp2_data_provider provider{};
  provider.read_callback = &ReadCb;
  // Copies the fields; fails only for a stream already closed.
  if (nghttp2_submit_response(session, id, nv.data(), nv.size(), body ? &provider : nullptr) != 0 &&
      s.response.stream) {
    s.stream_end = true;
    Emit(Event::Kind::kCancelBody, id, s.response.stream);
  }
}

ssize_t H2Session::Impl::OnRead(int32_t id, size_t length, uint32_t* flags) {
  Stream* s = Find(id);
  if (!s) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  *flags |= NGHTTP2_DATA_FLAG_NO_COPY;  // OnSendData copies into the output
  const size_t in_memory = s->response.body.size() - s->body_sent;
  const bool streamed = s->response.stream != nullptr;
  if (in_memory > 0) {
    const size_t n = std::min(length, in_memory);
    if (n == in_memory && !streamed) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
  const size_t piece = s->piece.size() - s->piece_sent;
  if (piece > 0) {
    const size_t n = std::min(length, piece);
    if (n == piece && s->stream_end) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
  if (!streamed || s->stream_end) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return 0;
  }
  AskBody(id, *s);  // the client's windows are open: read the next piece
  return NGHTTP2_ERR_DEFERRED;
}

int H2Session::Impl::OnSendData(const nghttp2_frame* frame, const uint8_t* header) {
  if (out->size() >= out_max) return NGHTTP2_ERR_WOULDBLOCK;  // offered again by the next Send
  Stream* s = Find(frame->hd.stream_id);
  if (!s) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  size_t length = frame->hd.length;  // no padding is ever asked for
  out->append(reinterpret_cast<const char*>(header), 9);
  const size_t in_memory = std::min(length, s->response.body.size() - s->body_sent);
  out->append(s->response.body.substr(s->body_sent, in_memory));
  s->body_sent += in_memory;
  length -= in_memory;
  out->append(s->piece, s->piece_sent, length);
  s->piece_sent += length;
  if (s->response.stream && s->piece_sent == s->piece.size() &&
      s->body_sent == s->response.body.size()) {
    std::string().swap(s->piece);
    s->piece_sent = 0;
    AskBody(frame->hd.stream_id, *s);  // read ahead while this goes out
  }
  return 0;
}

H2Session::H2Session(const H2Limits& limits, std::string peer, Clock::time_point now)
    : impl_(std::make_unique<Impl>(limits, std::move(peer), now)) {
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, &BeginHeadersCb);
  nghttp2_session_callbacks_set_on_header_callback(cb, &HeaderCb);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, &DataChunkCb);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, &FrameRecvCb);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, &StreamCloseCb);
  nghttp2_session_callbacks_set_send_data_callback(cb, &SendDataCb);
  nghttp2_option* opt = nullptr;
  nghttp2_option_new(&opt);
  // nghttp2's own reset limit stays as a looser backstop behind ResetLimiter.
  nghttp2_option_set_stream_reset_rate_limit(opt, 10 * uint64_t{limits.resets.burst},
                                             10 * uint64_t{limits.resets.per_second});
  nghttp2_option_set_max_continuations(opt, 8);
  nghttp2_session_server_new2(&impl_->session, cb, impl_.get(), opt);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cb);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, limits.max_concurrent_streams},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<uint32_t>(limits.header_limit)},
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
  };
  nghttp2_submit_settings(impl_->session, NGHTTP2_FLAG_NONE, settings, std::size(settings));
}

H2Session::~H2Session() { nghttp2_session_del(impl_->session); }

Status H2Session::Receive(std::string_view bytes, Clock::time_point now) {
  Impl& s = *impl_;
  if (s.dead || s.calm) return Status::Protocol("the HTTP/2 session has ended");
  s.now = now;
  const ssize_t n = nghttp2_session_mem_recv(
      s.session, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (n < 0) {
    s.dead = true;
    s.farewell = GoawayFrame(nghttp2_session_get_last_proc_stream_id(s.session),
                             GoawayCode(static_cast<int>(n)));
    return Status::Protocol(std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(n)));
  }
  if (s.calm) return Status::Protocol("HTTP/2: too many stream resets");
  return Status::Ok();
}

void H2Session::Send(std::string* out, size_t max) {
  Impl& s = *impl_;
  if (s.dead) {
    out->append(s.farewell);
    s.farewell.clear();
    return;
  }
  s.out = out;
  s.out_max = max;
  while (out->size() < max) {
    const uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(s.session, &data);
    if (n < 0) {  // fatal (out of memory): say goodbye by hand
      s.dead = true;
      out->append(
          GoawayFrame(nghttp2_session_get_last_proc_stream_id(s.session), NGHTTP2_INTERNAL_ERROR));
      break;
    }
    if (n == 0) break;
    out->append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
  s.out = nullptr;
}

std::vector<H2Session::Event> H2Session::TakeEvents() {
  Impl& s = *impl_;
  std::vector<Event> taken;
  taken.swap(s.events);
  if (!s.dropped.empty()) {
    std::erase_if(taken, [&](const Event& e) {
      return e.kind == Event::Kind::kRequest && s.dropped.count(e.stream);
    });
    s.dropped.clear();
  }
  for (const Event& e : taken) {
    if (e.kind != Event::Kind::kRequest) continue;
    if (Impl::Stream* st = s.Find(e.stream)) st->taken = true;
  }
  return taken;
}

void H2Session::Respond(int32_t stream, ServerResponse response) {
  Impl& s = *impl_;
  Abandon(stream);
  Impl::Stream* st = s.Find(stream);
  if (!st || st->answered) {
    if (response.stream) s.Emit(Event::Kind::kCancelBody, stream, std::move(response.stream));
    return;
  }
  s.Submit(stream, *st, std::move(response));
}

void H2Session::Abandon(int32_t stream) {
  Impl& s = *impl_;
  auto h = s.handed.find(stream);
  if (h != s.handed.end()) {
    s.body_bytes -= h->second;
    s.handed.erase(h);
  }
  if (Impl::Stream* st = s.Find(stream)) st->handed = st->taken = false;
}

bool H2Session::AddBody(int32_t stream, std::string data) {
  Impl& s = *impl_;
  s.reads.erase(stream);
  Impl::Stream* st = s.Find(stream);
  if (!st) return false;
  st->reading = false;
  st->stream_end = data.empty();
  st->piece = std::move(data);
  st->piece_sent = 0;
  nghttp2_session_resume_data(s.session, stream);
  return true;
}

void H2Session::FailBody(int32_t stream) {
  Impl& s = *impl_;
  s.reads.erase(stream);
  Impl::Stream* st = s.Find(stream);
  if (!st) return;
  st->reading = false;
  st->stream_end = true;  // nothing more to read or cancel
  nghttp2_submit_rst_stream(s.session, NGHTTP2_FLAG_NONE, stream, NGHTTP2_INTERNAL_ERROR);
}

void H2Session::Shutdown() {
  Impl& s = *impl_;
  if (s.shut_down || s.dead) return;
  s.shut_down = true;
  nghttp2_submit_goaway(s.session, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(s.session), NGHTTP2_NO_ERROR,
                        nullptr, 0);
}

bool H2Session::Done() const {
  const Impl& s = *impl_;
  if (s.dead) return s.farewell.empty();
  return !nghttp2_session_want_read(s.session) && !nghttp2_session_want_write(s.session);
}

size_t H2Session::outstanding() const { return impl_->Outstanding(); }

size_t H2Session::open_streams() const { return impl_->streams.size(); }

}  // namespace ferry::http
