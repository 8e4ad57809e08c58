#include "blob.h"

namespace ferry::s3server {

Result<std::shared_ptr<const Blob>> BlobStore::Concat(
    const std::vector<std::shared_ptr<const Blob>>& parts) {
  uint64_t total = 0;
  for (const auto& p : parts) total += p->size();
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> w, NewWriter(total));
  std::string scratch;
  for (const auto& p : parts) {
    for (uint64_t off = 0; off < p->size();) {
      FERRY_ASSIGN_OR_RETURN(std::string_view v, p->ReadAt(off, 1 << 20, &scratch));
      FERRY_RETURN_IF_ERROR(w->Append(v));
      off += v.size();
    }
  }
  return w->Finish();
}

Result<std::string> ReadAll(const Blob& blob) {
  std::string out, scratch;
  out.reserve(static_cast<size_t>(blob.size()));
  while (out.size() < blob.size()) {
    FERRY_ASSIGN_OR_RETURN(std::string_view v, blob.ReadAt(out.size(), 1 << 20, &scratch));
    out.append(v);
  }
  return out;
}

}  // namespace ferry::s3server
