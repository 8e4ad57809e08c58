// Fuzz target: a hydrated volume's metadata as read back from disk or the
// object store — a snapshot manifest (DecodeManifest) and a volume's bitmap
// file (BitmapFile::Open) — from one input, which is both.
// Invariants: a manifest that decodes satisfies every rule manifest.h
// states and encodes back to one that decodes to the same; a bitmap that
// opens has exactly the chunk count asked for and the bits the file holds;
// anything else is an error value, never a crash or a half-used file.
#include <fcntl.h>

#include <fstream>

#include "fuzz_util.h"
#include "snapshot/manifest.h"
#include "volume/bitmap_file.h"

namespace {

using namespace ferry;
using ferry::fuzz::Check;

constexpr const char* kName = "snapshot_fuzz";

void CheckManifest(std::string_view in) {
  auto m = snapshot::DecodeManifest(in);
  if (!m.ok()) {
    Check(m.status().code() == ErrorCode::kCorruption, kName,
          "a manifest refused with a class other than corruption");
    return;
  }
  Check(m->chunk_size >= snapshot::kMinChunkSize && m->chunk_size <= snapshot::kMaxChunkSize &&
            (m->chunk_size & (m->chunk_size - 1)) == 0,
        kName, "a chunk size out of the rules");
  Check(m->chunks.size() == m->ChunkCount(), kName, "a chunk list whose length is not the image's");
  for (const auto& c : m->chunks) {
    Check(c.empty() ||
              (c.size() == 64 && c.find_first_not_of("0123456789abcdef") == std::string::npos),
          kName, "a chunk name that is not 64 lower-case hex digits");
  }
  std::vector<bool> seen(m->chunks.size());
  for (uint32_t i : m->prefetch) {
    Check(i < seen.size() && !seen[i], kName, "a prefetch index out of range or repeated");
    seen[i] = true;
  }
  auto again = snapshot::DecodeManifest(snapshot::EncodeManifest(*m));
  Check(again.ok(), kName, "a decoded manifest does not encode to a valid one");
  Check(again->name == m->name && again->image_size == m->image_size &&
            again->chunk_size == m->chunk_size && again->created == m->created &&
            again->chunks == m->chunks && again->prefetch == m->prefetch,
        kName, "a manifest changed through encode and decode");
}

void CheckBitmap(std::string_view in) {
  const std::string path = ferry::fuzz::ProcessTempDir("snapshot") + "/bitmap";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(in.data(), static_cast<std::streamsize>(in.size()));
  }
  // The count the volume expects: what the file says, when it says
  // something small enough to be a volume here, else a fixed one.
  uint64_t chunks = 64;
  if (in.size() >= 16) {
    uint64_t n = 0;
    for (int b = 0; b < 8; ++b)
      n |= static_cast<uint64_t>(static_cast<uint8_t>(in[8 + b])) << (8 * b);
    if (n <= (1u << 20)) chunks = n;
  }
  bool created = false;
  auto bm = volume::BitmapFile::Open(
      path, "FERRYBM1", chunks, [](uint64_t) { return false; }, {}, &created);
  if (!bm.ok()) {
    Check(!in.empty(), kName, "an empty bitmap file was not created");
    return;
  }
  Check((*bm)->loaded().size() == chunks, kName, "a bitmap with another chunk count");
  if (created) {
    Check(in.empty(), kName, "a non-empty bitmap file was replaced");
    return;
  }
  for (uint64_t i = 0; i < chunks; ++i) {
    bool bit = (static_cast<uint8_t>(in[16 + i / 8]) >> (i % 8)) & 1;
    Check((*bm)->loaded()[i] == bit, kName, "a loaded bit that is not the file's");
  }
}

// With FERRY_FUZZ_WRITE_SEEDS=DIR: the seed corpus, as ferry writes
// these files — manifests (with zero chunks and a prefetch order, and a
// small one) and bitmap files.
void WriteSeeds(const std::string& out) {
  auto write = [&](const std::string& name, std::string_view bytes) {
    std::ofstream f(out + "/" + name, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  };
  snapshot::Manifest m;
  m.name = "base-image";
  m.image_size = (5ull << 20) + 512;
  m.chunk_size = 1 << 20;
  m.created = "2026-12-03T06:00:00Z";
  for (uint64_t i = 0; i < m.ChunkCount(); ++i)
    m.chunks.push_back(i % 2 ? "" : std::string(64, "0123456789abcdef"[i]));
  m.prefetch = {4, 0, 2};
  write("manifest", snapshot::EncodeManifest(m));
  m.name = "tiny";
  m.image_size = 4096;
  m.chunk_size = 4096;
  m.chunks = {""};
  m.prefetch = {};
  write("manifest_tiny", snapshot::EncodeManifest(m));
  const std::string tmp = ferry::fuzz::ProcessTempDir("snapshot") + "/seed-bitmap";
  for (auto [name, n] : {std::pair{"bitmap_64", 64}, {"bitmap_13", 13}}) {
    std::vector<bool> bits(static_cast<size_t>(n));
    for (size_t i = 0; i < bits.size(); i += 3) bits[i] = true;
    Check(volume::BitmapFile::Create(tmp, "FERRYBM1", bits).ok(), kName,
          "the seed bitmap was not written");
    std::ifstream f(tmp, std::ios::binary);
    write(name, std::string(std::istreambuf_iterator<char>(f), {}));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (const char* out = getenv("FERRY_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(out);
    exit(0);
  }
  std::string_view in(reinterpret_cast<const char*>(data), size);
  CheckManifest(in);
  CheckBitmap(in);
  return 0;
}
