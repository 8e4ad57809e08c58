#pragma once
// verify.cc's streams of listed entries (migrate-internal): one side of a
// key range listed page by page with start-after, and one side listed whole
// into an on-disk sort. Both give entries in relative-key order, once each.

#include <atomic>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "migrate/range_split.h"
#include "migrate/spill_sort.h"

namespace ferry::migrate {

struct Listed {
  std::string rel;  // the key after the side's prefix
  uint64_t size = 0;
  std::string etag;
  int64_t modified_ms = 0;
};

class EntryStream {
 public:
  virtual ~EntryStream() = default;
  // The next entry, not taken; nullptr at the end (or on a disorder, which
  // disorder() then names). Valid until Pop().
  virtual Result<const Listed*> Peek() = 0;
  virtual void Pop() = 0;
  // Non-empty when the side broke a listing promise (start-after ignored,
  // keys out of byte order): this stream's answers cannot be trusted.
  const std::string& disorder() const { return disorder_; }
  int64_t pages() const { return pages_; }

 protected:
  std::string disorder_;
  int64_t pages_ = 0;
};

// One side of the relative range (lower, upper()], where upper() may shrink
// while the stream runs (a split): entries above it end the stream.
class RangeSide : public EntryStream {
 public:
  // `known`: keys the side's delimiter listings showed; a page that passes
  // one over is a disorder. May be null.
  RangeSide(ListFn list, std::string prefix, const std::string& lower, int chunk,
            std::function<std::string()> upper, const KnownKeys* known);
  Result<const Listed*> Peek() override;
  void Pop() override { buf_.pop_front(); }

 private:
  Status Fill(const std::string& upper);

  ListFn list_;
  const std::string prefix_;
  const int chunk_;
  std::function<std::string()> upper_;
  const KnownKeys* known_;
  std::string after_;  // start-after of the next page (a full key)
  bool more_ = true;
  std::deque<Listed> buf_;
};

// Lists all of `prefix` flat by continuation tokens into `out`, relative
// keys as record keys. Order does not matter. Marks the keys of `known`
// (may be null) it lists (KnownKeys::Saw).
Status ListWhole(const ListFn& list, const std::string& prefix, int chunk, SpillSorter* out,
                 KnownKeys* known, const std::atomic<bool>* stop);

// The entries a ListWhole sort gives back, in order, duplicates dropped.
class SortedSide : public EntryStream {
 public:
  explicit SortedSide(SpillSorter& sorted) : sorted_(sorted) {}
  Result<const Listed*> Peek() override;
  void Pop() override { have_ = false; }

 private:
  SpillSorter& sorted_;
  Listed head_;
  bool have_ = false;
  std::optional<std::string> last_;  // the key of the entry popped last
};

}  // namespace ferry::migrate
