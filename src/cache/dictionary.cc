#include "cache/dictionary.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "base/strings.h"
#include "cache/negotiation.h"

namespace ferry::cache {
namespace {

// A bare item of an RFC 9651 structured field, as much as these fields use.
struct Item {
  enum class Kind { kString, kToken, kNumber, kBoolean, kBinary, kList } kind = Kind::kToken;
  std::string text;                // string, token, number, binary (decoded)
  std::vector<std::string> items;  // an inner list's strings and tokens
};

class SfParser {
 public:
  explicit SfParser(std::string_view s) : s_(s) {}

  bool AtEnd() const { return i_ >= s_.size(); }
  void SkipSp() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  void SkipOws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  bool Eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }

  bool Key(std::string* k) {
    if (AtEnd() || !(std::islower(Byte()) || s_[i_] == '*')) return false;
    size_t start = i_;
    while (i_ < s_.size() &&
           (std::islower(Byte()) || std::isdigit(Byte()) || std::strchr("_-.*", s_[i_])))
      ++i_;
    *k = std::string(s_.substr(start, i_ - start));
    return true;
  }

  // A member's value (an item or an inner list) and its parameters.
  bool Value(Item* item) {
    if (Eat('(')) {
      item->kind = Item::Kind::kList;
      for (;;) {
        SkipSp();
        if (Eat(')')) break;
        Item inner;
        if (!Bare(&inner) || !Params()) return false;
        if (inner.kind == Item::Kind::kString || inner.kind == Item::Kind::kToken)
          item->items.push_back(inner.text);
        if (AtEnd() || (s_[i_] != ' ' && s_[i_] != ')')) return false;
      }
      return Params();
    }
    return Bare(item) && Params();
  }

  bool Bare(Item* item) {
    if (AtEnd()) return false;
    char c = s_[i_];
    if (c == '"') return String(item);
    if (c == ':') return Binary(item);
    if (c == '?') {
      item->kind = Item::Kind::kBoolean;
      ++i_;
      if (AtEnd() || (s_[i_] != '0' && s_[i_] != '1')) return false;
      item->text = s_.substr(i_++, 1);
      return true;
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      item->kind = Item::Kind::kNumber;
      size_t start = i_++;
      while (i_ < s_.size() && (std::isdigit(Byte()) || s_[i_] == '.')) ++i_;
      item->text = s_.substr(start, i_ - start);
      return true;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '*') {
      item->kind = Item::Kind::kToken;
      size_t start = i_++;
      while (i_ < s_.size() && (std::isalnum(Byte()) || std::strchr("!#$%&'*+-.^_`|~:/", s_[i_])))
        ++i_;
      item->text = s_.substr(start, i_ - start);
      return true;
    }
    return false;
  }

  bool Params() {
    while (Eat(';')) {
      SkipSp();
      std::string k;
      if (!Key(&k)) return false;
      Item ignored;
      if (Eat('=') && !Bare(&ignored)) return false;
    }
    return true;
  }

 private:
  unsigned char Byte() const { return static_cast<unsigned char>(s_[i_]); }

  bool String(Item* item) {
    item->kind = Item::Kind::kString;
    ++i_;
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == '"') return true;
      if (c == '\\') {
        if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\\')) return false;
        c = s_[i_++];
      } else if (c < 0x20 || c == 0x7f) {
        return false;
      }
      item->text.push_back(c);
    }
    return false;
  }

  bool Binary(Item* item) {
    item->kind = Item::Kind::kBinary;
    size_t end = s_.find(':', i_ + 1);
    if (end == std::string_view::npos) return false;
    // Parsers should not fail on missing padding (RFC 9651 4.2.7).
    std::string b64(s_.substr(i_ + 1, end - i_ - 1));
    while (b64.size() % 4 != 0) b64.push_back('=');
    bool ok = Base64Decode(b64, &item->text);
    i_ = end + 1;
    return ok;
  }

  std::string_view s_;
  size_t i_ = 0;
};

// The members of an sf-dictionary, in order; nullopt when it does not parse.
std::optional<std::vector<std::pair<std::string, Item>>> ParseDictionaryField(
    std::string_view value) {
  SfParser p(value);
  std::vector<std::pair<std::string, Item>> out;
  p.SkipSp();
  while (!p.AtEnd()) {
    std::string key;
    if (!p.Key(&key)) return std::nullopt;
    Item item;
    if (p.Eat('=')) {
      if (!p.Value(&item)) return std::nullopt;
    } else {
      item.kind = Item::Kind::kBoolean;
      item.text = "1";
      if (!p.Params()) return std::nullopt;
    }
    out.emplace_back(std::move(key), std::move(item));
    p.SkipOws();
    if (p.AtEnd()) break;
    if (!p.Eat(',')) return std::nullopt;
    p.SkipOws();
    if (p.AtEnd()) return std::nullopt;  // a trailing comma
  }
  return out;
}

std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

bool IsLoopbackHost(std::string_view host) {
  if (host.starts_with('[')) return host.substr(0, host.find(']') + 1) == "[::1]";
  host = host.substr(0, host.find(':'));
  std::string h = AsciiLower(host);
  if (h == "localhost" || h.ends_with(".localhost")) return true;
  if (!h.starts_with("127.")) return false;
  int dots = 0;
  for (char c : h) {
    if (c == '.')
      ++dots;
    else if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  }
  return dots == 3;
}

// Whether a path pattern holds URLPattern syntax beyond '*' and '\' escapes.
bool PlainPattern(std::string_view p) {
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      ++i;
      continue;
    }
    if (c == '(' || c == ')' || c == '{' || c == '}' || c == '+') return false;
    if (c == ':' && i + 1 < p.size() &&
        (std::isalpha(static_cast<unsigned char>(p[i + 1])) || p[i + 1] == '_')) {
      return false;
    }
  }
  return true;
}

// Tokens of a file name that stand for a version or a content hash.
bool AllDigits(std::string_view t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}
bool Versiony(std::string_view t) {
  if (AllDigits(t)) return true;
  if ((t[0] == 'v' || t[0] == 'V') && AllDigits(t.substr(1))) return true;
  if (t.size() < 8 || !std::all_of(t.begin(), t.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c));
      })) {
    return false;
  }
  // A hash: 8+ letters and digits with at least one digit (words have none).
  return std::any_of(t.begin(), t.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

Result<DictionaryMark> ParseUseAsDictionary(std::string_view value) {
  auto members = ParseDictionaryField(TrimOws(value));
  if (!members) return Status::InvalidArgument("Use-As-Dictionary is not a structured dictionary");
  DictionaryMark mark;
  bool has_match = false;
  // A key given twice: its last value counts (RFC 9651 4.2.2), of the
  // right type or none.
  for (auto& [key, item] : *members) {
    if (key == "match") {
      has_match = item.kind == Item::Kind::kString;
      mark.match = has_match ? item.text : "";
    } else if (key == "match-dest") {
      mark.match_dest = item.kind == Item::Kind::kList ? item.items : std::vector<std::string>{};
    } else if (key == "id") {
      if (item.text.size() > 1024)
        return Status::InvalidArgument("Use-As-Dictionary id is over 1024 characters");
      mark.id = item.kind == Item::Kind::kString ? item.text : "";
    } else if (key == "type") {
      mark.type =
          item.kind == Item::Kind::kToken ? item.text : "";  // not a token: no type ferry knows
    }
  }
  if (!has_match || mark.match.empty())
    return Status::InvalidArgument("Use-As-Dictionary has no match string");
  return mark;
}

std::string FormatUseAsDictionary(const DictionaryMark& mark) {
  std::string out = "match=" + Quoted(mark.match);
  if (!mark.match_dest.empty()) {
    out += ", match-dest=(";
    for (size_t i = 0; i < mark.match_dest.size(); ++i)
      out += (i ? " " : "") + Quoted(mark.match_dest[i]);
    out += ")";
  }
  if (!mark.id.empty()) out += ", id=" + Quoted(mark.id);
  if (mark.type != "raw") out += ", type=" + mark.type;
  return out;
}

std::optional<Sha256Digest> ParseAvailableDictionary(std::string_view value) {
  SfParser p(TrimOws(value));
  Item item;
  if (!p.Bare(&item) || item.kind != Item::Kind::kBinary || !p.Params() || !p.AtEnd())
    return std::nullopt;
  if (item.text.size() != 32) return std::nullopt;
  Sha256Digest d;
  std::copy(item.text.begin(), item.text.end(), d.begin());
  return d;
}

std::optional<std::string> ParseDictionaryId(std::string_view value) {
  SfParser p(TrimOws(value));
  Item item;
  if (!p.Bare(&item) || item.kind != Item::Kind::kString || !p.Params() || !p.AtEnd())
    return std::nullopt;
  return item.text;
}

std::optional<std::string> ResolveMatch(std::string_view match, std::string_view dictionary_path,
                                        std::string_view host, bool tls) {
  std::string_view rest = match;
  for (std::string_view scheme : {"https://", "http://"}) {
    if (!rest.starts_with(scheme)) continue;
    if ((scheme == "https://") != tls) return std::nullopt;
    rest.remove_prefix(scheme.size());
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos || !EqualsIgnoreCase(rest.substr(0, slash), host))
      return std::nullopt;
    rest.remove_prefix(slash);
    break;
  }
  if (rest.find("://") != std::string_view::npos) return std::nullopt;  // another scheme
  std::string path(rest.substr(0, rest.find_first_of("?#")));
  if (path.empty()) return std::nullopt;
  if (path[0] != '/') {  // relative to the dictionary's directory
    std::string_view dir = dictionary_path.substr(0, dictionary_path.find('?'));
    dir = dir.substr(0, dir.rfind('/') + 1);
    if (dir.empty()) return std::nullopt;
    path = std::string(dir) + path;
  }
  if (!PlainPattern(path)) return std::nullopt;
  return path;
}

bool PathMatches(std::string_view pattern, std::string_view path) {
  path = path.substr(0, path.find('?'));
  // Glob matching with backtracking to the last '*' (linear in practice).
  size_t p = 0, s = 0, star = std::string_view::npos, mark = 0;
  while (s < path.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = s;
      continue;
    }
    if (p < pattern.size()) {
      size_t lit = p;
      if (pattern[p] == '\\' && p + 1 < pattern.size()) lit = p + 1;
      if (pattern[lit] == path[s]) {
        p = lit + 1;
        ++s;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star + 1;
    s = ++mark;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::optional<std::string> VersionedPattern(std::string_view path) {
  path = path.substr(0, path.find('?'));
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view name = path.substr(slash + 1);
  // Tokens between the separators '.', '-' and '_'.
  std::vector<std::pair<size_t, size_t>> tokens;  // [begin, end)
  for (size_t b = 0; b <= name.size();) {
    size_t e = name.find_first_of(".-_", b);
    if (e == std::string_view::npos) e = name.size();
    tokens.emplace_back(b, e);
    b = e + 1;
  }
  // The first version token after the name and before the extension, with
  // the numbers that follow it across dots (3.6.1).
  for (size_t i = 1; i + 1 < tokens.size(); ++i) {
    auto [b, e] = tokens[i];
    if (b == e || !Versiony(name.substr(b, e - b))) continue;
    size_t j = i;
    while (
        j + 2 < tokens.size() && name[tokens[j].second] == '.' &&
        AllDigits(name.substr(tokens[j + 1].first, tokens[j + 1].second - tokens[j + 1].first))) {
      ++j;
    }
    std::string out(path.substr(0, slash + 1));
    out += name.substr(0, b);
    out += '*';
    out += name.substr(tokens[j].second);
    // Escape what URLPattern would read as syntax.
    std::string escaped;
    for (size_t k = 0; k < out.size(); ++k) {
      char c = out[k];
      if (std::strchr("(){}+?:\\", c) != nullptr) escaped.push_back('\\');
      escaped.push_back(c);
    }
    return escaped;
  }
  return std::nullopt;
}

bool SecureContext(bool tls, std::string_view host) { return tls || IsLoopbackHost(host); }

bool DictionaryApplies(const DictionaryInfo& d, const DictionaryRequest& r) {
  if (d.tls != r.tls || !EqualsIgnoreCase(d.host, r.host)) return false;
  if (r.now >= d.expires) return false;
  if (!d.mark.id.empty() && d.mark.id != r.id) return false;
  if (!d.mark.match_dest.empty() && std::find(d.mark.match_dest.begin(), d.mark.match_dest.end(),
                                              r.dest) == d.mark.match_dest.end()) {
    return false;
  }
  return d.mark.type == "raw" && PathMatches(d.pattern, r.path);
}

std::string DczHeader(const Sha256Digest& hash) {
  std::string out("\x5e\x2a\x4d\x18\x20\x00\x00\x00", 8);
  out.append(reinterpret_cast<const char*>(hash.data()), hash.size());
  return out;
}

std::string DczEtag(std::string_view etag, const Sha256Digest& hash) {
  std::string tag = CodingEtag(etag, Coding::kDcz);
  if (tag.empty()) return tag;
  tag.insert(tag.size() - 1, "-" + HexLower(hash).substr(0, 8));
  return tag;
}

}  // namespace ferry::cache
