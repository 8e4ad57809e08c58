#include "codec/text_codings.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <zlib.h>

#include <algorithm>
#include <memory>

namespace ferry::codec {
namespace {

// windowBits 15 + 16: a gzip header and trailer around raw deflate.
constexpr int kGzipWindow = 15 + 16;

// One deflate stream per thread and level, reset between bodies (deflateInit
// allocates about 256 KiB; a reset only clears it).
struct Deflater {
  z_stream z{};
  int level = -1;
  bool ready = false;
  ~Deflater() {
    if (ready) deflateEnd(&z);
  }
  Status Start(int want) {
    if (ready && level == want) {
      if (deflateReset(&z) != Z_OK) return Status::Internal("zlib: deflateReset failed");
      return Status::Ok();
    }
    if (ready) deflateEnd(&z);
    z = z_stream{};
    ready = deflateInit2(&z, want, Z_DEFLATED, kGzipWindow, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    if (!ready) return Status::InvalidArgument("gzip level " + std::to_string(want) + ": zlib refused it");
    level = want;
    return Status::Ok();
  }
};

}  // namespace

Result<std::string> GzipCompress(std::string_view in, int level) {
  if (level < 1 || level > 9) return Status::InvalidArgument("gzip level must be 1..9");
  thread_local Deflater d;
  FERRY_RETURN_IF_ERROR(d.Start(level));
  std::string out(deflateBound(&d.z, static_cast<uLong>(in.size())), '\0');
  d.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  d.z.avail_in = static_cast<uInt>(in.size());
  d.z.next_out = reinterpret_cast<Bytef*>(out.data());
  d.z.avail_out = static_cast<uInt>(out.size());
  // deflateBound's room takes the whole body in one call.
  if (in.size() > UINT32_MAX || deflate(&d.z, Z_FINISH) != Z_STREAM_END) {
    return Status::Internal("gzip: deflate did not finish");
  }
  out.resize(d.z.total_out);
  return out;
}

Result<std::string> GzipDecompress(std::string_view in) {
  z_stream z{};
  if (inflateInit2(&z, kGzipWindow) != Z_OK) return Status::Internal("zlib: inflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
  std::string out;
  char buf[64 << 10];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    int r = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
    if (r == Z_STREAM_END) {
      if (z.avail_in == 0) return out;
      if (inflateReset(&z) != Z_OK) return Status::Corruption("gzip: cannot start the next member");
      continue;  // another member follows
    }
    if (r != Z_OK && !(r == Z_BUF_ERROR && z.avail_out == 0)) {
      return Status::Corruption(std::string("gzip: ") + (z.msg ? z.msg : "damaged or cut short"));
    }
    if (z.avail_in == 0 && z.avail_out != 0) return Status::Corruption("gzip: the body ends inside a member");
  }
}

Result<std::string> BrotliCompress(std::string_view in, int quality) {
  if (quality < 0 || quality > 11) return Status::InvalidArgument("br quality must be 0..11");
  // The window: the smallest power of two holding the body (10..24), so a
  // small body does not make the decoder reserve 4 MiB.
  int lgwin = BROTLI_MIN_WINDOW_BITS;
  while (lgwin < BROTLI_MAX_WINDOW_BITS && (size_t{1} << lgwin) - 16 < in.size()) ++lgwin;
  size_t size = BrotliEncoderMaxCompressedSize(in.size());
  if (size == 0) size = in.size() + 1024;  // past the bound libbrotli computes
  std::string out(size, '\0');
  if (!BrotliEncoderCompress(quality, lgwin, BROTLI_MODE_TEXT, in.size(),
                             reinterpret_cast<const uint8_t*>(in.data()), &size,
                             reinterpret_cast<uint8_t*>(out.data()))) {
    return Status::Internal("br: the encoder failed");
  }
  out.resize(size);
  return out;
}

Result<std::string> BrotliDecompress(std::string_view in) {
  std::unique_ptr<BrotliDecoderState, void (*)(BrotliDecoderState*)> s(
      BrotliDecoderCreateInstance(nullptr, nullptr, nullptr), BrotliDecoderDestroyInstance);
  if (!s) return Status::Internal("br: cannot allocate a decoder");
  std::string out;
  size_t avail_in = in.size();
  const uint8_t* next_in = reinterpret_cast<const uint8_t*>(in.data());
  for (;;) {
    uint8_t buf[64 << 10];
    size_t avail_out = sizeof(buf);
    uint8_t* next_out = buf;
    auto r = BrotliDecoderDecompressStream(s.get(), &avail_in, &next_in, &avail_out, &next_out, nullptr);
    out.append(reinterpret_cast<char*>(buf), sizeof(buf) - avail_out);
    if (r == BROTLI_DECODER_RESULT_SUCCESS) {
      if (avail_in != 0) return Status::Corruption("br: bytes after the end of the stream");
      return out;
    }
    if (r == BROTLI_DECODER_RESULT_ERROR) {
      return Status::Corruption(std::string("br: ") +
                                BrotliDecoderErrorString(BrotliDecoderGetErrorCode(s.get())));
    }
    if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) return Status::Corruption("br: the body ends inside the stream");
  }
}

}  // namespace ferry::codec
