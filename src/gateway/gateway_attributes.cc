// ListParts and GetObjectAttributes on the gateway. ListParts: the
// destination's, where the gateway's uploads go. GetObjectAttributes: answered by whichever store
// holds the object for this client (the destination once it is copied or written, else the source,
// whose attributes a copy carries over).

#include <algorithm>
#include <charconv>

#include "gateway/gateway_internal.h"
#include "gateway/s3_xml.h"
#include "s3/xml.h"

namespace ferry::gateway {
namespace {

int QueryInt(const Request& r, std::string_view name, int otherwise) {
  const std::string* v = r.target.Query(name);
  int n = otherwise;
  if (v != nullptr) std::from_chars(v->data(), v->data() + v->size(), n);
  return n;
}

}  // namespace

// The destination's parts of an upload made through the gateway.
http::ServerResponse Gateway::Impl::ListParts(const Request& r) {
  const std::string* id = r.target.Query("uploadId");
  auto parts = stores.dst->ListParts(DstKey(r.key), id ? *id : "");
  if (!parts.ok()) return Error(r, parts.status());
  std::sort(parts->begin(), parts->end(),
            [](const PartInfo& a, const PartInfo& b) { return a.number < b.number; });
  http::ServerResponse resp;
  http::SetHeader(&resp.headers, "Content-Type", "application/xml");
  resp.SetBody(ListPartsXml(options.bucket, r.key, id ? *id : "", *parts,
                            std::clamp(QueryInt(r, "max-parts", 1000), 0, 1000),
                            std::max(0, QueryInt(r, "part-number-marker", 0))));
  return Count(std::move(resp), From::kWrite);
}

http::ServerResponse Gateway::Impl::GetObjectAttributes(const Request& r) {
  auto wanted = s3::ParseObjectAttributeNames(r.Header("x-amz-object-attributes"));
  if (!wanted.ok()) return Error(r, wanted.status());
  auto found = Find(r.key, false);
  if (!found.ok()) return Error(r, found.status());
  if (found->copy) {  // an on-demand copy in flight lands first
    std::unique_lock lock(found->copy->mu);
    found->copy->cv.wait(lock, [&] { return found->copy->persisted; });
  }
  const bool at_dst = found->at_destination || found->copy || found->from == From::kDestination;
  auto attrs =
      at_dst ? stores.dst->Attributes(DstKey(r.key)) : stores.src->Attributes(SrcKey(r.key));
  if (!attrs.ok() && at_dst && !found->at_destination &&
      attrs.status().code() == ErrorCode::kNotFound) {
    attrs = stores.src->Attributes(SrcKey(r.key));  // the copy gave up: still at the source
  }
  if (!attrs.ok()) return Error(r, attrs.status());
  http::ServerResponse resp;
  http::SetHeader(&resp.headers, "Content-Type", "application/xml");
  resp.SetBody(ObjectAttributesXml(*attrs, *wanted,
                                   std::clamp(QueryInt(r, "max-parts", 1000), 0, 1000),
                                   std::max(0, QueryInt(r, "part-number-marker", 0))));
  return Count(std::move(resp), found->from);
}

}  // namespace ferry::gateway
