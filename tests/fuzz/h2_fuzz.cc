// Fuzz target: a hostile HTTP/2 client. After the connection preface, the
// input is whatever frames (or garbage) the client sends, fed to the
// server's H2Session in pieces whose sizes come from the input; every
// request it yields is answered (some with bodies larger than a window, so
// flow control runs), every body read asked for is given, and what the
// session sends is drained and checked.
// Invariants: the session never holds more work out than
// max_concurrent_streams; what it sends is a whole sequence of frames
// (each a 9-byte head and exactly its length) and never the client's
// bytes echoed unframed; a session that fails says why with a GOAWAY.
#include <string>

#include "fuzz_util.h"
#include "http/h2_session.h"
#include "http/server.h"

namespace {

using namespace ferry;
using namespace ferry::http;
using ferry::fuzz::Check;

constexpr const char* kName = "h2_fuzz";

// Checks that `out` is whole frames; returns whether one is a GOAWAY.
bool CheckFrames(std::string_view out) {
  bool goaway = false;
  while (!out.empty()) {
    Check(out.size() >= 9, kName, "a frame head cut short");
    const auto* p = reinterpret_cast<const unsigned char*>(out.data());
    size_t length = (size_t{p[0]} << 16) | (size_t{p[1]} << 8) | p[2];
    Check(out.size() >= 9 + length, kName, "a frame shorter than its length");
    Check(length <= (1u << 24) - 1, kName, "a frame longer than any allowed");
    goaway = goaway || p[3] == 7;
    out.remove_prefix(9 + length);
  }
  return goaway;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  H2Limits limits;
  limits.max_concurrent_streams = 8;
  limits.header_limit = 4096;
  limits.body_limit = 64 << 10;
  limits.connection_body_limit = 128 << 10;
  auto now = H2Session::Clock::now();
  H2Session session(limits, "127.0.0.1", now);
  fuzz::InputReader in(data, size);
  const size_t first = in.Byte();  // the first piece's length; the rest in pieces of 64 bytes
  std::string sent;
  bool failed = false;
  std::string piece = std::string(kH2Preface) + std::string(in.Take(first));
  for (int round = 0; round < 1000 && !session.Done(); ++round) {
    if (!failed && !piece.empty()) {
      now += std::chrono::milliseconds(1);
      failed = !session.Receive(piece, now).ok();
    }
    for (auto& e : session.TakeEvents()) {
      switch (e.kind) {
        case H2Session::Event::Kind::kRequest: {
          ServerResponse r;
          r.status = e.request.target.size() % 2 ? 404 : 200;
          r.headers.emplace_back("content-type", "text/plain");
          r.SetBody(std::string(e.request.target.size() % 3 == 0 ? 100000 : 10, 'x'));
          session.Respond(e.stream, std::move(r));
          break;
        }
        case H2Session::Event::Kind::kNeedBody:
          (void)session.AddBody(e.stream, "");
          break;
        default:
          break;
      }
    }
    Check(session.outstanding() <= limits.max_concurrent_streams, kName,
          "more work out than streams allowed");
    std::string out;
    session.Send(&out, 1 << 20);
    sent += out;
    if (in.empty() && out.empty()) break;
    piece = std::string(in.Take(64));
  }
  bool goaway = CheckFrames(sent);
  if (failed) Check(goaway, kName, "a session that failed sent no GOAWAY");
  return 0;
}
