#pragma once
// For tests: a fresh directory under $TMPDIR (or /tmp), removed with
// everything in it when the object goes.
//
//   TestTempDir dir;
//   std::string path = dir.path() + "/state.db";

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace ferry {

class TestTempDir {
 public:
  TestTempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ferry-test-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl);
    path_ = tmpl;
  }
  ~TestTempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TestTempDir(const TestTempDir&) = delete;
  TestTempDir& operator=(const TestTempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace ferry
