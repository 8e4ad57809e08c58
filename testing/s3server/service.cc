#include "service.h"

#include <cstdio>

namespace ferry::s3server {

Service::Service(ServiceOptions options, std::unique_ptr<Storage> storage)
    : options_(std::move(options)), storage_(std::move(storage)), auth_(options_.auth) {}

Status Service::CreateInitialBuckets() {
  for (const auto& b : options_.buckets) {
    if (storage_->CheckBucket(b).ok()) continue;
    FERRY_RETURN_IF_ERROR(storage_->CreateBucket(b));
  }
  return Status::Ok();
}

Status Service::ClearData() {
  FERRY_RETURN_IF_ERROR(storage_->Clear());
  return CreateInitialBuckets();
}

std::string Service::NextRequestId() {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llX",
                static_cast<unsigned long long>(next_request_id_.fetch_add(1)));
  return buf;
}

}  // namespace ferry::s3server
