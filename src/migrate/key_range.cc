#include "migrate/key_range.h"

#include <algorithm>
#include <cmath>

namespace ferry::migrate {
namespace {

constexpr int32_t kNone = -1;          // below every character (the end of a string)
constexpr int32_t kTop = 0x110000;     // above every character (no upper end)
constexpr int32_t kLowest = 0x20;      // boundaries avoid control characters

// Strict UTF-8 to code points; false for anything invalid (overlong forms,
// surrogates, values above U+10FFFF, truncated sequences).
bool Decode(std::string_view s, std::vector<int32_t>* out) {
  out->clear();
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    int n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    int32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < n; ++k) {
      auto cb = static_cast<unsigned char>(s[i + k]);
      if ((cb & 0xC0) != 0x80) return false;
      c = (c << 6) | (cb & 0x3F);
    }
    static constexpr int32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < kMin[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
    out->push_back(c);
    i += n;
  }
  return true;
}

void Encode(int32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string EncodeAll(const std::vector<int32_t>& cps, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) Encode(cps[i], &out);
  return out;
}

// The scale MidChar() halves: each UTF-8 length is one unit wide.
struct Band {
  int32_t from, to;  // [from, to)
};
constexpr Band kBands[] = {{0, 0x80}, {0x80, 0x800}, {0x800, 0x10000}, {0x10000, kTop}};

double Rank(int32_t c) {
  if (c <= kNone) return -0.01;
  if (c >= kTop) return 4.0;
  for (int b = 0; b < 4; ++b) {
    if (c < kBands[b].to) {
      return b + static_cast<double>(c - kBands[b].from) / (kBands[b].to - kBands[b].from);
    }
  }
  return 4.0;
}

int32_t Unrank(double r) {
  if (r <= 0) return 0;
  int b = std::min(3, static_cast<int>(r));
  double f = r - b;
  return kBands[b].from + static_cast<int32_t>(std::floor(f * (kBands[b].to - kBands[b].from)));
}

bool Usable(int32_t c) { return c >= 1 && c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF); }

// A character strictly between x and y (either may be kNone / kTop), near
// the middle of the banded scale and >= U+0020 when there is room;
// kNone when there is none.
int32_t MidChar(int32_t x, int32_t y) {
  int32_t low = std::max(x + 1, 1);
  int32_t high = std::min(y - 1, 0x10FFFF);
  if (low > high) return kNone;
  if (low < kLowest && kLowest <= high) low = kLowest;
  int32_t m = std::clamp(Unrank((Rank(x) + Rank(y)) / 2), low, high);
  if (!Usable(m)) m = m - 0xD800 < 0xDFFF - m ? 0xD7FF : 0xE000;  // off the surrogates
  if (m < low || m > high || !Usable(m)) {
    for (int32_t c : {low, high}) {
      if (Usable(c)) return c;
    }
    return kNone;
  }
  return m;
}

// MidKey over code points; `hi` null means no upper end.
std::optional<std::string> Mid(const std::vector<int32_t>& lo, const std::vector<int32_t>* hi) {
  size_t i = 0;
  while (hi != nullptr && i < lo.size() && i < hi->size() && lo[i] == (*hi)[i]) ++i;
  if (hi != nullptr && i == hi->size()) return std::nullopt;  // hi <= lo
  int32_t x = i < lo.size() ? lo[i] : kNone;
  int32_t y = hi != nullptr ? (*hi)[i] : kTop;
  if (hi != nullptr && x >= y) return std::nullopt;  // hi < lo
  std::string out = EncodeAll(lo, i);
  if (int32_t m = MidChar(x, y); m != kNone) {
    Encode(m, &out);
    return out;
  }
  if (x == kNone) return std::nullopt;  // nothing between lo and lo + its successor
  // x and y are neighbours: keep x and go above the rest of lo.
  std::vector<int32_t> rest(lo.begin() + static_cast<std::ptrdiff_t>(i) + 1, lo.end());
  auto tail = Mid(rest, nullptr);
  if (!tail) return std::nullopt;
  Encode(x, &out);
  return out + *tail;
}

}  // namespace

bool InRange(std::string_view key, std::string_view lower, std::string_view upper) {
  return key > lower && (upper.empty() || key <= upper);
}

std::optional<std::string> PrefixEnd(std::string_view prefix) {
  std::vector<int32_t> cps;
  if (prefix.empty() || !Decode(prefix, &cps)) return std::nullopt;
  while (!cps.empty()) {
    int32_t c = cps.back() + 1;
    if (c == 0xD800) c = 0xE000;
    if (c <= 0x10FFFF) {
      cps.back() = c;
      return EncodeAll(cps, cps.size());
    }
    cps.pop_back();
  }
  return std::nullopt;
}

std::optional<std::string> MidKey(std::string_view lo, std::optional<std::string_view> hi) {
  std::vector<int32_t> a, b;
  if (!Decode(lo, &a)) return std::nullopt;
  if (hi && !Decode(*hi, &b)) return std::nullopt;
  return Mid(a, hi ? &b : nullptr);
}

std::vector<std::string> SuccessorBounds(std::string_view lo, size_t from) {
  std::vector<int32_t> cps;
  std::vector<std::string> out;
  if (!Decode(lo, &cps)) return out;
  for (size_t i = from; i < cps.size(); ++i) {
    int32_t next = cps[i] + 1;
    if (next == 0xD800) next = 0xE000;
    if (next > 0x10FFFF) continue;
    std::string t = EncodeAll(cps, i);
    Encode(next, &t);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> ThinBounds(std::vector<std::string> candidates, std::string_view lower,
                                    std::string_view upper, size_t max) {
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<std::string> inside;
  for (auto& c : candidates) {
    if (c > lower && (upper.empty() || c < upper)) inside.push_back(std::move(c));
  }
  if (inside.size() <= max) return inside;
  std::vector<std::string> out;
  if (max == 0) return out;
  // Evenly spaced picks: the (k+1)/(max+1) quantiles of the candidates.
  for (size_t k = 0; k < max; ++k) {
    size_t at = (k + 1) * inside.size() / (max + 1);
    if (out.empty() || out.back() != inside[at]) out.push_back(inside[at]);
  }
  return out;
}

RangePageCheck CheckRangePage(const std::vector<ObjectInfo>& objects, std::string_view prefix,
                              std::string_view after, std::string_view upper) {
  RangePageCheck r;
  std::string_view prev = after;
  for (size_t i = 0; i < objects.size(); ++i) {
    std::string_view key = objects[i].key;
    if (key.substr(0, prefix.size()) != prefix) {
      r.in_order = false;
      r.why = "key \"" + std::string(key) + "\" is outside the prefix \"" + std::string(prefix) + "\"";
      return r;
    }
    if (key <= prev && !(i == 0 && after.empty())) {
      r.in_order = false;
      r.why = i == 0 ? "key \"" + std::string(key) + "\" came after start-after \"" +
                           std::string(after) + "\" (start-after ignored?)"
                     : "key \"" + std::string(key) + "\" came after \"" + std::string(prev) +
                           "\" (not in byte order)";
      return r;
    }
    prev = key;
    if (!upper.empty() && key > upper) {
      r.past_upper = true;
    } else if (!r.past_upper) {
      r.keep = i + 1;
    }
  }
  return r;
}

}  // namespace ferry::migrate
