#pragma once
// What the fuzz targets share: a failed invariant aborts with its name (so
// both libFuzzer and the standalone driver report the input), a temporary
// directory that lives as long as the process, and a reader that splits
// one input into the pieces a target needs.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace ferry::fuzz {

inline void Check(bool ok, const char* target, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "%s: invariant broken: %s\n", target, what);
    abort();
  }
}

// A directory under /tmp for the process's life, removed at exit.
inline const std::string& ProcessTempDir(const char* name) {
  static const std::string dir = [name] {
    std::string tmpl = std::string("/tmp/ferry-fuzz-") + name + ".XXXXXX";
    if (!mkdtemp(tmpl.data())) abort();
    std::string d = tmpl;
    static std::string to_remove = d;
    atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(to_remove, ec);
    });
    return d;
  }();
  return dir;
}

// Consumes an input front to back; past its end every call gives zeros or
// empty strings, so a target never reads out of bounds.
class InputReader {
 public:
  InputReader(const uint8_t* data, size_t size) : in_(reinterpret_cast<const char*>(data), size) {}
  explicit InputReader(std::string_view in) : in_(in) {}

  uint8_t Byte() {
    if (in_.empty()) return 0;
    uint8_t b = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return b;
  }
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(Byte()) << (8 * i);
    return v;
  }
  // Up to the next `sep` (not included; consumed), or the rest.
  std::string_view Until(char sep) {
    size_t at = in_.find(sep);
    std::string_view piece = in_.substr(0, at);
    in_.remove_prefix(at == std::string_view::npos ? in_.size() : at + 1);
    return piece;
  }
  std::string_view Take(size_t n) {
    std::string_view piece = in_.substr(0, n);
    in_.remove_prefix(piece.size());
    return piece;
  }
  std::string_view Rest() { return Take(in_.size()); }
  bool empty() const { return in_.empty(); }
  size_t size() const { return in_.size(); }

 private:
  std::string_view in_;
};

}  // namespace ferry::fuzz
