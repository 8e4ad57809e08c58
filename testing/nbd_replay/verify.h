#pragma once
// After a replay (perhaps one whose server was killed midway): every change
// a guest had acknowledged is still on its export. The write log holds one
// line per change, "A|S GUEST OP SEQ OFFSET LENGTH" (A: acknowledged, S:
// sent and never answered; OP W, T or Z), as main.cc writes it.
//
// A whole sector is right when it holds what the last acknowledged change
// covering it put there, or what a later change of that guest covering it
// (acknowledged or merely sent) put there: a write's pattern
// (write_pattern.h), zeros for a trim or write-zeroes.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "replay.h"

namespace ferry::replay {

// Parses a write log: each guest's changes, in sequence order.
Result<std::map<uint64_t, std::vector<WriteNote>>> ParseWriteLog(std::string_view text);
// One change's line, with its newline.
std::string WriteLogLine(uint64_t guest, const WriteNote& w);

struct VerifyCounts {
  uint64_t changes = 0, sectors = 0;
  uint64_t lost = 0;       // sectors holding none of what they may hold
  std::string first_loss;  // where, for a human
};

// Checks one guest's changes, reading the device through `read` (offset,
// length -> bytes, or an error).
Status VerifyGuest(uint64_t guest, const std::vector<WriteNote>& changes,
                   const std::function<Result<std::string>(uint64_t, uint64_t)>& read,
                   VerifyCounts* counts);

}  // namespace ferry::replay
