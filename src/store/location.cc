#include "store/location.h"

#include <cctype>

namespace ferry {

bool IsValidBucketName(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '.' && c != '-' && c != '_') return false;
  }
  return name.find("..") == std::string_view::npos;
}

bool Location::ends_with_slash() const {
  if (is_s3()) return key.empty() || key.back() == '/';
  return !path.empty() && path.back() == '/';
}

std::string Location::Child(std::string_view child) const {
  if (is_s3()) {
    std::string base = "s3://" + bucket + "/" + key;
    if (!key.empty() && key.back() != '/') base += '/';
    return base + std::string(child);
  }
  std::string base = path;
  if (!base.empty() && base.back() != '/') base += '/';
  return base + std::string(child);
}

Result<Location> ParseLocation(std::string_view arg) {
  Location loc;
  loc.text = std::string(arg);
  if (arg.empty()) return Status::InvalidArgument("empty location");
  size_t scheme_end = arg.find("://");
  if (scheme_end != std::string_view::npos) {
    std::string_view scheme = arg.substr(0, scheme_end);
    std::string_view rest = arg.substr(scheme_end + 3);
    if (scheme == "s3") {
      size_t slash = rest.find('/');
      loc.kind = Location::Kind::kS3;
      loc.bucket = std::string(rest.substr(0, slash));
      if (slash != std::string_view::npos) loc.key = std::string(rest.substr(slash + 1));
      if (loc.bucket.empty()) return Status::InvalidArgument(loc.text + ": missing bucket name");
      if (!IsValidBucketName(loc.bucket)) {
        return Status::InvalidArgument(loc.text + ": invalid bucket name \"" + loc.bucket + "\"");
      }
      return loc;
    }
    if (scheme == "file") {
      if (rest.empty() || rest.front() != '/') {
        return Status::InvalidArgument(loc.text + ": file URLs must be file:///absolute/path");
      }
      loc.path = std::string(rest);
      return loc;
    }
    bool plausible = !scheme.empty();
    for (char c : scheme) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
        plausible = false;
      }
    }
    if (plausible) {
      return Status::InvalidArgument(loc.text + ": unknown scheme \"" + std::string(scheme) +
                                     "\" (use s3://bucket/key or a local path)");
    }
  }
  loc.path = std::string(arg);
  return loc;
}

}  // namespace ferry
