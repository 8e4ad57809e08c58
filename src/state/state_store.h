#pragma once
// Durable migration state (Super Slurper's job database): jobs, their list
// cursors, the objects still to move, multipart progress, and the
// dead-letter queue. One interface, so the embedded SQLite store and the
// PostgreSQL store (several processes, several machines) are
// interchangeable; the jobs table is described once for both
// (job_table.h), the other tables in each dialect's schema.
//
// The rules every implementation keeps (the conformance suite in
// state/state_store_conformance_test.h checks them):
//
//  - Counters change in the same transaction as the rows they count.
//    listed = number of distinct keys ever enqueued by CommitListPage;
//    transferred + skipped + failed + (rows in objects) = listed, always.
//  - A list page is identified by (job, shard, seq). Committing a page whose
//    seq is not exactly the shard's next one does nothing and says so: a page
//    listed twice (a retry, a restart) is never enqueued twice. A key already
//    present in the job (enqueued by another shard, or still pending) is not
//    counted twice either. (A relisting shard, FallBackToFlatListing, lists
//    again keys that finished before it; the counters start over with it.)
//  - An object row is owned while its lease is live (lease_until > now).
//    Claim takes only rows that are unowned or whose lease expired, and whose
//    not_before has passed. Finish/Retry/DeadLetter/Release act only when the
//    caller still owns the row; otherwise they change nothing and return
//    false (a duplicate delivery, or a lease that expired and was taken).
//  - Finished keys leave the objects table (pruned), so the store does not
//    grow with the bucket: only pending, in-flight and dead-lettered keys
//    and the per-job totals remain.
//
// Threading: every method may be called from any thread. Times are Unix
// milliseconds supplied by the caller (tests pass a fake clock).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace ferry::state {

enum class JobState {
  kCreated,     // made, not yet run
  kRunning,     // a runner holds it
  kCompleted,   // every listed key transferred or skipped
  kFailed,      // finished with keys in the dead-letter queue
  kCancelling,  // cancel asked; the runner stops at its next step
  kCancelled,
  kInterrupted,  // its runner stopped (signal, error) before the end: resumable
};
// A final state: no runner will touch the job again unless asked
// (resume of a failed job, verify --fix).
constexpr bool IsFinal(JobState s) {
  return s == JobState::kCompleted || s == JobState::kFailed || s == JobState::kCancelled;
}
// The job's listing and transfers ran to their end (with or without dead
// letters); a cancelled job did not.
constexpr bool RanToTheEnd(JobState s) { return s == JobState::kCompleted || s == JobState::kFailed; }
// "created", "running", ... (the names stored and printed).
const char* ToString(JobState s);
std::optional<JobState> JobStateFromString(const std::string& s);

struct JobCounters {
  int64_t listed = 0;
  int64_t transferred = 0;
  int64_t skipped = 0;
  int64_t failed = 0;      // keys in the dead-letter queue now
  int64_t bytes = 0;       // bytes transferred (not skipped)
  int64_t pending = 0;     // rows in objects (waiting or in flight)
};

struct JobRecord {
  std::string id;
  std::string src, dst;  // as the user typed them
  std::string spec;      // the job's options as JSON (migrate/job_spec.h)
  JobState state = JobState::kCreated;
  int64_t created_ms = 0;
  int64_t started_ms = 0;   // first run began; the "last guard" compares to it
  int64_t finished_ms = 0;  // 0 while not finished
  double run_seconds = 0;   // wall time spent running, over every run
  bool listing_done = false;
  std::string runner;       // owner of the current run ("" when none)
  int64_t runner_until_ms = 0;
  JobCounters counters;
  bool archived = false;    // in the archive (ArchiveJob): finished, read-only
  int64_t archived_ms = 0;
};

// What a job's runner reports while it runs, for a control plane in
// another process (`ferry server`'s job view): circuit states, the pacers'
// limits, retries, throttles, keys in flight, as a JSON object. One per
// job; the latest report wins; dropped when the job is archived.
struct JobLive {
  int64_t at_ms = 0;  // when it was reported
  std::string json;
};

// One source listing to walk. Two kinds:
//  - A range shard (ranged): the keys under `prefix` in (lower, upper] in
//    byte order (migrate/key_range.h), listed flat, each page asked for with
//    start-after = the greater of lower and cursor (the last key committed).
//    Range shards tile the key space, so none is lost whatever the split
//    points; SplitShard cuts one's unlisted part in two.
//  - A prefix shard: the whole `prefix`, paged by continuation `token`; with
//    delimiter "/" (shard 0 of a local walk or a split job's top part) the
//    common prefixes it finds become prefix shards of their own.
// Shard numbers are never reused within a job.
struct ShardRecord {
  int shard = 0;
  std::string prefix;
  std::string delimiter;  // "/" on shard 0 when listing by prefixes, else ""
  int64_t seq = 0;        // pages committed so far
  std::string token;      // continuation token for page seq+1; "" = start
  bool done = false;
  bool ranged = false;
  std::string lower;   // exclusive; "" = from the first key
  std::string upper;   // inclusive; "" = to the last key
  std::string cursor;  // the last key committed ("" = none yet)
  // The shard lists again what other shards of the job listed before (a
  // fallback, FallBackToFlatListing): the keys it enqueues count as claimed
  // once already, so their transfer asks the destination first.
  bool relist = false;
};

struct ListedObject {
  std::string key;  // the source key
  uint64_t size = 0;
  std::string etag;
  int64_t last_modified_ms = 0;
};

struct ListPageCommit {
  int shard = 0;
  int64_t seq = 0;          // must be the shard's seq + 1
  std::string upper;        // must be the shard's upper (a split may have moved it)
  std::string next_token;   // "" with done
  std::string cursor;       // range shards: the last key of the page (kept when "")
  bool done = false;        // the shard has no more pages
  std::vector<ListedObject> objects;
  // Keys listed and found unchanged without a look (--since-last): counted
  // as listed and skipped, never enqueued.
  int64_t unchanged = 0;
  std::vector<std::string> new_shards;  // common prefixes to list as shards
};

struct ListPageResult {
  bool applied = false;   // false: seq was not the next one, nothing changed
  int64_t enqueued = 0;   // new keys
};

struct ClaimedObject {
  ListedObject object;
  int attempts = 0;       // failed attempts so far
  int claims = 0;         // times claimed, this one included (>1: retried or resumed)
  std::string last_error;
  int64_t lease_until_ms = 0;  // the lease this claim took (set by the claimer; 0: unknown)
  bool force = false;  // requeued by RequeueKeys: copy whatever the destination holds
};

enum class Outcome { kTransferred, kSkipped };

struct FinishedObject {
  std::string key;
  Outcome outcome = Outcome::kTransferred;
  uint64_t bytes = 0;  // counted for kTransferred
};

struct DeadLetter {
  std::string key;
  uint64_t size = 0;
  std::string reason;      // short class: "access denied", "retries exhausted"...
  int attempts = 0;
  std::string last_error;  // the last Status as text
  int64_t at_ms = 0;
};

// A multipart upload in progress for one key, and the parts known uploaded.
struct UploadRecord {
  std::string upload_id;
  std::string src_etag;  // the source version the parts came from
  uint64_t part_size = 0;
  struct Part {
    int number = 0;
    std::string etag;
    uint64_t size = 0;
  };
  std::vector<Part> parts;  // ascending number
};

// What a gateway in front of a running job (`ferry gateway`) knows of one
// key beyond the job's own rows, kept until the job is archived:
//  - kClaimed: the gateway is copying it on demand, or writing it, under a
//    lease (owner, lease_until); a listing that meets the key enqueues it
//    leased to that owner, so no worker copies it meanwhile, and takes it
//    over when the lease ends (the gateway died: the bulk copy does it).
//  - kCopied, kWritten, kDeleted: final. The destination holds the source's
//    object (copied on demand), an object written through the gateway, or
//    nothing (deleted through it); a listing that meets the key counts it
//    (transferred for kCopied, skipped otherwise) and never enqueues it, so
//    the bulk copy neither copies it twice nor overwrites or resurrects it.
// A key is counted in the job's counters once: when its final mark
// finishes a row, or when a listing first meets a final mark.
enum class KeyMark { kClaimed, kCopied, kWritten, kDeleted };
const char* ToString(KeyMark m);

struct KeyClaim {
  enum class Kind {
    kClaimed,   // the caller owns the key now (a row, a mark, or a new mark)
    kBusy,      // another owner's live lease (a worker mid-copy, another gateway)
    kRecorded,  // a final mark: `mark`, `size`, `etag`
    kNone,      // no row and no mark (finished long ago, or never listed)
  };
  Kind kind = Kind::kNone;
  KeyMark mark = KeyMark::kClaimed;
  bool from_row = false;   // kClaimed: the key was a pending row (listed)
  ListedObject object;     // kClaimed from a row: the listed object
  uint64_t size = 0;       // kRecorded
  std::string etag;        // kRecorded
  bool listing_done = false;
  // The key provably has not been listed yet: the range shard holding it
  // has not reached it (so no worker can have copied it). False when that
  // cannot be known (prefix shards) or the key was listed.
  bool unlisted = false;
  JobState state = JobState::kCreated;
};

class StateStore {
 public:
  virtual ~StateStore() = default;

  // Jobs. CreateJob fails with kAlreadyExists on a duplicate id (archived
  // jobs included).
  virtual Status CreateJob(const JobRecord& job, const std::vector<ShardRecord>& shards) = 0;
  // A live job, or else an archived one (archived set). kNotFound.
  virtual Result<JobRecord> GetJob(const std::string& id) = 0;
  // Live jobs (not archived), newest first.
  virtual Result<std::vector<JobRecord>> ListJobs() = 0;

  // The archive, where finished jobs go so the live tables hold only the
  // jobs still at work (Super Slurper kept years of history this way).
  // ArchiveJob moves a finished job (completed, failed or cancelled): its
  // row with its counters (the summary) and its dead-letter entries; its
  // other rows (shards, keys a cancel left pending, uploads, parts) are
  // deleted. An archived job is left as it is. kPreconditionFailed for a job
  // that is not finished.
  virtual Status ArchiveJob(const std::string& id, int64_t now_ms) = 0;
  // Archived jobs, newest first.
  virtual Result<std::vector<JobRecord>> ListArchivedJobs() = 0;
  // Moves an archived job back to the live tables with its dead letters (to
  // requeue them). A live job is left as it is. kPreconditionFailed for a
  // job that had keys pending (a cancelled one: they are gone).
  virtual Status RestoreJob(const std::string& id) = 0;
  // Takes the job for `runner` until `until_ms` when no other runner holds a
  // live claim (or `force`). Sets state running (and started_ms on the first
  // run). kPreconditionFailed when another live runner holds it.
  virtual Status AcquireJob(const std::string& id, const std::string& runner, int64_t now_ms,
                            int64_t until_ms, bool force) = 0;
  // Extends the runner's claim; kPreconditionFailed when it lost it.
  virtual Status RenewJob(const std::string& id, const std::string& runner, int64_t until_ms) = 0;
  // Sets the state (and finished_ms for final states), adds run time, and
  // drops the runner claim when `release`.
  virtual Status SetJobState(const std::string& id, JobState state, int64_t now_ms,
                             double add_run_seconds, bool release) = 0;

  // Listing. CommitListPage applies a page only when its seq is the shard's
  // next and its upper is the shard's upper; otherwise (also when the shard
  // is gone, replaced by FallBackToFlatListing) nothing changes and applied
  // is false (the caller reads the shards again). kNotFound for no such job.
  virtual Result<std::vector<ShardRecord>> GetShards(const std::string& job) = 0;
  virtual Result<ListPageResult> CommitListPage(const std::string& job,
                                                const ListPageCommit& page) = 0;
  // Cuts the unlisted part of range shard `shard` at `bounds` (ascending,
  // each above the shard's lower and cursor and below its upper): the shard
  // keeps (.., bounds[0]], new shards take (bounds[i], bounds[i+1]] and
  // (bounds.back(), its old upper]. Returns the new shards. Nothing changes
  // and kPreconditionFailed is returned when the shard is done, is not a
  // range shard, its upper is no longer `expect_upper`, or its cursor has
  // passed bounds[0]; kInvalidArgument for bounds out of order.
  virtual Result<std::vector<ShardRecord>> SplitShard(const std::string& job, int shard,
                                                      const std::string& expect_upper,
                                                      const std::vector<std::string>& bounds) = 0;
  // Replaces every shard of the job with one prefix shard listing `prefix`
  // flat from its start (for a server whose listing cannot be split into
  // ranges), keeping to the keys in (lower, upper] (the job's own range; ""
  // upper: no bound). The job's listing is not done afterwards. Returns the
  // new shard. A finished job (completed, failed, cancelled) is refused
  // with kPreconditionFailed, not retryable. When the job has listed keys already, the new shard relists:
  // every key it lists may have finished before, so the counters start over
  // (listed = failed, transferred = skipped = bytes = 0) and stay exact;
  // keys it enqueues count as claimed once (their transfer finds what was
  // copied before and skips it); a dead-lettered key is not enqueued again.
  // For the counters to start over, no key may be pending: while some are,
  // the call changes nothing and fails with kPreconditionFailed (retryable:
  // the caller waits for the transfers to finish them).
  virtual Result<ShardRecord> FallBackToFlatListing(const std::string& job,
                                                    const std::string& prefix,
                                                    const std::string& lower,
                                                    const std::string& upper) = 0;

  // Work. Claims up to `max` rows for `owner` with a lease until `lease_until_ms`.
  virtual Result<std::vector<ClaimedObject>> Claim(const std::string& job,
                                                   const std::string& owner, int max,
                                                   int64_t now_ms, int64_t lease_until_ms) = 0;
  // Extends the leases `owner` holds on the job's rows.
  virtual Status RenewLeases(const std::string& job, const std::string& owner,
                             int64_t lease_until_ms) = 0;
  // Ends every lease `owner` holds (a runner found dead); its rows become
  // claimable at once. Returns how many.
  virtual Result<int64_t> ReleaseOwner(const std::string& job, const std::string& owner) = 0;

  // Finishes keys in one transaction (group commit): each row still owned by
  // `owner` is deleted and counted; the others are ignored. Returns, per
  // key, whether it was counted.
  virtual Result<std::vector<bool>> Finish(const std::string& job, const std::string& owner,
                                           const std::vector<FinishedObject>& done) = 0;
  // A failed attempt that may be retried: attempts+1, error kept, lease
  // dropped, claimable again from `not_before_ms`.
  virtual Result<bool> Retry(const std::string& job, const std::string& owner,
                             const std::string& key, const std::string& error,
                             int64_t not_before_ms) = 0;
  // Gives the row back without counting an attempt (an outage, a shutdown).
  virtual Result<bool> Release(const std::string& job, const std::string& owner,
                               const std::string& key, int64_t not_before_ms) = 0;
  // Moves the row to the dead-letter queue (failed + 1).
  virtual Result<bool> DeadLetterObject(const std::string& job, const std::string& owner,
                                        const DeadLetter& entry) = 0;

  // Enqueues keys again into a live job (`ferry migrate verify --fix`: keys
  // missing or different at the destination), to be copied whatever the
  // destination holds (ClaimedObject::force). A key already pending is
  // marked so; a dead-lettered one moves back out of the dead-letter queue
  // (failed - 1, pending + 1); the others are added as pending and counted
  // in listed, so the counters stay balanced. Returns how many were added
  // or moved. The job's state is left to the caller.
  virtual Result<int64_t> RequeueKeys(const std::string& job,
                                      const std::vector<ListedObject>& objects) = 0;

  // The job's dead letters, live or archived.
  virtual Result<std::vector<DeadLetter>> ListDeadLetters(const std::string& job) = 0;
  // Puts every dead-lettered key back as pending (failed - n, attempts 0) and
  // returns n. The job's state is left to the caller.
  virtual Result<int64_t> RequeueDeadLetters(const std::string& job) = 0;

  // Multipart progress, keyed by (job, key).
  virtual Status SaveUpload(const std::string& job, const std::string& key,
                            const UploadRecord& upload) = 0;  // replaces, parts too
  virtual Status AddPart(const std::string& job, const std::string& key,
                         const UploadRecord::Part& part) = 0;
  virtual Result<std::optional<UploadRecord>> GetUpload(const std::string& job,
                                                        const std::string& key) = 0;
  virtual Status DeleteUpload(const std::string& job, const std::string& key) = 0;
  // Every upload recorded for the job: (key, record), for cleanup.
  virtual Result<std::vector<std::pair<std::string, UploadRecord>>> ListUploads(
      const std::string& job) = 0;

  // The gateway's keys (KeyMark). ClaimKey, in one transaction: a pending
  // row not under another owner's live lease is leased to `owner` (claims
  // + 1); else a kClaimed mark not under another's live lease is taken
  // over; a final mark is reported; with neither, `insert` makes a kClaimed
  // mark for `owner` (the caller copies or writes a key the job has not
  // listed), else kNone. kNotFound for no such job.
  virtual Result<KeyClaim> ClaimKey(const std::string& job, const std::string& key,
                                    const std::string& owner, int64_t now_ms,
                                    int64_t lease_until_ms, bool insert);
  // Ends `owner`'s claim with a final mark (not kClaimed): the key's row, if
  // any, is deleted and counted (transferred with `size` bytes for kCopied,
  // skipped otherwise). Returns false, changing nothing, while another owner
  // holds a live lease on the row or mark, and for kCopied over a written
  // or deleted mark. RenewLeases extends an owner's claimed marks too.
  virtual Result<bool> MarkKey(const std::string& job, const std::string& key,
                               const std::string& owner, KeyMark mark, uint64_t size,
                               const std::string& etag, int64_t now_ms);
  // Gives up `owner`'s claim without a result (the source failed): its row
  // is claimable again, its uncounted kClaimed mark is dropped.
  virtual Status ReleaseKey(const std::string& job, const std::string& key,
                            const std::string& owner);
  // The final marks of these keys (absent: none), for merged listings.
  virtual Result<std::map<std::string, KeyMark>> KeyMarks(const std::string& job,
                                                          const std::vector<std::string>& keys);
  // A client's write or delete (kWritten, kDeleted) of a key after job
  // `job` ended (live or archived, any final state): recorded whatever the
  // key had, so what runs on the job later (--delete, verify --fix, a
  // resumed or retried run) leaves it alone. Counts nothing.
  virtual Status RecordKey(const std::string& job, const std::string& key, KeyMark mark,
                           int64_t now_ms);

  // Rows left in the per-object tables for the job (objects, uploads, parts,
  // dead letters), for tests and the benchmark's "rows left behind".
  virtual Result<int64_t> CountRows(const std::string& job) = 0;

  // A running job's latest report (JobLive): replaces the last one; nothing
  // is kept for a job not in the live tables (archived, or none).
  virtual Status SetJobLive(const std::string& job, const JobLive& live) = 0;
  // Every live job's latest report, by job id.
  virtual Result<std::map<std::string, JobLive>> ListJobLive() = 0;
};

// For implementations: the argument checks every Claim makes (a non-empty
// owner, a lease that ends after now).
Status CheckClaimArguments(const std::string& owner, int64_t now_ms, int64_t lease_until_ms);

// For implementations of SplitShard: whether `shard` (as stored now) may be
// cut at `bounds` (the checks and errors SplitShard documents), and the new
// shards it makes, numbered from `first_id`.
Status CheckSplit(const ShardRecord& shard, const std::string& expect_upper,
                  const std::vector<std::string>& bounds);
std::vector<ShardRecord> SplitOff(const ShardRecord& shard, const std::vector<std::string>& bounds,
                                  int first_id);
// For implementations of FallBackToFlatListing: refuses a finished job, and
// while keys are pending in a job that has listed some.
Status CheckFallBack(const JobRecord& job);

// Opens (creating when absent) the SQLite state database at `path`: WAL mode,
// a busy timeout so several processes can share it. A file that is not a
// ferry state database, or is damaged, is kCorruption with a one-line reason;
// it is never reset or rewritten.
Result<std::unique_ptr<StateStore>> OpenSqliteStateStore(const std::string& path);

// Opens the PostgreSQL state database `conninfo` names (a libpq connection
// string or URI; the PG* environment variables fill in what it leaves out),
// creating or migrating ferry's schema in it (state/pg_schema.h). Any number
// of stores, in any number of processes, may share one database. A database
// that holds other tables, or a newer ferry's schema, is refused untouched.
Result<std::unique_ptr<StateStore>> OpenPgStateStore(const std::string& conninfo);

// Where `--state` points: a PostgreSQL database for "postgres://..." and
// "postgresql://..." (libpq URIs, passed on as they are) and for
// "postgres:" followed by a libpq keyword/value string
// ("postgres:host=db1 dbname=ferry"); anything else is a directory.
bool IsPostgresLocation(const std::string& location);
// The libpq connection string of a PostgreSQL location.
std::string PostgresConninfo(const std::string& location);

}  // namespace ferry::state
