// Micro-benchmarks of the S3 protocol's hot paths: signing a request and
// parsing a 1000-key ListObjectsV2 page.
#include <benchmark/benchmark.h>

#include <string>

#include "s3/sigv4.h"
#include "s3/xml.h"

namespace {

using ferry::s3::Credentials;
using ferry::s3::RequestToSign;

void BM_SigV4SignGet(benchmark::State& state) {
  Credentials creds{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
  for (auto _ : state) {
    RequestToSign req;
    req.method = "GET";
    req.path = "/bucket/photos/2024/some key with spaces.jpg";
    req.headers = {{"host", "127.0.0.1:9000"}, {"range", "bytes=0-1048575"}};
    req.payload_hash = std::string(ferry::s3::kEmptyPayloadSha256);
    ferry::s3::SignRequest(req, creds, "us-east-1", "20240309T174501Z");
    benchmark::DoNotOptimize(req.headers);
  }
}
BENCHMARK(BM_SigV4SignGet);

void BM_SigV4SignListWithQuery(benchmark::State& state) {
  Credentials creds{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "token"};
  for (auto _ : state) {
    RequestToSign req;
    req.method = "GET";
    req.path = "/bucket";
    req.query = {{"list-type", "2"}, {"prefix", "logs/2024/"}, {"delimiter", "/"},
                 {"continuation-token", "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="},
                 {"encoding-type", "url"}, {"max-keys", "1000"}};
    req.headers = {{"host", "127.0.0.1:9000"}};
    req.payload_hash = std::string(ferry::s3::kEmptyPayloadSha256);
    ferry::s3::SignRequest(req, creds, "us-east-1", "20240309T174501Z");
    benchmark::DoNotOptimize(req.headers);
  }
}
BENCHMARK(BM_SigV4SignListWithQuery);

std::string ListPage(int n) {
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult "
      "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bucket</Name><Prefix></Prefix>"
      "<KeyCount>1000</KeyCount><MaxKeys>1000</MaxKeys><EncodingType>url</EncodingType>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>tok</NextContinuationToken>";
  for (int i = 0; i < n; ++i) {
    xml += "<Contents><Key>data/2024/object+name%20" + std::to_string(i) +
           ".bin</Key><LastModified>2024-03-09T17:45:01.000Z</LastModified><ETag>&quot;"
           "0123456789abcdef0123456789abcdef&quot;</ETag><Size>" +
           std::to_string(1000 + i) + "</Size><StorageClass>STANDARD</StorageClass></Contents>";
  }
  return xml + "</ListBucketResult>";
}

void BM_ParseListPage1000(benchmark::State& state) {
  std::string xml = ListPage(1000);
  for (auto _ : state) {
    auto page = ferry::s3::ParseListObjectsV2(xml);
    if (!page.ok() || page->objects.size() != 1000) state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(page);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * xml.size()));
}
BENCHMARK(BM_ParseListPage1000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
