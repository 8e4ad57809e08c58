#include "write_pattern.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace ferry::replay {

namespace {

constexpr char kMagic[8] = {'F', 'R', 'Y', 'W', 'R', 'I', 'T', 'E'};

void PutLe64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

uint64_t GetLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The whole sector's pattern.
void Sector(uint64_t guest, uint64_t seq, uint64_t sector_offset, char* out) {
  std::memcpy(out, kMagic, 8);
  PutLe64(out + 8, guest);
  PutLe64(out + 16, seq);
  PutLe64(out + 24, sector_offset);
  uint64_t state = guest * 0x100000001b3ull ^ seq * 0xc2b2ae3d27d4eb4full ^ sector_offset;
  for (uint64_t i = 32; i < kSector; i += 8) PutLe64(out + i, SplitMix(&state));
}

}  // namespace

std::string WritePayload(uint64_t guest, uint64_t seq, uint64_t offset, uint64_t length) {
  std::string out(length, '\0');
  char sector[kSector];
  for (uint64_t s = offset / kSector * kSector; s < offset + length; s += kSector) {
    Sector(guest, seq, s, sector);
    uint64_t from = std::max(s, offset), to = std::min(s + kSector, offset + length);
    std::memcpy(out.data() + (from - offset), sector + (from - s), to - from);
  }
  return out;
}

int64_t SectorWrite(std::string_view sector, uint64_t guest, uint64_t sector_offset) {
  if (sector.size() != kSector || std::memcmp(sector.data(), kMagic, 8) != 0 ||
      GetLe64(sector.data() + 8) != guest || GetLe64(sector.data() + 24) != sector_offset) {
    return -1;
  }
  uint64_t seq = GetLe64(sector.data() + 16);
  char want[kSector];
  Sector(guest, seq, sector_offset, want);
  if (std::memcmp(sector.data(), want, kSector) != 0 || seq > static_cast<uint64_t>(INT64_MAX))
    return -1;
  return static_cast<int64_t>(seq);
}

}  // namespace ferry::replay
