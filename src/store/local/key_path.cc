#include "store/local/key_path.h"

#include <cstdint>

#include "base/utf8.h"

namespace ferry::local {
namespace {

std::vector<std::string_view> SplitOnSlash(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t slash = s.find('/', start);
    if (slash == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, slash - start));
    start = slash + 1;
  }
}

}  // namespace

Status ValidateKey(std::string_view key) {
  if (key.empty()) return Status::InvalidArgument("empty object key");
  if (key.size() > kMaxKeyBytes) {
    return Status::InvalidArgument("object key longer than 1024 bytes");
  }
  if (key.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("object key contains NUL");
  }
  if (!IsValidUtf8(key)) return Status::InvalidArgument("object key is not valid UTF-8");
  return Status::Ok();
}

std::vector<std::string> EncodeSegment(std::string_view segment) {
  if (segment.empty()) return {"%"};
  // Units are the indivisible pieces of the escaped form: "%25" or one
  // whole UTF-8 sequence (keys are validated, so sequences are complete;
  // a malformed byte is kept as a unit of its own).
  std::vector<std::string> pieces(1);
  size_t escaped_size = 0;
  for (size_t i = 0; i < segment.size();) {
    size_t n = segment[i] == '%' ? 1 : Utf8SequenceLength(segment, i);
    if (n == 0) n = 1;
    std::string_view unit = segment[i] == '%' ? std::string_view("%25") : segment.substr(i, n);
    if (pieces.back().size() + unit.size() > kMaxPieceBytes) pieces.emplace_back();
    pieces.back().append(unit);
    escaped_size += unit.size();
    i += n;
  }
  if (escaped_size <= kMaxComponentBytes && pieces.size() > 1) {
    // Fits in one component after all: undo the cut.
    std::string whole;
    for (const std::string& p : pieces) whole += p;
    pieces.assign(1, std::move(whole));
  }
  for (size_t i = 0; i + 1 < pieces.size(); ++i) pieces[i].append(kContinuationMarker);
  std::string& last = pieces.back();
  if (last == ".") {
    last = "%2E";
  } else if (last == "..") {
    last = "%2E%2E";
  }
  return pieces;
}

Result<std::string> EncodeKey(std::string_view key) {
  FERRY_RETURN_IF_ERROR(ValidateKey(key));
  std::string path;
  path.reserve(key.size() + 16);
  for (std::string_view segment : SplitOnSlash(key)) {
    for (std::string& component : EncodeSegment(segment)) {
      if (!path.empty()) path.push_back('/');
      path.append(component);
    }
  }
  return path;
}

Result<DecodedComponent> DecodeComponent(std::string_view component) {
  const auto invalid = [&] {
    return Status::InvalidArgument("not an encoded key component: '" + std::string(component) +
                                   "'");
  };
  if (component == "%") return DecodedComponent{"", false};
  if (component == "%2E") return DecodedComponent{".", false};
  if (component == "%2E%2E") return DecodedComponent{"..", false};
  DecodedComponent out;
  std::string_view body = component;
  if (body.ends_with(kContinuationMarker)) {
    out.continuation = true;
    body.remove_suffix(kContinuationMarker.size());
  }
  if (body.empty() || body == "." || body == "..") return invalid();
  out.text.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == '\0' || c == '/') return invalid();
    if (c != '%') {
      out.text.push_back(c);
      continue;
    }
    if (body.substr(i, 3) != "%25") return invalid();
    out.text.push_back('%');
    i += 2;
  }
  if (!IsValidUtf8(out.text)) return invalid();
  return out;
}

Result<std::string> DecodeKey(std::string_view rel_path) {
  const auto invalid = [&] {
    return Status::InvalidArgument("not an encoded key path: '" + std::string(rel_path) + "'");
  };
  if (rel_path.empty() || rel_path.size() > 4 * kMaxKeyBytes) return invalid();
  std::string key;
  bool in_segment = false;  // the previous component carried "%+"
  bool first = true;
  for (std::string_view component : SplitOnSlash(rel_path)) {
    auto decoded = DecodeComponent(component);
    if (!decoded.ok()) return invalid();
    if (!in_segment && !first) key.push_back('/');
    key.append(decoded->text);
    in_segment = decoded->continuation;
    first = false;
  }
  if (in_segment) return invalid();
  // Canonical check: pieces cut at the wrong place, a "%" inside a split
  // segment and the like decode to a key whose encoding differs.
  auto reencoded = EncodeKey(key);
  if (!reencoded.ok() || *reencoded != rel_path) return invalid();
  return key;
}

bool IsReservedName(std::string_view name) { return !DecodeComponent(name).ok(); }

bool IsInternalName(std::string_view name) {
  return name == "%mpu" || name.starts_with(".%tmp.") || (name.starts_with(".") && name.ends_with("%meta"));
}

}  // namespace ferry::local
