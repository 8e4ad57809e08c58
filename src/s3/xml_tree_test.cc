#include "s3/xml_tree.h"

#include <gtest/gtest.h>

#include <boost/property_tree/ptree.hpp>

namespace ferry::s3 {
namespace {

namespace pt = boost::property_tree;

TEST(XmlTree, ParsesOrSaysWhichDocumentFailed) {
  struct Case {
    const char* xml;
    bool ok;
  } cases[] = {
      {"<?xml version=\"1.0\"?><A><B>x</B></A>", true},
      {"<A><!-- dropped --><B>x</B></A>", true},
      {"<A><B>x</A>", false},  // not well-formed
      {"<A>", false},          // cut short
      {"", true},              // an empty tree: XmlRoot refuses it
  };
  for (const Case& c : cases) {
    pt::ptree tree;
    Status s = ParseXmlTree(c.xml, "Test", &tree);
    EXPECT_EQ(s.ok(), c.ok) << c.xml;
    if (!c.ok) {
      EXPECT_EQ(s.code(), ErrorCode::kProtocol) << c.xml;
      EXPECT_NE(s.ToString().find("malformed Test XML"), std::string::npos) << s.ToString();
    }
  }
}

TEST(XmlTree, CommentsAreDropped) {
  pt::ptree tree;
  ASSERT_TRUE(ParseXmlTree("<A><!-- c --><B>x</B></A>", "Test", &tree).ok());
  auto root = XmlRoot(tree, "A", "Test");
  ASSERT_TRUE(root.ok());
  ASSERT_EQ((*root)->size(), 1u);
  EXPECT_EQ((*root)->get<std::string>("B"), "x");
}

TEST(XmlTree, RootMustBeTheOneExpected) {
  for (const char* xml : {"<Other/>", ""}) {
    pt::ptree tree;
    ASSERT_TRUE(ParseXmlTree(xml, "Test", &tree).ok()) << xml;
    auto root = XmlRoot(tree, "A", "Test");
    ASSERT_FALSE(root.ok()) << xml;
    EXPECT_EQ(root.status().code(), ErrorCode::kProtocol);
    EXPECT_NE(root.status().ToString().find("Test: expected <A> document"), std::string::npos)
        << root.status().ToString();
  }
}

}  // namespace
}  // namespace ferry::s3
