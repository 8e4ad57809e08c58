// ns per byte of S3's flexible checksums (crypto/checksum.h) on a 1 MiB
// body, beside zlib's crc32 (the common software CRC32) and the MD5 every
// S3 PUT already computes for its ETag.
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <random>
#include <string>

#include "crypto/checksum.h"
#include "crypto/digest.h"

namespace ferry {
namespace {

const std::string& Body() {
  static const std::string body = [] {
    std::mt19937 rng(1);
    std::string s(1 << 20, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  }();
  return body;
}

void Report(benchmark::State& state) {
  const double bytes = static_cast<double>(state.iterations()) * Body().size();
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  // Seconds over (bytes / 1e9): nanoseconds per byte.
  state.counters["ns_per_B"] =
      benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Checksum(benchmark::State& state) {
  const auto a = static_cast<ChecksumAlgorithm>(state.range(0));
  state.SetLabel(std::string(ChecksumAlgorithmName(a)));
  for (auto _ : state) benchmark::DoNotOptimize(ChecksumBase64(a, Body()));
  Report(state);
}
BENCHMARK(BM_Checksum)->DenseRange(0, 4);

void BM_ChecksumPeerZlibCrc32(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        crc32(0, reinterpret_cast<const Bytef*>(Body().data()), static_cast<uInt>(Body().size())));
  }
  Report(state);
}
BENCHMARK(BM_ChecksumPeerZlibCrc32);

void BM_ChecksumPeerMd5(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Md5(Body()));
  Report(state);
}
BENCHMARK(BM_ChecksumPeerMd5);

}  // namespace
}  // namespace ferry
