#include "nbd/trace.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "base/strings.h"

namespace ferry::nbd {

namespace {

bool ValidOp(char c) {
  switch (c) {
    case 'R':
    case 'W':
    case 'F':
    case 'T':
    case 'Z':
    case 'C':
      return true;
    default:
      return false;
  }
}

// The next space-separated field of `line`, or "" at its end.
std::string_view NextField(std::string_view* line) {
  size_t b = line->find_first_not_of(' ');
  if (b == std::string_view::npos) {
    *line = {};
    return {};
  }
  size_t e = line->find(' ', b);
  std::string_view f =
      line->substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
  *line = e == std::string_view::npos ? std::string_view() : line->substr(e);
  return f;
}

bool ToU64(std::string_view s, uint64_t* v) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseRecord(std::string_view line, TraceRecord* r) {
  std::string_view issue = NextField(&line), done = NextField(&line), op = NextField(&line),
                   offset = NextField(&line), length = NextField(&line), flag = NextField(&line);
  if (!ToU64(issue, &r->issue_us) || !ToU64(done, &r->done_us) || op.size() != 1 ||
      !ValidOp(op[0]) || !ToU64(offset, &r->offset) || !ToU64(length, &r->length) ||
      !NextField(&line).empty()) {
    return false;
  }
  r->op = static_cast<TraceOp>(op[0]);
  if (flag.empty()) return true;
  r->fua = flag == "fua";
  return r->fua;
}

}  // namespace

std::string TraceHeader(uint64_t size) {
  return "# ferry-nbd-trace 1 size=" + std::to_string(size) + "\n";
}

std::string FormatTraceRecord(const TraceRecord& r) {
  std::string s = std::to_string(r.issue_us) + ' ' + std::to_string(r.done_us) + ' ' +
                  static_cast<char>(r.op) + ' ' + std::to_string(r.offset) + ' ' +
                  std::to_string(r.length);
  if (r.fua) s += " fua";
  return s + '\n';
}

Result<Trace> ParseTrace(std::string_view text) {
  Trace t;
  size_t line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line[0] == '#') {
      constexpr std::string_view kSize = " size=";
      size_t at = line.find(kSize);
      if (line.rfind("# ferry-nbd-trace ", 0) == 0 && at != std::string_view::npos &&
          !ToU64(line.substr(at + kSize.size()), &t.size)) {
        return Status::InvalidArgument("trace line " + std::to_string(line_no) +
                                       ": a bad size in the header");
      }
      continue;
    }
    TraceRecord r;
    if (!ParseRecord(line, &r) || r.done_us < r.issue_us) {
      return Status::InvalidArgument(
          "trace line " + std::to_string(line_no) +
          ": not 'ISSUE_US DONE_US OP OFFSET LENGTH [fua]' with OP one of RWFTZC "
          "and DONE_US >= ISSUE_US");
    }
    t.records.push_back(r);
  }
  std::stable_sort(
      t.records.begin(), t.records.end(), [](const TraceRecord& a, const TraceRecord& b) {
        return a.issue_us != b.issue_us ? a.issue_us < b.issue_us : a.done_us < b.done_us;
      });
  return t;
}

std::vector<ReplayStep> PlanReplay(const std::vector<TraceRecord>& records) {
  const size_t n = records.size();
  std::vector<ReplayStep> plan(n);
  // Records by done time: walking it alongside the issue order finds, for
  // each record, the latest reply before it was sent.
  std::vector<size_t> by_done(n);
  std::iota(by_done.begin(), by_done.end(), size_t{0});
  std::stable_sort(by_done.begin(), by_done.end(),
                   [&](size_t a, size_t b) { return records[a].done_us < records[b].done_us; });
  size_t d = 0;
  int64_t latest = -1;
  for (size_t k = 0; k < n; ++k) {
    while (d < n && records[by_done[d]].done_us <= records[k].issue_us) {
      // A record not sent yet (same issue time, no duration) waits for a
      // later k, where it can be the reply that k followed.
      if (by_done[d] >= k) break;
      latest = static_cast<int64_t>(by_done[d]);
      ++d;
    }
    uint64_t base = k > 0 ? records[k - 1].issue_us : records[k].issue_us;
    if (latest >= 0) base = std::max(base, records[static_cast<size_t>(latest)].done_us);
    plan[k].after = latest;
    plan[k].think_us = records[k].issue_us > base ? records[k].issue_us - base : 0;
  }
  return plan;
}

}  // namespace ferry::nbd
