#pragma once
// What the replay client writes, so that a write can be recognised when
// read back: every 512-byte sector of a write's payload starts with a
// 32-byte header (magic "FRYWRITE", guest, write sequence number, the
// sector's byte offset on the device, little-endian) and is filled after
// it with bytes derived from those three. A sector read back names the
// write of which guest put it there, or is not one of ours.

#include <cstdint>
#include <string>
#include <string_view>

namespace ferry::replay {

inline constexpr uint64_t kSector = 512;

// The payload of write `seq` of `guest` at [offset, offset + length): the
// pattern of each sector it covers, cut to the range.
std::string WritePayload(uint64_t guest, uint64_t seq, uint64_t offset, uint64_t length);

// Which write of `guest` a whole sector read back at `sector_offset`
// holds: its sequence number, or -1 when it is not a complete pattern of
// that guest for that sector.
int64_t SectorWrite(std::string_view sector, uint64_t guest, uint64_t sector_offset);

}  // namespace ferry::replay
