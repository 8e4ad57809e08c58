#include "migrate/filter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace ferry::migrate {
namespace {

// ---- Globs ----------------------------------------------------------------
//
// A pattern compiles to a small NFA program (Thompson style); matching runs
// every live state in step over the key's code points, so the cost is
// O(|pattern| * |key|) whatever the pattern, unlike a backtracking matcher.

// The next UTF-8 code point of `s` at *i, advancing *i. A byte that does not
// start a valid sequence stands for itself, mapped above the Unicode range so
// it equals only the same byte.
uint32_t NextChar(std::string_view s, size_t* i) {
  auto b = static_cast<unsigned char>(s[*i]);
  size_t len = b < 0x80             ? 1
               : (b & 0xE0) == 0xC0 ? 2
               : (b & 0xF0) == 0xE0 ? 3
               : (b & 0xF8) == 0xF0 ? 4
                                    : 0;
  if (len == 1) {
    ++*i;
    return b;
  }
  uint32_t cp = len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
  bool ok = len != 0 && *i + len <= s.size();
  for (size_t k = 1; ok && k < len; ++k) {
    auto c = static_cast<unsigned char>(s[*i + k]);
    ok = (c & 0xC0) == 0x80;
    cp = (cp << 6) | (c & 0x3F);
  }
  if (!ok) {
    ++*i;
    return 0x110000u + b;
  }
  *i += len;
  return cp;
}

struct Inst {
  enum Op { kLit, kAny, kClass, kStar, kDoubleStar, kSplit, kJump, kMatch };
  explicit Inst(Op o) : op(o) {}
  Op op;
  uint32_t ch = 0;                                    // kLit
  bool negated = false;                               // kClass
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // kClass, inclusive
  std::vector<int> next;                              // kSplit targets; kJump's one target
};

using Program = std::vector<Inst>;

// Compile() errors carry only the reason; CompileGlob() adds the pattern.
Status GlobError(std::string_view why) { return Status::InvalidArgument(std::string(why)); }

// Parses a class after its '['; *i ends past the closing ']'.
Status CompileClass(std::string_view p, size_t* i, Inst* out) {
  out->op = Inst::kClass;
  if (*i < p.size() && (p[*i] == '!' || p[*i] == '^')) {
    out->negated = true;
    ++*i;
  }
  bool first = true;
  for (;;) {
    if (*i >= p.size()) return GlobError("unclosed '['");
    if (p[*i] == ']' && !first) {
      ++*i;
      return Status::Ok();
    }
    first = false;
    auto member = [&](uint32_t* c) {
      if (p[*i] == '\\') {
        if (++*i >= p.size()) return false;
      }
      *c = NextChar(p, i);
      return true;
    };
    uint32_t lo = 0, hi = 0;
    if (!member(&lo)) return GlobError("unclosed '['");
    hi = lo;
    if (*i + 1 < p.size() && p[*i] == '-' && p[*i + 1] != ']') {
      ++*i;
      if (!member(&hi)) return GlobError("unclosed '['");
      if (hi < lo) return GlobError("reversed range in '[...]'");
    }
    out->ranges.emplace_back(lo, hi);
  }
}

Status Compile(std::string_view p, Program* prog) {
  int split = -1;          // the open '{' alternation's kSplit, if any
  std::vector<int> jumps;  // its alternatives' jumps to the end
  size_t i = 0;
  while (i < p.size()) {
    char c = p[i];
    Inst inst(Inst::kLit);
    if (c == '\\') {
      if (++i >= p.size()) return GlobError("trailing '\\'");
      inst.ch = NextChar(p, &i);
    } else if (c == '*') {
      size_t run = 0;
      while (i < p.size() && p[i] == '*') ++i, ++run;
      inst.op = run == 1 ? Inst::kStar : Inst::kDoubleStar;
    } else if (c == '?') {
      ++i;
      inst.op = Inst::kAny;
    } else if (c == '[') {
      ++i;
      FERRY_RETURN_IF_ERROR(CompileClass(p, &i, &inst));
    } else if (c == '{') {
      if (split >= 0) return GlobError("nested '{' is not supported");
      ++i;
      split = static_cast<int>(prog->size());
      prog->emplace_back(Inst::kSplit);
      (*prog)[split].next.push_back(split + 1);
      continue;
    } else if (c == ',' && split >= 0) {
      ++i;
      jumps.push_back(static_cast<int>(prog->size()));
      prog->emplace_back(Inst::kJump);
      (*prog)[split].next.push_back(static_cast<int>(prog->size()));
      continue;
    } else if (c == '}') {
      if (split < 0) return GlobError("unmatched '}'");
      ++i;
      for (int j : jumps) (*prog)[j].next = {static_cast<int>(prog->size())};
      jumps.clear();
      split = -1;
      continue;
    } else {
      inst.ch = NextChar(p, &i);
    }
    prog->push_back(std::move(inst));
  }
  if (split >= 0) return GlobError("unclosed '{'");
  prog->emplace_back(Inst::kMatch);
  return Status::Ok();
}

bool InClass(const Inst& in, uint32_t c) {
  bool hit = false;
  for (const auto& [lo, hi] : in.ranges) hit = hit || (lo <= c && c <= hi);
  return hit != in.negated;
}

// A set of program counters with O(1) membership, closed under the
// instructions that consume nothing (splits, jumps, skipping a star).
class StateSet {
 public:
  explicit StateSet(const Program& prog) : prog_(prog), seen_(prog.size(), 0) {}
  void Add(int pc) {
    if (seen_[pc]) return;
    seen_[pc] = 1;
    const Inst& in = prog_[pc];
    if (in.op == Inst::kSplit || in.op == Inst::kJump) {
      for (int t : in.next) Add(t);
      return;
    }
    list_.push_back(pc);
    if (in.op == Inst::kStar || in.op == Inst::kDoubleStar) Add(pc + 1);
  }
  void Clear() {
    std::fill(seen_.begin(), seen_.end(), 0);  // splits and jumps are marked too
    list_.clear();
  }
  const std::vector<int>& list() const { return list_; }
  bool Has(int pc) const { return seen_[pc] != 0 && prog_[pc].op == Inst::kMatch; }

 private:
  const Program& prog_;
  std::vector<char> seen_;
  std::vector<int> list_;
};

bool Run(const Program& prog, std::string_view key, bool anchored) {
  StateSet a(prog), b(prog);
  StateSet* cur = &a;
  StateSet* next = &b;
  cur->Add(0);
  size_t i = 0;
  while (i < key.size()) {
    uint32_t c = NextChar(key, &i);
    next->Clear();
    for (int pc : cur->list()) {
      const Inst& in = prog[pc];
      switch (in.op) {
        case Inst::kLit:
          if (c == in.ch) next->Add(pc + 1);
          break;
        case Inst::kAny:
          if (c != '/') next->Add(pc + 1);
          break;
        case Inst::kClass:
          if (c != '/' && InClass(in, c)) next->Add(pc + 1);
          break;
        case Inst::kStar:
          if (c != '/') next->Add(pc);
          break;
        case Inst::kDoubleStar:
          next->Add(pc);
          break;
        default:
          break;
      }
    }
    // Unanchored: a match may also start right after any '/'.
    if (!anchored && c == '/') next->Add(0);
    std::swap(cur, next);
    if (anchored && cur->list().empty()) return false;
  }
  return cur->Has(static_cast<int>(prog.size()) - 1);
}

// ---- Durations and times ----------------------------------------------------

constexpr int64_t kMsPerDay = 86'400'000;

// Reads exactly `n` decimal digits at *i into *out.
bool Digits(std::string_view s, size_t* i, int n, int* out) {
  if (*i + n > s.size()) return false;
  int v = 0;
  for (int k = 0; k < n; ++k) {
    char c = s[*i + k];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *i += n;
  *out = v;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysInMonth(int y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

bool LooksLikeDate(std::string_view s) {
  if (s.size() < 5 || s[4] != '-') return false;
  for (int k = 0; k < 4; ++k)
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
  return true;
}

Result<int64_t> ParseAbsoluteTime(std::string_view s) {
  auto bad = [s](std::string_view why) {
    return Status::InvalidArgument("bad time \"" + std::string(s) + "\": " + std::string(why));
  };
  size_t i = 0;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, ms = 0;
  if (!Digits(s, &i, 4, &y) || i >= s.size() || s[i++] != '-' || !Digits(s, &i, 2, &mo) ||
      i >= s.size() || s[i++] != '-' || !Digits(s, &i, 2, &d)) {
    return bad("expected a date like 2024-05-01");
  }
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo)) return bad("no such date");
  int64_t offset_ms = 0;
  if (i < s.size()) {
    char t = s[i++];
    if (t != 'T' && t != 't' && t != ' ') return bad("expected 'T' and a time after the date");
    if (!Digits(s, &i, 2, &h) || i >= s.size() || s[i++] != ':' || !Digits(s, &i, 2, &mi)) {
      return bad("expected a time like 12:30:00");
    }
    if (i < s.size() && s[i] == ':') {
      ++i;
      if (!Digits(s, &i, 2, &sec)) return bad("expected seconds after ':'");
      if (i < s.size() && s[i] == '.') {
        size_t start = ++i;
        int scale = 100;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
          ms += (s[i++] - '0') * scale;  // digits past milliseconds are dropped
          scale /= 10;
        }
        if (i == start) return bad("expected digits after '.'");
      }
    }
    if (h > 23 || mi > 59 || sec > 59) return bad("no such time of day");
    if (i < s.size()) {
      char z = s[i++];
      if ((z == 'Z' || z == 'z') && i == s.size()) {
        // UTC
      } else if (z == '+' || z == '-') {
        int oh = 0, om = 0;
        if (!Digits(s, &i, 2, &oh)) return bad("expected a zone offset like +02:00");
        if (i < s.size() && s[i] == ':') ++i;
        if (!Digits(s, &i, 2, &om) || i != s.size() || oh > 23 || om > 59) {
          return bad("expected a zone offset like +02:00");
        }
        offset_ms = (oh * 60 + om) * 60'000LL * (z == '+' ? 1 : -1);
      } else {
        return bad("expected 'Z' or a zone offset like +02:00 after the time");
      }
    }
  }
  int64_t day_ms = ((h * 60LL + mi) * 60 + sec) * 1000 + ms;
  return DaysFromCivil(y, mo, d) * kMsPerDay + day_ms - offset_ms;
}

int64_t UnitMs(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1000;
  if (unit == "m") return 60'000;
  if (unit == "h") return 3'600'000;
  if (unit == "d") return kMsPerDay;
  if (unit == "w") return 7 * kMsPerDay;
  if (unit == "M") return 30 * kMsPerDay;
  if (unit == "y") return 365 * kMsPerDay;
  return 0;
}

// `what` names the value in errors ("duration", "time").
Result<int64_t> ParseDuration(std::string_view s, std::string_view what) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("bad " + std::string(what) + " \"" + std::string(s) +
                                   "\": " + std::string(why));
  };
  if (s == "0") return int64_t{0};
  if (s.empty()) return bad("empty");
  double total = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    double v = 0;
    auto [end, ec] = std::from_chars(s.data() + start, s.data() + i, v, std::chars_format::fixed);
    if (i == start || ec != std::errc() || end != s.data() + i) {
      return bad("expected a number and a unit like 30s, 15m, 12h, 7d");
    }
    size_t ustart = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    int64_t unit = UnitMs(s.substr(ustart, i - ustart));
    if (unit == 0) {
      return bad(ustart == i ? "missing unit (ms, s, m, h, d, w, M, y)"
                             : "unknown unit (want ms, s, m, h, d, w, M, y)");
    }
    total += v * static_cast<double>(unit);
  }
  if (!std::isfinite(total) || total >= 9.0e18) return bad("too large");
  return static_cast<int64_t>(std::llround(total));
}

Status CompileGlob(std::string_view pattern, Program* prog, bool* anchored) {
  *anchored = !pattern.empty() && pattern.front() == '/';
  Status s = Compile(*anchored ? pattern.substr(1) : pattern, prog);
  if (s.ok()) return s;
  return Status::InvalidArgument("bad glob \"" + std::string(pattern) + "\": " + s.message());
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view key) {
  Program prog;
  bool anchored = false;
  if (!CompileGlob(pattern, &prog, &anchored).ok()) return false;
  return Run(prog, key, anchored);
}

Status ValidateGlob(std::string_view pattern) {
  Program prog;
  bool anchored = false;
  return CompileGlob(pattern, &prog, &anchored);
}

bool FilterSpec::empty() const {
  return include.empty() && exclude.empty() && !min_size && !max_size && !newer_than_ms &&
         !older_than_ms;
}

bool Admit(const FilterSpec& f, std::string_view relative_key, uint64_t size,
           int64_t last_modified_ms) {
  if (f.min_size && size < *f.min_size) return false;
  if (f.max_size && size > *f.max_size) return false;
  if (f.newer_than_ms && !(last_modified_ms > *f.newer_than_ms)) return false;
  if (f.older_than_ms && !(last_modified_ms < *f.older_than_ms)) return false;
  for (const auto& g : f.exclude)
    if (GlobMatch(g, relative_key)) return false;
  if (f.include.empty()) return true;
  for (const auto& g : f.include)
    if (GlobMatch(g, relative_key)) return true;
  return false;
}

Result<int64_t> ParseTimeSpec(std::string_view text, int64_t now_ms) {
  if (LooksLikeDate(text)) return ParseAbsoluteTime(text);
  FERRY_ASSIGN_OR_RETURN(int64_t ago, ParseDuration(text, "time"));
  return now_ms - ago;
}

Result<int64_t> ParseDurationMs(std::string_view text) { return ParseDuration(text, "duration"); }

}  // namespace ferry::migrate
