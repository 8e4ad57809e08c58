#include "listing_quirks.h"

#include <algorithm>
#include <array>
#include <utility>

namespace ferry::s3server {
namespace {

constexpr std::string_view kObjectSuffix = "._S3rver_object";
constexpr std::string_view kDirectoryEnd("\x00\x01", 2);
constexpr char kEscapedZero = '\xff';

constexpr std::array<std::pair<std::string_view, bool ListQuirks::*>, 3> kQuirkNames = {{
    {"forget-prefixes", &ListQuirks::forget_prefixes},
    {"ignore-start-after", &ListQuirks::ignore_start_after},
    {"unordered", &ListQuirks::unordered},
}};

void AppendEscaped(std::string_view name, std::string* out) {
  for (char c : name) {
    out->push_back(c);
    if (c == '\0') out->push_back(kEscapedZero);
  }
}

// The common prefix `key` rolls up into, or "" if it is listed itself.
std::string CommonPrefixOf(const std::string& key, const ListRequest& request) {
  if (request.delimiter.empty()) return {};
  size_t pos = key.find(request.delimiter, request.prefix.size());
  if (pos == std::string::npos) return {};
  return key.substr(0, pos + request.delimiter.size());
}

// Whether `key`, under `common`, makes the listing show `common`: any key
// does, and under forget-prefixes only one directly under it.
bool ShowsPrefix(const std::string& key, const std::string& common, std::string_view delimiter,
                 bool forget_prefixes) {
  return !forget_prefixes || key.find(delimiter, common.size()) == std::string::npos;
}

// The keys a walk-order listing considers, before its token: under the
// prefix (the caller's walk range holds a few that are not) and after
// start-after in byte order.
bool Considered(const std::string& key, const ListRequest& request) {
  return std::string_view(key).starts_with(request.prefix) && key > request.start_after;
}

// The first key in walk order, among those the listing considers (token
// aside), at which `common` is listed. Reads the walk keys from where
// `common`'s range starts up to that key.
std::string FirstKeyShowing(const WalkIndex& walk, const std::string& common,
                            const ListRequest& request, bool forget_prefixes) {
  const std::string range = WalkPrefix(common);
  const std::set<std::string>& keys = walk.walk_keys();
  for (auto it = keys.lower_bound(range); it != keys.end() && std::string_view(*it).starts_with(range); ++it) {
    std::string key = KeyFromWalkKey(*it);
    if (std::string_view(key).starts_with(common) && Considered(key, request) &&
        ShowsPrefix(key, common, request.delimiter, forget_prefixes)) {
      return key;
    }
  }
  return {};
}

ListResult ListInWalkOrder(const KeyIndex& index, const WalkIndex& walk, const ListRequest& request,
                           bool forget_prefixes) {
  ListResult result;
  const int max_keys = std::clamp(request.max_keys, 0, 1000);
  if (max_keys == 0) return result;

  const std::string range = WalkPrefix(request.prefix);
  const std::set<std::string>& keys = walk.walk_keys();
  auto it = keys.lower_bound(range);
  if (request.token) {
    std::string resume = WalkKey(*request.token);
    if (resume >= range) it = keys.upper_bound(resume);
  }
  // The last common prefix whose place was looked up: the keys after its
  // first one (usually right behind it) are passed over without a lookup.
  std::string placed;
  int emitted = 0;
  for (; it != keys.end() && std::string_view(*it).starts_with(range); ++it) {
    std::string key = KeyFromWalkKey(*it);
    if (!Considered(key, request)) continue;
    std::string common = CommonPrefixOf(key, request);
    if (!common.empty()) {
      if (!request.v2 && common <= request.start_after) continue;  // V1 marker
      if (common == placed) continue;
      if (!ShowsPrefix(key, common, request.delimiter, forget_prefixes)) continue;
      placed = common;
      if (FirstKeyShowing(walk, common, request, forget_prefixes) != key) continue;
    }
    const ObjectRecord* record = nullptr;
    if (common.empty()) {
      auto found = index.find(key);
      if (found == index.end()) continue;  // only if `walk` was not kept in step
      record = &found->second;
    }
    if (emitted == max_keys) {
      result.truncated = true;
      break;
    }
    ++emitted;
    if (common.empty()) {
      result.objects.push_back(*record);
      result.last_item = key;
    } else {
      result.common_prefixes.push_back(common);
      result.last_item = std::move(common);
    }
    result.resume_after = std::move(key);
  }
  if (!result.truncated) result.resume_after.clear();
  return result;
}

}  // namespace

Status AddListQuirk(std::string_view name, ListQuirks* quirks) {
  for (const auto& [quirk, flag] : kQuirkNames) {
    if (quirk == name) {
      quirks->*flag = true;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("unknown list quirk '" + std::string(name) +
                                 "' (forget-prefixes|ignore-start-after|unordered)");
}

std::vector<std::string_view> ListQuirkNames(const ListQuirks& quirks) {
  std::vector<std::string_view> names;
  for (const auto& [name, flag] : kQuirkNames) {
    if (quirks.*flag) names.push_back(name);
  }
  return names;
}

std::string WalkPrefix(std::string_view prefix) {
  std::string out;
  out.reserve(prefix.size() + kObjectSuffix.size() + 8);
  size_t start = 0;
  for (size_t slash; (slash = prefix.find('/', start)) != std::string_view::npos;
       start = slash + 1) {
    AppendEscaped(prefix.substr(start, slash - start), &out);
    out += kDirectoryEnd;
  }
  AppendEscaped(prefix.substr(start), &out);
  return out;
}

std::string WalkKey(std::string_view key) {
  std::string out = WalkPrefix(key);
  out += kObjectSuffix;
  return out;
}

std::string KeyFromWalkKey(std::string_view walk_key) {
  walk_key.remove_suffix(std::min(walk_key.size(), kObjectSuffix.size()));
  std::string key;
  key.reserve(walk_key.size());
  for (size_t i = 0; i < walk_key.size(); ++i) {
    if (walk_key[i] == '\0' && i + 1 < walk_key.size()) {
      ++i;
      key.push_back(walk_key[i] == kEscapedZero ? '\0' : '/');
    } else {
      key.push_back(walk_key[i]);
    }
  }
  return key;
}

WalkIndex::WalkIndex(const KeyIndex& index) {
  std::vector<std::string> sorted;
  sorted.reserve(index.size());
  for (const auto& [key, record] : index) sorted.push_back(WalkKey(key));
  std::sort(sorted.begin(), sorted.end());
  // From a sorted range the set is built in linear time.
  walk_keys_.insert(std::make_move_iterator(sorted.begin()), std::make_move_iterator(sorted.end()));
}

void WalkIndex::Add(std::string_view key) { walk_keys_.insert(WalkKey(key)); }

void WalkIndex::Remove(std::string_view key) { walk_keys_.erase(WalkKey(key)); }

ListResult ListWithQuirks(const KeyIndex& index, const WalkIndex* walk, const ListRequest& request,
                          ListQuirks quirks) {
  if (quirks.ignore_start_after && request.v2 && !request.start_after.empty()) {
    ListRequest ignored = request;
    ignored.start_after.clear();
    return ListWithQuirks(index, walk, ignored, quirks);
  }
  if (quirks.unordered) return ListInWalkOrder(index, *walk, request, quirks.forget_prefixes);
  ListParams params = ByteOrderParams(request);
  params.forget_prefixes = quirks.forget_prefixes;
  return ListKeys(index, params);
}

}  // namespace ferry::s3server
