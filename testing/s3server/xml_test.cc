#include "xml.h"

#include <gtest/gtest.h>

namespace ferry::s3server {
namespace {

TEST(XmlEscape, SpecialAndControlCharacters) {
  EXPECT_EQ(XmlEscape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
  EXPECT_EQ(XmlEscape(std::string("x\x01y\ty\nz\r", 8)), "x&#x1;y&#x9;y&#xA;z&#xD;");
  EXPECT_EQ(XmlEscape("caf\xc3\xa9 % + //"), "caf\xc3\xa9 % + //");
}

TEST(XmlUnescape, RoundTripsEscape) {
  for (std::string s : {std::string("plain"), std::string("a&b<c>\"'"),
                        std::string("ctl\x01\x1f\n\r\t", 8), std::string("\xe2\x82\xac+%20")}) {
    EXPECT_EQ(XmlUnescape(XmlEscape(s)), s);
  }
  EXPECT_EQ(XmlUnescape("&#8364;&#x20AC;"), "\xe2\x82\xac\xe2\x82\xac");
  EXPECT_EQ(XmlUnescape("&bogus; & alone"), "&bogus; & alone");
}

TEST(FindElements, CompleteMultipartBody) {
  std::string body =
      "<?xml version=\"1.0\"?><CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/"
      "2006-03-01/\"><Part><ETag>&quot;aa&quot;</ETag><PartNumber>1</PartNumber></Part>"
      "<Part>\n <PartNumber>2</PartNumber><ETag>\"bb\"</ETag></Part>"
      "<PartX>no</PartX></CompleteMultipartUpload>";
  auto parts = FindElements(body, "Part");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(FirstElementText(parts[0], "ETag"), "\"aa\"");
  EXPECT_EQ(FirstElementText(parts[0], "PartNumber"), "1");
  EXPECT_EQ(FirstElementText(parts[1], "ETag"), "\"bb\"");
  EXPECT_EQ(FirstElementText(parts[1], "PartNumber"), "2");
  EXPECT_EQ(FirstElementText(body, "Missing", "dflt"), "dflt");
}

TEST(XmlWriter, BuildsNestedDocument) {
  XmlWriter w("Root", /*with_namespace=*/false);
  w.Open("A");
  w.Element("Key", "x<y");
  w.Close();
  w.Element("B", "");
  EXPECT_EQ(std::move(w).Finish(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Root><A><Key>x&lt;y</Key></A><B></B>"
            "</Root>");
}

TEST(ErrorXml, HasAwsShape) {
  std::string xml = ErrorXml("NoSuchKey", "gone", "/b/k&1", "RID");
  EXPECT_NE(xml.find("<Error><Code>NoSuchKey</Code><Message>gone</Message>"
                     "<Resource>/b/k&amp;1</Resource><RequestId>RID</RequestId></Error>"),
            std::string::npos);
}

}  // namespace
}  // namespace ferry::s3server
