// ferry snapshot create | ls | info: disk images as content-addressed chunks
// in a repository (snapshot/).
#include <chrono>
#include <cstdio>
#include <thread>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "cli/cli_util.h"
#include "cli/registry.h"
#include "cli/volume_api.h"
#include "snapshot/create.h"
#include "snapshot/repository.h"

namespace ferry::cli {
namespace {

struct SnapshotArgs {
  std::string image;
  std::string location;  // REPO/NAME (create, info) or REPO (ls)
  std::string chunk_size = "1M";
  int concurrency = 16;
  bool json = false;
  bool no_predict = false;
  std::string volume;                    // prefetch: the volume whose first touches to store
  std::string api = "127.0.0.1:10810";  // prefetch: the volume daemon
  GlobalOptions global;
};

Result<snapshot::Repository> OpenRepository(const std::string& repo, const GlobalOptions& g, bool create) {
  return snapshot::OpenRepository(repo, g.ToOpenOptions(""), create);
}

void PrintCreated(const SnapshotArgs& a, const std::string& name, const nlohmann::json& j) {
  if (a.json) {
    std::printf("%s\n", DumpJson(j).c_str());
    return;
  }
  auto n = [&](const char* field) { return static_cast<unsigned long long>(j.value(field, uint64_t{0})); };
  std::printf("snapshot %s of volume %s: %llu chunks, %llu written since the volume was made (%llu zero, %llu "
              "already stored, %llu new: %s uploaded), %llu from its snapshot\n",
              name.c_str(), a.volume.c_str(), n("chunks"), n("written_chunks"), n("zero_chunks"), n("reused_chunks"),
              n("uploaded_chunks"), HumanBytes(j.value("uploaded_bytes", uint64_t{0})).c_str(), n("parent_chunks"));
}

// A snapshot of a running volume: the daemon freezes it when asked (the
// instant is fixed before it answers) and uploads in the background; this
// waits for the upload, reporting what it did.
int RunCreateFromVolume(const SnapshotArgs& a) {
  const std::string& to = a.location.empty() ? a.image : a.location;
  if (!a.location.empty()) {
    return Fail("snapshot create", Status::InvalidArgument("with --from-volume give only REPOSITORY/NEW"));
  }
  auto where = snapshot::SplitSnapshotLocation(to);
  if (!where.ok()) return Fail("snapshot create", where.status());
  auto api = VolumeApi::Connect(a.api);
  if (!api.ok()) return Fail("snapshot create", api.status());
  auto answer = (*api)->Call("POST", "/volumes/" + a.volume + "/snapshots", DumpJson({{"to", to}}));
  const std::string poll = "/volumes/" + a.volume + "/snapshots/" + where->second;
  for (;;) {
    if (!answer.ok()) return Fail("snapshot create: the volume daemon at " + a.api, answer.status());
    if (answer->status >= 300 || answer->json.is_discarded()) {
      return Fail("snapshot create", Status::InvalidArgument(answer->Error()));
    }
    std::string state = answer->json.value("state", "");
    if (state == "failed") return Fail("snapshot create", Status::IoError(answer->json.value("error", "failed")));
    if (state == "done") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    answer = (*api)->Call("GET", poll);
  }
  PrintCreated(a, where->second, answer->json);
  return 0;
}

int RunCreate(const SnapshotArgs& a) {
  if (!a.volume.empty()) return RunCreateFromVolume(a);
  if (a.location.empty()) {
    return Fail("snapshot create",
                Status::InvalidArgument("give IMAGE REPOSITORY/NAME, or --from-volume NAME REPOSITORY/NAME"));
  }
  auto where = snapshot::SplitSnapshotLocation(a.location);
  if (!where.ok()) return Fail("snapshot create", where.status());
  auto chunk = ParseSize(a.chunk_size);
  if (!chunk.ok()) return Fail("snapshot create: --chunk-size", chunk.status());
  auto repo = OpenRepository(where->first, a.global, /*create=*/true);
  if (!repo.ok()) return Fail(where->first, repo.status());
  snapshot::CreateOptions o;
  o.chunk_size = *chunk;
  o.concurrency = std::max(1, a.concurrency);
  o.predict_boot = !a.no_predict;
  auto st = snapshot::CreateSnapshot(a.image, *repo, where->second, o);
  if (!st.ok()) return Fail("snapshot create", st.status());
  if (a.json) {
    nlohmann::json j{{"snapshot", where->second},       {"image_size", st->image_size},
                     {"chunks", st->chunks},           {"zero_chunks", st->zero_chunks},
                     {"uploaded_chunks", st->uploaded_chunks}, {"present_chunks", st->present_chunks},
                     {"uploaded_bytes", st->uploaded_bytes},
                     {"prefetch", st->prefetch_chunks},    {"predicted_files", st->predicted_files}};
    if (!st->no_prediction.empty()) j["no_prediction"] = st->no_prediction;
    std::printf("%s\n", DumpJson(j).c_str());
  } else {
    std::printf("snapshot %s: %s in %llu chunks (%llu zero, %llu already stored, %llu new: %s uploaded)\n",
                where->second.c_str(), HumanBytes(st->image_size).c_str(),
                static_cast<unsigned long long>(st->chunks), static_cast<unsigned long long>(st->zero_chunks),
                static_cast<unsigned long long>(st->present_chunks),
                static_cast<unsigned long long>(st->uploaded_chunks), HumanBytes(st->uploaded_bytes).c_str());
    if (st->prefetch_chunks > 0 && st->predicted_files == 0) {
      std::printf("prefetch order: %llu chunk%s, the file system's metadata (no files a boot reads)\n",
                  static_cast<unsigned long long>(st->prefetch_chunks), st->prefetch_chunks == 1 ? "" : "s");
    } else if (st->prefetch_chunks > 0) {
      std::printf("prefetch order: %llu chunks, what a boot reads (%llu files of its file system)\n",
                  static_cast<unsigned long long>(st->prefetch_chunks),
                  static_cast<unsigned long long>(st->predicted_files));
    } else if (!st->no_prediction.empty()) {
      std::printf("no prefetch order: %s\n", st->no_prediction.c_str());
    }
  }
  return 0;
}

nlohmann::json Summary(const snapshot::Manifest& m) {
  uint64_t zero = 0;
  for (const auto& c : m.chunks) zero += c.empty();
  return {{"name", m.name},     {"image_size", m.image_size}, {"chunk_size", m.chunk_size},
          {"chunks", m.chunks.size()}, {"zero_chunks", zero}, {"prefetch", m.prefetch.size()},
          {"learned_clones", m.learned_clones}, {"created", m.created}};
}

int RunLs(const SnapshotArgs& a) {
  auto repo = OpenRepository(a.location, a.global, /*create=*/false);
  if (!repo.ok()) return Fail(a.location, repo.status());
  auto names = repo->List();
  if (!names.ok()) return Fail(a.location, names.status());
  for (const auto& name : *names) {
    auto m = repo->GetManifest(name);
    if (!m.ok()) {
      // One damaged manifest does not hide the others.
      std::fprintf(stderr, "ferry: %s\n", m.status().ToString().c_str());
      continue;
    }
    nlohmann::json j = Summary(*m);
    if (a.json) {
      std::printf("%s\n", DumpJson(j).c_str());
    } else {
      std::printf("%-32s %10s  %6llu chunks of %s  %s\n", name.c_str(), HumanBytes(m->image_size).c_str(),
                  static_cast<unsigned long long>(m->chunks.size()), HumanBytes(m->chunk_size).c_str(),
                  m->created.c_str());
    }
  }
  return 0;
}

int RunInfo(const SnapshotArgs& a) {
  auto where = snapshot::SplitSnapshotLocation(a.location);
  if (!where.ok()) return Fail("snapshot info", where.status());
  auto repo = OpenRepository(where->first, a.global, /*create=*/false);
  if (!repo.ok()) return Fail(where->first, repo.status());
  auto m = repo->GetManifest(where->second);
  if (!m.ok()) return Fail("snapshot info", m.status());
  nlohmann::json j = Summary(*m);
  if (a.json) {
    std::printf("%s\n", DumpJson(j).c_str());
  } else {
    for (auto it = j.begin(); it != j.end(); ++it) std::printf("%-15s %s\n", it.key().c_str(), DumpJson(it.value()).c_str());
  }
  return 0;
}

// Stores the order in which a volume's clients first touched its chunks as
// the snapshot's prefetch order, so later clones hydrate those first.
int RunPrefetch(const SnapshotArgs& a) {
  auto where = snapshot::SplitSnapshotLocation(a.location);
  if (!where.ok()) return Fail("snapshot prefetch", where.status());
  auto api = VolumeApi::Connect(a.api);
  if (!api.ok()) return Fail("snapshot prefetch", api.status());
  auto resp = (*api)->Call("GET", "/volumes/" + a.volume + "/first-touches");
  if (!resp.ok()) return Fail("snapshot prefetch: the volume daemon at " + a.api, resp.status());
  const nlohmann::json& j = resp->json;
  if (resp->status != 200 || j.is_discarded() || !j.contains("chunks")) {
    return Fail("snapshot prefetch", Status::InvalidArgument(resp->Error()));
  }
  auto repo = OpenRepository(where->first, a.global, /*create=*/false);
  if (!repo.ok()) return Fail(where->first, repo.status());
  auto m = repo->GetManifest(where->second);
  if (!m.ok()) return Fail("snapshot prefetch", m.status());
  std::vector<bool> seen(m->chunks.size(), false);
  m->prefetch.clear();
  m->prefetch_seen.clear();  // a new order: learning (--learn-orders) starts again from it
  m->prefetch_rank_sum.clear();
  m->learned_clones = m->learned_observations = 0;
  for (const auto& c : j["chunks"]) {
    uint64_t i = c.get<uint64_t>();
    if (i < m->chunks.size() && !seen[i]) {
      seen[i] = true;
      m->prefetch.push_back(static_cast<uint32_t>(i));
    }
  }
  Status st = repo->PutManifest(*m);
  if (!st.ok()) return Fail("snapshot prefetch", st);
  std::printf("snapshot %s: prefetch order of %zu chunks from volume %s\n", where->second.c_str(),
              m->prefetch.size(), a.volume.c_str());
  return 0;
}

}  // namespace

void AddSnapshotCommand(CLI::App& app, int* exit_code) {
  auto* snap = app.add_subcommand("snapshot", "Disk images as content-addressed chunks in a repository");
  snap->require_subcommand(1);
  auto a = std::make_shared<SnapshotArgs>();
  auto* create = snap->add_subcommand(
      "create", "Store a raw disk image as REPOSITORY/NAME, or a running volume's content (--from-volume)");
  create->add_option("image", a->image, "Raw image file or block device (not with --from-volume)")->required();
  create->add_option("snapshot", a->location, "REPOSITORY/NAME (local directory or s3://bucket[/prefix])");
  create->add_option("--from-volume", a->volume,
                     "A volume served by `ferry volume serve`: its content now, beside the snapshot it was made "
                     "from (only what clients wrote is uploaded)");
  create->add_option("--api", a->api, "With --from-volume: the volume daemon's API (HOST:PORT)")
      ->capture_default_str();
  create->add_option("--chunk-size", a->chunk_size, "Chunk size, a power of two from 4K to 64M")
      ->capture_default_str();
  create->add_option("--concurrency", a->concurrency, "Chunks in flight")->capture_default_str();
  create->add_flag("--no-predict", a->no_predict,
                   "Store no prefetch order (by default, what a Linux boot reads from the image's ext2/3/4 file "
                   "system: metadata, kernel and initrd, init and its libraries, /etc, systemd units)");
  create->add_flag("--json", a->json, "Print the summary as JSON");
  AddGlobalOptions(*create, &a->global);
  create->callback([a, exit_code] { *exit_code = RunCreate(*a); });

  auto* ls = snap->add_subcommand("ls", "List the snapshots in a repository");
  ls->add_option("repository", a->location, "Local directory or s3://bucket[/prefix]")->required();
  ls->add_flag("--json", a->json, "One JSON object per line");
  AddGlobalOptions(*ls, &a->global);
  ls->callback([a, exit_code] { *exit_code = RunLs(*a); });

  auto* prefetch = snap->add_subcommand("prefetch", "Store a volume's first-touched chunks as the prefetch order");
  prefetch->add_option("snapshot", a->location, "REPOSITORY/NAME")->required();
  prefetch->add_option("--from-volume", a->volume, "A volume made from this snapshot")->required();
  prefetch->add_option("--api", a->api, "The volume daemon's API (HOST:PORT)")->capture_default_str();
  AddGlobalOptions(*prefetch, &a->global);
  prefetch->callback([a, exit_code] { *exit_code = RunPrefetch(*a); });

  auto* info = snap->add_subcommand("info", "Show one snapshot");
  info->add_option("snapshot", a->location, "REPOSITORY/NAME")->required();
  info->add_flag("--json", a->json, "As JSON");
  AddGlobalOptions(*info, &a->global);
  info->callback([a, exit_code] { *exit_code = RunInfo(*a); });
}

}  // namespace ferry::cli
