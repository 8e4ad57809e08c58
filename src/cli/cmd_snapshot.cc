// ferry snapshot create | ls | info: disk images as content-addressed chunks
// in a repository (snapshot/).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/registry.h"
#include "http/client.h"
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
  std::string volume;                    // prefetch: the volume whose first touches to store
  std::string api = "127.0.0.1:10810";  // prefetch: the volume daemon
  GlobalOptions global;
};

Result<snapshot::Repository> OpenRepository(const std::string& repo, const GlobalOptions& g, bool create) {
  return snapshot::OpenRepository(repo, g.ToOpenOptions(""), create);
}

int RunCreate(const SnapshotArgs& a) {
  auto where = snapshot::SplitSnapshotLocation(a.location);
  if (!where.ok()) return Fail("snapshot create", where.status());
  auto chunk = ParseSize(a.chunk_size);
  if (!chunk.ok()) return Fail("snapshot create: --chunk-size", chunk.status());
  auto repo = OpenRepository(where->first, a.global, /*create=*/true);
  if (!repo.ok()) return Fail(where->first, repo.status());
  snapshot::CreateOptions o;
  o.chunk_size = *chunk;
  o.concurrency = std::max(1, a.concurrency);
  auto st = snapshot::CreateSnapshot(a.image, *repo, where->second, o);
  if (!st.ok()) return Fail("snapshot create", st.status());
  if (a.json) {
    nlohmann::json j{{"snapshot", where->second},       {"image_size", st->image_size},
                     {"chunks", st->chunks},           {"zero_chunks", st->zero_chunks},
                     {"uploaded_chunks", st->uploaded_chunks}, {"present_chunks", st->present_chunks},
                     {"uploaded_bytes", st->uploaded_bytes}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("snapshot %s: %s in %llu chunks (%llu zero, %llu already stored, %llu new: %s uploaded)\n",
                where->second.c_str(), HumanBytes(st->image_size).c_str(),
                static_cast<unsigned long long>(st->chunks), static_cast<unsigned long long>(st->zero_chunks),
                static_cast<unsigned long long>(st->present_chunks),
                static_cast<unsigned long long>(st->uploaded_chunks), HumanBytes(st->uploaded_bytes).c_str());
  }
  return 0;
}

nlohmann::json Summary(const snapshot::Manifest& m) {
  uint64_t zero = 0;
  for (const auto& c : m.chunks) zero += c.empty();
  return {{"name", m.name},     {"image_size", m.image_size}, {"chunk_size", m.chunk_size},
          {"chunks", m.chunks.size()}, {"zero_chunks", zero}, {"prefetch", m.prefetch.size()},
          {"created", m.created}};
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
      std::printf("%s\n", j.dump().c_str());
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
    std::printf("%s\n", j.dump().c_str());
  } else {
    for (auto it = j.begin(); it != j.end(); ++it) std::printf("%-12s %s\n", it.key().c_str(), it.value().dump().c_str());
  }
  return 0;
}

// Stores the order in which a volume's clients first touched its chunks as
// the snapshot's prefetch order, so later clones hydrate those first.
int RunPrefetch(const SnapshotArgs& a) {
  auto where = snapshot::SplitSnapshotLocation(a.location);
  if (!where.ok()) return Fail("snapshot prefetch", where.status());
  auto ep = http::ParseEndpoint("http://" + a.api);
  if (!ep.ok()) return Fail("snapshot prefetch: --api", ep.status());
  http::ClientOptions co;
  co.io_threads = 1;
  http::Client client(co);
  http::Request r;
  r.target = "/volumes/" + a.volume + "/first-touches";
  auto resp = client.Send(*ep, r, nullptr);
  if (!resp.ok()) return Fail("snapshot prefetch: the volume daemon at " + a.api, resp.status());
  nlohmann::json j = nlohmann::json::parse(resp->body, nullptr, false);
  if (resp->status != 200 || j.is_discarded() || !j.contains("chunks")) {
    std::string msg = !j.is_discarded() && j.contains("error") ? j["error"].get<std::string>() : resp->body;
    return Fail("snapshot prefetch", Status::InvalidArgument(msg));
  }
  auto repo = OpenRepository(where->first, a.global, /*create=*/false);
  if (!repo.ok()) return Fail(where->first, repo.status());
  auto m = repo->GetManifest(where->second);
  if (!m.ok()) return Fail("snapshot prefetch", m.status());
  std::vector<bool> seen(m->chunks.size(), false);
  m->prefetch.clear();
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
  auto* create = snap->add_subcommand("create", "Store a raw disk image as REPOSITORY/NAME");
  create->add_option("image", a->image, "Raw image file or block device")->required();
  create->add_option("snapshot", a->location, "REPOSITORY/NAME (local directory or s3://bucket[/prefix])")
      ->required();
  create->add_option("--chunk-size", a->chunk_size, "Chunk size, a power of two from 4K to 64M")
      ->capture_default_str();
  create->add_option("--concurrency", a->concurrency, "Chunks in flight")->capture_default_str();
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
