#include "store/azure/azure_xml.h"

#include <boost/property_tree/ptree.hpp>
#include <charconv>

#include "base/unix_time.h"
#include "crypto/digest.h"
#include "http/date.h"
#include "s3/sigv4.h"
#include "s3/xml.h"
#include "s3/xml_tree.h"

namespace ferry::azure {
namespace {

namespace pt = boost::property_tree;

// The child `name` of `node`, or an empty tree (never a temporary).
const pt::ptree& Child(const pt::ptree& node, const char* name) {
  static const pt::ptree kEmpty;
  auto it = node.find(name);
  return it == node.not_found() ? kEmpty : it->second;
}

std::string Text(const pt::ptree& node, const char* name) {
  auto it = node.find(name);
  return it == node.not_found() ? "" : it->second.data();
}

Result<uint64_t> Number(const pt::ptree& node, const char* name) {
  std::string text = Text(node, name);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) {
    return Status::Protocol(std::string("bad <") + name + "> \"" + text + "\"");
  }
  return v;
}

// A <Name>, decoded when the service marked it Encoded="true".
Result<std::string> NameOf(const pt::ptree& entry) {
  auto it = entry.find("Name");
  if (it == entry.not_found()) return Status::Protocol("List Blobs: an entry without <Name>");
  std::string name = it->second.data();
  if (Text(Child(it->second, "<xmlattr>"), "Encoded") == "true") {
    std::string decoded;
    if (!s3::UriDecode(name, &decoded)) return Status::Protocol("List Blobs: bad encoded name");
    name = std::move(decoded);
  }
  return name;
}

Result<ObjectInfo> BlobOf(const pt::ptree& blob) {
  ObjectInfo info;
  FERRY_ASSIGN_OR_RETURN(info.key, NameOf(blob));
  info.etag_is_md5 = false;
  const pt::ptree& p = Child(blob, "Properties");
  FERRY_ASSIGN_OR_RETURN(info.size, Number(p, "Content-Length"));
  info.etag = s3::Unquote(Text(p, "Etag"));
  if (auto t = http::ParseHttpDate(Text(p, "Last-Modified"))) info.last_modified = ClampedTimePoint(*t);
  info.md5_hex = Md5HexFromBase64(Text(p, "Content-MD5"));
  info.headers.content_type = Text(p, "Content-Type");
  return info;
}

}  // namespace

std::string Md5HexFromBase64(std::string_view b64) {
  std::string raw;
  if (b64.empty() || !Base64Decode(b64, &raw) || raw.size() != 16) return "";
  return HexLower(raw);
}

Result<BlobListing> ParseListBlobs(std::string_view xml) {
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(s3::ParseXmlTree(xml, "List Blobs", &tree));
  FERRY_ASSIGN_OR_RETURN(const pt::ptree* root, s3::XmlRoot(tree, "EnumerationResults", "List Blobs"));
  BlobListing out;
  out.next_marker = Text(*root, "NextMarker");
  for (const auto& [tag, node] : Child(*root, "Blobs")) {
    if (tag == "Blob") {
      FERRY_ASSIGN_OR_RETURN(ObjectInfo info, BlobOf(node));
      out.blobs.push_back(std::move(info));
    } else if (tag == "BlobPrefix") {
      FERRY_ASSIGN_OR_RETURN(std::string name, NameOf(node));
      out.prefixes.push_back(std::move(name));
    }
  }
  return out;
}

Result<std::vector<Block>> ParseBlockList(std::string_view xml) {
  pt::ptree tree;
  FERRY_RETURN_IF_ERROR(s3::ParseXmlTree(xml, "Get Block List", &tree));
  FERRY_ASSIGN_OR_RETURN(const pt::ptree* root, s3::XmlRoot(tree, "BlockList", "Get Block List"));
  std::vector<Block> out;
  for (const char* list : {"CommittedBlocks", "UncommittedBlocks"}) {
    for (const auto& [tag, node] : Child(*root, list)) {
      if (tag != "Block") continue;
      Block b;
      if (!Base64Decode(Text(node, "Name"), &b.name)) {
        return Status::Protocol("Get Block List: a block id is not base64");
      }
      FERRY_ASSIGN_OR_RETURN(b.size, Number(node, "Size"));
      b.committed = std::string_view(list) == "CommittedBlocks";
      out.push_back(std::move(b));
    }
  }
  return out;
}

std::string BuildBlockList(const std::vector<std::string>& ids) {
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
  for (const std::string& id : ids) out += "<Latest>" + Base64Encode(id) + "</Latest>";
  out += "</BlockList>";
  return out;
}

}  // namespace ferry::azure
