#include "codec/zstd_dictionary.h"

#include <zdict.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <memory>

namespace ferry::codec {
namespace {

Status Error(size_t code, std::string_view during) {
  return Status::Corruption("zstd " + std::string(during) + ": " + ZSTD_getErrorName(code));
}

struct CctxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DctxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// floor(log2(n)) for n > 0.
int FloorLog2(uint64_t n) { return 63 - std::countl_zero(n); }

}  // namespace

int DczMaxWindowLog(uint64_t dict_size) {
  constexpr uint64_t kFloor = 8ull << 20, kCeiling = 128ull << 20;
  const uint64_t limit = std::clamp<uint64_t>(dict_size + dict_size / 4, kFloor, kCeiling);
  return FloorLog2(limit);
}

Result<std::string> ZstdCompressWithPrefix(std::string_view in, std::string_view dict, int level) {
  std::unique_ptr<ZSTD_CCtx, CctxDeleter> c(ZSTD_createCCtx());
  if (!c) return Status::Internal("zstd: cannot allocate a compression context");
  // Back-references may reach the dictionary's first byte from the
  // content's last: the window spans both, within the RFC's limit.
  const uint64_t span = std::max<uint64_t>(dict.size() + in.size(), 1);
  const int need = std::max(10, FloorLog2(span) + (std::has_single_bit(span) ? 0 : 1));
  const int window = std::min(need, DczMaxWindowLog(dict.size()));
  for (auto [param, value] :
       {std::pair{ZSTD_c_compressionLevel, level}, std::pair{ZSTD_c_windowLog, window},
        std::pair{ZSTD_c_checksumFlag, 1}, std::pair{ZSTD_c_contentSizeFlag, 1}}) {
    size_t r = ZSTD_CCtx_setParameter(c.get(), param, value);
    if (ZSTD_isError(r))
      return Status::InvalidArgument(std::string("zstd parameter: ") + ZSTD_getErrorName(r));
  }
  size_t r = ZSTD_CCtx_refPrefix(c.get(), dict.data(), dict.size());
  if (ZSTD_isError(r)) return Error(r, "dictionary");
  std::string out(ZSTD_compressBound(in.size()), '\0');
  size_t n = ZSTD_compress2(c.get(), out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(n)) return Error(n, "compress");
  out.resize(n);
  return out;
}

Result<std::string> ZstdDecompressWithPrefix(std::string_view in, std::string_view dict,
                                             uint64_t max_size) {
  std::unique_ptr<ZSTD_DCtx, DctxDeleter> d(ZSTD_createDCtx());
  if (!d) return Status::Internal("zstd: cannot allocate a decompression context");
  size_t r = ZSTD_DCtx_setParameter(d.get(), ZSTD_d_windowLogMax, DczMaxWindowLog(dict.size()));
  if (ZSTD_isError(r)) return Error(r, "window limit");
  std::string out;
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  char buf[64 << 10];
  size_t left = 1;  // 0 once a frame ended with nothing pending
  bool frame_started = false;
  while (ib.pos < ib.size) {
    if (!frame_started) {  // a prefix serves one frame: set it again for each
      r = ZSTD_DCtx_refPrefix(d.get(), dict.data(), dict.size());
      if (ZSTD_isError(r)) return Error(r, "dictionary");
      frame_started = true;
    }
    ZSTD_outBuffer ob{buf, sizeof buf, 0};
    left = ZSTD_decompressStream(d.get(), &ob, &ib);
    if (ZSTD_isError(left)) return Error(left, "decompress");
    if (out.size() + ob.pos > max_size)
      return Status::Corruption("zstd: decoded content over its limit");
    out.append(buf, ob.pos);
    if (left == 0) frame_started = false;
    if (ob.pos == 0 && left != 0 && ib.pos == ib.size) break;
  }
  // Flush what the decoder still holds of the last frame.
  while (left != 0) {
    ZSTD_outBuffer ob{buf, sizeof buf, 0};
    left = ZSTD_decompressStream(d.get(), &ob, &ib);
    if (ZSTD_isError(left)) return Error(left, "decompress");
    if (ob.pos == 0) break;
    if (out.size() + ob.pos > max_size)
      return Status::Corruption("zstd: decoded content over its limit");
    out.append(buf, ob.pos);
  }
  if (left != 0) return Status::Corruption("zstd: the content ends inside a frame");
  return out;
}

struct ZstdTrainedDictionary::Handles {
  ZSTD_CDict* cdict = nullptr;
  ZSTD_DDict* ddict = nullptr;
  ~Handles() {
    ZSTD_freeCDict(cdict);
    ZSTD_freeDDict(ddict);
  }
};

ZstdTrainedDictionary::ZstdTrainedDictionary(std::string bytes, uint32_t id,
                                             std::unique_ptr<Handles> h)
    : bytes_(std::move(bytes)), id_(id), handles_(std::move(h)) {}
ZstdTrainedDictionary::~ZstdTrainedDictionary() = default;

Result<std::shared_ptr<const ZstdTrainedDictionary>> ZstdTrainedDictionary::Train(
    const std::vector<std::string>& samples, size_t capacity, int level) {
  std::string joined;
  std::vector<size_t> sizes;
  for (const std::string& s : samples) {
    joined += s;
    sizes.push_back(s.size());
  }
  std::string dict(capacity, '\0');
  size_t n = ZDICT_trainFromBuffer(dict.data(), dict.size(), joined.data(), sizes.data(),
                                   static_cast<unsigned>(sizes.size()));
  if (ZDICT_isError(n)) {
    return Status::InvalidArgument(std::string("zstd dictionary training: ") +
                                   ZDICT_getErrorName(n));
  }
  dict.resize(n);
  return Load(std::move(dict), level);
}

Result<std::shared_ptr<const ZstdTrainedDictionary>> ZstdTrainedDictionary::Load(std::string bytes,
                                                                                 int level) {
  const uint32_t id = ZDICT_getDictID(bytes.data(), bytes.size());
  if (id == 0) return Status::Corruption("not a zstd dictionary");
  auto h = std::make_unique<Handles>();
  h->cdict = ZSTD_createCDict(bytes.data(), bytes.size(), level);
  h->ddict = ZSTD_createDDict(bytes.data(), bytes.size());
  if (h->cdict == nullptr || h->ddict == nullptr)
    return Status::Corruption("zstd dictionary does not load");
  return std::shared_ptr<const ZstdTrainedDictionary>(
      new ZstdTrainedDictionary(std::move(bytes), id, std::move(h)));
}

namespace {

// Each thread's coder contexts, reused across bodies.
ZSTD_CCtx* ThreadCctx() {
  thread_local std::unique_ptr<ZSTD_CCtx, CctxDeleter> c(ZSTD_createCCtx());
  return c.get();
}
ZSTD_DCtx* ThreadDctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DctxDeleter> d(ZSTD_createDCtx());
  return d.get();
}

}  // namespace

Result<std::string> ZstdTrainedDictionary::Compress(std::string_view in) const {
  ZSTD_CCtx* c = ThreadCctx();
  if (c == nullptr) return Status::Internal("zstd: cannot allocate a compression context");
  std::string out(ZSTD_compressBound(in.size()), '\0');
  // The content size and the dictionary ID go into the frame header (the
  // stores that keep these frames check their bytes themselves).
  size_t n =
      ZSTD_compress_usingCDict(c, out.data(), out.size(), in.data(), in.size(), handles_->cdict);
  if (ZSTD_isError(n)) return Error(n, "compress");
  out.resize(n);
  return out;
}

Result<std::string> ZstdTrainedDictionary::Decompress(std::string_view in, uint64_t size) const {
  ZSTD_DCtx* d = ThreadDctx();
  if (d == nullptr) return Status::Internal("zstd: cannot allocate a decompression context");
  std::string out(size + 1, '\0');  // one more: a longer frame shows as a size mismatch
  size_t n =
      ZSTD_decompress_usingDDict(d, out.data(), out.size(), in.data(), in.size(), handles_->ddict);
  if (ZSTD_isError(n)) return Error(n, "decompress");
  if (n != size)
    return Status::Corruption("zstd: a frame decoded to " + std::to_string(n) + " bytes, not " +
                              std::to_string(size));
  out.resize(n);
  return out;
}

uint32_t ZstdFrameDictionaryId(std::string_view frame) {
  return ZSTD_getDictID_fromFrame(frame.data(), frame.size());
}

}  // namespace ferry::codec
