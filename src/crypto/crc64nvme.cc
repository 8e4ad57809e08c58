#include "crypto/crc64nvme.h"

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FERRY_CRC64NVME_CLMUL 1
#endif

namespace ferry {
namespace {

constexpr uint64_t Reflect64(uint64_t v) {
  uint64_t r = 0;
  for (int i = 0; i < 64; ++i) {
    r = (r << 1) | (v & 1);
    v >>= 1;
  }
  return r;
}

constexpr uint64_t kPolyReflected = Reflect64(0xAD93D23594C93659ull);

using Tables = std::array<std::array<uint64_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolyReflected : c >> 1;
    t[0][i] = c;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (size_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();
static_assert(std::endian::native == std::endian::little, "Crc64Nvme reads words little-endian");

// Advances the raw (not inverted) register `crc` over p[0, n): returns
// (crc * x^(8n) + M * x^64) mod P in reflected form, M being the bytes.
uint64_t Slice8(uint64_t crc, const unsigned char* p, size_t n) {
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    crc ^= word;
    crc = kTables[7][crc & 0xff] ^ kTables[6][(crc >> 8) & 0xff] ^ kTables[5][(crc >> 16) & 0xff] ^
          kTables[4][(crc >> 24) & 0xff] ^ kTables[3][(crc >> 32) & 0xff] ^
          kTables[2][(crc >> 40) & 0xff] ^ kTables[1][(crc >> 48) & 0xff] ^ kTables[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

#ifdef FERRY_CRC64NVME_CLMUL

// Folding (Gopal et al., "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ Instruction", Intel, 2009), reflected. A 16-byte lane loaded
// little-endian holds the message bits high degree first: its low qword H
// stands for H * x^64 and its high qword L for L, so the lane is
// H * x^64 + L. Moving the lane D bits later in the message multiplies it by
// x^D, and mod P that is H * (x^(D+64) mod P) + L * (x^D mod P), a product
// of at most 127 bits that is XORed into the lane D bits on. A carry-less
// product of two reflected 64-bit values lands one bit short of its place in
// a reflected 128-bit register (it stands for the product times x), so the
// constants are one exponent lower: x^(D+63) mod P for H and x^(D-1) mod P
// for L, each bit-reflected to 64 bits. Computed by multiplying 1 by x k
// times mod P = x^64 + 0xAD93D23594C93659 and reflecting:
//   D = 128 (the next lane):      x^191 -> 0xEADC41FD2BA3D420,
//                                 x^127 -> 0x21E9761E252621AC;
//   D = 512 (four lanes, 64 B):   x^575 -> 0x0C32CDB31E18A84A,
//                                 x^511 -> 0x62242240ACE5045A.
constexpr uint64_t kX191 = 0xEADC41FD2BA3D420ull;
constexpr uint64_t kX127 = 0x21E9761E252621ACull;
constexpr uint64_t kX575 = 0x0C32CDB31E18A84Aull;
constexpr uint64_t kX511 = 0x62242240ACE5045Aull;

// Inputs shorter than this go to Slice8 whole: the fold needs four lanes.
constexpr size_t kFoldBytes = 64;

// Returns `next` XOR `lane` moved D bits on, where `k` holds the constants
// for D: x^(D+63) in its low qword and x^(D-1) in its high qword.
__attribute__((target("pclmul,sse4.1"))) inline __m128i FoldLane(__m128i lane, __m128i k,
                                                                 __m128i next) {
  __m128i h = _mm_clmulepi64_si128(lane, k, 0x00);
  __m128i l = _mm_clmulepi64_si128(lane, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(h, l), next);
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i LoadLane(const unsigned char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// Crc64Nvme for a CPU with PCLMULQDQ and SSE4.1. Folds four lanes 64 bytes at
// a time, then the lanes into one and the rest 16 bytes at a time; the last
// lane (a 128-bit value congruent to the message so far) and the tail under
// 16 bytes go through Slice8.
__attribute__((target("pclmul,sse4.1"))) uint64_t Crc64NvmeClmul(uint64_t crc,
                                                                 std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  if (n < kFoldBytes) return ~Slice8(~crc, p, n);
  // The register joins the message by XOR into its first 8 bytes.
  __m128i x0 = _mm_xor_si128(LoadLane(p), _mm_set_epi64x(0, static_cast<int64_t>(~crc)));
  __m128i x1 = LoadLane(p + 16), x2 = LoadLane(p + 32), x3 = LoadLane(p + 48);
  p += 64;
  n -= 64;
  const __m128i k512 = _mm_set_epi64x(static_cast<int64_t>(kX511), static_cast<int64_t>(kX575));
  while (n >= 64) {
    x0 = FoldLane(x0, k512, LoadLane(p));
    x1 = FoldLane(x1, k512, LoadLane(p + 16));
    x2 = FoldLane(x2, k512, LoadLane(p + 32));
    x3 = FoldLane(x3, k512, LoadLane(p + 48));
    p += 64;
    n -= 64;
  }
  const __m128i k128 = _mm_set_epi64x(static_cast<int64_t>(kX127), static_cast<int64_t>(kX191));
  x3 = FoldLane(FoldLane(FoldLane(x0, k128, x1), k128, x2), k128, x3);
  for (; n >= 16; p += 16, n -= 16) x3 = FoldLane(x3, k128, LoadLane(p));
  // CRC of the 16 bytes of x3 from a zero register is x3 * x^64 mod P.
  unsigned char last[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(last), x3);
  return ~Slice8(Slice8(0, last, 16), p, n);
}

bool HasClmul() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

#endif  // FERRY_CRC64NVME_CLMUL

}  // namespace

uint64_t Crc64NvmePortable(uint64_t crc, std::string_view data) {
  return ~Slice8(~crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
}

uint64_t Crc64Nvme(uint64_t crc, std::string_view data) {
#ifdef FERRY_CRC64NVME_CLMUL
  static const auto impl = HasClmul() ? &Crc64NvmeClmul : &Crc64NvmePortable;
  return impl(crc, data);
#else
  return Crc64NvmePortable(crc, data);
#endif
}

}  // namespace ferry
