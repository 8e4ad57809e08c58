#include "store/azure/shared_key.h"

#include <gtest/gtest.h>

#include "crypto/digest.h"
#include "store/azure/azure_config.h"

namespace ferry::azure {
namespace {

std::string DevKey() {
  std::string raw;
  EXPECT_TRUE(Base64Decode(kDevAccountKey, &raw));
  return raw;
}

// The canonicalized resource examples of Microsoft's "Authorize with Shared
// Key" page: query names lower-cased and sorted, values of one name sorted
// and joined with ','.
TEST(SharedKey, CanonicalizedResourceAsDocumented) {
  EXPECT_EQ(CanonicalizedResource("myaccount", "/mycontainer",
                                  {{"restype", "container"}, {"comp", "metadata"}}),
            "/myaccount/mycontainer\ncomp:metadata\nrestype:container");
  EXPECT_EQ(CanonicalizedResource("myaccount", "/mycontainer",
                                  {{"restype", "container"},
                                   {"comp", "list"},
                                   {"include", "snapshots"},
                                   {"include", "metadata"},
                                   {"include", "uncommittedblobs"}}),
            "/myaccount/mycontainer\ncomp:list\ninclude:metadata,snapshots,uncommittedblobs\n"
            "restype:container");
  EXPECT_EQ(CanonicalizedResource("myaccount", "", {}), "/myaccount/");
  // Path-style (Azurite): the account appears twice; the path stays encoded.
  EXPECT_EQ(CanonicalizedResource("devstoreaccount1", "/devstoreaccount1/c/a%20b", {{"COMP", "Block"}}),
            "/devstoreaccount1/devstoreaccount1/c/a%20b\ncomp:Block");
}

TEST(SharedKey, CanonicalizedHeadersSortFoldAndKeepOnlyXMs) {
  http::Headers h = {{"X-MS-Version", "2021-08-06"},
                     {"Content-Type", "text/plain"},
                     {"x-ms-meta-b", "  two   words "},
                     {"x-ms-date", "Fri, 26 Jun 2015 23:39:12 GMT"},
                     {"x-ms-meta-a", "1"}};
  EXPECT_EQ(CanonicalizedHeaders(h),
            "x-ms-date:Fri, 26 Jun 2015 23:39:12 GMT\nx-ms-meta-a:1\nx-ms-meta-b:two words\n"
            "x-ms-version:2021-08-06\n");
}

TEST(SharedKey, StringToSignHasTheStandardHeadersInOrder) {
  SharedKeyRequest r;
  r.method = "GET";
  r.path = "/acct/c/k";
  r.headers = {{"Range", "bytes=0-9"},        {"If-Match", "\"0x8D\""},
               {"Content-Length", "0"},       {"x-ms-date", "D"},
               {"x-ms-version", "2021-08-06"}};
  // A zero Content-Length signs as empty (versions 2015-02-21 and later).
  EXPECT_EQ(StringToSign("acct", r),
            "GET\n\n\n\n\n\n\n\n\"0x8D\"\n\n\nbytes=0-9\nx-ms-date:D\nx-ms-version:2021-08-06\n"
            "/acct/acct/c/k");
}

// Signatures checked against an independent HMAC-SHA256 (openssl dgst) of
// the same string to sign under the Azurite account key.
TEST(SharedKey, SignatureMatchesAnIndependentHmac) {
  SharedKeyRequest put;
  put.method = "PUT";
  put.path = "/devstoreaccount1/photos/a%20b.txt";
  put.headers = {{"Content-Type", "text/plain"},
                 {"Content-Length", "11"},
                 {"x-ms-blob-type", "BlockBlob"},
                 {"x-ms-meta-color", "blue"},
                 {"x-ms-date", "Fri, 26 Jun 2015 23:39:12 GMT"},
                 {"x-ms-version", "2021-08-06"}};
  EXPECT_EQ(SharedKeyAuthorization(kDevAccount, DevKey(), put),
            "SharedKey devstoreaccount1:m/Xa9PI2Bgm//pWB2rAON1QmuKutR0mR3CfyCNJ+DXk=");

  SharedKeyRequest list;
  list.method = "GET";
  list.path = "/mycontainer";
  list.query = {{"restype", "container"}, {"comp", "list"}, {"include", "snapshots"},
                {"include", "metadata"}};
  list.headers = {{"x-ms-date", "Fri, 26 Jun 2015 23:39:12 GMT"}, {"x-ms-version", "2021-08-06"}};
  EXPECT_EQ(SharedKeyAuthorization("myaccount", DevKey(), list),
            "SharedKey myaccount:uukxAXsDNTktOSz4y+jUiNoYicHhQmHZnDaOwPdAa5o=");
}

}  // namespace
}  // namespace ferry::azure
