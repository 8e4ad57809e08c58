// Micro-benchmarks of hot paths: signing an S3 request, parsing a 1000-key
// ListObjectsV2 page, and ferry's zstd coder beside raw libzstd on the same
// text (the cache stores text compressed; its coder must cost about what
// libzstd does).
#include <benchmark/benchmark.h>

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_c_* parameters as the coder sets them
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "codec/zstd_codec.h"
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

namespace {

// ~8 MiB of text found on every build machine: the C++ library's headers
// and the license texts (the cache benchmark uses a web corpus instead).
const std::string& TextCorpus() {
  static const std::string corpus = [] {
    std::string all;
    for (const char* dir : {"/usr/include/c++/12/bits", "/usr/share/common-licenses"}) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        if (!e.is_regular_file() || all.size() > (8u << 20)) continue;
        std::ifstream in(e.path(), std::ios::binary);
        all.append(std::istreambuf_iterator<char>(in), {});
      }
    }
    return all;
  }();
  return corpus;
}

// Bodies of 64 KiB, as a cache fills: ferry's streaming encoder...
void BM_ZstdEncodeFerry(benchmark::State& state) {
  const std::string& text = TextCorpus();
  ferry::codec::ZstdEncoder enc(3);
  std::string out;
  size_t off = 0;
  for (auto _ : state) {
    std::string_view body = std::string_view(text).substr(off, 64 << 10);
    off = off + (64 << 10) < text.size() ? off + (64 << 10) : 0;
    out.clear();
    (void)enc.Begin(body.size());
    (void)enc.Update(body, &out);
    (void)enc.Finish(&out);
    benchmark::DoNotOptimize(out.data());
    state.SetBytesProcessed(state.bytes_processed() + static_cast<int64_t>(body.size()));
  }
}
BENCHMARK(BM_ZstdEncodeFerry);

// ...beside one ZSTD_compress2 call with the same parameters.
void BM_ZstdEncodeRaw(benchmark::State& state) {
  const std::string& text = TextCorpus();
  ZSTD_CCtx* c = ZSTD_createCCtx();
  std::string out(ZSTD_compressBound(64 << 10), '\0');
  size_t off = 0;
  for (auto _ : state) {
    std::string_view body = std::string_view(text).substr(off, 64 << 10);
    off = off + (64 << 10) < text.size() ? off + (64 << 10) : 0;
    ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    size_t n = ZSTD_compress2(c, out.data(), out.size(), body.data(), body.size());
    benchmark::DoNotOptimize(n);
    state.SetBytesProcessed(state.bytes_processed() + static_cast<int64_t>(body.size()));
  }
  ZSTD_freeCCtx(c);
}
BENCHMARK(BM_ZstdEncodeRaw);

std::vector<std::string> CompressedBodies() {
  const std::string& text = TextCorpus();
  std::vector<std::string> bodies;
  for (size_t off = 0; off < text.size(); off += 64 << 10) {
    bodies.push_back(*ferry::codec::ZstdCompress(std::string_view(text).substr(off, 64 << 10)));
  }
  return bodies;
}

// Decoding as the cache does towards an identity client (bytes per second
// of decoded output)...
void BM_ZstdDecodeFerry(benchmark::State& state) {
  auto bodies = CompressedBodies();
  ferry::codec::ZstdDecoder dec;
  size_t i = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    dec.Reset();
    (void)dec.Update(bodies[i], [&](std::string_view d) {
      bytes += static_cast<int64_t>(d.size());
      benchmark::DoNotOptimize(d.data());
      return ferry::Status::Ok();
    });
    i = (i + 1) % bodies.size();
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_ZstdDecodeFerry);

// ...beside one ZSTD_decompressDCtx call into a buffer.
void BM_ZstdDecodeRaw(benchmark::State& state) {
  auto bodies = CompressedBodies();
  ZSTD_DCtx* d = ZSTD_createDCtx();
  std::string out(64 << 10, '\0');
  size_t i = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    size_t n = ZSTD_decompressDCtx(d, out.data(), out.size(), bodies[i].data(), bodies[i].size());
    bytes += static_cast<int64_t>(n);
    benchmark::DoNotOptimize(out.data());
    i = (i + 1) % bodies.size();
  }
  ZSTD_freeDCtx(d);
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_ZstdDecodeRaw);

}  // namespace

BENCHMARK_MAIN();
