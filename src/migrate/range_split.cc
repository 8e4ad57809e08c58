#include "migrate/range_split.h"

#include "migrate/key_range.h"

namespace ferry::migrate {

namespace {

// The characters (code points) of a valid UTF-8 string.
size_t CharCount(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

}  // namespace

Result<SplitSearch> FindSplit(const ListFn& list, const std::string& prefix,
                              const std::string& after, const std::string& upper,
                              int max_probes) {
  SplitSearch out;
  // The exclusive top of the search: the range's bound, else the end of the
  // prefix's keys (none for the whole bucket).
  std::optional<std::string> hi;
  if (!upper.empty()) {
    hi = upper;
  } else {
    hi = PrefixEnd(prefix);
  }
  // The bottom: no split point may be at or below the prefix itself.
  const std::string lo = after.empty() || after < prefix ? prefix : after;
  // Whether the range has keys above s: 1 yes, 0 no, -1 a broken promise.
  auto above = [&](const std::string& s) -> Result<int> {
    if (hi && s >= *hi) return 0;
    ListOptions o;
    o.prefix = prefix;
    o.start_after = s;
    o.max_keys = 1;
    ++out.probes;
    FERRY_ASSIGN_OR_RETURN(ListPage page, list(o));
    RangePageCheck check = CheckRangePage(page.objects, prefix, s, upper);
    if (!check.in_order) {
      out.disorder = check.why;
      return -1;
    }
    return check.keep > 0 ? 1 : 0;
  };
  // 1. Keys are usually numbered or named alike, so the remaining ones look
  // like the last one listed: the coarsest successor of one of its
  // characters with keys above it ("o001" after "o00001999") splits off
  // the top of the range. Successors descend, so keys lie above every one
  // from some point on: a binary search finds the first.
  std::vector<std::string> t = SuccessorBounds(lo, CharCount(prefix));
  size_t a = 0, b = t.size();
  while (a < b && out.probes < max_probes) {
    size_t m = (a + b) / 2;
    FERRY_ASSIGN_OR_RETURN(int r, above(t[m]));
    if (r < 0) return out;
    if (r > 0) {
      b = m;
    } else {
      a = m + 1;
    }
  }
  if (b < t.size()) {  // b moved only to successors found with keys above
    out.at = t[b];
    return out;
  }
  // 2. Else MidKey probes from the top down.
  while (out.probes < max_probes) {
    auto s = MidKey(lo, hi ? std::optional<std::string_view>(*hi) : std::nullopt);
    if (!s) return out;
    FERRY_ASSIGN_OR_RETURN(int r, above(*s));
    if (r < 0) return out;
    if (r > 0) {
      out.at = std::move(*s);
      return out;
    }
    hi = std::move(*s);  // nothing above it in the range: look lower
  }
  return out;
}

Result<SplitPoints> PrefixSplitPoints(const ListFn& list, const std::string& prefix,
                                      const std::string& after, const std::string& upper,
                                      size_t max) {
  SplitPoints out;
  auto below = [&](const std::string& p) -> Result<std::vector<std::string>> {
    ListOptions o;
    o.prefix = p;
    o.delimiter = "/";
    o.max_keys = 1000;
    FERRY_ASSIGN_OR_RETURN(ListPage page, list(o));
    for (const ObjectInfo& obj : page.objects) out.keys.push_back(obj.key);
    return std::move(page.common_prefixes);
  };
  const std::string lower = after.empty() ? prefix : after;
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> found, below(prefix));
  out.bounds = ThinBounds(found, lower, upper, max);
  if (out.bounds.size() >= max / 4) return out;
  // Few prefixes at the top: one level deeper, where the keys' structure
  // usually is.
  std::vector<std::string> deeper = found;
  size_t looked = 0;
  for (const std::string& p : found) {
    if (looked++ == 16) break;
    if (!upper.empty() && p > upper) continue;
    FERRY_ASSIGN_OR_RETURN(std::vector<std::string> more, below(p));
    deeper.insert(deeper.end(), more.begin(), more.end());
  }
  out.bounds = ThinBounds(std::move(deeper), lower, upper, max);
  return out;
}

void KnownKeys::Add(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& k : keys) keys_.emplace(k, false);
}

std::string KnownKeys::FirstSkipped(const std::string& after, const std::string& through,
                                    const std::vector<ObjectInfo>& objects, size_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = 0;
  for (auto it = keys_.upper_bound(after); it != keys_.end(); ++it) {
    if (!through.empty() && it->first > through) break;
    while (i < n && objects[i].key < it->first) ++i;
    if (i == n || objects[i].key != it->first) return it->first;
  }
  return "";
}

void KnownKeys::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  keys_.erase(key);
}

void KnownKeys::Saw(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = keys_.find(key);
  if (it != keys_.end()) it->second = true;
}

std::vector<std::string> KnownKeys::Unseen() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [k, seen] : keys_) {
    if (!seen) out.push_back(k);
  }
  return out;
}

bool KnownKeys::empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return keys_.empty();
}

Result<std::string> ProbeStartAfter(const ListFn& list, const std::string& prefix,
                                    const ListPage& page) {
  const auto& keys = page.objects;
  if (keys.size() < 3) return std::string();
  const size_t mid = keys.size() / 2;
  ListOptions o;
  o.prefix = prefix;
  o.start_after = keys[mid].key;
  o.max_keys = 2;
  FERRY_ASSIGN_OR_RETURN(ListPage again, list(o));
  RangePageCheck check = CheckRangePage(again.objects, prefix, o.start_after, "");
  if (!check.in_order) return check.why;
  if (again.objects.empty() || again.objects[0].key != keys[mid + 1].key) {
    return "listing after \"" + o.start_after + "\" began at \"" +
           (again.objects.empty() ? std::string() : again.objects[0].key) + "\", not \"" +
           keys[mid + 1].key + "\" (start-after not honoured)";
  }
  return std::string();
}

}  // namespace ferry::migrate
