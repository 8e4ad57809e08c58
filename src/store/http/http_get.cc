#include "store/http/http_get.h"

#include <cstdlib>
#include <optional>

#include "base/unix_time.h"
#include "http/date.h"
#include "s3/xml.h"

namespace ferry {
namespace {

// The total of "bytes FIRST-LAST/TOTAL"; nullopt for "bytes .../*" or none.
std::optional<uint64_t> ContentRangeTotal(const std::string& cr) {
  size_t slash = cr.rfind('/');
  if (slash == std::string::npos || cr.back() == '*') return std::nullopt;
  return std::strtoull(cr.c_str() + slash + 1, nullptr, 10);
}

}  // namespace

ResumeRange RangeToResume(const GetOptions& o, uint64_t got) {
  ResumeRange want;
  want.offset = (o.range ? o.range->offset : 0) + got;
  std::optional<uint64_t> length;
  if (o.range && o.range->length) length = *o.range->length - got;
  want.ranged = want.offset > 0 || (length && *length > 0);
  if (want.ranged) {
    want.value = "bytes=" + std::to_string(want.offset) + "-";
    if (length && *length > 0) want.value += std::to_string(want.offset + *length - 1);
  }
  return want;
}

Status CheckRangeAnswer(const http::Response& r, const ResumeRange& want) {
  if (!want.ranged) return Status::Ok();
  std::string cr = r.Get("content-range");  // "bytes 10-19/100"
  if (r.status != 206 || cr.rfind("bytes " + std::to_string(want.offset) + "-", 0) != 0) {
    return Status::Protocol("asked for bytes from " + std::to_string(want.offset) +
                            ", got status " + std::to_string(r.status) + " " + cr);
  }
  std::optional<uint64_t> total = ContentRangeTotal(cr);
  if (total && want.offset >= *total) return Status::InvalidArgument("range not satisfiable");
  return Status::Ok();
}

ObjectInfo InfoFromAnswer(std::string_view key, const http::Response& r, bool* ranged) {
  ObjectInfo info;
  info.key = std::string(key);
  info.etag = s3::Unquote(r.Get("etag"));
  std::string len = r.Get("content-length");
  info.size = len.empty() ? 0 : std::strtoull(len.c_str(), nullptr, 10);
  std::optional<uint64_t> total = ContentRangeTotal(r.Get("content-range"));
  if (total) info.size = *total;
  if (ranged) *ranged = total.has_value();
  if (auto t = http::ParseHttpDate(r.Get("last-modified"))) info.last_modified = ClampedTimePoint(*t);
  ObjectHeaders& h = info.headers;
  h.content_type = r.Get("content-type");
  h.content_encoding = r.Get("content-encoding");
  h.content_disposition = r.Get("content-disposition");
  h.cache_control = r.Get("cache-control");
  h.content_language = r.Get("content-language");
  return info;
}

}  // namespace ferry
