// A driver for libFuzzer entry points where libFuzzer is not linked (g++):
//   TARGET [-runs=N] [-seed=S] [-dict=FILE] FILE_OR_DIR...
// Runs the target on every file given (directories: every file in them),
// then on N inputs made by mutating those files at random (seeded, so a
// failure reproduces with the same arguments). Mutations are byte-level
// (flip, set, insert, erase, duplicate, splice two inputs, little-endian
// integers at their edges) plus insertions of tokens: the dictionary's
// (libFuzzer's format, the same file a libFuzzer run takes), else HTTP's,
// so a parser sees near-valid messages. On a crash the input is in
// crash-TARGET (written by a handler of the fatal signals).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The input being run and where it goes if the target dies on it: the
// handler writes it with async-signal-safe calls only, so a run costs no
// file write.
std::string crash_file = "crash-input";
const std::string* current = nullptr;

void OnFatalSignal(int sig) {
  if (current != nullptr) {
    int fd = ::open(crash_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      for (size_t done = 0; done < current->size();) {
        ssize_t n = ::write(fd, current->data() + done, current->size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      ::close(fd);
    }
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void Run(const std::string& input) {
  current = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  current = nullptr;
}

// A libFuzzer dictionary: one token per line, `name="value"` or `"value"`,
// with \\, \" and \xNN escapes; # comments. Malformed lines are skipped.
std::vector<std::string> ReadDictionary(const std::string& path) {
  std::vector<std::string> tokens;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    size_t open = line.find('"');
    size_t close = line.rfind('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open) continue;
    std::string t;
    for (size_t i = open + 1; i < close; ++i) {
      if (line[i] != '\\' || i + 1 >= close) {
        t += line[i];
      } else if (line[i + 1] == 'x' && i + 3 < close) {
        t += static_cast<char>(std::stoi(line.substr(i + 2, 2), nullptr, 16));
        i += 3;
      } else {
        t += line[++i];
      }
    }
    if (!t.empty()) tokens.push_back(t);
  }
  return tokens;
}

std::vector<std::string> HttpTokens() {
  static const char* kTokens[] = {"\r\n", "\r\n\r\n", ":", " ", ",", ";", "=", "\"", "0", "-1",
                                  "99999999999999999999", "Transfer-Encoding: chunked\r\n",
                                  "Content-Length: 5\r\n", "Range: bytes=", "If-None-Match: ",
                                  "Cache-Control: ", "Accept-Encoding: zstd;q=", "Host: ", "HTTP/1.1",
                                  "HTTP/1.0", "GET ", "HEAD ", "PURGE ", "http://", "%00", "\t"};
  std::vector<std::string> out(std::begin(kTokens), std::end(kTokens));
  out.emplace_back(1, '\0');
  return out;
}

std::string Mutate(const std::vector<std::string>& corpus, const std::vector<std::string>& tokens,
                   std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  std::string s = corpus[pick(corpus.size())];
  int steps = 1 + static_cast<int>(pick(4));
  for (int i = 0; i < steps; ++i) {
    size_t at = pick(s.size() + 1);
    switch (pick(8)) {
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
      case 6: {  // a 1, 2, 4 or 8-byte integer at an edge: 0, 1, max, max - 1, sign bit
        static const uint64_t kEdges[] = {0, 1, ~0ull, ~0ull - 1, 1ull << 63, 0x7fffffff, 0x80000000};
        uint64_t v = kEdges[pick(std::size(kEdges))];
        size_t width = size_t{1} << pick(4);
        if (s.size() < width) break;
        size_t where = pick(s.size() - width + 1);
        for (size_t b = 0; b < width; ++b) s[where + b] = static_cast<char>(v >> (8 * b));
        break;
      }
      default: {
        s.insert(at, tokens[pick(tokens.size())]);
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
  std::vector<std::string> tokens;
  crash_file = "crash-" + std::filesystem::path(argv[0]).filename().string();  // targets may run at once
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, OnFatalSignal);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("-runs=", 0) == 0) {
      runs = std::strtol(a.c_str() + 6, nullptr, 10);
    } else if (a.rfind("-seed=", 0) == 0) {
      seed = std::strtoul(a.c_str() + 6, nullptr, 10);
    } else if (a.rfind("-dict=", 0) == 0) {
      tokens = ReadDictionary(a.substr(6));
    } else if (std::filesystem::is_directory(a)) {
      // In name order, so a seed reproduces the same inputs on any machine.
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(a)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) corpus.push_back(ReadFile(f));
    } else if (a[0] != '-') {
      corpus.push_back(ReadFile(a));
    }
  }
  if (corpus.empty()) corpus.emplace_back();
  if (tokens.empty()) tokens = HttpTokens();
  for (const auto& input : corpus) Run(input);
  std::mt19937_64 rng(seed);
  for (long i = 0; i < runs; ++i) Run(Mutate(corpus, tokens, rng));
  std::printf("%zu corpus inputs and %ld mutations ran\n", corpus.size(), runs);
  return 0;
}
