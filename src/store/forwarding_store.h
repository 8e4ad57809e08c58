#pragma once
// An ObjectStore that passes every call to another one, as nbdkit's filters
// pass what they do not change: a store that changes a few calls (a test's
// injected faults, a listing reordered) derives from it and overrides only
// those. The inner store must outlive it. Thread-safe as the inner store is.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/object_store.h"

namespace ferry {

class ForwardingStore : public ObjectStore {
 public:
  explicit ForwardingStore(ObjectStore& inner) : inner_(inner) {}

  std::string Describe() const override { return inner_.Describe(); }
  StoreFeatures Features() const override { return inner_.Features(); }
  Result<ListPage> List(const ListOptions& o) override { return inner_.List(o); }
  Result<ObjectInfo> Head(std::string_view k) override { return inner_.Head(k); }
  Result<ObjectAttributes> Attributes(std::string_view k) override { return inner_.Attributes(k); }
  Result<ObjectInfo> Get(std::string_view k, const GetOptions& o, ByteSink& s) override {
    return inner_.Get(k, o, s);
  }
  Result<ObjectInfo> Put(std::string_view k, ByteSource& b, uint64_t n,
                         const PutOptions& o) override {
    return inner_.Put(k, b, n, o);
  }
  Result<std::string> CreateMultipart(std::string_view k, const PutOptions& o) override {
    return inner_.CreateMultipart(k, o);
  }
  Result<PartInfo> UploadPart(std::string_view k, std::string_view u, int n, ByteSource& b,
                              uint64_t s, const PartOptions& m) override {
    return inner_.UploadPart(k, u, n, b, s, m);
  }
  Result<ObjectInfo> CompleteMultipart(std::string_view k, std::string_view u,
                                       const std::vector<PartInfo>& p) override {
    return inner_.CompleteMultipart(k, u, p);
  }
  Status AbortMultipart(std::string_view k, std::string_view u) override {
    return inner_.AbortMultipart(k, u);
  }
  Result<std::vector<PartInfo>> ListParts(std::string_view k, std::string_view u) override {
    return inner_.ListParts(k, u);
  }
  Result<std::vector<UploadInfo>> ListMultipartUploads(std::string_view k) override {
    return inner_.ListMultipartUploads(k);
  }
  Result<ObjectInfo> Copy(std::string_view a, std::string_view b,
                          const std::optional<ObjectHeaders>& h) override {
    return inner_.Copy(a, b, h);
  }
  Status Delete(std::string_view k) override { return inner_.Delete(k); }
  // Not forwarded: the derived store's calls must not bypass its overrides.
  AsyncObjectIo* Async() override { return nullptr; }

 protected:
  ObjectStore& inner() { return inner_; }

 private:
  ObjectStore& inner_;
};

}  // namespace ferry
