// Fuzz target: what an S3 or Azure server answers, as ferry's clients read
// it — a hostile or broken server. One input is a response:
//   STATUS\nName: value\n...\n\nBODY
// and the body goes through every XML reader (S3 list, error, multipart,
// copy; Azure list and block list), the head through the error
// classifiers and the object-header readers.
// Invariants: every answer of 400 or above is an error; a listing that
// parses gives keys that survive being written back as XML and read again
// (escaping and decoding agree); parts and uploads parse to sane numbers;
// nothing crashes on any input.
#include <charconv>

#include "fuzz_util.h"
#include "http/client.h"
#include "s3/xml.h"
#include "store/azure/azure_errors.h"
#include "store/azure/azure_headers.h"
#include "store/azure/azure_xml.h"
#include "store/s3/s3_errors.h"
#include "store/s3/s3_headers.h"

namespace {

using namespace ferry;
using ferry::fuzz::Check;

constexpr const char* kName = "s3_answers_fuzz";

http::Response ReadResponse(fuzz::InputReader& in) {
  http::Response r;
  std::string_view status = in.Until('\n');
  int code = 0;
  std::from_chars(status.data(), status.data() + status.size(), code);
  r.status = code;
  for (std::string_view line = in.Until('\n'); !line.empty(); line = in.Until('\n')) {
    size_t colon = line.find(':');
    std::string_view name = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    while (!value.empty() && value[0] == ' ') value.remove_prefix(1);
    r.headers.emplace_back(std::string(name), std::string(value));
  }
  r.body = std::string(in.Rest());
  return r;
}

// The page written back as a ListObjectsV2 document, as a server would.
std::string ListingXml(const ListPage& page) {
  std::string x = "<ListBucketResult>";
  for (const auto& o : page.objects) {
    x += "<Contents><Key>" + s3::XmlEscape(o.key) + "</Key><Size>" + std::to_string(o.size) +
         "</Size><ETag>\"" + s3::XmlEscape(o.etag) + "\"</ETag></Contents>";
  }
  for (const auto& p : page.common_prefixes) {
    x += "<CommonPrefixes><Prefix>" + s3::XmlEscape(p) + "</Prefix></CommonPrefixes>";
  }
  return x + "<IsTruncated>false</IsTruncated></ListBucketResult>";
}

// XML 1.0 cannot carry these at all, escaped or not.
bool XmlCarries(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return s.find('\r') == std::string_view::npos;  // a reader may normalise line ends
}

void CheckListing(std::string_view body) {
  auto page = s3::ParseListObjectsV2(body);
  if (!page.ok()) return;
  for (const auto& o : page->objects) {
    if (!XmlCarries(o.key) || !XmlCarries(o.etag)) return;
  }
  for (const auto& p : page->common_prefixes) {
    if (!XmlCarries(p)) return;
  }
  auto again = s3::ParseListObjectsV2(ListingXml(*page));
  Check(again.ok(), kName, "a parsed listing written back does not parse");
  Check(again->objects.size() == page->objects.size() &&
            again->common_prefixes == page->common_prefixes,
        kName, "a listing written back lists other entries");
  for (size_t i = 0; i < page->objects.size(); ++i) {
    Check(again->objects[i].key == page->objects[i].key, kName,
          "a key changed through XML escaping");
    Check(again->objects[i].size == page->objects[i].size, kName, "a size changed through XML");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputReader in(data, size);
  http::Response r = ReadResponse(in);

  Status s3_error = s3::ErrorFromResponse(r);
  Status azure_error = azure::ErrorFromResponse(r);
  if (r.status >= 400) {
    Check(!s3_error.ok() && !azure_error.ok(), kName, "an error answer classified as success");
  }
  (void)s3::InfoFromHeaders("key", r);
  (void)s3::EtagIsMd5(r);
  (void)azure::InfoFromBlobResponse("key", r);

  s3::ErrorDocument doc;
  (void)s3::ParseError(r.body, &doc);
  CheckListing(r.body);
  (void)s3::ParseInitiateMultipartUpload(r.body);
  (void)s3::ParseCompleteMultipartUpload(r.body);
  (void)s3::ParseCopyResult(r.body);
  bool truncated = false;
  int next_part = 0;
  if (auto parts = s3::ParseListParts(r.body, &truncated, &next_part); parts.ok()) {
    for (const auto& p : *parts)
      Check(p.number >= 1 && p.number <= 10000, kName, "a part number out of 1..10000");
  }
  std::string key_marker, upload_marker;
  (void)s3::ParseListMultipartUploads(r.body, &truncated, &key_marker, &upload_marker);
  (void)azure::ParseListBlobs(r.body);
  (void)azure::ParseBlockList(r.body);
  TimePoint t;
  (void)s3::ParseIso8601(r.Get("Last-Modified"), &t);
  return 0;
}
