#pragma once
// POST /_admin/populate: fills a bucket with many deterministic objects
// without any client, network or disk traffic (benchmarks of bulk copies).
//
// Object i (0 <= i < count) is named
//   prefix + "d" + pad(i % dirs, 3) + "/o" + pad(i, 8)      e.g. "p/d123/o00012345"
// (pads widen when dirs or count need more digits), so a listing with
// delimiter "/" sees `dirs` common prefixes. Its size is drawn from the
// weighted `sizes` ranges and its bytes come from a xorshift stream, both
// seeded by (seed, i) alone: the same request gives the same objects, in any
// order. `extra` objects are named explicitly (e.g. a few very large ones);
// their bytes are seeded by (seed, key). Every object has a real MD5 ETag,
// Last-Modified = the time of the request and the given Content-Type.
// Objects are created in key order through the Storage API (so directory
// mode persists them too); an existing key is overwritten. Bodies are
// generated in bounded chunks: memory beyond the blobs themselves is small.
// Empty objects share one blob.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "storage.h"

namespace ferry::s3server {

struct PopulateSizeRange {
  uint64_t weight = 1;  // > 0
  uint64_t min = 0;     // bytes, inclusive
  uint64_t max = 0;     // bytes, inclusive, >= min
};

struct PopulateExtra {
  std::string key;
  uint64_t size = 0;
};

struct PopulateSpec {
  std::string bucket;
  std::string prefix;
  uint64_t count = 0;
  uint64_t seed = 0;
  uint32_t dirs = 256;  // number of "d###/" directories, >= 1
  std::vector<PopulateSizeRange> sizes{{1, 0, 0}};  // default: empty objects
  std::vector<PopulateExtra> extra;
  std::string content_type = "application/octet-stream";
};

struct PopulateResult {
  uint64_t created = 0;  // count + extra.size()
  uint64_t bytes = 0;    // total body bytes
};

// Upper bounds that keep a typo from exhausting memory.
constexpr uint64_t kPopulateMaxCount = 100'000'000;
constexpr uint64_t kPopulateMaxObjectSize = 5ull << 30;

// Parses the request body. Unknown fields, wrong types, zero weights,
// min > max, sizes above kPopulateMaxObjectSize, a count above
// kPopulateMaxCount and empty or too-long keys are InvalidArgument.
Result<PopulateSpec> PopulateSpecFromJson(const nlohmann::json& j);

// The key of object `index` under `spec` (see the top of this file).
std::string PopulateKey(const PopulateSpec& spec, uint64_t index);

// The size of object `index` under `spec` (deterministic in seed and index).
uint64_t PopulateSize(const PopulateSpec& spec, uint64_t index);

// Creates the objects. NoSuchBucket (404) if the bucket does not exist.
Result<PopulateResult> Populate(Storage& storage, const PopulateSpec& spec);

}  // namespace ferry::s3server
