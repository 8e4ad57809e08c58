// ferry cp SRC DST: copies one object or file, in parallel parts when large.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cli/cli_util.h"
#include "cli/registry.h"
#include "ops/copy.h"

namespace ferry::cli {
namespace {

struct CpArgs {
  std::string src, dst;
  std::string src_profile, dst_profile;
  std::string threshold = "64M", part_size = "16M";
  int concurrency = 8;
  std::string content_type, content_encoding, content_disposition, cache_control,
      content_language, expires;
  std::vector<std::string> metadata;  // k=v
  bool quiet = false;
  bool no_server_side = false;
  GlobalOptions global;
};

std::string BaseName(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  size_t slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Headers given on the command line, or nullopt to keep the source's.
Result<std::optional<ObjectHeaders>> HeadersFromFlags(const CpArgs& a) {
  bool any = !a.content_type.empty() || !a.content_encoding.empty() ||
             !a.content_disposition.empty() || !a.cache_control.empty() ||
             !a.content_language.empty() || !a.expires.empty() || !a.metadata.empty();
  if (!any) return std::optional<ObjectHeaders>();
  ObjectHeaders h;
  h.content_type = a.content_type;
  h.content_encoding = a.content_encoding;
  h.content_disposition = a.content_disposition;
  h.cache_control = a.cache_control;
  h.content_language = a.content_language;
  h.expires = a.expires;
  for (const auto& kv : a.metadata) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("--metadata wants KEY=VALUE, got \"" + kv + "\"");
    }
    std::string k = kv.substr(0, eq);
    for (auto& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    h.user[k] = kv.substr(eq + 1);
  }
  return std::optional<ObjectHeaders>(std::move(h));
}

int RunCp(const CpArgs& a) {
  auto src = ParseLocation(a.src);
  if (!src.ok()) return Fail("", src.status());
  auto dst = ParseLocation(a.dst);
  if (!dst.ok()) return Fail("", dst.status());

  CopyOptions co;
  auto threshold = ParseSize(a.threshold);
  if (!threshold.ok()) return Fail("--multipart-threshold", threshold.status());
  auto part = ParseSize(a.part_size);
  if (!part.ok()) return Fail("--part-size", part.status());
  if (a.concurrency < 1) return Fail("--concurrency", Status::InvalidArgument("must be at least 1"));
  co.parts.threshold = *threshold;
  co.parts.part_size = *part;
  co.concurrency = a.concurrency;
  co.allow_server_side = !a.no_server_side;
  auto headers = HeadersFromFlags(a);
  if (!headers.ok()) return Fail("", headers.status());
  co.headers = *headers;

  if (src->is_remote() && (src->key.empty() || src->key.back() == '/')) {
    return Fail(src->text, Status::InvalidArgument("names a prefix, not an object"));
  }
  std::string src_name = BaseName(src->is_remote() ? src->key : src->path);
  // A destination that is a prefix or a directory receives the source's name.
  Location d = *dst;
  if (d.is_remote() && d.ends_with_slash()) d.key += src_name;
  if (!d.is_remote() && (d.ends_with_slash() || IsDir(d.path))) {
    if (!d.path.empty() && d.path.back() != '/') d.path += '/';
    d.path += src_name;
  }
  std::string dst_text = d.is_remote() ? d.Root() + "/" + d.key : d.path;

  // Each side gets its own store and connection pool.
  OpenOptions src_open = a.global.ToOpenOptions(a.src_profile);
  OpenOptions dst_open = a.global.ToOpenOptions(a.dst_profile);
  src_open.http.io_threads = dst_open.http.io_threads = std::max(2, std::min(a.concurrency, 8));
  auto t0 = std::chrono::steady_clock::now();
  Result<CopyResult> r = Status::Internal("unreachable");
  std::string where;
  if (!src->is_remote() && !d.is_remote()) {
    where = src->text;
    r = CopyLocalFile(src->path, d.path);
  } else if (!src->is_remote()) {
    auto store = OpenStore(d, dst_open);
    if (!store.ok()) return Fail(dst_text, store.status());
    where = dst_text;
    struct stat st;
    if (::stat(src->path.c_str(), &st) != 0) {
      return Fail(src->text, Status::FromErrno(errno, "cannot read"));
    }
    r = UploadFile(src->path, **store, d.key, co);
  } else if (!d.is_remote()) {
    auto store = OpenStore(*src, src_open);
    if (!store.ok()) return Fail(src->text, store.status());
    where = src->text;
    r = DownloadFile(**store, src->key, d.path, co);  // local errors name the file
  } else {
    auto s = OpenStore(*src, src_open);
    if (!s.ok()) return Fail(src->text, s.status());
    auto t = OpenStore(d, dst_open);
    if (!t.ok()) return Fail(dst_text, t.status());
    bool same = StoreIdentity(*src, src_open) == StoreIdentity(d, dst_open) &&
                a.src_profile == a.dst_profile;
    where = src->text;
    r = CopyObject(**s, src->key, **t, d.key, same, co);
  }
  if (!r.ok()) return Fail(where, r.status());
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!a.quiet && ::isatty(STDERR_FILENO)) {
    std::fprintf(stderr, "copied %s -> %s: %s in %.2fs (%.1f MiB/s)%s\n", src->text.c_str(),
                 dst_text.c_str(), HumanBytes(r->bytes).c_str(), secs,
                 secs > 0 ? static_cast<double>(r->bytes) / (1 << 20) / secs : 0.0,
                 r->server_side ? ", server-side" : "");
  }
  return 0;
}

}  // namespace

void AddCpCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<CpArgs>();
  auto* cmd = app.add_subcommand("cp", "Copy one object or file: SRC and DST are s3://bucket/key, gs://bucket/key, azure://account/container/key or local paths");
  cmd->add_option("src", a->src, "Source object (s3://, gs:// or azure:// URL) or local file")->required();
  cmd->add_option("dst", a->dst, "Destination key, prefix/, local file or directory")->required();
  cmd->add_option("--src-profile", a->src_profile, "AWS profile for the source");
  cmd->add_option("--dst-profile", a->dst_profile, "AWS profile for the destination");
  cmd->add_option("--multipart-threshold", a->threshold, "Multipart at or above this size")
      ->capture_default_str();
  cmd->add_option("--part-size", a->part_size, "Part size (raised to fit 10,000 parts)")
      ->capture_default_str();
  cmd->add_option("--concurrency", a->concurrency, "Parts in flight")->capture_default_str();
  cmd->add_option("--content-type", a->content_type, "Content-Type of the destination");
  cmd->add_option("--content-encoding", a->content_encoding, "Content-Encoding");
  cmd->add_option("--content-disposition", a->content_disposition, "Content-Disposition");
  cmd->add_option("--cache-control", a->cache_control, "Cache-Control");
  cmd->add_option("--content-language", a->content_language, "Content-Language");
  cmd->add_option("--expires", a->expires, "Expires (an HTTP date)");
  cmd->add_option("--metadata", a->metadata, "User metadata KEY=VALUE (repeatable)");
  cmd->add_flag("--no-server-side-copy", a->no_server_side,
                "Stream through ferry even when the store could copy by itself");
  cmd->add_flag("-q,--quiet", a->quiet, "No summary line");
  AddGlobalOptions(*cmd, &a->global);
  cmd->callback([a, exit_code] { *exit_code = RunCp(*a); });
}

}  // namespace ferry::cli
