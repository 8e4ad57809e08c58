// Fuzz target: the test S3 server's request side — routing, SigV4
// verification (the Authorization parser included), aws-chunked bodies,
// the handlers, the admin API — over an in-memory bucket. One input is a
// request:
//   [!]METHOD TARGET\nname: value\n...\n\nBODY
// A leading '!' has the request signed correctly first (with the server's
// test credentials, UNSIGNED-PAYLOAD), so inputs reach past authentication
// into the handlers. The body is fed in two pieces, as a socket may.
// Invariants: every request gets one answer with a valid status; an
// unsigned request that is not an admin one is never answered 2xx (the
// server authenticates everything); nothing crashes.
#include <chrono>

#include "dir_store.h"
#include "exchange.h"
#include "fuzz_util.h"
#include "s3/sigv4.h"
#include "service.h"

namespace {

using namespace ferry;
using namespace ferry::s3server;
using ferry::fuzz::Check;

constexpr const char* kName = "s3server_fuzz";

std::unique_ptr<Service> NewService() {
  ServiceOptions o;
  o.buckets = {"bkt"};
  o.min_part_size = 16;
  auto s = std::make_unique<Service>(o, NewMemoryStorage());
  Check(s->CreateInitialBuckets().ok(), kName, "the bucket could not be made");
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Signs `req` as a client with the server's credentials would; false when
// its target cannot be decoded (it then goes unsigned).
bool Sign(HttpRequest* req, const std::string& body) {
  s3::RequestToSign r;
  r.method = req->method;
  std::string_view target = req->target;
  std::string_view path = target.substr(0, target.find('?'));
  if (!s3::UriDecode(path, &r.path)) return false;
  if (path.size() < target.size()) {
    std::string_view q = target.substr(path.size() + 1);
    while (!q.empty()) {
      std::string_view pair = q.substr(0, q.find('&'));
      q.remove_prefix(std::min(q.size(), pair.size() + 1));
      std::string name, value;
      size_t eq = pair.find('=');
      if (!s3::UriDecode(pair.substr(0, eq), &name) ||
          (eq != std::string_view::npos && !s3::UriDecode(pair.substr(eq + 1), &value))) {
        return false;
      }
      r.query.emplace_back(name, value);
    }
  }
  r.headers = req->headers;
  if (!req->Header("host")) r.headers.emplace_back("host", "127.0.0.1");
  r.payload_hash = std::string(s3::kUnsignedPayload);
  (void)body;
  s3::SignRequest(r, {"ferrytest", "ferrytestsecret", ""}, "us-east-1", s3::AmzDateNow());
  req->headers.clear();
  for (auto& [name, value] : r.headers) req->headers.emplace_back(Lower(name), value);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<Service> service = NewService();
  static int inputs = 0;
  if (++inputs % 5000 == 0) service = NewService();  // what inputs stored does not pile up

  fuzz::InputReader in(data, size);
  std::string_view line = in.Until('\n');
  const bool sign = !line.empty() && line[0] == '!';
  if (sign) line.remove_prefix(1);
  HttpRequest req;
  size_t space = line.find(' ');
  req.method = std::string(line.substr(0, space));
  req.target = space == std::string_view::npos ? "/" : std::string(line.substr(space + 1));
  for (std::string_view h = in.Until('\n'); !h.empty(); h = in.Until('\n')) {
    size_t colon = h.find(':');
    std::string_view value = colon == std::string_view::npos ? "" : h.substr(colon + 1);
    while (!value.empty() && value[0] == ' ') value.remove_prefix(1);
    req.headers.emplace_back(Lower(h.substr(0, colon)), std::string(value));
  }
  const std::string body(in.Rest());
  const bool signed_ok = sign && Sign(&req, body);
  if (const std::string* auth = req.Header("authorization")) (void)s3::ParseAuthorization(*auth);
  const bool chunked = req.HeaderOr("transfer-encoding") == "chunked";

  Exchange ex(*service, req, chunked ? std::nullopt : std::optional<uint64_t>(body.size()));
  ex.Begin(std::chrono::system_clock::now());
  const size_t split = body.size() / 2;
  ex.OnBody(std::string_view(body).substr(0, split));
  ex.OnBody(std::string_view(body).substr(split));
  ex.Finish();
  const HttpResponse& r = ex.response();
  Check(r.status >= 100 && r.status <= 599, kName, "a status out of range");
  const bool admin = req.target.rfind("/_admin", 0) == 0;
  if (!signed_ok && !admin && !req.Header("authorization") && r.status < 300 && r.status >= 200) {
    Check(ex.fault() != FaultKind::kNone, kName, "an unsigned request was answered 2xx");
  }
  ex.Record(r.BodyLength());
  return 0;
}
