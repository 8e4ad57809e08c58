#pragma once
// CRC-64/NVME (the NVM Express polynomial 0xAD93D23594C93659, reflected,
// init and xorout all ones; check value 0xAE8B14860A799888 for
// "123456789"), S3's CRC64NVME checksum.
//
// Written here because Debian 12's ISA-L (2.30) predates its crc64_rocksoft
// and no other Debian library has it. Where the CPU has PCLMULQDQ and SSE4.1
// (checked once, at the first call) inputs of 64 bytes and more are folded
// with carry-less multiplication, 64 bytes a step; otherwise, and for shorter
// inputs and the last bytes, slicing by 8 over tables built at compile time,
// so one 8-byte step costs eight lookups and no branch.

#include <cstdint>
#include <string_view>

namespace ferry {

// Continues `crc` (0 to start) over `data`; chaining calls equals one call
// over the concatenation.
uint64_t Crc64Nvme(uint64_t crc, std::string_view data);

// Crc64Nvme by slicing by 8 alone, whatever the CPU: the same contract and
// results. For tests and benchmarks that compare the two paths.
uint64_t Crc64NvmePortable(uint64_t crc, std::string_view data);

}  // namespace ferry
