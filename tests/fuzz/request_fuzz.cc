// Fuzz target: a client's bytes through the cache's front half — the
// request reader (fed in two pieces, as a socket may deliver them), then
// the proxy (routing, conditionals, ranges, admin paths, the cache itself)
// against an in-process origin and a small store in a temporary directory.
// Invariants checked on every input: a whole request always gets an
// answer with a valid status; a body never exceeds what was asked for; a
// 200 for the one page the origin has is that page, whole or coded (zstd, br, gzip);
// a 206 is exactly the slice its Content-Range names.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cache/proxy.h"
#include "http/request_reader.h"
#include "codec/text_codings.h"
#include "codec/zstd_codec.h"

namespace {

using namespace ferry;
using namespace ferry::cache;
using namespace ferry::http;

const std::string& Page() {
  static const std::string page = [] {
    std::string s;
    for (int i = 0; s.size() < 20000; ++i) s += "<p>fuzzed line " + std::to_string(i) + "</p>\n";
    return s;
  }();
  return page;
}

// Answers every GET with the page (fresh for a minute), echoes other methods.
class Origin : public Upstream {
 public:
  Status Send(const http::Endpoint&, const http::Request& req, ByteSink* sink, http::Response* out) override {
    out->status = 200;
    out->headers = {{"Content-Type", "text/html"}, {"ETag", "\"p1\""}, {"Cache-Control", "max-age=60"}};
    if (req.method != "GET") return sink->Write("echo " + req.method);
    return sink->Write(Page());
  }
};

struct Fixture {
  std::string dir;
  std::unique_ptr<DiskStore> store;
  Origin origin;
  std::unique_ptr<Proxy> proxy;

  Fixture() {
    char tmpl[] = "/tmp/ferry-fuzz-request.XXXXXX";
    if (!mkdtemp(tmpl)) abort();
    dir = tmpl;
    DiskStoreOptions so;
    so.dir = dir;
    so.max_bytes = 1 << 20;
    so.sync = false;
    store = std::move(DiskStore::Open(so)).value();
    ProxyOptions po;
    po.routing = std::move(ParseRouting("http://origin.test", {"site.test=http://other.test/base"})).value();
    po.admin_allow = std::move(ParseAllowList({"127.0.0.1"})).value();
    po.memory_bytes = 1 << 20;
    po.max_object = 1 << 20;
    proxy = std::make_unique<Proxy>(po, store.get(), &origin);
  }
};

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "request_fuzz: invariant broken: %s\n", what);
    abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fx = new Fixture();  // lives for the process; its directory goes at exit
  static bool cleanup_registered = [] {
    atexit([] { std::filesystem::remove_all(fx->dir); });
    return true;
  }();
  (void)cleanup_registered;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  RequestLimits limits;
  limits.header_limit = 4096;
  limits.body_limit = 65536;
  RequestReader reader(limits);
  size_t split = size == 0 ? 0 : data[0] % (size + 1);
  std::string buffered(in.substr(0, split));
  buffered.erase(0, reader.Feed(buffered));
  buffered.append(in.substr(split));
  buffered.erase(0, reader.Feed(buffered));
  if (reader.state() == RequestReader::State::kNeedMore) reader.FeedEof();
  if (reader.state() != RequestReader::State::kDone) {
    Check(reader.error() != RequestReader::Error::kNone, "an unfinished request without an error");
    return 0;
  }
  ProxyRequest req = reader.TakeRequest();
  req.peer = size % 2 ? "127.0.0.1" : "192.0.2.1";
  ProxyResponse r = fx->proxy->Handle(req);
  Check(r.status >= 100 && r.status <= 599, "status out of range");
  Check(r.body.size() <= (1u << 20), "body larger than any object");
  if (req.method == "GET" && r.status == 200 && HeaderValue(r.headers, "X-Cache") != "BYPASS" &&
      req.target.find("_ferry") == std::string::npos) {
    std::string body(r.body);
    const std::string coding = HeaderValue(r.headers, "Content-Encoding");
    if (!coding.empty()) {
      auto d = coding == "zstd" ? codec::ZstdDecompress(body)
               : coding == "br" ? codec::BrotliDecompress(body)
               : coding == "gzip" ? codec::GzipDecompress(body)
                                  : Result<std::string>(Status::Corruption("coding " + coding));
      Check(d.ok(), "a coded body does not decode");
      body = *d;
    }
    Check(body == Page(), "a 200 that is not the page");
  }
  if (r.status == 206) {
    // "bytes FIRST-LAST/LENGTH", and the body is exactly that slice.
    std::string cr = HeaderValue(r.headers, "Content-Range");
    unsigned long long first = 0, last = 0, length = 0;
    Check(std::sscanf(cr.c_str(), "bytes %llu-%llu/%llu", &first, &last, &length) == 3, "a 206 without Content-Range");
    Check(first <= last && last < length && length == Page().size(), "a Content-Range outside the page");
    if (req.method == "GET") {
      Check(r.body == std::string_view(Page()).substr(first, last - first + 1), "a 206 body that is not its range");
    }
  }
  return 0;
}
