#include "store/location.h"

#include <cctype>

namespace ferry {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// "bucket[/key]" for s3:// and gs://.
Status ParseBucketAndKey(std::string_view rest, Location* loc) {
  size_t slash = rest.find('/');
  loc->bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) loc->key = std::string(rest.substr(slash + 1));
  if (loc->bucket.empty()) return Status::InvalidArgument(loc->text + ": missing bucket name");
  if (!IsValidBucketName(loc->bucket)) {
    return Status::InvalidArgument(loc->text + ": invalid bucket name \"" + loc->bucket + "\"");
  }
  return Status::Ok();
}

// "account/container[/key]" for azure://.
Status ParseAzure(std::string_view rest, Location* loc) {
  size_t slash = rest.find('/');
  loc->account = std::string(rest.substr(0, slash));
  if (loc->account.empty()) return Status::InvalidArgument(loc->text + ": missing account name");
  if (!IsValidAzureAccount(loc->account)) {
    return Status::InvalidArgument(loc->text + ": invalid account name \"" + loc->account + "\"");
  }
  if (slash == std::string_view::npos) {
    return Status::InvalidArgument(loc->text + ": missing container (azure://account/container)");
  }
  std::string_view after = rest.substr(slash + 1);
  size_t slash2 = after.find('/');
  loc->bucket = std::string(after.substr(0, slash2));
  if (slash2 != std::string_view::npos) loc->key = std::string(after.substr(slash2 + 1));
  if (loc->bucket.empty()) {
    return Status::InvalidArgument(loc->text + ": missing container (azure://account/container)");
  }
  if (!IsValidAzureContainer(loc->bucket)) {
    return Status::InvalidArgument(loc->text + ": invalid container name \"" + loc->bucket + "\"");
  }
  return Status::Ok();
}

}  // namespace

bool IsValidBucketName(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '.' && c != '-' && c != '_') return false;
  }
  return name.find("..") == std::string_view::npos;
}

bool IsValidAzureAccount(std::string_view name) {
  if (name.size() < 3 || name.size() > 24) return false;
  for (char c : name) {
    if (!IsLowerAlnum(c)) return false;
  }
  return true;
}

bool IsValidAzureContainer(std::string_view name) {
  if (name == "$root" || name == "$web" || name == "$logs") return true;
  if (name.size() < 3 || name.size() > 63) return false;
  if (!IsLowerAlnum(name.front()) || !IsLowerAlnum(name.back())) return false;
  for (char c : name) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return name.find("--") == std::string_view::npos;
}

std::string Location::Root() const {
  switch (kind) {
    case Kind::kS3: return "s3://" + bucket;
    case Kind::kGcs: return "gs://" + bucket;
    case Kind::kAzure: return "azure://" + account + "/" + bucket;
    case Kind::kLocal: break;
  }
  return path;
}

bool Location::ends_with_slash() const {
  if (is_remote()) return key.empty() || key.back() == '/';
  return !path.empty() && path.back() == '/';
}

std::string Location::Child(std::string_view child) const {
  if (is_remote()) {
    std::string base = Root() + "/" + key;
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
    if (scheme == "s3" || scheme == "gs") {
      loc.kind = scheme == "s3" ? Location::Kind::kS3 : Location::Kind::kGcs;
      FERRY_RETURN_IF_ERROR(ParseBucketAndKey(rest, &loc));
      return loc;
    }
    if (scheme == "azure") {
      loc.kind = Location::Kind::kAzure;
      FERRY_RETURN_IF_ERROR(ParseAzure(rest, &loc));
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
      return Status::InvalidArgument(
          loc.text + ": unknown scheme \"" + std::string(scheme) +
          "\" (use s3://bucket/key, gs://bucket/key, azure://account/container/key or a local path)");
    }
  }
  loc.path = std::string(arg);
  return loc;
}

}  // namespace ferry
