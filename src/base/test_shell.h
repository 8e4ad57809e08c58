#pragma once
// For tests that drive peers we did not write (qemu-img, nbdinfo, openssl):
// run a shell command and take its exit code and output (stdout and stderr
// together), ask whether a tool is installed, read a file whole; skip a
// test whose peer is missing, except in CI.

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace ferry {

struct ShellRun {
  int code = -1;  // the exit status; -1 when it did not exit normally
  std::string out;
};

inline ShellRun Shell(const std::string& command) {
  ShellRun r;
  FILE* p = ::popen(("( " + command + " ) 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline bool HaveTool(const std::string& tool) { return Shell("command -v " + tool).code == 0; }

// True where every peer must be installed (FERRY_REQUIRE_PEERS=1: CI).
inline bool PeersRequired() {
  const char* v = std::getenv("FERRY_REQUIRE_PEERS");
  return v != nullptr && std::string(v) == "1";
}

// In a GoogleTest test or fixture: skips it when a peer it drives is
// missing, or fails it under FERRY_REQUIRE_PEERS=1.
#define FERRY_SKIP_WITHOUT_PEER(why)                                         \
  do {                                                                      \
    if (::ferry::PeersRequired()) {                                         \
      GTEST_FAIL() << (why) << " (FERRY_REQUIRE_PEERS=1: no skipping)";     \
    } else {                                                                \
      GTEST_SKIP() << (why);                                                \
    }                                                                       \
  } while (0)

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace ferry
