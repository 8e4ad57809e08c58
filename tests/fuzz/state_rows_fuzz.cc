// Fuzz target: a corrupt SQLite state file, as `ferry migrate`, a worker
// or `ferry server` opens it. A real state file (two jobs: one mid-way with
// keys pending, leased and dead-lettered, an upload with parts and a live
// report; one archived) is damaged as the input says, then opened and read
// through every read of the StateStore interface, and claimed from.
// The input is a list of edits, each
//   byte 0: what — 0-3 a column of every row of a table set to a value
//           (an integer, text, a blob or NULL), 4 a run of bytes of the
//           file overwritten, 5 the file cut short
//   then a table and column number (mod their counts), then the value:
//   up to the next \0.
// Invariants: every call returns a value or an error (Status), never a
// crash, an exception or a hang; a file that opened opens again after
// being read and claimed from (ferry never makes a file it accepted worse).
#include <sqlite3.h>

#include <fstream>

#include "fuzz_util.h"
#include "migrate/job_spec.h"
#include "state/state_store.h"

namespace {

using namespace ferry;
using namespace ferry::state;
using ferry::fuzz::Check;

constexpr const char* kName = "state_rows_fuzz";

std::string Template() {
  const std::string path = fuzz::ProcessTempDir("state") + "/template.db";
  auto store = std::move(OpenSqliteStateStore(path)).value();
  auto must = [](const Status& s) {
    Check(s.ok(), kName, "the template state file could not be made");
  };
  migrate::JobSpec spec;
  spec.src = "/tmp/src";
  spec.dst = "s3://bkt/dst";
  JobRecord job{"job-live", spec.src, spec.dst, migrate::SpecToJson(spec)};
  ShardRecord shard;
  must(store->CreateJob(job, {shard}));
  ListPageCommit page;
  page.seq = 1;
  page.done = true;
  for (int i = 0; i < 6; ++i)
    page.objects.push_back({"k" + std::to_string(i), uint64_t(i) * 100, "etag", 1000});
  must(store->CommitListPage("job-live", page).status());
  must(store->AcquireJob("job-live", "runner", 1, 1'000'000'000'000, false));
  auto claimed = store->Claim("job-live", "runner", 3, 1, 1'000'000'000'000);
  must(claimed.status());
  must(store->Finish("job-live", "runner", {{"k0", Outcome::kTransferred, 0}}).status());
  must(store->DeadLetterObject("job-live", "runner", {"k1", 100, "access denied", 1, "403", 5})
           .status());
  must(store->SaveUpload("job-live", "k2", {"upload-1", "etag", 5 << 20, {{1, "p1", 5 << 20}}}));
  must(store->SetJobLive("job-live", {5, "{\"circuits\": \"\"}"}));
  JobRecord done{"job-old", "/a", "/b", migrate::SpecToJson(spec)};
  must(store->CreateJob(done, {shard}));
  must(store->SetJobState("job-old", JobState::kCompleted, 10, 1.0, true));
  must(store->ArchiveJob("job-old", 11));
  return path;
}

const char* const kTables[] = {"meta",    "jobs",  "shards",        "objects",      "dlq",
                               "uploads", "parts", "archived_jobs", "archived_dlq", "job_live"};

// Applies the input's edits to the file at `path`.
void Damage(const std::string& path, fuzz::InputReader& in) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return;
  }
  std::vector<std::pair<size_t, std::string>> file_edits;
  size_t cut = std::string::npos;
  for (int edits = 0; !in.empty() && edits < 16; ++edits) {
    const uint8_t what = in.Byte() % 6;
    const char* table = kTables[in.Byte() % std::size(kTables)];
    const uint8_t column = in.Byte();
    std::string value(in.Until('\0'));
    if (what == 4) {
      file_edits.emplace_back(column * 97u + value.size() * 4096u, value);
      continue;
    }
    if (what == 5) {
      cut = column * 512u;
      continue;
    }
    // The column's name, by number.
    std::vector<std::string> columns;
    sqlite3_stmt* info = nullptr;
    std::string q = std::string("PRAGMA table_info(") + table + ")";
    if (sqlite3_prepare_v2(db, q.c_str(), -1, &info, nullptr) == SQLITE_OK) {
      while (sqlite3_step(info) == SQLITE_ROW)
        columns.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(info, 1)));
    }
    sqlite3_finalize(info);
    if (columns.empty()) continue;
    std::string sql =
        std::string("UPDATE ") + table + " SET \"" + columns[column % columns.size()] + "\" = ?";
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      sqlite3_finalize(st);
      continue;
    }
    switch (what) {
      case 0: {
        int64_t v = 0;
        for (size_t i = 0; i < value.size() && i < 8; ++i)
          v |= int64_t(uint8_t(value[i])) << (8 * i);
        sqlite3_bind_int64(st, 1, v);
        break;
      }
      case 1:
        sqlite3_bind_text(st, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
        break;
      case 2:
        sqlite3_bind_blob(st, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
        break;
      default:
        sqlite3_bind_null(st, 1);
        break;
    }
    (void)sqlite3_step(st);  // a NOT NULL or key constraint may refuse it
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  if (file_edits.empty() && cut == std::string::npos) return;
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  for (const auto& [at, bytes] : file_edits) {
    f.seekp(static_cast<std::streamoff>(at));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  f.close();
  if (cut != std::string::npos && cut < std::filesystem::file_size(path))
    std::filesystem::resize_file(path, cut);
}

void ReadEverything(StateStore& s) {
  std::vector<std::string> ids = {"job-live", "job-old", "job-none"};
  if (auto jobs = s.ListJobs(); jobs.ok()) {
    for (const auto& j : *jobs) ids.push_back(j.id);
  }
  if (auto old = s.ListArchivedJobs(); old.ok()) {
    for (const auto& j : *old) ids.push_back(j.id);
  }
  (void)s.ListJobLive();
  for (const auto& id : ids) {
    if (auto j = s.GetJob(id); j.ok()) (void)migrate::SpecFromJson(j->spec);
    (void)s.GetShards(id);
    (void)s.ListDeadLetters(id);
    (void)s.ListUploads(id);
    (void)s.GetUpload(id, "k2");
    (void)s.CountRows(id);
    (void)s.Claim(id, "fuzz", 8, 2, 3);
    (void)s.ReleaseOwner(id, "runner");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string kTemplate = Template();
  const std::string path = fuzz::ProcessTempDir("state") + "/state.db";
  std::filesystem::copy_file(kTemplate, path, std::filesystem::copy_options::overwrite_existing);
  fuzz::InputReader in(data, size);
  Damage(path, in);
  auto store = OpenSqliteStateStore(path);
  if (!store.ok()) return 0;
  ReadEverything(**store);
  store->reset();
  auto again = OpenSqliteStateStore(path);
  Check(again.ok(), kName, "a state file that opened does not open again after being read");
  return 0;
}
