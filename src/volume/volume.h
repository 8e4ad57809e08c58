#pragma once
// A block volume made from a snapshot, usable at once while its data is
// still in the object store (Tencent Cloud's lazy volumes). Its bytes live
// in a sparse data file; a persisted bitmap says which chunks are present,
// a second one which chunks clients changed since the volume was created.
//
// - A read, or a partial write, that touches a missing chunk fetches it
//   first as an urgent "trigger"; concurrent triggers for one chunk share
//   one fetch. Triggers go ahead of prefetch hints (NBD_CMD_CACHE, Cache()),
//   which go ahead of background hydration (FetchGate).
// - Block status (Extents) comes from the bitmap and the data file's holes,
//   never from a fetch: a missing chunk is data; a present range that is a
//   hole in the data file (a zero chunk of the snapshot never written, or
//   a trimmed one) reads as zeros.
// - A write covering a whole chunk, a TRIM or a WRITE_ZEROES of whole
//   chunks makes them present without fetching.
// - Chunks of the snapshot that are all zeros, and chunks past the
//   snapshot's end (a volume larger than its snapshot), are present from
//   the start and read as zeros.
// - Crash consistency (dm-clone's rule): a chunk's present bit is set, and
//   made durable, only after its data is durable: data, fdatasync, bit,
//   fdatasync. After a restart nothing hydrated is fetched again and
//   nothing unfetched is exposed. A fill that arrives after a client made
//   the chunk present is dropped: it never overwrites a client's write.
// - A read does not wait for that: the chunk a read's trigger fetched
//   "lands" (its verified bytes held in memory, the chunk claimed) and the
//   read is answered from those bytes while a pool thread writes the
//   chunk and commits its bit (a device flush must not add to a guest's
//   wait). Writers, hydrators and captures wait for the landing to end;
//   if its install fails the chunk is missing again and fetched anew.
// - Written since creation (WRITE, TRIM, WRITE_ZEROES): the opposite
//   order, a chunk's written bit is durable before the write reaches the
//   data file, so no change the kernel may write back at any time can
//   outlive a crash without its bit. A set bit may outlive a write that
//   never landed (harmless: the chunk is hashed and matches). A written
//   chunk is present (a partial write fetches first, a whole one fills),
//   except after a crash between a whole-chunk write's bit and its fill:
//   then the chunk is missing and holds the snapshot's bytes, and counts
//   as unwritten. A volume made before this file existed gets one with
//   every present chunk marked written (the safe side: those chunks are
//   hashed, and unchanged ones match their parent's and are not uploaded).
// - Snapshots of the running volume (volume_snapshot.h): BeginCapture
//   freezes the content at one instant (writes in flight finish first,
//   new ones wait for the instant to pass); chunks written and present then
//   are captured copy-on-write (chunk_capture.h) while they upload. Reads
//   never wait for it.
//
// Bitmap files (bitmap_file.h): `bitmap` ("FERRYBM1") and `written`
// ("FERRYWR1"), one bit per chunk, updated in place by group commits.
//
// Thread-safe: NBD requests and the background hydrator run concurrently.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/latency_histogram.h"
#include "base/single_flight.h"
#include "nbd/device.h"
#include "snapshot/manifest.h"
#include "volume/bitmap_file.h"
#include "volume/chunk_capture.h"
#include "volume/chunk_source.h"
#include "volume/fetch_gate.h"
#include "volume/write_gate.h"

namespace ferry::volume {

struct VolumeOptions {
  std::string dir;             // holds data and bitmap
  uint64_t size = 0;           // 0: the snapshot's image size
  snapshot::Manifest manifest;
  ChunkSource* source = nullptr;
  FetchGate* gate = nullptr;   // shared by a pool's volumes; null: none
  // Observes, for each chunk client I/O found missing, how long the client
  // waited for it (its trigger, or the fetch it joined); shared by a
  // daemon's volumes. Null: not measured.
  LatencyHistogram* trigger_waits = nullptr;
  // A trigger for chunk i, when the client reads on sequentially (it had
  // touched chunk i-1, or the read spans chunks), also starts fetching
  // chunks i+1..i+readahead that are missing (prefetch priority, threads of
  // their own): a client reading a file that spans chunks finds the next
  // one in flight, not its turn to wait another round trip; a random read
  // costs nothing more. 0: none (the daemon's default is 2).
  int readahead = 0;
  // Once a trigger's chunks are in, also starts fetching the missing chunks
  // within this many on either side of each (prefetch priority, threads of
  // their own; after the trigger, so they never share the origin's
  // bandwidth with it): a booting guest's reads cluster (a file's blocks
  // near its inode, a directory near its parent), so the next one is often
  // in by the time it is asked for. Costs bytes only a volume that is
  // never hydrated whole would not fetch anyway. 0: none (the daemon's
  // default: see --read-around).
  int read_around = 0;
  // PrefetchNext() keeps at most this many of the prefetch order's chunks
  // in flight: enough to fill the origin's bandwidth over its latency, few
  // enough that they arrive about in the order a booting client reads them
  // (all at once, every chunk would arrive at the end together).
  int prefetch_parallel = 10;
  // Run on the thread installing a landed chunk (above), before its data
  // is written; an error fails the install. Tests hold or fail installs
  // here. Null: none.
  std::function<Status(uint64_t chunk)> before_install;
};

struct VolumeStats {
  uint64_t chunks = 0, present = 0;
  uint64_t written = 0;           // chunks changed by clients since creation
  uint64_t triggers = 0;          // urgent fetches started by client I/O
  uint64_t background = 0;        // chunks hydrated in the background
  uint64_t hinted = 0;            // chunks fetched for a prefetch hint (NBD_CMD_CACHE)
  uint64_t fetched_bytes = 0;     // chunk bytes received from the source
  uint64_t origin_bytes = 0;      // of those, bytes this volume's fetches brought from the origin
  uint64_t cache_bytes = 0;       // and bytes the transfer cache (or another volume's fetch) had
  uint64_t written_bytes = 0;     // bytes clients wrote (WRITE)
  uint64_t fetch_errors = 0;
  uint64_t bitmap_commits = 0;    // group commits of its two bitmaps (bitmap_file.h): metadata writes
};

class Volume : public nbd::BlockDevice {
 public:
  // Creates the volume's files in options.dir, or opens them again (the
  // bitmaps must match the snapshot's chunk count: kCorruption otherwise).
  static Result<std::unique_ptr<Volume>> Open(VolumeOptions options);
  ~Volume() override;

  uint64_t size() const override { return size_; }
  uint64_t chunk_size() const { return options_.manifest.chunk_size; }
  Status Read(uint64_t offset, uint64_t len, char* out) override;
  Status Write(uint64_t offset, std::string_view data, bool fua) override;
  Status Flush() override;
  Status Trim(uint64_t offset, uint64_t len, bool fua) override;
  Status WriteZeroes(uint64_t offset, uint64_t len, bool fua) override;
  bool Ready(uint64_t offset, uint64_t len) const override;
  Status Extents(uint64_t offset, uint64_t len, std::vector<nbd::Extent>* out) override;
  Status Cache(uint64_t offset, uint64_t len) override;

  // Background hydration: fetches the next missing chunk no other hydrator
  // has taken (the manifest's prefetch order first, then in order). false
  // when there is none: every chunk is present, or the rest are being
  // fetched by other hydrators (complete() tells which).
  Result<bool> HydrateNext();
  // The prefetch order alone, at FetchPriority::kPrefetch (ahead of the
  // background, behind triggers): fetches its next missing chunk nobody
  // is fetching. false when there is none, or options.prefetch_parallel
  // of them are in flight already. Several callers fetch different chunks
  // at once, in the order's order.
  Result<bool> PrefetchNext();
  // Every chunk of the prefetch order is present (true without one).
  bool PrefetchDone() const;
  bool complete() const;
  // True while a chunk of the snapshot's prefetch order is missing, no
  // hydrator is fetching it and PrefetchNext() has fewer than
  // prefetch_parallel in flight: the next HydrateNext() or PrefetchNext()
  // takes one of those.
  bool PrefetchPending() const;
  VolumeStats stats() const;
  // Waits until no landed chunk is being installed (every chunk a read
  // fetched so far is present, or missing again if its install failed).
  void Settle();
  // When clients last did I/O (steady clock; epoch if never).
  std::chrono::steady_clock::time_point last_client_io() const {
    return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(last_client_io_.load()));
  }

  // The order in which this volume's chunks were first touched by clients
  // (for `ferry snapshot prefetch`).
  std::vector<uint32_t> FirstTouches() const;

  const snapshot::Manifest& manifest() const { return options_.manifest; }
  // Freezes the volume's content for a snapshot: waits for the writes in
  // flight, then captures every chunk written since creation and present
  // (and, in a volume larger than its snapshot, the snapshot's short last
  // chunk, fetched first: it grows). Until EndCapture, a write to a
  // captured chunk the snapshot has not taken copies its old bytes aside
  // first. kAlreadyExists while another capture runs.
  Result<std::shared_ptr<ChunkCapture>> BeginCapture();
  // Ends `capture` (if it is the running one): writes no longer copy
  // anything, and its chunks not taken are dropped with it.
  void EndCapture(const ChunkCapture* capture);

 private:
  Volume(VolumeOptions o, int data_fd, int direct_fd, uint64_t size);
  Status OpenBitmaps(bool fresh);
  uint64_t ChunkCount() const { return bits_.size(); }
  bool Present(uint64_t i) const;
  // Makes chunk i present, fetching it at `priority` unless it is. A
  // trigger counts as the client's touch. For a reader (`to_read`) a
  // landed chunk will do, and the reader's own fetch lands its chunk
  // (Land) rather than installing it; anyone else returns once it is
  // present.
  Status Ensure(uint64_t i, FetchPriority priority, bool to_read = false);
  // Ensure(c, priority, to_read) for chunks first..last, fetching missing
  // ones together.
  Status EnsureAll(uint64_t first, uint64_t last, FetchPriority priority, bool to_read = false);
  // Takes the next missing chunk nobody fetches (from the prefetch order
  // alone, or that order then every chunk), fetches it at `priority`.
  Result<bool> FetchNext(bool prefetch_only, FetchPriority priority);
  // The prefetch order's first missing chunk nobody fetches; UINT64_MAX:
  // none. With mu_ held.
  uint64_t NextPrefetchLocked() const;
  // How many of the prefetch order's first chunks are all present (the
  // scan starts where the last one ended). With mu_ held.
  size_t PrefetchPresentLocked() const;
  // Starts fetching the missing chunks after `last` (options_.readahead of
  // them) that nobody is fetching, each a task of helper_pools.h's HelperPool.
  void StartReadahead(uint64_t last);
  // The same for chunks first..last.
  void StartPrefetch(uint64_t first, uint64_t last);
  // Chunk i's fetched bytes into the data file, then its bit (claimed
  // meanwhile); nothing when a client made it present first.
  Status Install(uint64_t i, const std::string& bytes);
  // Install as a task of helper_pools.h's InstallPool, the bytes readable in landing_ until it
  // ends. Returns at once.
  void Land(uint64_t i, std::string bytes);
  // Too many chunks landed and not installed yet (in this volume, or
  // kLandedBudget bytes in the process): install before answering.
  bool LandingFull() const;
  // Ends chunk i's landing (its bytes no longer readable from memory). With mu_ held.
  void EraseLandingLocked(uint64_t i);
  // Writes a fetched chunk's bytes at its place (direct I/O when it can).
  Status WriteChunk(uint64_t i, const std::string& bytes);
  // Copies [offset, offset+len) into out from landed chunks' bytes and the
  // data file; false when a chunk of it is neither landed nor present (its
  // install failed since Ensure). With every chunk ensured for a read.
  bool CopyOut(uint64_t offset, uint64_t len, char* out, Status* st);
  // Chunk i for one writer of a whole missing chunk (a fill, a whole-chunk
  // write or zeroing): false when it is present already. Waits for
  // another claim to end.
  bool Claim(uint64_t i);
  void Unclaim(uint64_t i);
  // With chunk i claimed: write_data, then commit it (CommitBit), then
  // unclaim.
  Status FillClaimed(uint64_t i, const std::function<Status()>& write_data);
  // Makes chunk i's written data durable, then its bit, and only then
  // shows the bit (a group commit of the present bitmap).
  Status CommitBit(uint64_t i) { return present_file_->Set({i}); }
  // Makes the chunks a write spans that are partly covered present (the
  // whole ones need no fetch): before the write gate, so a slow fetch
  // never holds up a snapshot's freeze.
  Status EnsureEdges(uint64_t offset, uint64_t end);
  // Inside the write gate, before chunks first..last change: their written
  // bits durable, and a running capture's old bytes copied aside.
  Status BeforeChange(uint64_t first, uint64_t last);

  VolumeOptions options_;
  const int data_fd_;
  const int direct_fd_;                    // the data file with O_DIRECT; -1: none
  const uint64_t size_;
  std::unique_ptr<BitmapFile> present_file_, written_file_;
  WriteGate write_gate_;
  mutable std::mutex mu_;
  std::vector<bool> bits_;                 // guarded by mu_; set once durable
  uint64_t present_ = 0;                   // guarded by mu_: bits_ set
  std::vector<bool> written_;              // guarded by mu_; set once durable
  uint64_t written_count_ = 0;             // guarded by mu_: written_ set
  std::shared_ptr<ChunkCapture> capture_;  // guarded by mu_; set only while writes are frozen
  mutable size_t prefetch_done_ = 0;       // guarded by mu_: prefetch[0, this) present
  std::vector<bool> busy_;                 // guarded by mu_: claimed (Claim)
  std::condition_variable busy_cv_;
  std::vector<uint32_t> first_touches_;    // guarded by mu_
  std::vector<bool> touched_;              // guarded by mu_
  size_t next_ = 0;                        // background cursor; guarded by mu_
  std::vector<bool> hydrating_;            // guarded by mu_: taken by a hydrator (or a readahead)
  int prefetching_ = 0;                    // guarded by mu_: PrefetchNext() fetches in flight
  // guarded by mu_: chunks landed (Land), their bytes until installed
  std::map<uint64_t, std::shared_ptr<const std::string>> landing_;
  int helpers_ = 0;                        // guarded by mu_: readahead and install tasks not ended
  std::condition_variable helpers_cv_;     // helpers_ fell
  // guarded by mu_: a trigger waits on this chunk's fetch, so the fetch
  // counts as urgent at the gate even if a background caller started it
  std::vector<bool> urgent_wanted_;
  SingleFlight<uint64_t, Status> flights_;
  std::atomic<uint64_t> install_failures_{0};  // landed chunks whose install failed
  std::atomic<uint64_t> triggers_{0}, background_{0}, hinted_{0}, fetched_bytes_{0}, fetch_errors_{0}, written_bytes_{0},
      origin_bytes_{0}, cache_bytes_{0};
  std::atomic<std::chrono::steady_clock::duration::rep> last_client_io_{0};
  void NoteClientIo() { last_client_io_ = std::chrono::steady_clock::now().time_since_epoch().count(); }
};

}  // namespace ferry::volume
