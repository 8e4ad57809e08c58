// Fuzz target: the JSON a control plane reads from clients and from its
// own files — `ferry server`'s API (ServerApi::Handle over a real SQLite
// state store), the volume daemon's request bodies and volume.json, and a
// job's spec as read back from the state store. One input is a request:
//   METHOD TARGET\nName: value\n...\n\nBODY
// whose body also goes to each parser alone.
// Invariants: every answer is a status the API documents with a JSON
// error body, never a 500 (nothing but the store's own failure earns one)
// and never a crash or an exception; what parses satisfies its rules and
// round-trips.
#include <nlohmann/json.hpp>

#include "cli/server_api.h"
#include "fuzz_util.h"
#include "migrate/job_spec.h"
#include "state/metered_state_store.h"
#include "state/state_store.h"
#include "volume/daemon_requests.h"
#include "volume/volume_dir.h"

namespace {

using namespace ferry;
using ferry::fuzz::Check;

constexpr const char* kName = "control_json_fuzz";

struct Fixture {
  std::unique_ptr<state::StateStore> store;
  std::unique_ptr<state::MeteredStateStore> metered;
  std::unique_ptr<cli::ServerApi> api;
  int inputs = 0;

  void Reset() {
    api.reset();
    metered.reset();
    store.reset();
    const std::string path = fuzz::ProcessTempDir("control") + "/state.db";
    std::filesystem::remove(path);
    store = std::move(state::OpenSqliteStateStore(path)).value();
    metered = std::make_unique<state::MeteredStateStore>(*store);
    api = std::make_unique<cli::ServerApi>(*metered, cli::ServerApiOptions{});
  }
};

http::ServerRequest ReadRequest(fuzz::InputReader& in) {
  http::ServerRequest r;
  std::string_view line = in.Until('\n');
  size_t space = line.find(' ');
  r.method = std::string(line.substr(0, space));
  r.target = space == std::string_view::npos ? "/" : std::string(line.substr(space + 1));
  for (std::string_view h = in.Until('\n'); !h.empty(); h = in.Until('\n')) {
    size_t colon = h.find(':');
    r.headers.emplace_back(std::string(h.substr(0, colon)),
                           colon == std::string_view::npos ? "" : std::string(h.substr(colon + 1)));
  }
  r.body = std::string(in.Rest());
  r.peer = "127.0.0.1";
  return r;
}

void CheckApi(cli::ServerApi& api, const http::ServerRequest& req) {
  http::ApiResponse a = api.Handle(req);
  static const int kDocumented[] = {200, 201, 202, 204, 400, 401, 403, 404, 405, 409, 413, 503};
  Check(
      std::find(std::begin(kDocumented), std::end(kDocumented), a.status) != std::end(kDocumented),
      kName, "an answer with a status the API does not document");
  if (a.status >= 400) {
    auto j = nlohmann::json::parse(a.body, nullptr, false);
    Check(!j.is_discarded() && j.is_object() && j.contains("error"), kName,
          "an error answer without a JSON error");
  }
}

void CheckBodies(std::string_view body) {
  if (auto c = volume::ParseCreateRequest(body); c.ok()) {
    Check(!c->names.empty() && c->names.size() <= volume::kMaxCreateCount, kName,
          "a create of no or too many volumes");
    for (const auto& n : c->names)
      Check(volume::ValidVolumeName(n), kName, "an invalid volume name accepted");
  } else {
    Check(c.status().code() == ErrorCode::kInvalidArgument, kName,
          "a bad create body of another class");
  }
  (void)volume::ParseSnapshotRequest(body);
  if (auto d = volume::DecodeVolumeDescription(body); d.ok()) {
    auto again = volume::DecodeVolumeDescription(volume::EncodeVolumeDescription(*d));
    Check(again.ok() && again->name == d->name && again->from == d->from && again->size == d->size,
          kName, "a volume description changed through encode and decode");
  }
  if (auto spec = migrate::SpecFromJson(std::string(body)); spec.ok()) {
    const std::string once = migrate::SpecToJson(*spec);
    auto again = migrate::SpecFromJson(once);
    Check(again.ok() && migrate::SpecToJson(*again) == once, kName,
          "a job spec changed through encode and decode");
  }
  (void)cli::SpecFromBody(std::string(body));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fx = new Fixture();
  // A fresh state store now and then, so jobs the inputs made do not pile up.
  if (fx->inputs++ % 2000 == 0) fx->Reset();
  fuzz::InputReader in(data, size);
  http::ServerRequest req = ReadRequest(in);
  CheckApi(*fx->api, req);
  CheckBodies(req.body);
  return 0;
}
