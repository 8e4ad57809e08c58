#include "verify.h"

#include <algorithm>
#include <charconv>

#include "base/strings.h"
#include "write_pattern.h"

namespace ferry::replay {

namespace {

bool ToU64(std::string_view s, uint64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

// Whether `sector` holds what change `w` put there.
bool Holds(std::string_view sector, uint64_t guest, uint64_t sector_offset, const WriteNote& w) {
  if (w.op != 'W') return sector.find_first_not_of('\0') == std::string_view::npos;
  return SectorWrite(sector, guest, sector_offset) == static_cast<int64_t>(w.seq);
}

}  // namespace

std::string WriteLogLine(uint64_t guest, const WriteNote& w) {
  return std::string(w.acked ? "A " : "S ") + std::to_string(guest) + ' ' + w.op + ' ' +
         std::to_string(w.seq) + ' ' + std::to_string(w.offset) + ' ' + std::to_string(w.length) +
         '\n';
}

Result<std::map<uint64_t, std::vector<WriteNote>>> ParseWriteLog(std::string_view text) {
  std::map<uint64_t, std::vector<WriteNote>> out;
  size_t line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string_view> f;
    for (size_t at = 0; at <= line.size();) {
      size_t sp = std::min(line.find(' ', at), line.size());
      f.push_back(line.substr(at, sp - at));
      at = sp + 1;
    }
    WriteNote w;
    uint64_t guest = 0;
    bool ok = f.size() == 6 && (f[0] == "A" || f[0] == "S") && ToU64(f[1], &guest) &&
              f[2].size() == 1 && (f[2] == "W" || f[2] == "T" || f[2] == "Z") &&
              ToU64(f[3], &w.seq) && ToU64(f[4], &w.offset) && ToU64(f[5], &w.length);
    if (!ok)
      return Status::InvalidArgument("write log line " + std::to_string(line_no) + ": malformed");
    w.acked = f[0] == "A";
    w.op = f[2][0];
    out[guest].push_back(w);
  }
  for (auto& [_, v] : out) {
    std::sort(v.begin(), v.end(),
              [](const WriteNote& a, const WriteNote& b) { return a.seq < b.seq; });
  }
  return out;
}

Status VerifyGuest(uint64_t guest, const std::vector<WriteNote>& changes,
                   const std::function<Result<std::string>(uint64_t, uint64_t)>& read,
                   VerifyCounts* counts) {
  // Each whole sector a change covers: the changes over it, in order.
  std::map<uint64_t, std::vector<size_t>> over;
  for (size_t i = 0; i < changes.size(); ++i) {
    const WriteNote& w = changes[i];
    counts->changes += w.acked ? 1 : 0;
    uint64_t first = (w.offset + kSector - 1) / kSector * kSector,
             end = (w.offset + w.length) / kSector * kSector;
    for (uint64_t sec = first; sec < end; sec += kSector) over[sec].push_back(i);
  }
  // Read in runs of adjacent sectors (up to 1 MiB), then check each sector
  // holding an acknowledged change: it holds that change or a later one.
  auto it = over.begin();
  while (it != over.end()) {
    auto run_end = std::next(it);
    uint64_t start = it->first, end = it->first + kSector;
    while (run_end != over.end() && run_end->first == end && end - start < (1u << 20)) {
      end += kSector;
      ++run_end;
    }
    FERRY_ASSIGN_OR_RETURN(std::string bytes, read(start, end - start));
    for (; it != run_end; ++it) {
      const std::vector<size_t>& list = it->second;
      size_t last_acked = list.size();
      for (size_t j = 0; j < list.size(); ++j) {
        if (changes[list[j]].acked) last_acked = j;
      }
      if (last_acked == list.size()) continue;  // nothing acknowledged here
      ++counts->sectors;
      std::string_view sector(bytes.data() + (it->first - start), kSector);
      bool held = false;
      for (size_t j = last_acked; j < list.size() && !held; ++j)
        held = Holds(sector, guest, it->first, changes[list[j]]);
      if (!held && counts->lost++ == 0) {
        const WriteNote& w = changes[list[last_acked]];
        counts->first_loss = "guest " + std::to_string(guest) + ": the sector at " +
                             std::to_string(it->first) + " lost change " + std::to_string(w.seq) +
                             " (" + w.op + ")";
      }
    }
  }
  return Status::Ok();
}

}  // namespace ferry::replay
