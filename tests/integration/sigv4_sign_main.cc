// ferry_sigv4_sign: signs requests described as JSON lines on stdin with
// ferry's SigV4 signer and prints one Authorization header per line. Used by
// sigv4_botocore_test.py to compare ferry with botocore, case by case.
//
// Input line: {"method":..., "path": decoded path, "query": [[k, v]...],
//   "headers": [[k, v]...], "payload_hash":..., "access_key":..., "secret":...,
//   "token":..., "region":..., "amz_date": "YYYYMMDDTHHMMSSZ"}
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "s3/sigv4.h"

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    ferry::s3::RequestToSign req;
    req.method = j.at("method");
    req.path = j.at("path");
    for (const auto& kv : j.at("query")) req.query.emplace_back(kv.at(0), kv.at(1));
    for (const auto& kv : j.at("headers")) req.headers.emplace_back(kv.at(0), kv.at(1));
    req.payload_hash = j.at("payload_hash");
    ferry::s3::Credentials creds{j.at("access_key"), j.at("secret"), j.value("token", "")};
    ferry::s3::SignRequest(req, creds, j.at("region").get<std::string>(),
                           j.at("amz_date").get<std::string>());
    for (const auto& [k, v] : req.headers) {
      if (k == "authorization") std::cout << v << "\n";
    }
  }
  return 0;
}
