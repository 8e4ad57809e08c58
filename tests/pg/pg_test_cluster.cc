#include "pg/pg_test_cluster.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "state/pg_db.h"

namespace ferry::testing_pg {
namespace {

std::mutex mu;
std::string conninfo;  // guarded by mu
std::string cluster_dir;
std::string error;
bool tried = false;
bool own = false;  // started by this process: stopped at exit

void StopOwn() {
  if (!own) return;
  RunClusterScript("stop", cluster_dir, nullptr);
  std::system(("rm -rf '" + cluster_dir + "'").c_str());
}

// Under mu.
void Start() {
  if (tried) return;
  tried = true;
  if (const char* f = std::getenv("FERRY_PG_CONNINFO_FILE")) {
    std::ifstream in(f);
    std::getline(in, conninfo);
    if (const char* d = std::getenv("FERRY_PG_CLUSTER_DIR")) cluster_dir = d;
    if (conninfo.empty()) error = "the PostgreSQL fixture did not start (is postgresql installed?)";
    return;
  }
  char tmpl[] = "/tmp/ferry-pg-test.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    error = "cannot make a temporary directory";
    return;
  }
  cluster_dir = tmpl;
  std::string out;
  int st = RunClusterScript("start", cluster_dir, &out);
  if (st != 0) {
    error = st == 77 ? "PostgreSQL is not installed (make setup installs it)"
                     : "could not start a PostgreSQL cluster";
    return;
  }
  conninfo = out;
  own = true;
  std::atexit(StopOwn);
}

}  // namespace

int RunClusterScript(const std::string& command, const std::string& dir, std::string* out) {
  std::string cmd =
      std::string("'") + FERRY_PG_CLUSTER_SCRIPT + "' " + command + " '" + dir + "' 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof(buf), p)) text += buf;
  int rc = ::pclose(p);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (out != nullptr) *out = text;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string ClusterConninfo(std::string* why) {
  std::lock_guard<std::mutex> lock(mu);
  Start();
  if (conninfo.empty()) *why = error;
  return conninfo;
}

std::string FreshDatabase(std::string* why) {
  std::string base = ClusterConninfo(why);
  if (base.empty()) return "";
  static std::atomic<int> n{0};
  std::string name = "t" + std::to_string(::getpid()) + "_" + std::to_string(n++);
  auto admin = state::pg::Conn::Open(base);
  if (!admin.ok()) {
    *why = admin.status().ToString();
    return "";
  }
  if (Status s = (*admin)->ExecScript("CREATE DATABASE " + name); !s.ok()) {
    *why = s.ToString();
    return "";
  }
  // A later dbname overrides the first.
  return base + " dbname=" + name;
}

PrivateCluster::PrivateCluster() {
  char tmpl[] = "/tmp/ferry-pg-private.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    why_ = "mkdtemp failed";
    return;
  }
  dir_ = tmpl;
  int st = RunClusterScript("start", dir_, &conninfo_);
  missing_ = st == 77;
  if (st != 0) {
    why_ = "the cluster in " + dir_ + " did not start (status " + std::to_string(st) + ")";
    conninfo_.clear();
  }
}

PrivateCluster::~PrivateCluster() {
  if (dir_.empty()) return;
  if (!conninfo_.empty()) RunClusterScript("stop", dir_, nullptr);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

bool PrivateCluster::Restart() { return RunClusterScript("restart", dir_, nullptr) == 0; }

}  // namespace ferry::testing_pg
