#pragma once
// Just enough XML for S3: escaping, a writer for response documents, and a
// scanner for the two request documents the server reads
// (CompleteMultipartUpload and Delete), which have no nesting of same-named
// elements and no CDATA.

#include <string>
#include <string_view>
#include <vector>

namespace ferry::s3server {

// Escapes text for element content or attribute values. Bytes >= 0x80 pass
// through (keys are UTF-8); control characters, which XML 1.0 cannot carry
// literally, become numeric references (&#x1;) the way S3 emits them.
std::string XmlEscape(std::string_view text);
// Resolves the five named entities and numeric references (&#N; &#xH;,
// encoded as UTF-8). Unknown entities are kept verbatim.
std::string XmlUnescape(std::string_view text);

// Inner text (still escaped) of every <tag>...</tag> in `xml`, in document
// order. Tags with attributes (<tag a="b">) match too; self-closing tags
// yield "".
std::vector<std::string_view> FindElements(std::string_view xml, std::string_view tag);
// Unescaped text of the first <tag> in `xml`, or `fallback`.
std::string FirstElementText(std::string_view xml, std::string_view tag,
                             std::string fallback = "");

// Builds a document top-down:
//   XmlWriter w("ListBucketResult");   // with the S3 xmlns
//   w.Element("Name", bucket); w.Open("Contents"); ... w.Close();
//   std::string doc = std::move(w).Finish();
class XmlWriter {
 public:
  explicit XmlWriter(std::string_view root, bool with_namespace = true);
  void Open(std::string_view tag);
  void Close();
  // <tag>escaped text</tag>
  void Element(std::string_view tag, std::string_view text);
  std::string Finish() &&;

 private:
  std::string out_;
  std::vector<std::string> open_;
};

// The S3 error document.
std::string ErrorXml(std::string_view code, std::string_view message, std::string_view resource,
                     std::string_view request_id);

}  // namespace ferry::s3server
