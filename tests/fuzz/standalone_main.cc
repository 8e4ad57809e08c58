// A driver for libFuzzer entry points where libFuzzer is not linked (g++):
//   TARGET [-runs=N] [-seed=S] FILE_OR_DIR...
// Runs the target on every file given (directories: every file in them),
// then on N inputs made by mutating those files at random (seeded, so a
// failure reproduces with the same arguments). Mutations are byte-level
// (flip, set, insert, erase, duplicate, splice two inputs) plus insertions
// of HTTP tokens, so a request parser sees near-valid messages. On a crash
// the input is in crash-input (written before each run).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Run(const std::string& input) {
  {
    std::ofstream out("crash-input", std::ios::binary | std::ios::trunc);
    out << input;
  }
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::string Mutate(const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  static const char* kTokens[] = {"\r\n", "\r\n\r\n", ":", " ", ",", ";", "=", "\"", "0", "-1",
                                  "99999999999999999999", "Transfer-Encoding: chunked\r\n",
                                  "Content-Length: 5\r\n", "Range: bytes=", "If-None-Match: ",
                                  "Cache-Control: ", "Accept-Encoding: zstd;q=", "Host: ", "HTTP/1.1",
                                  "HTTP/1.0", "GET ", "HEAD ", "PURGE ", "http://", "%00", "\x00", "\t"};
  auto pick = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  std::string s = corpus[pick(corpus.size())];
  int steps = 1 + static_cast<int>(pick(4));
  for (int i = 0; i < steps; ++i) {
    size_t at = pick(s.size() + 1);
    switch (pick(7)) {
      case 0:
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1 << pick(8));
        break;
      case 1:
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng());
        break;
      case 2:
        s.insert(at, 1, static_cast<char>(rng()));
        break;
      case 3:
        s.erase(at, pick(16) + 1);
        break;
      case 4: {
        size_t from = pick(s.size() + 1);
        s.insert(at, s.substr(from, pick(32) + 1));
        break;
      }
      case 5: {
        const std::string& other = corpus[pick(corpus.size())];
        s = s.substr(0, at) + other.substr(pick(other.size() + 1));
        break;
      }
      default: {
        const char* t = kTokens[pick(std::size(kTokens))];
        s.insert(at, t, t[0] == '\0' ? 1 : std::strlen(t));
        break;
      }
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long runs = 0;
  unsigned long seed = 1;
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("-runs=", 0) == 0) {
      runs = std::strtol(a.c_str() + 6, nullptr, 10);
    } else if (a.rfind("-seed=", 0) == 0) {
      seed = std::strtoul(a.c_str() + 6, nullptr, 10);
    } else if (std::filesystem::is_directory(a)) {
      for (const auto& e : std::filesystem::directory_iterator(a)) {
        if (e.is_regular_file()) corpus.push_back(ReadFile(e.path()));
      }
    } else if (a[0] != '-') {
      corpus.push_back(ReadFile(a));
    }
  }
  if (corpus.empty()) corpus.emplace_back();
  for (const auto& input : corpus) Run(input);
  std::mt19937_64 rng(seed);
  for (long i = 0; i < runs; ++i) Run(Mutate(corpus, rng));
  std::remove("crash-input");
  std::printf("%zu corpus inputs and %ld mutations ran\n", corpus.size(), runs);
  return 0;
}
