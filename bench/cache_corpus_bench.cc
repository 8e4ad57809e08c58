// What `ferry cache serve` would store for a corpus of files, and what its
// zstd coder costs beside raw libzstd on the same bytes:
//
//   ferry_cache_corpus_bench [--level N] [--min-bytes N] [--max-bytes N] DIR...
//
// --min-bytes / --max-bytes keep only files of those sizes (a size class).
//
// Each regular file stands for a 200 response with the Content-Type its
// extension gives (as nginx would serve it) and its Content-Length. The
// transcoding policy decides; eligible bodies are compressed with ferry's
// encoder. Prints the stored/logical ratio for eligible bodies and overall,
// and encode/decode ns per logical byte for ferry and for one-shot libzstd
// calls with the same parameters (best of 3 passes each); on stderr, the
// one-shot libzstd call after 100 us and 1 ms asleep before each body, and
// the fill path's call (codec::ZstdCompress) with warm caches, with 8 MiB
// of other memory touched between bodies, and after 1 ms asleep.
#define ZSTD_STATIC_LINKING_ONLY  // parameters as the coder sets them
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cache/transcode_policy.h"
#include "codec/zstd_codec.h"
#include "ops/mime.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct File {
  std::string body;
  std::string type;
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

template <class F>
double BestOf3(F&& f) {
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    auto t0 = Clock::now();
    f();
    best = std::min(best, Seconds(Clock::now() - t0));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int level = 3;
  uint64_t min_bytes = 0, max_bytes = UINT64_MAX;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--level" && i + 1 < argc) {
      level = std::atoi(argv[++i]);
    } else if (a == "--min-bytes" && i + 1 < argc) {
      min_bytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--max-bytes" && i + 1 < argc) {
      max_bytes = std::strtoull(argv[++i], nullptr, 10);
    } else {
      dirs.push_back(a);
    }
  }
  if (dirs.empty()) {
    std::fprintf(stderr, "usage: ferry_cache_corpus_bench [--level N] [--min-bytes N] [--max-bytes N] DIR...\n");
    return 2;
  }
  std::vector<File> eligible;
  uint64_t files = 0, logical_all = 0, logical_eligible = 0, as_received = 0;
  ferry::cache::TranscodeSettings settings;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (ec || !it->is_regular_file(ec) || it->is_symlink(ec)) continue;
      const uint64_t size = it->file_size(ec);
      if (ec || size < min_bytes || size > max_bytes) continue;
      std::ifstream in(it->path(), std::ios::binary);
      File f{std::string(std::istreambuf_iterator<char>(in), {}),
             ferry::GuessContentType(it->path().string())};
      if (f.type.empty()) f.type = "application/octet-stream";
      ++files;
      logical_all += f.body.size();
      ferry::cache::ResponseFacts r;
      r.content_type = f.type;
      r.content_length = f.body.size();
      if (ferry::cache::DecideTranscode(r, settings).action == ferry::cache::Transcode::kZstd) {
        logical_eligible += f.body.size();
        eligible.push_back(std::move(f));
      } else {
        as_received += f.body.size();
      }
    }
  }
  // ferry's encoder, then decoder.
  std::vector<std::string> stored(eligible.size());
  ferry::codec::ZstdEncoder enc(level);
  double enc_ferry = BestOf3([&] {
    for (size_t i = 0; i < eligible.size(); ++i) {
      stored[i].clear();
      (void)enc.Begin(eligible[i].body.size());
      (void)enc.Update(eligible[i].body, &stored[i]);
      (void)enc.Finish(&stored[i]);
    }
  });
  uint64_t stored_eligible = 0;
  for (const auto& s : stored) stored_eligible += s.size();
  ferry::codec::ZstdDecoder dec;
  uint64_t decoded = 0;
  double dec_ferry = BestOf3([&] {
    decoded = 0;
    for (const auto& s : stored) {
      dec.Reset();
      (void)dec.Update(s, [&](std::string_view d) {
        decoded += d.size();
        return ferry::Status::Ok();
      });
    }
  });
  if (decoded != logical_eligible) {
    std::fprintf(stderr, "decoded %llu bytes, want %llu\n", (unsigned long long)decoded,
                 (unsigned long long)logical_eligible);
    return 1;
  }
  // Raw libzstd, one call per body, same parameters.
  ZSTD_CCtx* c = ZSTD_createCCtx();
  std::string out;
  auto raw_call = [&](const std::string& body) {
    out.resize(ZSTD_compressBound(body.size()));
    ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    (void)ZSTD_compress2(c, out.data(), out.size(), body.data(), body.size());
  };
  double enc_raw = BestOf3([&] {
    for (const auto& f : eligible) raw_call(f.body);
  });
  // The fill path's call (codec::ZstdCompress: a context per thread), with
  // the caches warm as above, and cold: 8 MiB of other memory touched
  // between bodies, as a server's other work does between fills.
  double enc_fill_warm = BestOf3([&] {
    for (const auto& f : eligible) (void)ferry::codec::ZstdCompress(f.body, level);
  });
  std::vector<char> other(8 << 20, 1);
  double evict_only = BestOf3([&] {
    for (size_t i = 0; i < eligible.size(); ++i) {
      for (size_t k = 0; k < other.size(); k += 64) other[k]++;
    }
  });
  double enc_fill_cold = BestOf3([&] {
    for (const auto& f : eligible) {
      for (size_t k = 0; k < other.size(); k += 64) other[k]++;
      (void)ferry::codec::ZstdCompress(f.body, level);
    }
  }) - evict_only;
  // And with the thread asleep before every `every`-th body, as a fill's
  // thread waits for the network between two bodies (only the calls are
  // timed): every = 1 is the fill's case, 8 a batch's. On a virtual machine
  // an idle vCPU halts; past the hypervisor's halt-polling window (KVM's
  // default is 200 us) its core may come back with caches another guest
  // used. The same one-shot libzstd call as above, and the fill path's.
  auto fill_call = [&](const std::string& body) { (void)ferry::codec::ZstdCompress(body, level); };
  auto after_idle = [&](size_t every, int sleep_us, const auto& call) {
    double best = 1e30;
    for (int pass = 0; pass < 3; ++pass) {
      Clock::duration sum{};
      for (size_t i = 0; i < eligible.size(); ++i) {
        if (i % every == 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
        auto t0 = Clock::now();
        call(eligible[i].body);
        sum += Clock::now() - t0;
      }
      best = std::min(best, Seconds(sum));
    }
    return best;
  };
  const double raw_short_idle = after_idle(1, 100, raw_call), raw_idle = after_idle(1, 1000, raw_call);
  const double enc_fill_idle = after_idle(1, 1000, fill_call), enc_batch_idle = after_idle(8, 1000, fill_call);
  ZSTD_freeCCtx(c);
  auto ns = [&](double s) { return logical_eligible ? s * 1e9 / static_cast<double>(logical_eligible) : 0; };
  std::fprintf(stderr, "one-shot libzstd: %.2f ns/B back to back, %.2f ns/B after 100 us idle, %.2f ns/B after 1 ms idle\n",
               ns(enc_raw), ns(raw_short_idle), ns(raw_idle));
  std::fprintf(stderr,
               "codec::ZstdCompress: %.2f ns/B with warm caches, %.2f ns/B cold, %.2f ns/B after 1 ms idle, "
               "%.2f ns/B in batches of 8 after 1 ms idle\n",
               ns(enc_fill_warm), ns(enc_fill_cold), ns(enc_fill_idle), ns(enc_batch_idle));
  ZSTD_DCtx* d = ZSTD_createDCtx();
  double dec_raw = BestOf3([&] {
    for (size_t i = 0; i < stored.size(); ++i) {
      out.resize(eligible[i].body.size());
      (void)ZSTD_decompressDCtx(d, out.data(), out.size(), stored[i].data(), stored[i].size());
    }
  });
  ZSTD_freeDCtx(d);

  double ratio_eligible = stored_eligible ? double(logical_eligible) / double(stored_eligible) : 0;
  double ratio_all = double(logical_all) / double(stored_eligible + as_received);
  std::printf("files %llu, %.1f MB; eligible %zu files, %.1f MB; stored as received %.1f MB\n",
              (unsigned long long)files, logical_all / 1e6, eligible.size(), logical_eligible / 1e6,
              as_received / 1e6);
  std::printf("| zstd level | eligible: logical / stored | all: logical / stored | encode ns/B ferry | encode ns/B libzstd | decode ns/B ferry | decode ns/B libzstd |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  std::printf("| %d | %.3fx | %.3fx | %.2f | %.2f | %.2f | %.2f |\n", level, ratio_eligible, ratio_all,
              ns(enc_ferry), ns(enc_raw), ns(dec_ferry), ns(dec_raw));
  return 0;
}
