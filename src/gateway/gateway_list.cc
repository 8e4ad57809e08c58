// The gateway's listings (ListObjectsV2 and V1): the destination's page
// merged with the source's until the job completes (list_merge.h), keys
// deleted through the gateway left out.

#include <charconv>

#include "gateway/gateway_internal.h"
#include "gateway/s3_xml.h"

namespace ferry::gateway {
namespace {

// One side's page under `store_prefix`, its names in the client's namespace.
Result<SideListing> ListSide(ObjectStore& store, const std::string& store_prefix,
                             const ListParams& p, const std::string& after) {
  ListOptions o;
  o.prefix = store_prefix + p.prefix;
  o.delimiter = p.delimiter;
  if (!after.empty()) o.start_after = store_prefix + after;
  o.max_keys = p.max_keys;
  FERRY_ASSIGN_OR_RETURN(ListPage page, store.List(o));
  SideListing side;
  side.truncated = page.truncated;
  // Nothing at or before `after` (a store may name again the common prefix
  // a page ended with).
  for (ObjectInfo& info : page.objects) {
    if (info.key.compare(0, store_prefix.size(), store_prefix) != 0) continue;
    info.key.erase(0, store_prefix.size());
    if (!after.empty() && info.key <= after) continue;
    side.objects.push_back(std::move(info));
  }
  for (std::string& cp : page.common_prefixes) {
    if (cp.compare(0, store_prefix.size(), store_prefix) != 0) continue;
    std::string name = cp.substr(store_prefix.size());
    if (!after.empty() && name <= after) continue;
    side.prefixes.push_back(std::move(name));
  }
  return side;
}

}  // namespace

http::ServerResponse Gateway::Impl::List(const Request& r) {
  ListParams p;
  p.v2 = r.target.op == s3::Op::kListObjectsV2;
  p.bucket = options.bucket;
  auto q = [&](std::string_view name) {
    const std::string* v = r.target.Query(name);
    return v ? *v : std::string();
  };
  p.prefix = q("prefix");
  p.delimiter = q("delimiter");
  p.url_encoding = q("encoding-type") == "url";
  std::string max = q("max-keys");
  if (!max.empty()) {
    int n = -1;
    auto [end, ec] = std::from_chars(max.data(), max.data() + max.size(), n);
    if (ec != std::errc() || end != max.data() + max.size() || n < 0) {
      return Error(r, s3::S3ErrorStatus(400, "InvalidArgument", "max-keys must be a number"));
    }
    p.max_keys = std::clamp(n, 1, 1000);
  }
  std::string after;
  if (p.v2) {
    p.start_after = q("start-after");
    p.continuation_token = q("continuation-token");
    after = p.start_after;
    if (!p.continuation_token.empty()) {
      auto token = DecodeToken(p.continuation_token);
      if (!token.ok()) {
        return Error(r, s3::S3ErrorStatus(400, "InvalidArgument", token.status().message()));
      }
      after = std::max(after, *token);
    }
  } else {
    p.start_after = q("marker");
    after = p.start_after;
    // V1's NextMarker after a common prefix is the prefix: go past it.
    if (!p.delimiter.empty() && after.size() >= p.delimiter.size() &&
        after.compare(after.size() - p.delimiter.size(), p.delimiter.size(), p.delimiter) == 0) {
      after += '\xff';
    }
  }
  auto dst = ListSide(*stores.dst, stores.dst_prefix, p, after);
  if (!dst.ok()) return Error(r, dst.status());
  std::optional<SideListing> src;
  std::set<std::string> deleted;
  if (Ended() != state::JobState::kCompleted) {
    auto s = ListSide(*stores.src, stores.src_prefix, p, after);
    if (!s.ok()) {
      metrics.source_errors++;
      return Error(r, s3::S3ErrorStatus(503, "ServiceUnavailable",
                                        "the migration's source is unavailable, so the keys not "
                                        "copied yet cannot be listed: " +
                                            s.status().message()));
    }
    src = std::move(*s);
    std::vector<std::string> keys;
    for (const ObjectInfo& o : src->objects) keys.push_back(SrcKey(o.key));
    auto marks = stores.state->KeyMarks(options.job, keys);
    if (!marks.ok() && !Ended(true)) return Error(r, marks.status());
    if (!marks.ok()) marks = std::map<std::string, state::KeyMark>();  // archived meanwhile
    for (const auto& [k, m] : *marks) {
      if (m == state::KeyMark::kDeleted) deleted.insert(k.substr(stores.src_prefix.size()));
    }
  }
  MergedListing page = MergeListings(*dst, src ? &*src : nullptr, deleted, p.max_keys);
  http::ServerResponse resp;
  http::SetHeader(&resp.headers, "Content-Type", "application/xml");
  resp.SetBody(ListXml(p, page, page.truncated ? EncodeToken(page.next_after) : ""));
  return Count(std::move(resp), From::kListing);
}

}  // namespace ferry::gateway
