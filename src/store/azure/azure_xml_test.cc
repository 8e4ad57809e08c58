#include "store/azure/azure_xml.h"

#include <gtest/gtest.h>

#include "crypto/digest.h"

namespace ferry::azure {
namespace {

TEST(AzureXml, ParsesListBlobsWithPrefixesMarkersAndEncodedNames) {
  const std::string md5 = Base64Encode(Md5("hello"));
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
      "<EnumerationResults ServiceEndpoint=\"http://127.0.0.1:10000/devstoreaccount1\" "
      "ContainerName=\"c\"><Prefix>p/</Prefix><MaxResults>3</MaxResults><Delimiter>/</Delimiter>"
      "<Blobs>"
      "<Blob><Name>p/a b+c%</Name><Properties>"
      "<Last-Modified>Fri, 26 Jun 2015 23:39:12 GMT</Last-Modified>"
      "<Etag>\"0x8D1E3F0A1B2C3D4\"</Etag><Content-Length>5</Content-Length>"
      "<Content-Type>text/plain</Content-Type><Content-MD5>" + md5 + "</Content-MD5>"
      "</Properties><Metadata/></Blob>"
      "<BlobPrefix><Name>p/dir/</Name></BlobPrefix>"
      "<Blob><Name Encoded=\"true\">p/ctl%01x</Name><Properties>"
      "<Etag>0x1</Etag><Content-Length>0</Content-Length></Properties></Blob>"
      "</Blobs><NextMarker>2!48!marker</NextMarker></EnumerationResults>";
  auto r = ParseListBlobs(xml);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->blobs.size(), 2u);
  const ObjectInfo& a = r->blobs[0];
  EXPECT_EQ(a.key, "p/a b+c%");
  EXPECT_EQ(a.size, 5u);
  EXPECT_EQ(a.etag, "0x8D1E3F0A1B2C3D4");
  EXPECT_FALSE(a.etag_is_md5);
  EXPECT_EQ(a.md5_hex, HexLower(Md5("hello")));
  EXPECT_EQ(a.headers.content_type, "text/plain");
  EXPECT_EQ(std::chrono::system_clock::to_time_t(a.last_modified), 1435361952);
  EXPECT_EQ(r->blobs[1].key, std::string("p/ctl\x01x"));
  EXPECT_EQ(r->blobs[1].md5_hex, "");
  EXPECT_EQ(r->prefixes, std::vector<std::string>{"p/dir/"});
  EXPECT_EQ(r->next_marker, "2!48!marker");
}

TEST(AzureXml, LastPageAndBadDocuments) {
  auto last = ParseListBlobs("<EnumerationResults><Blobs/><NextMarker/></EnumerationResults>");
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(last->blobs.empty());
  EXPECT_EQ(last->next_marker, "");
  for (const char* bad : {"<Error><Code>X</Code></Error>", "<EnumerationResults><Blobs>",
                          "<EnumerationResults><Blobs><Blob><Properties/></Blob></Blobs>"
                          "</EnumerationResults>",
                          "<EnumerationResults><Blobs><Blob><Name>a</Name><Properties>"
                          "<Content-Length>x</Content-Length></Properties></Blob></Blobs>"
                          "</EnumerationResults>"}) {
    auto r = ParseListBlobs(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kProtocol) << bad;
  }
}

TEST(AzureXml, BlockListsRoundTrip) {
  std::string xml = BuildBlockList({"ferry-a-00001", "ferry-a-00002"});
  EXPECT_EQ(xml,
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList><Latest>" +
                Base64Encode("ferry-a-00001") + "</Latest><Latest>" +
                Base64Encode("ferry-a-00002") + "</Latest></BlockList>");
  const std::string answer =
      "<BlockList><CommittedBlocks><Block><Name>" + Base64Encode("one") +
      "</Name><Size>10</Size></Block></CommittedBlocks><UncommittedBlocks><Block><Name>" +
      Base64Encode("two") + "</Name><Size>4194304</Size></Block></UncommittedBlocks></BlockList>";
  auto blocks = ParseBlockList(answer);
  ASSERT_TRUE(blocks.ok()) << blocks.status().ToString();
  ASSERT_EQ(blocks->size(), 2u);
  EXPECT_EQ((*blocks)[0].name, "one");
  EXPECT_TRUE((*blocks)[0].committed);
  EXPECT_EQ((*blocks)[1].name, "two");
  EXPECT_EQ((*blocks)[1].size, 4194304u);
  EXPECT_FALSE((*blocks)[1].committed);
  EXPECT_FALSE(ParseBlockList("<BlockList><UncommittedBlocks><Block><Name>!!</Name>"
                              "<Size>1</Size></Block></UncommittedBlocks></BlockList>")
                   .ok());
}

TEST(AzureXml, Md5HexFromBase64) {
  EXPECT_EQ(Md5HexFromBase64(Base64Encode(Md5(""))), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Md5HexFromBase64(""), "");
  EXPECT_EQ(Md5HexFromBase64("AAAA"), "");  // 3 bytes, not 16
  EXPECT_EQ(Md5HexFromBase64("%%%"), "");
}

}  // namespace
}  // namespace ferry::azure
