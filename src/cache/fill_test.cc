#include "cache/fill.h"

#include <gtest/gtest.h>

#include "codec/zstd_codec.h"

namespace ferry::cache {
namespace {

using http::HeaderValue;

TEST(FillRequest, AsksForTheIdentityRepresentationWholeWithTheStaleValidators) {
  http::Headers client = {{"Accept-Encoding", "zstd, gzip"}, {"Range", "bytes=0-9"},
                          {"If-None-Match", "\"client\""}, {"If-Modified-Since", "x"},
                          {"If-Range", "\"a\""}, {"Connection", "close, X-Hop"},
                          {"X-Hop", "1"}, {"Accept-Language", "fr"}, {"Content-Length", "0"}};
  EXPECT_EQ(UpstreamRequestHeaders(client, nullptr), (http::Headers{{"Accept-Language", "fr"}}));
  EntryMeta stale;
  stale.headers = {{"ETag", "\"v1\""}, {"Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT"}};
  http::Headers h = UpstreamRequestHeaders(client, &stale);
  EXPECT_EQ(HeaderValue(h, "if-none-match"), "\"v1\"");
  EXPECT_EQ(HeaderValue(h, "if-modified-since"), "Tue, 01 Dec 2026 10:00:00 GMT");
  EXPECT_EQ(h.size(), 3u);
}

TEST(FillMerge, A304UpdatesEveryFieldButThoseOfTheStoredBytes) {
  CachedObject stale;
  stale.meta.key = "k";
  stale.meta.encoding = StoredEncoding::kZstd;
  stale.meta.headers = {{"Content-Type", "text/html"}, {"Cache-Control", "max-age=1"}, {"ETag", "\"v1\""}};
  stale.body = "stored bytes";
  CachedObject m = MergeNotModified(stale,
                                    {{"Cache-Control", "max-age=60"}, {"Content-Type", "text/plain"},
                                     {"Content-Encoding", "gzip"}, {"X-Ferry-Stored", "zstd; length=1"},
                                     {"Connection", "close"}, {"X-New", "yes"}},
                                    100, 101);
  EXPECT_EQ(m.body, "stored bytes");
  EXPECT_EQ(m.meta.encoding, StoredEncoding::kZstd);
  EXPECT_EQ(HeaderValue(m.meta.headers, "cache-control"), "max-age=60");
  EXPECT_EQ(HeaderValue(m.meta.headers, "content-type"), "text/html");
  EXPECT_EQ(HeaderValue(m.meta.headers, "content-encoding"), "");
  EXPECT_EQ(HeaderValue(m.meta.headers, "x-ferry-stored"), "");
  EXPECT_EQ(HeaderValue(m.meta.headers, "connection"), "");
  EXPECT_EQ(HeaderValue(m.meta.headers, "x-new"), "yes");
  EXPECT_EQ(HeaderValue(m.meta.headers, "etag"), "\"v1\"");
  EXPECT_EQ(m.meta.request_time, 100);
  EXPECT_EQ(m.meta.response_time, 101);
}

TEST(FillObject, APlainResponseAndAParentTiersStoredBytes) {
  auto plain = ObjectFromResponse("k", 200, {{"Content-Type", "text/html"}, {"Transfer-Encoding", "chunked"}},
                                  "hello", 1, 2);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->meta.key, "k");
  EXPECT_EQ(plain->meta.encoding, StoredEncoding::kIdentity);
  EXPECT_EQ(plain->meta.logical_length, 5u);
  EXPECT_EQ(plain->meta.stored_length, 5u);
  EXPECT_EQ(plain->meta.headers, (http::Headers{{"Content-Type", "text/html"}}));

  std::string text(10000, 'a');
  std::string z = codec::ZstdCompress(text).value();
  auto tier = ObjectFromResponse("k", 200,
                                 {{"Content-Encoding", "zstd"}, {"X-Ferry-Stored", "zstd; length=10000"}}, z, 1, 2);
  ASSERT_TRUE(tier.ok()) << tier.status().ToString();
  EXPECT_EQ(tier->meta.encoding, StoredEncoding::kZstd);
  EXPECT_EQ(tier->meta.logical_length, 10000u);
  EXPECT_EQ(tier->meta.stored_length, z.size());
  EXPECT_TRUE(tier->meta.headers.empty());
  EXPECT_EQ(tier->body, z);

  for (const char* marker : {"zstd; length=9999", "zstd; length=", "gzip; length=10000", "zstd; length=1x"}) {
    auto bad = ObjectFromResponse("k", 200, {{"X-Ferry-Stored", marker}}, z, 1, 2);
    ASSERT_FALSE(bad.ok()) << marker;
    EXPECT_EQ(bad.status().code(), ErrorCode::kProtocol) << marker;
  }
  EXPECT_FALSE(ObjectFromResponse("k", 200, {{"X-Ferry-Stored", "zstd; length=5"}}, "hello", 1, 2).ok());
}

TEST(FillStore, WhatMayBeStored) {
  struct Case {
    int status;
    http::Headers response;
    http::Headers request;
    bool store;
  };
  const Case cases[] = {
      {200, {{"Cache-Control", "max-age=60"}}, {}, true},
      {200, {{"ETag", "\"x\""}}, {}, false},  // no freshness given, no --default-ttl
      {404, {{"Cache-Control", "max-age=60"}}, {}, false},
      {302, {{"Cache-Control", "max-age=60"}}, {}, false},
      {200, {{"Cache-Control", "no-store"}}, {}, false},
      {200, {{"Cache-Control", "private, max-age=60"}}, {}, false},
      {200, {{"Cache-Control", "max-age=60"}, {"Set-Cookie", "a=b"}}, {}, false},
      {200, {{"Cache-Control", "max-age=60"}, {"Vary", "Cookie"}}, {}, false},
      {200, {{"Cache-Control", "max-age=60"}, {"Vary", "Accept-Encoding"}}, {}, true},
      {200, {{"Cache-Control", "max-age=60"}}, {{"Authorization", "Basic eA=="}}, false},
      {200, {{"Cache-Control", "public, max-age=60"}}, {{"Authorization", "Basic eA=="}}, true},
  };
  for (const Case& c : cases) {
    EntryMeta m;
    m.status = c.status;
    m.headers = c.response;
    CacheControl cc = ParseCacheControl(HeaderValue(c.request, "cache-control"));
    EXPECT_EQ(MayStore(c.request, cc, m, CacheSettings{}), c.store)
        << c.status << " " << (c.response.empty() ? "" : c.response.back().second);
  }
}

TEST(FillCompress, OnlyEligibleIdentityBodies) {
  TranscodeSettings s;
  EntryMeta html;
  html.status = 200;
  html.headers = {{"Content-Type", "text/html; charset=utf-8"}};
  EXPECT_TRUE(ShouldCompress(html, 100000, s));
  EXPECT_FALSE(ShouldCompress(html, 100, s));  // under min_size
  EntryMeta stored = html;
  stored.encoding = StoredEncoding::kZstd;  // a parent tier's bytes: never twice
  EXPECT_FALSE(ShouldCompress(stored, 100000, s));
  EntryMeta png = html;
  png.headers = {{"Content-Type", "image/png"}};
  EXPECT_FALSE(ShouldCompress(png, 100000, s));
  EntryMeta gz = html;
  gz.headers.emplace_back("Content-Encoding", "gzip");
  EXPECT_FALSE(ShouldCompress(gz, 100000, s));
}

TEST(FillStale, ServedOnErrorUnlessItMustBeRevalidated) {
  CachedObject o;
  EXPECT_TRUE(MayServeStale(o));
  o.cache_control.must_revalidate = true;
  EXPECT_FALSE(MayServeStale(o));
  o.cache_control = {};
  o.cache_control.no_cache = true;
  EXPECT_FALSE(MayServeStale(o));
}

TEST(FillMarker, ParsesOnlyTheExactForm) {
  EXPECT_EQ(ParseStoredMarker("zstd; length=42"), 42u);
  EXPECT_EQ(ParseStoredMarker("  zstd; length=0 "), 0u);
  EXPECT_EQ(ParseStoredMarker("zstd;length=42"), std::nullopt);
  EXPECT_EQ(ParseStoredMarker("zstd; length=-1"), std::nullopt);
  EXPECT_EQ(ParseStoredMarker("zstd; length=99999999999999999999999"), std::nullopt);
  EXPECT_EQ(ParseStoredMarker(""), std::nullopt);
}

}  // namespace
}  // namespace ferry::cache
