#include "cache/transcode_policy.h"

#include <gtest/gtest.h>

namespace ferry::cache {
namespace {

ResponseFacts Eligible() {
  ResponseFacts r;
  r.status = 200;
  r.content_type = "text/html; charset=utf-8";
  r.content_length = 10'000;
  return r;
}

TEST(TranscodePolicyTest, Table) {
  struct Case {
    const char* name;
    void (*edit)(ResponseFacts&);
    Transcode want;
    const char* reason;
  };
  const Case cases[] = {
      {"html", [](ResponseFacts&) {}, Transcode::kZstd, "eligible"},
      {"json", [](ResponseFacts& r) { r.content_type = "application/json"; }, Transcode::kZstd, "eligible"},
      {"js", [](ResponseFacts& r) { r.content_type = "application/javascript"; }, Transcode::kZstd, "eligible"},
      {"xml", [](ResponseFacts& r) { r.content_type = "application/xml"; }, Transcode::kZstd, "eligible"},
      {"svg", [](ResponseFacts& r) { r.content_type = "image/svg+xml"; }, Transcode::kZstd, "eligible"},
      {"+json suffix", [](ResponseFacts& r) { r.content_type = "application/ld+json"; }, Transcode::kZstd, "eligible"},
      {"+xml suffix", [](ResponseFacts& r) { r.content_type = "application/atom+xml"; }, Transcode::kZstd, "eligible"},
      {"case and spaces", [](ResponseFacts& r) { r.content_type = "  Text/CSS ;charset=x"; }, Transcode::kZstd, "eligible"},
      {"identity coding", [](ResponseFacts& r) { r.content_encoding = "identity"; }, Transcode::kZstd, "eligible"},
      {"exactly the minimum", [](ResponseFacts& r) { r.content_length = 4096; }, Transcode::kZstd, "eligible"},
      {"no-store is not no-transform", [](ResponseFacts& r) { r.cache_control = "no-store, max-age=0"; }, Transcode::kZstd, "eligible"},

      {"206", [](ResponseFacts& r) { r.status = 206; }, Transcode::kAsReceived, "range"},
      {"range request", [](ResponseFacts& r) { r.range_request = true; }, Transcode::kAsReceived, "range"},
      {"404", [](ResponseFacts& r) { r.status = 404; }, Transcode::kAsReceived, "not a 200"},
      {"301", [](ResponseFacts& r) { r.status = 301; }, Transcode::kAsReceived, "not a 200"},
      {"gzip", [](ResponseFacts& r) { r.content_encoding = "gzip"; }, Transcode::kAsReceived, "already encoded"},
      {"br", [](ResponseFacts& r) { r.content_encoding = "br"; }, Transcode::kAsReceived, "already encoded"},
      {"zstd never twice", [](ResponseFacts& r) { r.content_encoding = "ZSTD"; }, Transcode::kAsReceived, "already encoded"},
      {"unknown length", [](ResponseFacts& r) { r.content_length.reset(); }, Transcode::kAsReceived, "unknown length"},
      {"png", [](ResponseFacts& r) { r.content_type = "image/png"; }, Transcode::kAsReceived, "type not compressible"},
      {"video", [](ResponseFacts& r) { r.content_type = "video/mp4"; }, Transcode::kAsReceived, "type not compressible"},
      {"font", [](ResponseFacts& r) { r.content_type = "font/woff2"; }, Transcode::kAsReceived, "type not compressible"},
      {"zip", [](ResponseFacts& r) { r.content_type = "application/zip"; }, Transcode::kAsReceived, "type not compressible"},
      {"octet-stream", [](ResponseFacts& r) { r.content_type = "application/octet-stream"; }, Transcode::kAsReceived, "type not compressible"},
      {"no type", [](ResponseFacts& r) { r.content_type = ""; }, Transcode::kAsReceived, "type not compressible"},
      {"malformed type", [](ResponseFacts& r) { r.content_type = "text"; }, Transcode::kAsReceived, "type not compressible"},
      {"+json as a type, not a suffix", [](ResponseFacts& r) { r.content_type = "application/jsonx"; }, Transcode::kAsReceived, "type not compressible"},
      {"too small", [](ResponseFacts& r) { r.content_length = 4095; }, Transcode::kAsReceived, "below the minimum size"},
      {"no-transform", [](ResponseFacts& r) { r.cache_control = "public, No-Transform"; }, Transcode::kAsReceived, "no-transform"},
  };
  TranscodeSettings s;
  for (const Case& c : cases) {
    ResponseFacts r = Eligible();
    c.edit(r);
    TranscodeDecision d = DecideTranscode(r, s);
    EXPECT_EQ(d.action, c.want) << c.name;
    EXPECT_STREQ(d.reason, c.reason) << c.name;
  }
}

TEST(TranscodePolicyTest, SettingsChangeTheOutcome) {
  ResponseFacts r = Eligible();
  r.cache_control = "no-transform";
  TranscodeSettings s;
  s.ignore_no_transform = true;
  EXPECT_EQ(DecideTranscode(r, s).action, Transcode::kZstd);
  r = Eligible();
  r.content_length = 100;
  s.min_size = 0;
  EXPECT_EQ(DecideTranscode(r, s).action, Transcode::kZstd);
  r.content_type = "application/wasm";
  EXPECT_EQ(DecideTranscode(r, s).action, Transcode::kAsReceived);
  s.types = {"application/wasm"};
  EXPECT_EQ(DecideTranscode(r, s).action, Transcode::kZstd);
  r.content_type = "text/html";
  EXPECT_EQ(DecideTranscode(r, s).action, Transcode::kAsReceived) << "the list replaces the default";
}

}  // namespace
}  // namespace ferry::cache
