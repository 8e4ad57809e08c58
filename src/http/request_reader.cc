#include "http/request_reader.h"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <limits>
#include <optional>

namespace ferry::http {

namespace bhttp = boost::beast::http;

struct RequestReader::Impl {
  bhttp::request_parser<bhttp::string_body> parser;
  // The same message once its body is taken streamed (parser is then moved from).
  std::optional<bhttp::request_parser<bhttp::buffer_body>> streamed;
  bool header_checked = false;
  bool pause = false;
  uint64_t body_limit = 0;  // of a body read whole
};

namespace {

bool HostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-._~!$&'()*+,;=:[]%").find(c) != std::string_view::npos;
}

// The framing and Host rules a request must keep before anything acts on
// it (RFC 9112 3.2, 6.1, 6.3); "" when it keeps them.
std::string CheckHeader(const bhttp::request_parser<bhttp::string_body>::value_type& m) {
  size_t hosts = 0;
  std::string_view host;
  std::string_view te;
  size_t tes = 0;
  for (const auto& f : m) {
    if (f.name() == bhttp::field::host) {
      ++hosts;
      host = f.value();
    } else if (f.name() == bhttp::field::transfer_encoding) {
      ++tes;
      te = f.value();
    }
  }
  if (hosts > 1) return "more than one Host field";
  if (hosts == 0 && m.version() >= 11) return "an HTTP/1.1 request without Host";
  for (char c : host) {
    if (!HostChar(c)) return "a Host field that is not a host";
  }
  if (tes > 0) {
    // Chunked must be the last coding, or the body's length is unknown
    // (and what follows could pass for another request).
    if (m.version() < 11) return "Transfer-Encoding in an HTTP/1.0 request";
    std::string_view last =
        te.substr(te.rfind(',') == std::string_view::npos ? 0 : te.rfind(',') + 1);
    while (!last.empty() && (last.front() == ' ' || last.front() == '\t')) last.remove_prefix(1);
    while (!last.empty() && (last.back() == ' ' || last.back() == '\t')) last.remove_suffix(1);
    if (tes > 1 || !boost::beast::iequals(last, "chunked"))
      return "a Transfer-Encoding that does not end in chunked";
  }
  return "";
}

}  // namespace

RequestReader::RequestReader(RequestLimits limits) : impl_(std::make_unique<Impl>()) {
  impl_->body_limit = limits.body_limit;
  impl_->parser.header_limit(static_cast<std::uint32_t>(limits.header_limit));
  impl_->parser.body_limit(limits.body_limit);
  impl_->parser.eager(true);
}

// Beast checks a sized body against its limit as the header ends: paused,
// the limit is applied once the caller has chosen how the body is read.
void RequestReader::PauseAtHeader() {
  impl_->pause = true;
  impl_->parser.eager(false);
  impl_->parser.body_limit(std::numeric_limits<std::uint64_t>::max());
}

bool RequestReader::BodyOver(uint64_t limit) {
  auto n = impl_->parser.content_length();
  if (!n || *n <= limit) return false;
  Fail(Error::kBodyTooLarge, "request body too large");
  return true;
}

ServerRequest RequestReader::Head() const {
  const auto& in = impl_->parser.get();
  ServerRequest req;
  req.method = std::string(in.method_string());
  req.target = std::string(in.target());
  for (const auto& f : in)
    req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  req.version = static_cast<int>(in.version());
  return req;
}

bool RequestReader::expects_continue() const {
  auto it = impl_->parser.get().find(bhttp::field::expect);
  return it != impl_->parser.get().end() && boost::beast::iequals(it->value(), "100-continue");
}

std::optional<uint64_t> RequestReader::content_length() const {
  auto n = impl_->parser.content_length();
  if (impl_->parser.chunked() || !n) return std::nullopt;
  return *n;
}

void RequestReader::ReadWhole() {
  impl_->pause = false;
  if (BodyOver(impl_->body_limit)) return;
  impl_->parser.body_limit(impl_->body_limit);
  impl_->parser.eager(true);
  state_ = State::kNeedMore;
}

void RequestReader::ReadStreamed(uint64_t body_limit) {
  impl_->pause = false;
  if (BodyOver(body_limit)) return;
  impl_->streamed.emplace(std::move(impl_->parser));
  impl_->streamed->body_limit(body_limit);
  impl_->streamed->eager(true);
  state_ = State::kNeedMore;
}

size_t RequestReader::FeedBody(std::string_view bytes, std::string* out) {
  auto& p = *impl_->streamed;
  size_t used = 0;
  char room[64 << 10];
  while (state_ == State::kNeedMore && used < bytes.size()) {
    p.get().body().data = room;
    p.get().body().size = sizeof room;
    boost::beast::error_code ec;
    size_t n = p.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    used += n;
    fed_ += n;
    out->append(room, sizeof room - p.get().body().size);
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec == bhttp::error::need_more) break;
    if (ec == bhttp::error::body_limit) {
      Fail(Error::kBodyTooLarge, "request body too large");
    } else if (ec) {
      Fail(Error::kBadRequest, "malformed request: " + ec.message());
    } else if (p.is_done()) {
      state_ = State::kDone;
    } else if (n == 0 && p.get().body().size == sizeof room) {
      break;
    }
  }
  return used;
}

RequestReader::~RequestReader() = default;

void RequestReader::Fail(Error e, std::string message) {
  state_ = State::kError;
  error_ = e;
  message_ = std::move(message);
}

size_t RequestReader::Feed(std::string_view bytes) {
  size_t used = 0;
  while (state_ == State::kNeedMore && used < bytes.size()) {
    boost::beast::error_code ec;
    size_t n = impl_->parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
    used += n;
    fed_ += n;
    if (!impl_->header_checked && impl_->parser.is_header_done()) {
      impl_->header_checked = true;
      std::string bad = CheckHeader(impl_->parser.get());
      if (!bad.empty()) {
        Fail(Error::kBadRequest, "malformed request: " + bad);
        break;
      }
    }
    if (ec == bhttp::error::need_more) break;  // a header not yet whole
    if (impl_->pause && !ec && impl_->parser.is_header_done() && !impl_->parser.is_done()) {
      state_ = State::kHeader;
      break;
    }
    if (ec == bhttp::error::header_limit) {
      Fail(Error::kHeaderTooLarge, "request header too large");
    } else if (ec == bhttp::error::body_limit) {
      Fail(Error::kBodyTooLarge, "request body too large");
    } else if (ec) {
      Fail(Error::kBadRequest, "malformed request: " + ec.message());
    } else if (impl_->parser.is_done()) {
      state_ = State::kDone;
    } else if (n == 0) {
      break;
    }
  }
  return used;
}

void RequestReader::FeedEof() {
  if (state_ != State::kNeedMore) return;
  if (impl_->streamed) {  // a request's body never ends by a close
    Fail(Error::kClosed, "the client closed mid-body");
    return;
  }
  boost::beast::error_code ec;
  // Beast's put_eof wants some bytes first (an assertion in debug builds);
  // with none there is nothing to finish.
  if (impl_->parser.got_some()) impl_->parser.put_eof(ec);
  if (impl_->parser.got_some() && !ec && impl_->parser.is_done()) {
    state_ = State::kDone;
    return;
  }
  Fail(Error::kClosed, "the client closed mid-request");
}

ServerRequest RequestReader::TakeRequest() {
  ServerRequest req = Head();
  req.body = std::move(impl_->parser.get().body());
  return req;
}

bool RequestReader::keep_alive() const {
  return impl_->streamed ? impl_->streamed->get().keep_alive() : impl_->parser.get().keep_alive();
}

}  // namespace ferry::http
