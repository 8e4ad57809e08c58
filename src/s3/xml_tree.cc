#include "s3/xml_tree.h"

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <sstream>
#include <string>

namespace ferry::s3 {

namespace pt = boost::property_tree;

Status ParseXmlTree(std::string_view xml, std::string_view what, pt::ptree* tree) {
  try {
    std::istringstream in{std::string(xml)};
    pt::read_xml(in, *tree, pt::xml_parser::no_comments);
  } catch (const pt::xml_parser_error& e) {
    return Status::Protocol("malformed " + std::string(what) + " XML: " + e.message());
  }
  return Status::Ok();
}

Result<const pt::ptree*> XmlRoot(const pt::ptree& tree, const char* root, std::string_view what) {
  auto it = tree.find(root);
  if (it == tree.not_found()) {
    return Status::Protocol(std::string(what) + ": expected <" + root + "> document");
  }
  return &it->second;
}

}  // namespace ferry::s3
