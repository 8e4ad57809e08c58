#include "migrate/create.h"

#include <limits.h>
#include <stdlib.h>

#include <chrono>
#include <random>

#include "base/unix_time.h"
#include "base/utf8.h"
#include "migrate/policy.h"
#include "migrate/since_last.h"
#include "store/location.h"

namespace ferry::migrate {
namespace {

// The absolute, symlink-free form of a path that may not exist yet: the
// longest existing ancestor is resolved, the rest appended.
std::string Canonical(const std::string& path) {
  std::string p = path.empty() ? "." : path;
  std::string tail;
  for (;;) {
    char buf[PATH_MAX];
    if (::realpath(p.c_str(), buf) != nullptr) {
      std::string out(buf);
      if (!tail.empty()) out += (out == "/" ? "" : "/") + tail;
      return out;
    }
    size_t slash = p.find_last_of('/');
    std::string leaf = slash == std::string::npos ? p : p.substr(slash + 1);
    if (!leaf.empty() && leaf != ".") tail = tail.empty() ? leaf : leaf + "/" + tail;
    if (slash == std::string::npos) p = ".";
    else if (slash == 0) p = "/";
    else p = p.substr(0, slash);
    if (p == "/" && ::realpath("/", buf) != nullptr && tail.empty()) return "/";
  }
}

struct Probed {
  ListPage first;          // one key of it
  StoreFeatures features;
};

// Opens the store `loc` names and lists one key of it: proof that it
// exists and that the credentials work. Errors name the location as typed.
Result<Probed> Probe(const Location& loc, const OpenOptions& o, const std::string& typed) {
  auto store = OpenStore(loc, o);
  if (!store.ok()) return store.status().WithContext(typed);
  ListOptions probe;
  probe.prefix = loc.is_remote() ? AsPrefix(loc.key) : "";
  probe.max_keys = 1;
  auto page = (*store)->List(probe);
  if (!page.ok()) return page.status().WithContext(typed);
  return Probed{std::move(*page), (*store)->Features()};
}

// The job's first shard (state_store.h ShardRecord): a range shard where a
// remote source lists by ranges; else a prefix shard, delimited for a local
// directory's walk in parallel (the file system forgets nothing), flat for
// a remote store (Azure has no start-after): its delimiter listing is not
// trusted, unless --list-by prefixes asks for it.
state::ShardRecord FirstShard(const JobSpec& spec, const KeyMap& keys, bool remote,
                              bool range_listing) {
  state::ShardRecord s;
  s.prefix = keys.src_prefix;
  const bool ranged_part = !spec.range_after.empty() || !spec.range_upper.empty();
  const bool parallel = spec.list_concurrency > 1;
  if (remote && range_listing && !spec.top_level_only && !spec.list_by_prefixes &&
      (parallel || ranged_part)) {
    s.ranged = true;
    s.lower = spec.range_after;
    s.upper = spec.range_upper;
  } else if (spec.top_level_only || (parallel && (!remote || spec.list_by_prefixes))) {
    s.delimiter = "/";
  }
  return s;
}

// --since-last: the start of the last completed job of the same scope.
Status SinceLast(state::StateStore& store, const Location& src, JobSpec* spec) {
  if (!src.is_remote()) {
    return Status::InvalidArgument(
        "--since-last needs an object-store source: local files can keep old modification "
        "times (cp -p, rsync -t, tar), so a file older than the last job may still be new");
  }
  FERRY_ASSIGN_OR_RETURN(auto last, LastCompletedLike(store, *spec));
  if (last) {
    spec->since_ms = std::max<int64_t>(1, last->started_ms - spec->since_slack_ms);
    spec->since_job = last->id;
  }
  return Status::Ok();
}

}  // namespace

std::string NewJobId() {
  std::mt19937_64 rng{std::random_device{}()};
  char buf[16];
  std::snprintf(buf, sizeof(buf), "m%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return buf;
}

Status CheckNotInside(bool s3, const std::string& src_store, const std::string& src_prefix,
                      const std::string& dst_store, const std::string& dst_prefix) {
  if (src_store != dst_store) return Status::Ok();
  std::string what = s3 ? "prefix" : "directory";
  if (dst_prefix == src_prefix) {
    return Status::InvalidArgument("the destination is the source");
  }
  if (dst_prefix.compare(0, src_prefix.size(), src_prefix) == 0) {
    return Status::InvalidArgument("the destination is inside the source " + what +
                                   " (it would copy its own copies)");
  }
  if (src_prefix.compare(0, dst_prefix.size(), dst_prefix) == 0) {
    return Status::InvalidArgument("the source is inside the destination " + what +
                                   " (copies could overwrite source objects not yet copied)");
  }
  return Status::Ok();
}

Result<state::JobRecord> CreateJob(state::StateStore& store, JobSpec spec,
                                   const OpenOptions& open) {
  // The spec is kept as JSON text, which holds UTF-8 only: refuse what it
  // could not keep as given rather than keep something else.
  std::vector<std::pair<const char*, const std::string*>> texts = {
      {"the source", &spec.src},           {"the destination", &spec.dst},
      {"the prefix", &spec.filter_prefix}, {"the range", &spec.range_after},
      {"the range", &spec.range_upper},    {"--since", &spec.since_job}};
  for (const auto& g : spec.filter.include) texts.emplace_back("--include", &g);
  for (const auto& g : spec.filter.exclude) texts.emplace_back("--exclude", &g);
  for (const auto& [what, text] : texts) {
    if (!IsValidUtf8(*text)) {
      return Status::InvalidArgument(std::string(what) + " is not UTF-8 (a job keeps its paths and filters as JSON text)");
    }
  }
  FERRY_ASSIGN_OR_RETURN(Location src, ParseLocation(spec.src));
  FERRY_ASSIGN_OR_RETURN(Location dst, ParseLocation(spec.dst));
  for (const auto& g : spec.filter.include) FERRY_RETURN_IF_ERROR(ValidateGlob(g).WithContext("--include"));
  for (const auto& g : spec.filter.exclude) FERRY_RETURN_IF_ERROR(ValidateGlob(g).WithContext("--exclude"));
  if (spec.concurrency < 1) return Status::InvalidArgument("--concurrency must be at least 1");
  if (spec.list_concurrency < 1) return Status::InvalidArgument("--list-concurrency must be at least 1");
  if (spec.list_chunk < 1 || spec.list_chunk > 1000) {
    return Status::InvalidArgument("--list-chunk must be 1 to 1000");
  }
  if (spec.dry_run && spec.delete_extraneous) {
    return Status::InvalidArgument(
        "--delete does not go with --dry-run (`ferry migrate verify` lists what only the "
        "destination has)");
  }

  OpenOptions so = open;
  so.profile = spec.src_profile;
  OpenOptions dopt = open;
  dopt.profile = spec.dst_profile;
  // Overlap first: it needs no network and must stop before anything is made.
  if (!src.is_remote()) src.path = Canonical(src.path);
  if (!dst.is_remote()) dst.path = Canonical(dst.path);
  if (!src.is_remote() && !dst.is_remote()) {
    FERRY_RETURN_IF_ERROR(CheckNotInside(false, "", AsPrefix(src.path), "", AsPrefix(dst.path)));
  } else if (src.is_remote() && dst.is_remote()) {  // one bucket, whatever the credentials
    FERRY_RETURN_IF_ERROR(CheckNotInside(true, StoreIdentity(src, so), AsPrefix(src.key),
                                         StoreIdentity(dst, dopt), AsPrefix(dst.key)));
  }

  // Both stores must open and list before anything is recorded.
  FERRY_ASSIGN_OR_RETURN(Probed sprobe, Probe(src, so, spec.src));
  OpenOptions dcreate = dopt;
  dcreate.create_local = true;
  FERRY_ASSIGN_OR_RETURN(Probed dprobe, Probe(dst, dcreate, spec.dst));
  const ListPage& dfirst = dprobe.first;
  spec.dst_empty_at_start = dfirst.objects.empty() && dfirst.common_prefixes.empty();
  // Local sides are stored absolute, so a resume from another directory works.
  if (!src.is_remote()) spec.src = src.path;
  if (!dst.is_remote()) spec.dst = dst.path;
  if (spec.since_last) FERRY_RETURN_IF_ERROR(SinceLast(store, src, &spec));

  state::JobRecord job;
  job.id = NewJobId();
  job.src = spec.src;
  job.dst = spec.dst;
  job.spec = SpecToJson(spec);
  job.state = state::JobState::kCreated;
  job.created_ms = NowUnixMs();
  FERRY_RETURN_IF_ERROR(store.CreateJob(
      job, {FirstShard(spec, KeyMapFor(src, dst), src.is_remote(), sprobe.features.range_listing)}));
  return store.GetJob(job.id);
}

}  // namespace ferry::migrate
