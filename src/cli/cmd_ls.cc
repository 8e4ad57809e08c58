// ferry ls LOCATION [-r] [--json]: lists objects under a prefix or directory.
#include <sys/stat.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "cli/cli_util.h"
#include "cli/registry.h"

namespace ferry::cli {
namespace {

struct LsArgs {
  std::string location;
  bool recursive = false;
  bool json = false;
  GlobalOptions global;
};

// UTC time in strftime `format`.
std::string FormatUtc(TimePoint t, const char* format) {
  std::time_t s = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// One listing line; `cut` bytes of the key's front are not shown.
void PrintObject(const ObjectInfo& o, bool json, size_t cut) {
  if (json) {
    nlohmann::json j{{"key", o.key}, {"size", o.size}, {"etag", o.etag},
                     {"last_modified", FormatUtc(o.last_modified, "%Y-%m-%dT%H:%M:%SZ")}};
    std::printf("%s\n", DumpJson(j).c_str());
  } else {
    std::printf("%s %10llu %s\n", FormatUtc(o.last_modified, "%Y-%m-%d %H:%M:%S").c_str(),
                static_cast<unsigned long long>(o.size), o.key.substr(cut).c_str());
  }
}

int RunLs(const LsArgs& a) {
  auto loc = ParseLocation(a.location);
  if (!loc.ok()) return Fail("", loc.status());
  OpenOptions oo = a.global.ToOpenOptions("");
  oo.http.io_threads = 1;
  std::string prefix = loc->is_remote() ? loc->key : "";
  if (!loc->is_remote()) {
    struct stat st;
    if (::stat(loc->path.c_str(), &st) != 0) {
      return Fail(loc->text, Status::FromErrno(errno, "cannot list"));
    }
    if (!S_ISDIR(st.st_mode)) {  // one file: list just it, as ls(1) does
      ObjectInfo o;
      o.key = loc->path;
      o.size = static_cast<uint64_t>(st.st_size);
      o.last_modified = std::chrono::system_clock::from_time_t(st.st_mtime);
      PrintObject(o, a.json, 0);
      return 0;
    }
  }
  auto store = OpenStore(*loc, oo);
  if (!store.ok()) return Fail(loc->text, store.status());
  ListOptions lo;
  lo.prefix = prefix;
  lo.delimiter = a.recursive ? "" : "/";
  // Non-recursive names are shown relative to the prefix's "directory", as
  // aws s3 ls does; recursive listings show whole keys.
  size_t cut = a.recursive ? 0 : (prefix.rfind('/') == std::string::npos ? 0 : prefix.rfind('/') + 1);
  for (;;) {
    auto page = (*store)->List(lo);
    if (!page.ok()) return Fail(loc->text, page.status());
    for (const auto& p : page->common_prefixes) {
      if (a.json) {
        std::printf("%s\n", DumpJson({{"prefix", p}}).c_str());
      } else {
        std::printf("%30s %s\n", "PRE", p.substr(cut).c_str());
      }
    }
    for (const auto& o : page->objects) PrintObject(o, a.json, cut);
    if (!page->truncated) break;
    lo.continuation_token = page->next_continuation_token;
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

void AddLsCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<LsArgs>();
  auto* cmd = app.add_subcommand("ls", "List objects under s3://bucket/prefix, gs://bucket/prefix, azure://account/container/prefix or a local directory");
  cmd->add_option("location", args->location, "s3://bucket[/prefix], gs://bucket[/prefix], azure://account/container[/prefix] or a local directory")
      ->required();
  cmd->add_flag("-r,--recursive", args->recursive, "List every key below the prefix");
  cmd->add_flag("--json", args->json, "One JSON object per line");
  AddGlobalOptions(*cmd, &args->global);
  cmd->callback([args, exit_code] { *exit_code = RunLs(*args); });
}

}  // namespace ferry::cli
