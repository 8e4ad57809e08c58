#include "codec/zstd_codec.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getCParams, ZSTD_getFrameHeader (exported by Debian's libzstd)
#include <zstd.h>

namespace ferry::codec {
namespace {

Status ZstdError(size_t code, std::string_view during) {
  return Status::Corruption("zstd " + std::string(during) + ": " + ZSTD_getErrorName(code));
}

Emit AppendTo(std::string* out) {
  return [out](std::string_view d) {
    out->append(d);
    return Status::Ok();
  };
}

}  // namespace

struct ZstdEncoder::Impl {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::unique_ptr<char[]> scratch = std::make_unique_for_overwrite<char[]>(ZSTD_CStreamOutSize());
  ~Impl() { ZSTD_freeCCtx(cctx); }

  // One compressStream2 call into the scratch buffer, emitted; returns
  // libzstd's answer (bytes left to flush at kEnd).
  Result<size_t> Step(ZSTD_inBuffer* ib, ZSTD_EndDirective mode, const Emit& emit) {
    ZSTD_outBuffer ob{scratch.get(), ZSTD_CStreamOutSize(), 0};
    size_t r = ZSTD_compressStream2(cctx, &ob, ib, mode);
    if (ZSTD_isError(r)) return ZstdError(r, mode == ZSTD_e_end ? "end frame" : "compress");
    if (ob.pos > 0) FERRY_RETURN_IF_ERROR(emit(std::string_view(scratch.get(), ob.pos)));
    return r;
  }
};

ZstdEncoder::ZstdEncoder(int level) : impl_(std::make_unique<Impl>()), level_(level) {}
ZstdEncoder::~ZstdEncoder() = default;

namespace {

// Sets a fresh session's parameters: the level, the window within RFC 9659's
// limit, the checksum and the content size in the frame header.
Status Configure(ZSTD_CCtx* c, int level, std::optional<uint64_t> content_size) {
  if (c == nullptr) return Status::Internal("zstd: cannot allocate a compression context");
  ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
  size_t r = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  if (ZSTD_isError(r)) {
    return Status::InvalidArgument("zstd level " + std::to_string(level) + ": " + ZSTD_getErrorName(r));
  }
  // The level may pick a larger window (levels 20+); the RFC caps it.
  ZSTD_compressionParameters p = ZSTD_getCParams(level, content_size.value_or(0), 0);
  if (static_cast<int>(p.windowLog) > kMaxWindowLog) {
    r = ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, kMaxWindowLog);
    if (ZSTD_isError(r)) return ZstdError(r, "window");
  }
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
  // The match tables are the level's for the body's size, as libzstd sizes
  // them from the pledged size. (Tables two logs smaller for bodies up to
  // 64 KB, meant to miss less in a fill's cold cache, cost 18% more in a
  // tight loop and 18-30% more in fills; one log smaller was no faster in
  // fills than none. bench/cache_fill_bench.sh, docs/benchmarks.md.)
  if (content_size) {
    r = ZSTD_CCtx_setPledgedSrcSize(c, *content_size);
    if (ZSTD_isError(r)) return ZstdError(r, "content size");
  }
  return Status::Ok();
}

}  // namespace

Status ZstdEncoder::Begin(std::optional<uint64_t> content_size) {
  return Configure(impl_->cctx, level_, content_size);
}

Status ZstdEncoder::Update(std::string_view in, const Emit& emit) {
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  while (ib.pos < ib.size) FERRY_RETURN_IF_ERROR(impl_->Step(&ib, ZSTD_e_continue, emit).status());
  return Status::Ok();
}

Status ZstdEncoder::Finish(const Emit& emit) {
  ZSTD_inBuffer ib{nullptr, 0, 0};
  for (;;) {  // an error here is e.g. fewer bytes than pledged
    FERRY_ASSIGN_OR_RETURN(size_t left, impl_->Step(&ib, ZSTD_e_end, emit));
    if (left == 0) return Status::Ok();
  }
}

Status ZstdEncoder::Update(std::string_view in, std::string* out) { return Update(in, AppendTo(out)); }
Status ZstdEncoder::Finish(std::string* out) { return Finish(AppendTo(out)); }

struct ZstdDecoder::Impl {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::unique_ptr<char[]> scratch = std::make_unique_for_overwrite<char[]>(ZSTD_DStreamOutSize());
  bool mid_frame = false;  // the last Update() left a frame unfinished
  ~Impl() { ZSTD_freeDCtx(dctx); }
};

ZstdDecoder::ZstdDecoder() : impl_(std::make_unique<Impl>()) { Reset(); }
ZstdDecoder::~ZstdDecoder() = default;

void ZstdDecoder::Reset() {
  if (impl_->dctx == nullptr) return;
  ZSTD_DCtx_reset(impl_->dctx, ZSTD_reset_session_and_parameters);
  ZSTD_DCtx_setParameter(impl_->dctx, ZSTD_d_windowLogMax, kMaxWindowLog);
  impl_->mid_frame = false;
}

Status ZstdDecoder::Update(std::string_view in, const Emit& emit) {
  if (impl_->dctx == nullptr) return Status::Internal("zstd: cannot allocate a decompression context");
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  for (;;) {
    ZSTD_outBuffer ob{impl_->scratch.get(), ZSTD_DStreamOutSize(), 0};
    size_t in_before = ib.pos;
    size_t r = ZSTD_decompressStream(impl_->dctx, &ob, &ib);
    if (ZSTD_isError(r)) {
      impl_->mid_frame = true;
      return ZstdError(r, "decompress");
    }
    // 0: a frame just ended. A call that moved nothing (no input left, no
    // output waiting) says nothing new about where the body stands.
    if (ib.pos != in_before || ob.pos > 0) impl_->mid_frame = r != 0;
    if (ob.pos > 0) FERRY_RETURN_IF_ERROR(emit(std::string_view(impl_->scratch.get(), ob.pos)));
    // Done with this input once it is all read and libzstd has no more
    // output waiting (a full output buffer may hide more).
    if (ib.pos == ib.size && ob.pos < ob.size) return Status::Ok();
  }
}

Status ZstdDecoder::Update(std::string_view in, std::string* out) { return Update(in, AppendTo(out)); }

Status ZstdDecoder::Finish() const {
  if (impl_->mid_frame) return Status::Corruption("zstd: the body ends inside a frame");
  return Status::Ok();
}

namespace {

// One-shot compression state: a context and the buffer the worst case is
// compressed into (never zeroed, never given back), so only the frame is
// copied out: a fresh worst-case string per call would be zero-filled and
// page-faulted in each time (a third of a volume's hydration CPU went there).
struct CompressSlot {
  explicit CompressSlot(int l) : level(l) {}
  ~CompressSlot() { ZSTD_freeCCtx(cctx); }
  const int level;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::unique_ptr<char[]> scratch;
  size_t scratch_size = 0;
};

// Slots shared by every thread, most recently used first: a call takes the
// warmest slot free (its workspace sized and paged in, likely still in
// cache) and gives it back. One per thread instead cost a cache's fill
// path 4-6x the codec's own time: 32 worker threads meant 32 cold
// workspaces, each grown and faulted in on its own.
class SlotPool {
 public:
  // The warmest free slot for `level` (a process uses one or two levels).
  std::unique_ptr<CompressSlot> Take(int level) {
    {
      std::lock_guard lock(mu_);
      for (size_t i = free_.size(); i-- > 0;) {
        if (free_[i]->level != level) continue;
        auto slot = std::move(free_[i]);
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        return slot;
      }
    }
    return std::make_unique<CompressSlot>(level);
  }
  void Give(std::unique_ptr<CompressSlot> slot) {
    std::lock_guard lock(mu_);
    if (free_.size() < kMaxFree) free_.push_back(std::move(slot));
  }

 private:
  static constexpr size_t kMaxFree = 64;
  std::mutex mu_;
  std::vector<std::unique_ptr<CompressSlot>> free_;  // guarded by mu_; the back is the warmest
};

SlotPool& Slots() {
  static SlotPool* pool = new SlotPool;  // never destroyed: threads may compress during exit
  return *pool;
}

}  // namespace

Result<std::string> ZstdCompress(std::string_view in, int level) {
  std::unique_ptr<CompressSlot> slot = Slots().Take(level);
  struct GiveBack {
    std::unique_ptr<CompressSlot>& slot;
    ~GiveBack() { Slots().Give(std::move(slot)); }
  } give_back{slot};
  FERRY_RETURN_IF_ERROR(Configure(slot->cctx, level, in.size()));
  const size_t bound = ZSTD_compressBound(in.size());
  // A slot keeps a scratch buffer for bodies up to kMaxScratch; a larger
  // one is compressed into its own string (its zero fill costs little
  // beside compressing that much), so no slot holds a body-sized buffer.
  constexpr size_t kMaxScratch = 4 << 20;
  if (bound > kMaxScratch) {
    std::string out(bound, '\0');
    size_t n = ZSTD_compress2(slot->cctx, out.data(), bound, in.data(), in.size());
    if (ZSTD_isError(n)) return ZstdError(n, "compress");
    out.resize(n);
    return out;
  }
  if (slot->scratch_size < bound) {
    slot->scratch.reset(new char[bound]);
    slot->scratch_size = bound;
  }
  size_t n = ZSTD_compress2(slot->cctx, slot->scratch.get(), bound, in.data(), in.size());
  if (ZSTD_isError(n)) return ZstdError(n, "compress");
  return std::string(slot->scratch.get(), n);
}

Result<std::string> ZstdDecompress(std::string_view in) {
  thread_local ZstdDecoder d;
  d.Reset();
  std::string out;
  if (auto n = ZstdFrameContentSize(in); n && *n <= (64u << 20)) out.reserve(*n);
  FERRY_RETURN_IF_ERROR(d.Update(in, &out));
  FERRY_RETURN_IF_ERROR(d.Finish());
  return out;
}

std::optional<uint64_t> ZstdFrameContentSize(std::string_view frame) {
  unsigned long long n = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR) return std::nullopt;
  return static_cast<uint64_t>(n);
}

}  // namespace ferry::codec
