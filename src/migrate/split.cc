#include "migrate/split.h"

#include "migrate/policy.h"
#include "store/location.h"

namespace ferry::migrate {
namespace {

// `loc` with `rel` (a relative prefix ending in '/') appended.
std::string Below(const Location& loc, const std::string& rel) {
  if (loc.is_remote()) return loc.Root() + "/" + AsPrefix(loc.key) + rel;
  std::string p = loc.path;
  if (p.empty() || p.back() != '/') p += '/';
  return p + rel;
}

}  // namespace

Result<std::vector<JobSpec>> SplitByPrefix(const JobSpec& whole, const OpenOptions& open) {
  FERRY_ASSIGN_OR_RETURN(Location src, ParseLocation(whole.src));
  FERRY_ASSIGN_OR_RETURN(Location dst, ParseLocation(whole.dst));
  OpenOptions so = open;
  so.profile = whole.src_profile;
  auto store = OpenStore(src, so);
  if (!store.ok()) return store.status().WithContext(whole.src);
  std::string prefix = src.is_remote() ? AsPrefix(src.key) : "";
  std::vector<JobSpec> parts;
  JobSpec top = whole;
  top.top_level_only = true;
  top.list_concurrency = 1;
  parts.push_back(top);
  ListOptions o;
  o.prefix = prefix;
  o.delimiter = "/";
  for (;;) {
    auto page = (*store)->List(o);
    if (!page.ok()) return page.status().WithContext(whole.src);
    for (const auto& cp : page->common_prefixes) {
      std::string rel = cp.substr(prefix.size());  // "a/"
      JobSpec part = whole;
      part.src = Below(src, rel);
      part.dst = Below(dst, rel);
      part.filter_prefix = whole.filter_prefix + rel;
      parts.push_back(part);
    }
    if (!page->truncated) break;
    o.continuation_token = page->next_continuation_token;
  }
  return parts;
}

}  // namespace ferry::migrate
