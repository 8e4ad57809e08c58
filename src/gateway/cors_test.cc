#include "gateway/cors.h"

#include <gtest/gtest.h>

namespace ferry::gateway {
namespace {

CorsPolicy Policy(std::vector<std::string> origins) {
  CorsPolicy p;
  p.origins = std::move(origins);
  p.max_age = std::chrono::seconds(120);
  return p;
}

TEST(CorsTest, OriginValues) {
  EXPECT_FALSE(CorsOriginProblem("*"));
  EXPECT_FALSE(CorsOriginProblem("http://127.0.0.1:8080"));
  EXPECT_FALSE(CorsOriginProblem("https://app.example.com"));
  EXPECT_TRUE(CorsOriginProblem("app.example.com"));
  EXPECT_TRUE(CorsOriginProblem("https://app.example.com/"));
  EXPECT_TRUE(CorsOriginProblem("https://"));
}

TEST(CorsTest, AllowedOrigins) {
  CorsPolicy p = Policy({"http://localhost:8000", "https://app.example.com"});
  EXPECT_EQ(AllowedOrigin(p, "http://localhost:8000"), "http://localhost:8000");
  EXPECT_FALSE(AllowedOrigin(p, "http://localhost:8001"));
  EXPECT_FALSE(AllowedOrigin(p, "https://APP.example.com"));  // browsers send it lower-case
  EXPECT_FALSE(AllowedOrigin(p, ""));
  EXPECT_EQ(AllowedOrigin(Policy({"*"}), "http://anything"), "*");
  EXPECT_FALSE(AllowedOrigin(Policy({}), "http://localhost:8000"));
}

TEST(CorsTest, PreflightAllowed) {
  CorsPolicy p = Policy({"http://localhost:8000"});
  PreflightAnswer a = Preflight(p, "http://localhost:8000", "PUT", "Content-Type, X-Amz-Meta-A");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(http::HeaderValue(a.headers, "access-control-allow-origin"), "http://localhost:8000");
  EXPECT_NE(http::HeaderValue(a.headers, "access-control-allow-methods").find("PUT"),
            std::string::npos);
  EXPECT_EQ(http::HeaderValue(a.headers, "access-control-allow-headers"),
            "content-type, x-amz-meta-a");
  EXPECT_EQ(http::HeaderValue(a.headers, "access-control-max-age"), "120");
  EXPECT_NE(http::HeaderValue(a.headers, "access-control-expose-headers").find("ETag"),
            std::string::npos);
  EXPECT_NE(http::HeaderValue(a.headers, "vary").find("Origin"), std::string::npos);
  // No request headers: none allowed beyond the safelisted ones.
  PreflightAnswer bare = Preflight(p, "http://localhost:8000", "GET", "");
  EXPECT_EQ(bare.status, 200);
  EXPECT_EQ(http::HeaderValue(bare.headers, "access-control-allow-headers"), "");
}

TEST(CorsTest, PreflightRefused) {
  CorsPolicy p = Policy({"http://localhost:8000"});
  EXPECT_EQ(Preflight(Policy({}), "http://localhost:8000", "PUT", "").status, 403);
  EXPECT_EQ(Preflight(p, "http://evil.example", "PUT", "").status, 403);
  EXPECT_EQ(Preflight(p, "http://localhost:8000", "PATCH", "").status, 403);
  EXPECT_EQ(Preflight(p, "http://localhost:8000", "", "").status, 403);
  EXPECT_EQ(Preflight(p, "", "PUT", "").status, 403);
  PreflightAnswer bad = Preflight(p, "http://localhost:8000", "PUT", "content-type, a b");
  EXPECT_EQ(bad.status, 403);
  EXPECT_TRUE(bad.headers.empty());
  EXPECT_NE(bad.refusal.find("malformed"), std::string::npos);
}

TEST(CorsTest, ActualAnswers) {
  CorsPolicy p = Policy({"http://localhost:8000"});
  http::Headers h;
  AddCorsHeaders(p, "http://localhost:8000", &h);
  EXPECT_EQ(http::HeaderValue(h, "access-control-allow-origin"), "http://localhost:8000");
  EXPECT_EQ(http::HeaderValue(h, "vary"), "Origin");

  http::Headers refused = {{"Vary", "Accept-Encoding"}};
  AddCorsHeaders(p, "http://evil.example", &refused);
  EXPECT_EQ(http::HeaderValue(refused, "access-control-allow-origin"), "");
  EXPECT_EQ(http::HeaderValue(refused, "vary"), "Accept-Encoding, Origin");

  http::Headers off;
  AddCorsHeaders(Policy({}), "http://localhost:8000", &off);
  EXPECT_TRUE(off.empty());
}

}  // namespace
}  // namespace ferry::gateway
