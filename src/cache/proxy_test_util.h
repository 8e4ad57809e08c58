#pragma once
// For the proxy's tests (proxy_test.cc, proxy_big_test.cc): compressible
// text and a scripted upstream.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cache/disk_store.h"
#include "cache/proxy.h"
#include "cache/upstream.h"

namespace ferry::cache {

// An unsynced store in `dir` (the proxy's tests' own).
inline std::unique_ptr<DiskStore> OpenTestStore(const std::string& dir) {
  DiskStoreOptions so;
  so.dir = dir;
  so.sync = false;
  return std::move(DiskStore::Open(so)).value();
}

inline std::string Text(size_t n) {
  std::string s;
  while (s.size() < n) s += "<p>ferry keeps text compressed at rest, " + std::to_string(s.size()) + "</p>\n";
  s.resize(n);
  return s;
}

// A GET from the loopback address (allowed to PURGE and read metrics).
inline ProxyRequest GetRequest(const std::string& target, http::Headers headers = {}) {
  ProxyRequest r;
  r.target = target;
  r.headers = std::move(headers);
  r.peer = "127.0.0.1";
  return r;
}

// A scripted upstream: answers by target, counts requests, remembers the
// last request's headers, and can hold answers (or, with pause_after, a
// body midway) until released.
class FakeUpstream : public Upstream {
 public:
  struct Answer {
    int status = 200;
    http::Headers headers;
    std::string body;
  };
  std::map<std::string, Answer> answers;
  std::atomic<int> calls{0};
  http::Headers last_headers;
  std::string last_target;
  bool hold = false;
  // Bodies stop after this many bytes until Release().
  uint64_t pause_after = std::numeric_limits<uint64_t>::max();
  // Endpoints by host: those down refuse (kNetwork); requests each was sent.
  std::set<std::string> down_hosts;
  std::map<std::string, int> calls_by_host;

  void Release() {
    std::lock_guard lock(mu_);
    hold = false;
    pause_after = std::numeric_limits<uint64_t>::max();
    cv_.notify_all();
  }

  Status Send(const http::Endpoint& endpoint, const http::Request& req, ByteSink* sink,
              http::Response* out) override {
    calls++;
    {
      std::unique_lock lock(mu_);
      calls_by_host[endpoint.host]++;
      if (down_hosts.count(endpoint.host)) return Status(ErrorCode::kNetwork, "connection refused");
      last_headers = req.headers;
      last_target = req.target;
      cv_.wait(lock, [&] { return !hold; });
    }
    auto it = answers.find(req.target);
    if (it == answers.end()) {
      out->status = 404;
      return Status::Ok();
    }
    out->status = it->second.status;
    out->headers = it->second.headers;
    out->headers.emplace_back("Content-Length", std::to_string(it->second.body.size()));
    if (out->status >= 200 && out->status < 300) {
      if (req.check_headers) FERRY_RETURN_IF_ERROR(req.check_headers(*out));
      // In pieces, as a socket delivers them.
      for (size_t at = 0; at < it->second.body.size(); at += 65536) {
        {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [&] { return at < pause_after; });
        }
        FERRY_RETURN_IF_ERROR(sink->Write(std::string_view(it->second.body).substr(at, 65536)));
      }
      return Status::Ok();
    }
    out->body = it->second.body;
    return Status::Ok();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
};

// A proxy over a FakeUpstream and a store in a temporary directory, made
// on first use from options_ (routed to http://origin.test:8000).
class ProxyFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-proxy-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store_ = OpenTestStore(dir_);
    options_.routing = std::move(ParseRouting("http://origin.test:8000", {})).value();
  }
  void TearDown() override {
    proxy_.reset();  // first: it stores what it compresses behind fills as it ends
    std::filesystem::remove_all(dir_);
  }
  Proxy& proxy() {
    if (!proxy_) proxy_ = std::make_unique<Proxy>(options_, store_.get(), &upstream_);
    return *proxy_;
  }

  std::string dir_;
  std::unique_ptr<DiskStore> store_;
  ProxyOptions options_;
  FakeUpstream upstream_;
  std::unique_ptr<Proxy> proxy_;
};

}  // namespace ferry::cache
