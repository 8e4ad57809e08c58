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

// Every common prefix directly under `prefix`.
Result<std::vector<std::string>> TopPrefixes(ObjectStore& store, const std::string& prefix) {
  std::vector<std::string> out;
  ListOptions o;
  o.prefix = prefix;
  o.delimiter = "/";
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(ListPage page, store.List(o));
    for (auto& cp : page.common_prefixes) out.push_back(std::move(cp));
    if (!page.truncated) return out;
    o.continuation_token = page.next_continuation_token;
  }
}

}  // namespace

std::string DescribePart(const JobSpec& part) {
  if (part.range_after.empty() && part.range_upper.empty()) return part.src;
  return part.src + " (keys " +
         (part.range_after.empty() ? std::string("from the first") : "after \"" + part.range_after + "\"") +
         (part.range_upper.empty() ? std::string(" to the last") : " up to \"" + part.range_upper + "\"") +
         ")";
}

Result<std::vector<JobSpec>> SplitByPrefix(const JobSpec& whole, const OpenOptions& open) {
  FERRY_ASSIGN_OR_RETURN(Location src, ParseLocation(whole.src));
  FERRY_ASSIGN_OR_RETURN(Location dst, ParseLocation(whole.dst));
  OpenOptions so = open;
  so.profile = whole.src_profile;
  auto store = OpenStore(src, so);
  if (!store.ok()) return store.status().WithContext(whole.src);
  std::string prefix = src.is_remote() ? AsPrefix(src.key) : "";
  std::vector<JobSpec> parts;
  auto bounds = TopPrefixes(**store, prefix);
  if (!bounds.ok()) return bounds.status().WithContext(whole.src);
  if (src.is_remote() && (*store)->Features().range_listing && !whole.list_by_prefixes) {
    for (size_t i = 0; i <= bounds->size(); ++i) {
      JobSpec part = whole;
      part.range_after = i == 0 ? whole.range_after : (*bounds)[i - 1];
      part.range_upper = i < bounds->size() ? (*bounds)[i] : whole.range_upper;
      parts.push_back(std::move(part));
    }
    return parts;
  }
  JobSpec top = whole;
  top.top_level_only = true;
  top.list_concurrency = 1;
  parts.push_back(top);
  for (const auto& cp : *bounds) {
    std::string rel = cp.substr(prefix.size());  // "a/"
    JobSpec part = whole;
    part.src = Below(src, rel);
    part.dst = Below(dst, rel);
    part.filter_prefix = whole.filter_prefix + rel;
    parts.push_back(part);
  }
  return parts;
}

}  // namespace ferry::migrate
