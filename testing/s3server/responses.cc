#include "responses.h"

#include "s3/aws_chunked.h"
#include "xml.h"

namespace ferry::s3server {

HttpResponse ErrorResponse(const Status& st, std::string_view resource, std::string_view request_id,
                           bool head) {
  HttpResponse res;
  res.status = st.http_status() ? st.http_status() : 500;
  std::string code = st.remote_code().empty() ? "InternalError" : st.remote_code();
  res.head = head;
  if (!head) {
    res.body = ErrorXml(code, st.message(), resource, request_id);
    res.SetHeader("Content-Type", "application/xml");
  }
  return res;
}

HttpResponse ErrorResponse(const Status& st, const HandlerContext& ctx) {
  return ErrorResponse(st, ctx.target.canonical_path, ctx.request_id, ctx.req.method == "HEAD");
}

HttpResponse XmlResponse(std::string xml, int status) {
  HttpResponse res;
  res.status = status;
  res.body = std::move(xml);
  res.SetHeader("Content-Type", "application/xml");
  return res;
}

std::string QuotedEtag(std::string_view etag) {
  std::string out = "\"";
  out += etag;
  out += '"';
  return out;
}

std::string WrongEtag(std::string_view etag) {
  std::string out(etag);
  if (out.empty()) return "00000000000000000000000000000000";
  // Flip the first hex digit: same shape (and "-N" suffix), different value.
  out[0] = out[0] == '0' ? '1' : '0';
  return out;
}

std::string ResponseEtag(const HandlerContext& ctx, std::string_view etag) {
  return QuotedEtag(ctx.fault == FaultKind::kWrongEtag ? WrongEtag(etag) : std::string(etag));
}

ObjectMeta MetaFromHeaders(const HttpRequest& req) {
  ObjectMeta m;
  m.content_type = req.HeaderOr("content-type");
  m.content_disposition = req.HeaderOr("content-disposition");
  m.cache_control = req.HeaderOr("cache-control");
  m.content_language = req.HeaderOr("content-language");
  m.expires = req.HeaderOr("expires");
  m.content_encoding = s3::WithoutAwsChunked(req.HeaderOr("content-encoding"));
  constexpr std::string_view kMeta = "x-amz-meta-";
  for (const auto& [name, value] : req.headers) {
    if (name.size() > kMeta.size() && name.compare(0, kMeta.size(), kMeta) == 0) {
      m.user[name.substr(kMeta.size())] = value;
    }
  }
  return m;
}

std::string ListingEncode(std::string_view value, bool url_encoding) {
  return url_encoding ? s3::UriEncode(value, /*encode_slash=*/false) : std::string(value);
}

}  // namespace ferry::s3server
