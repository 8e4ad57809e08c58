#pragma once
// Reading an XML document into a Boost property tree: the first step of
// every parser of S3's documents (xml.cc) and of the Azure Blob service's,
// which share their shape (store/azure/azure_xml.cc). Comments are dropped;
// a document that does not parse is a protocol error, never an exception.

#include <boost/property_tree/ptree_fwd.hpp>
#include <string_view>

#include "base/status.h"

namespace ferry::s3 {

// Parses `xml` into *tree, which must be empty; `what` names the document
// in errors ("malformed WHAT XML: ..."). An out-parameter, not a Result:
// Boost 1.74's ptree has no move constructor, so every hand-over of one is
// a deep copy, which for a 1,000-key listing was most of the parse's cost.
Status ParseXmlTree(std::string_view xml, std::string_view what,
                    boost::property_tree::ptree* tree);

// The document element of a parsed `tree` when it is named `root`; else
// kProtocol "WHAT: expected <ROOT> document". Points into `tree`.
Result<const boost::property_tree::ptree*> XmlRoot(const boost::property_tree::ptree& tree,
                                                   const char* root, std::string_view what);

}  // namespace ferry::s3
