#include "cache/negotiation.h"

#include <cstdlib>

#include "base/strings.h"

namespace ferry::cache {
namespace {

// The q-value of one Accept-Encoding member ("gzip;q=0.5"); 1 without one,
// 0 when malformed (a member we cannot read is not an acceptance).
double QValue(std::string_view params) {
  double q = 1.0;
  while (!params.empty()) {
    size_t semi = params.find(';');
    std::string_view p = TrimOws(params.substr(0, semi));
    size_t eq = p.find('=');
    if (AsciiLower(TrimOws(p.substr(0, eq))) == "q") {
      if (eq == std::string_view::npos) return 0;
      std::string v(TrimOws(p.substr(eq + 1)));
      char* end = nullptr;
      q = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || q < 0 || q > 1) return 0;
    }
    if (semi == std::string_view::npos) break;
    params.remove_prefix(semi + 1);
  }
  return q;
}

std::string_view Opaque(std::string_view tag) {
  tag = TrimOws(tag);
  if (tag.size() >= 2 && tag[0] == 'W' && tag[1] == '/') tag.remove_prefix(2);
  return tag;
}

// The q-value Accept-Encoding gives `coding`: by name, else through "*";
// nullopt when it names neither.
std::optional<double> CodingQ(std::string_view accept_encoding, std::string_view coding) {
  std::string want = AsciiLower(coding);
  std::optional<double> named, star;
  while (!accept_encoding.empty()) {
    size_t comma = accept_encoding.find(',');
    std::string_view member = TrimOws(accept_encoding.substr(0, comma));
    size_t semi = member.find(';');
    std::string name = AsciiLower(TrimOws(member.substr(0, semi)));
    double q = semi == std::string_view::npos ? 1.0 : QValue(member.substr(semi + 1));
    if (name == want) named = q;
    if (name == "*") star = q;
    if (comma == std::string_view::npos) break;
    accept_encoding.remove_prefix(comma + 1);
  }
  return named ? named : star;
}

}  // namespace

bool AcceptsCoding(std::string_view accept_encoding, std::string_view coding) {
  auto q = CodingQ(accept_encoding, coding);
  return q && *q > 0;
}

std::string_view CodingName(Coding c) {
  switch (c) {
    case Coding::kZstd: return "zstd";
    case Coding::kBr: return "br";
    case Coding::kGzip: return "gzip";
    case Coding::kDcz: return "dcz";
    case Coding::kIdentity: break;
  }
  return "identity";
}

Coding ChooseCoding(std::string_view accept_encoding, CodingOffer offer) {
  Coding best = Coding::kIdentity;
  double best_q = 0;
  // In order of preference: a later coding wins only with a higher q.
  for (Coding c : {Coding::kZstd, Coding::kBr, Coding::kGzip}) {
    if (!(c == Coding::kZstd ? offer.zstd : c == Coding::kBr ? offer.br : offer.gzip)) continue;
    auto q = CodingQ(accept_encoding, CodingName(c));
    if (q && *q > best_q) {
      best = c;
      best_q = *q;
    }
  }
  // identity is acceptable unless excluded, and wins a higher q.
  if (best != Coding::kIdentity) {
    auto q = CodingQ(accept_encoding, "identity");
    if (q && *q > best_q) return Coding::kIdentity;
  }
  return best;
}

std::string CodingEtag(std::string_view etag, Coding c) {
  if (etag.empty() || c == Coding::kIdentity) return std::string(etag);
  std::string_view t = TrimOws(etag);
  bool weak = t.size() >= 2 && t[0] == 'W' && t[1] == '/';
  std::string_view q = weak ? t.substr(2) : t;
  if (q.size() < 2 || q.front() != '"' || q.back() != '"') return "";  // not an entity-tag
  return std::string(weak ? "W/" : "") + std::string(q.substr(0, q.size() - 1)) + "-" + std::string(CodingName(c)) +
         "\"";
}

bool WeakEtagMatch(std::string_view a, std::string_view b) {
  std::string_view oa = Opaque(a), ob = Opaque(b);
  return !oa.empty() && oa == ob;
}

bool NotModified(std::string_view if_none_match, std::string_view if_modified_since,
                 std::string_view etag, std::optional<http::SysSeconds> last_modified) {
  if (!TrimOws(if_none_match).empty()) {
    if (TrimOws(if_none_match) == "*") return true;
    if (etag.empty()) return false;
    // A list of entity-tags; commas cannot occur inside one.
    while (!if_none_match.empty()) {
      size_t comma = if_none_match.find(',');
      if (WeakEtagMatch(if_none_match.substr(0, comma), etag)) return true;
      if (comma == std::string_view::npos) break;
      if_none_match.remove_prefix(comma + 1);
    }
    return false;
  }
  if (TrimOws(if_modified_since).empty() || !last_modified) return false;
  auto since = http::ParseHttpDate(TrimOws(if_modified_since));
  if (!since) return false;  // an invalid date is ignored
  return *last_modified <= *since;
}

}  // namespace ferry::cache
