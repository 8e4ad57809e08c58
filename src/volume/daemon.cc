#include "volume/daemon.h"

#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "base/json_text.h"
#include "base/atomic_file.h"
#include "base/cancel.h"
#include "engine/rate_limiter.h"
#include "nbd/server.h"
#include "nbd/traced_device.h"
#include "snapshot/repository.h"
#include "http/api_server.h"
#include "volume/chunk_cache.h"
#include "volume/http_chunk_source.h"
#include "volume/metrics.h"
#include "volume/order_learner.h"
#include "volume/placement.h"
#include "volume/qos.h"
#include "volume/rate_meter.h"
#include "volume/repository_source.h"
#include "volume/snapshot_jobs.h"
#include "volume/volume.h"
#include "volume/daemon_requests.h"
#include "volume/volume_dir.h"
#include "volume/volume_snapshot.h"

namespace ferry::volume {

using http::ApiResponse;
using http::ApiServer;
using http::HttpStatusOf;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A snapshot repository with its source and the transfer cache in front.
struct Repo {
  std::unique_ptr<snapshot::Repository> repo;
  std::unique_ptr<ChunkSource> source;
  std::unique_ptr<ChunkCache> cache;
};

struct Entry {
  std::string name, from, dir;
  int pool = 0;
  std::shared_ptr<Volume> volume;
  ChunkCache* cache = nullptr;  // its repository's transfer cache
};

ApiResponse Json(int status, const json& j) { return {status, "application/json", DumpJson(j) + "\n"}; }
ApiResponse Error(int status, const std::string& message) { return Json(status, {{"error", message}}); }

class Daemon {
 public:
  explicit Daemon(const DaemonOptions& o) : o_(o), gate_(o.fetch_slots, o.fetch_gate), nbd_([&] {
    nbd::NbdServerOptions n;
    n.listen = o.nbd_listen;
    n.worker_threads = 16;
    n.client_timeout = o.client_timeout;
    n.tls = o.nbd_tls;
    n.max_requests = o.nbd_queue_depth;
    return n;
  }()) {
    for (size_t i = 0; i < o.pools.size(); ++i) {
      limiters_.push_back(std::make_unique<RateLimiter>(static_cast<double>(o.hydration_rate)));
    }
    last_fetch_ = std::make_unique<std::atomic<std::chrono::steady_clock::duration::rep>[]>(o.pools.size());
    if (o.learn_orders) {
      learner_ = std::make_unique<OrderLearner>(o.learn, [this](const std::string& from, const auto& change) {
        FERRY_ASSIGN_OR_RETURN(auto where, snapshot::SplitSnapshotLocation(from));
        FERRY_ASSIGN_OR_RETURN(Repo * repo, RepoFor(where.first));
        FERRY_ASSIGN_OR_RETURN(auto m, repo->repo->GetManifest(where.second));
        return change(&m) ? repo->repo->PutManifest(m) : Status::Ok();
      });
    }
    hydration_meters_.resize(o.pools.size());
    write_meters_.resize(o.pools.size());
  }

  // Samples each pool's fetched and written byte totals (call about once a
  // second): placement weighs the bandwidth in use.
  void SampleBandwidth() {
    double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    std::lock_guard lock(mu_);
    std::vector<uint64_t> fetched(o_.pools.size()), written(o_.pools.size());
    for (const auto& [_, e] : volumes_) {
      auto st = e.volume->stats();
      fetched[static_cast<size_t>(e.pool)] += st.fetched_bytes;
      written[static_cast<size_t>(e.pool)] += st.written_bytes;
    }
    for (size_t p = 0; p < o_.pools.size(); ++p) {
      hydration_meters_[p].Sample(now, fetched[p]);
      write_meters_[p].Sample(now, written[p]);
    }
    // A volume hydrated is no longer a consumer of its transfer cache.
    for (auto it = hydrating_.begin(); it != hydrating_.end();) {
      auto v = volumes_.find(*it);
      if (v == volumes_.end() || !v->second.volume->complete()) {
        ++it;
        continue;
      }
      v->second.cache->RemoveConsumer();
      it = hydrating_.erase(it);
    }
  }

  Status Load() {
    // Each snapshot's manifest is read once, however many volumes it has.
    std::map<std::string, Result<snapshot::Manifest>> manifests;
    auto manifest_of = [&](const std::string& from) -> Result<snapshot::Manifest>& {
      auto it = manifests.find(from);
      if (it != manifests.end()) return it->second;
      auto where = snapshot::SplitSnapshotLocation(from);
      auto repo = where.ok() ? RepoFor(where->first) : Result<Repo*>(where.status());
      Result<snapshot::Manifest> m = repo.ok() ? (*repo)->repo->GetManifest(where->second)
                                               : Result<snapshot::Manifest>(repo.status());
      return manifests.emplace(from, std::move(m)).first->second;
    };
    for (size_t p = 0; p < o_.pools.size(); ++p) {
      std::error_code ec;
      fs::create_directories(o_.pools[p] + "/volumes", ec);
      if (ec) return Status(ErrorCode::kIoError, o_.pools[p] + ": " + ec.message());
      for (const auto& d : fs::directory_iterator(o_.pools[p] + "/volumes")) {
        if (!fs::exists(d.path() / "volume.json", ec)) {
          spdlog::warn("volume: {}: a create that did not finish (no volume.json); skipped", d.path().string());
          continue;
        }
        std::ifstream in(d.path() / "volume.json");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto desc = DecodeVolumeDescription(text);
        if (!desc.ok()) {
          spdlog::warn("volume: {}: {}; skipped", d.path().string(), desc.status().message());
          continue;
        }
        auto& m = manifest_of(desc->from);
        auto st = m.ok() ? Attach(desc->name, desc->from, desc->size, static_cast<int>(p), d.path().string(), &*m)
                         : m.status();
        if (!st.ok()) spdlog::warn("volume {}: {}", desc->name, st.ToString());
      }
    }
    return Status::Ok();
  }

  nbd::NbdServer& nbd() { return nbd_; }

  ApiResponse Handle(const http::ServerRequest& req) {
    std::string path = req.target.substr(0, req.target.find('?'));
    if (path == "/metrics" && req.method == "GET") return {200, "text/plain; version=0.0.4", Metrics()};
    if (path == "/volumes") {
      if (req.method == "GET") return List();
      if (req.method == "POST") return Create(req.body);
      return Error(405, "use GET or POST on /volumes");
    }
    if (path.rfind("/volumes/", 0) != 0) return Error(404, "no such endpoint: " + path);
    std::string rest = path.substr(9);
    size_t slash = rest.find('/');
    std::string name = rest.substr(0, slash), sub = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (sub.empty()) {
      if (req.method == "GET") return Status_(name);
      if (req.method == "DELETE") return Remove(name);
      return Error(405, "use GET or DELETE on /volumes/NAME");
    }
    if (sub == "first-touches" && req.method == "GET") return FirstTouches(name);
    if (sub == "snapshots" && req.method == "POST") return Snapshot(name, req.body);
    if (sub == "snapshots" && req.method == "GET") return SnapshotReport(name, "");
    if (sub.rfind("snapshots/", 0) == 0 && req.method == "GET") return SnapshotReport(name, sub.substr(10));
    return Error(404, "no such endpoint: " + req.method + " " + path);
  }

  // Cancels the snapshots being uploaded and waits for them.
  void StopSnapshots() { snapshots_.Stop(); }

  // Fetches new volumes' prefetch orders (Volume::PrefetchNext), not paused
  // by QoS nor capped; triggers still go first at the fetch gate, and a
  // chunk several clones share is fetched once (the transfer cache).
  void PrefetchLoop(std::atomic<bool>* stop) {
    while (!*stop) {
      std::vector<Entry> todo;
      {
        std::unique_lock lock(mu_);
        for (const auto& [_, e] : volumes_) {
          if (e.volume->PrefetchPending()) todo.push_back(e);
        }
        if (todo.empty()) {
          prefetch_cv_.wait_for(lock, std::chrono::seconds(1));  // woken by Attach, or rescans
          continue;
        }
      }
      const Entry& e = todo[prefetch_next_++ % todo.size()];
      auto more = e.volume->PrefetchNext();
      if (!more.ok()) {
        spdlog::warn("volume {}: prefetch paused: {}", e.name, more.status().ToString());
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
  }

  void WakePrefetchers() { prefetch_cv_.notify_all(); }

  // --learn-orders: merges the first touches of new clones that settled.
  void PollLearner() { learner_ ? learner_->Poll(std::chrono::steady_clock::now()) : void(); }

  void HydrateLoop(std::atomic<bool>* stop) {
    while (!*stop) {
      std::vector<Entry> todo;
      {
        std::lock_guard lock(mu_);
        // A volume's prefetch order first, alone: background fetches
        // beside it would share the origin's bandwidth (and the CPU) with
        // the chunks its client reads next.
        for (const auto& [_, e] : volumes_) {
          if (!e.volume->complete() && (o_.prefetch_threads == 0 || e.volume->PrefetchDone())) todo.push_back(e);
        }
      }
      if (todo.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      const Entry& e = todo[next_++ % todo.size()];
      // QoS: while this pool's clients are busy, hydration trickles (but
      // not the prefetch order: those are the chunks the clients want next).
      auto now = std::chrono::steady_clock::now();
      auto last_io = std::chrono::steady_clock::time_point();
      {
        std::lock_guard lock(mu_);
        for (const auto& [_, v] : volumes_) {
          if (v.pool == e.pool) last_io = std::max(last_io, v.volume->last_client_io());
        }
      }
      auto& last_fetch = last_fetch_[static_cast<size_t>(e.pool)];
      auto since = [&](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(now - t);
      };
      auto pause = HydrationPause(since(last_io),
                                  since(std::chrono::steady_clock::time_point(
                                      std::chrono::steady_clock::duration(last_fetch.load()))),
                                  e.volume->PrefetchPending(), o_.qos);
      if (pause.count() > 0) {
        backoffs_++;
        std::this_thread::sleep_for(pause);
        continue;
      }
      last_fetch = std::chrono::steady_clock::now().time_since_epoch().count();
      // QoS: the pool's hydration bandwidth cap (triggers are not capped).
      if (o_.hydration_rate > 0) limiters_[static_cast<size_t>(e.pool)]->Take(static_cast<double>(e.volume->chunk_size()));
      auto more = e.volume->HydrateNext();
      if (more.ok() && !*more) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the rest is in flight
      if (!more.ok()) {
        // The origin is failing: pause this thread a little, keep serving.
        spdlog::warn("volume {}: hydration paused: {}", e.name, more.status().ToString());
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
  }

 private:
  Result<Repo*> RepoFor(const std::string& location) {
    std::lock_guard lock(repos_mu_);
    auto it = repos_.find(location);
    if (it != repos_.end()) return it->second.get();
    FERRY_ASSIGN_OR_RETURN(snapshot::Repository r, snapshot::OpenRepository(location, o_.open, false));
    auto repo = std::make_unique<Repo>();
    repo->repo = std::make_unique<snapshot::Repository>(std::move(r));
    RepositorySourceOptions so;
    so.deadline = o_.fetch_deadline;
    if (o_.cache_url.empty()) {
      repo->source = std::make_unique<RepositorySource>(repo->repo.get(), so);
    } else {
      FERRY_ASSIGN_OR_RETURN(repo->source, HttpChunkSource::Create(o_.cache_url, so));
    }
    repo->cache = std::make_unique<ChunkCache>(repo->source.get(), o_.cache_bytes, o_.cache_level);
    repo->cache->KeepOnlyWhenShared();  // counted below: volumes still hydrating
    Repo* raw = repo.get();
    repos_.emplace(location, std::move(repo));
    return raw;
  }

  // Opens (or creates) one volume and exports it.
  // What NBD serves for volume `name`: the volume, recorded under
  // --trace-dir.
  std::shared_ptr<nbd::BlockDevice> Exported(const std::string& name, std::shared_ptr<Volume> v) {
    if (o_.trace_dir.empty()) return v;
    auto traced = nbd::TracedDevice::Open(v, o_.trace_dir + "/" + name + ".trace");
    if (traced.ok()) return *traced;
    spdlog::warn("volume: {}: not recorded: {}", name, traced.status().message());
    return v;
  }

  // `manifest`: the snapshot's, when the caller has read it already.
  Status Attach(const std::string& name, const std::string& from, uint64_t size, int pool, const std::string& dir,
                const snapshot::Manifest* manifest = nullptr) {
    FERRY_ASSIGN_OR_RETURN(auto where, snapshot::SplitSnapshotLocation(from));
    FERRY_ASSIGN_OR_RETURN(Repo * repo, RepoFor(where.first));
    snapshot::Manifest m;
    if (manifest) {
      m = *manifest;
    } else {
      FERRY_ASSIGN_OR_RETURN(m, repo->repo->GetManifest(where.second));
    }
    VolumeOptions vo;
    vo.dir = dir;
    vo.size = size;
    vo.manifest = std::move(m);
    vo.source = repo->cache.get();
    vo.gate = &gate_;
    vo.trigger_waits = &trigger_waits_;
    vo.readahead = o_.readahead_chunks;
    vo.read_around = o_.read_around_chunks;
    FERRY_ASSIGN_OR_RETURN(auto v, Volume::Open(std::move(vo)));
    std::shared_ptr<Volume> shared = std::move(v);
    {
      std::lock_guard lock(mu_);
      volumes_[name] = Entry{name, from, dir, pool, shared, repo->cache.get()};
      if (!shared->complete()) {
        repo->cache->AddConsumer();
        hydrating_.insert(name);
      }
    }
    nbd_.AddExport(name, Exported(name, shared));
    if (shared->PrefetchPending()) prefetch_cv_.notify_all();
    return Status::Ok();
  }

  ApiResponse Create(const std::string& body) {
    auto req = ParseCreateRequest(body);
    if (!req.ok()) return Error(400, req.status().message());
    const std::string& from = req->from;
    const uint64_t size = req->size;
    const std::vector<std::string>& names = req->names;
    const int count = static_cast<int>(names.size());
    // The snapshot must exist and be sound before anything is made.
    auto where = snapshot::SplitSnapshotLocation(from);
    if (!where.ok()) return Error(400, where.status().message());
    auto repo = RepoFor(where->first);
    if (!repo.ok()) return Error(400, "from " + from + ": " + repo.status().ToString());
    auto m = (*repo)->repo->GetManifest(where->second);
    if (!m.ok()) return Error(m.status().code() == ErrorCode::kNotFound ? 404 : 400, m.status().ToString());
    uint64_t vsize = size == 0 ? m->image_size : size;
    if (vsize < m->image_size) return Error(400, "size is smaller than the snapshot");
    std::vector<PoolLoad> loads;
    {
      std::lock_guard lock(mu_);
      for (const auto& n : names) {
        if (volumes_.count(n)) return Error(409, "volume '" + n + "' exists");
      }
      for (size_t p = 0; p < o_.pools.size(); ++p) {
        PoolLoad l;
        struct statvfs sv;
        if (::statvfs(o_.pools[p].c_str(), &sv) == 0) {
          l.free_bytes = static_cast<uint64_t>(static_cast<double>(uint64_t{sv.f_bavail} * sv.f_frsize) * o_.overcommit);
        }
        l.hydration_bps = static_cast<uint64_t>(hydration_meters_[p].rate());
        l.write_bps = static_cast<uint64_t>(write_meters_[p].rate());
        for (const auto& [_, e] : volumes_) {
          if (e.pool == static_cast<int>(p)) {
            l.volumes++;
            auto s = e.volume->stats();
            l.free_bytes -= std::min(l.free_bytes, (s.chunks - s.present) * m->chunk_size);  // still to come
          }
        }
        loads.push_back(l);
      }
    }
    // Volumes are thin: one takes the snapshot's stored chunks (zeros are holes), not its size.
    uint64_t need = 0;
    for (const auto& c : m->chunks) need += c.empty() ? 0 : m->chunk_size;
    auto placed = PlaceVolumes(loads, need, count);
    if (!placed.ok()) return Error(507, placed.status().message());
    ChunkCache::ConsumerHold hold(count > 1 ? (*repo)->cache.get() : nullptr);  // the first volume's fetches kept
    json out = json::array();
    for (int i = 0; i < count; ++i) {
      const int p = (*placed)[static_cast<size_t>(i)];
      const std::string& name = names[static_cast<size_t>(i)];
      const std::string dir = o_.pools[static_cast<size_t>(p)] + "/volumes/" + name;
      Status st = MakeVolumeDir(dir, EncodeVolumeDescription({name, from, vsize}));
      if (st.code() == ErrorCode::kAlreadyExists) return Error(409, name + ": " + st.message());
      if (st.ok()) st = Attach(name, from, vsize, p, dir, &*m);
      if (st.ok() && learner_) Learn(name, from);
      if (!st.ok()) {
        std::error_code ec;
        fs::remove_all(dir, ec);
        return Error(500, name + ": " + st.ToString());
      }
      out.push_back({{"name", name}, {"pool", o_.pools[static_cast<size_t>(p)]}});
    }
    return Json(201, out);
  }

  // Watches new clone `name` for --learn-orders (order_learner.h).
  void Learn(const std::string& name, const std::string& from) {
    std::weak_ptr<Volume> v;
    auto removed = [&] {  // (and v set, when it is not)
      std::lock_guard lock(mu_);
      return volumes_.count(name) ? (v = volumes_[name].volume, false) : true;
    };
    if (removed()) return;
    learner_->Watch(name, from, [v] {
      auto live = v.lock();
      return live ? live->FirstTouches() : std::vector<uint32_t>{};
    });
    if (removed()) learner_->Forget(name);  // a Remove's Forget came first
  }

  json Describe(const Entry& e) {
    return DescribeVolume(e.name, e.from, o_.pools[static_cast<size_t>(e.pool)], e.volume->size(), e.volume->stats());
  }

  ApiResponse List() {
    json out = json::array();
    std::lock_guard lock(mu_);
    for (const auto& [_, e] : volumes_) out.push_back(Describe(e));
    return Json(200, out);
  }

  ApiResponse Status_(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = volumes_.find(name);
    if (it == volumes_.end()) return Error(404, "no volume '" + name + "'");
    return Json(200, Describe(it->second));
  }

  // The chunk indices a volume's clients touched, first touch first (what
  // `ferry snapshot prefetch` stores in the snapshot).
  ApiResponse FirstTouches(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = volumes_.find(name);
    if (it == volumes_.end()) return Error(404, "no volume '" + name + "'");
    return Json(200, {{"name", name}, {"from", it->second.from}, {"chunks", it->second.volume->FirstTouches()}});
  }

  ApiResponse Remove(const std::string& name) {
    Entry e;
    {
      std::lock_guard snapshot_lock(snapshot_mu_);  // no snapshot starts meanwhile
      if (snapshots_.Running(name)) return Error(409, "a snapshot of volume '" + name + "' is being made");
      std::lock_guard lock(mu_);
      auto it = volumes_.find(name);
      if (it == volumes_.end()) return Error(404, "no volume '" + name + "'");
      e = it->second;
      volumes_.erase(it);
      if (hydrating_.erase(name) > 0) e.cache->RemoveConsumer();
    }
    nbd_.RemoveExport(name);
    snapshots_.Forget(name);
    if (learner_) learner_->Forget(name);
    std::error_code ec;
    fs::remove_all(e.dir, ec);
    return Json(200, {{"removed", name}});
  }

  // POST /volumes/NAME/snapshots {"to": "REPOSITORY/NEW"}: freezes the
  // volume now, answers 202 and uploads in the background (snapshot_jobs.h).
  ApiResponse Snapshot(const std::string& name, const std::string& body) {
    auto parsed = ParseSnapshotRequest(body);
    if (!parsed.ok()) return Error(400, parsed.status().message());
    const std::string& to = *parsed;
    auto where = snapshot::SplitSnapshotLocation(to);
    if (!where.ok()) return Error(400, where.status().message());
    std::lock_guard snapshot_lock(snapshot_mu_);
    Entry e;
    {
      std::lock_guard lock(mu_);
      auto it = volumes_.find(name);
      if (it == volumes_.end()) return Error(404, "no volume '" + name + "'");
      e = it->second;
    }
    auto parent = snapshot::SplitSnapshotLocation(e.from);
    if (!parent.ok()) return Error(500, parent.status().message());
    if (!snapshot::SameRepository(where->first, parent->first)) {
      return Error(400, "volume '" + name + "' was made from " + e.from + ": its snapshots go to " + parent->first +
                            " (the chunks it shares with its snapshot are named there, not copied)");
    }
    if (snapshots_.Running(name)) return Error(409, "a snapshot of volume '" + name + "' is being made");
    if (snapshots_.running() >= SnapshotJobs::kMaxRunning) {
      return Error(503, "too many snapshots uploading; retry later");
    }
    auto repo = RepoFor(parent->first);
    if (!repo.ok()) return Error(502, repo.status().ToString());
    auto snap = VolumeSnapshot::Begin(e.volume, (*repo)->repo.get(), where->second);
    if (!snap.ok()) return Error(HttpStatusOf(snap.status()), snap.status().ToString());
    Status st = snapshots_.Start(name, to, std::move(snap).value(), VolumeSnapshotOptions{});
    if (!st.ok()) return Error(HttpStatusOf(st), st.ToString());
    return Json(202, *snapshots_.Describe(name, where->second));
  }

  // GET /volumes/NAME/snapshots[/SNAPSHOT]: the snapshots of a volume made
  // since the daemon started, or one of them.
  ApiResponse SnapshotReport(const std::string& name, const std::string& snapshot) {
    {
      std::lock_guard lock(mu_);
      if (!volumes_.count(name)) return Error(404, "no volume '" + name + "'");
    }
    if (snapshot.empty()) return Json(200, snapshots_.List(name));
    auto report = snapshots_.Describe(name, snapshot);
    if (!report) {
      return Error(404, "no snapshot '" + snapshot + "' of volume '" + name + "' made since the daemon started");
    }
    return Json(200, *report);
  }

  std::string Metrics() {
    DaemonMetrics m;
    {
      std::lock_guard lock(mu_);
      for (const auto& [_, e] : volumes_) m.volumes.emplace_back(e.name, e.volume->stats());
      for (size_t p = 0; p < o_.pools.size(); ++p) {
        m.pools.push_back({o_.pools[p], static_cast<uint64_t>(hydration_meters_[p].rate()),
                           static_cast<uint64_t>(write_meters_[p].rate())});
      }
    }
    {
      std::lock_guard lock(repos_mu_);
      for (const auto& [_, r] : repos_) {
        auto s = r->cache->stats();
        m.cache.hits += s.hits;
        m.cache.misses += s.misses;
        m.cache.coalesced += s.coalesced;
        m.cache.source_bytes += s.source_bytes;
        m.cache.stored_bytes += s.stored_bytes;
      }
    }
    m.hydration_backoffs = backoffs_;
    m.trigger_waits = trigger_waits_.Snap();
    return RenderMetrics(m);
  }

  const DaemonOptions& o_;
  FetchGate gate_;
  LatencyHistogram trigger_waits_;  // every volume's client waits (vo.trigger_waits)
  nbd::NbdServer nbd_;
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
  std::mutex mu_;
  std::map<std::string, Entry> volumes_;  // guarded by mu_
  std::set<std::string> hydrating_;      // guarded by mu_: volumes counted as their cache's consumers
  std::mutex snapshot_mu_;  // a snapshot's start and a removal, one at a time (taken before mu_)
  SnapshotJobs snapshots_;
  std::mutex repos_mu_;
  std::map<std::string, std::unique_ptr<Repo>> repos_;  // guarded by repos_mu_
  std::atomic<uint64_t> next_{0};           // HydrateLoop's round robin
  std::atomic<uint64_t> prefetch_next_{0};  // PrefetchLoop's
  std::condition_variable prefetch_cv_;     // with mu_: a volume with a prefetch order arrived
  std::unique_ptr<std::atomic<std::chrono::steady_clock::duration::rep>[]> last_fetch_;  // per pool
  std::unique_ptr<OrderLearner> learner_;  // --learn-orders; null: off
  std::atomic<uint64_t> backoffs_{0};
  // Bandwidth in use per pool (SampleBandwidth), for placement and /metrics.
  std::vector<RateMeter> hydration_meters_, write_meters_;  // guarded by mu_
};

}  // namespace

Status ServeVolumes(const DaemonOptions& o) {
  if (o.pools.empty()) return Status::InvalidArgument("give at least one --pool DIR");
  if (!o.trace_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.trace_dir, ec);
    if (ec) return Status(ErrorCode::kIoError, "--trace-dir " + o.trace_dir + ": " + ec.message());
  }
  Daemon d(o);
  FERRY_RETURN_IF_ERROR(d.Load());
  FERRY_RETURN_IF_ERROR(d.nbd().Start());
  ApiServer api(o.api_listen, [&](const http::ServerRequest& r) { return d.Handle(r); }, o.client_timeout);
  FERRY_RETURN_IF_ERROR(api.Start());
  if (!o.port_file.empty()) {
    FERRY_RETURN_IF_ERROR(WriteFileAtomic(
        o.port_file, std::to_string(d.nbd().port()) + " " + std::to_string(api.port()) + "\n"));
  }
  spdlog::info("ferry volume: NBD on port {}, API on port {}", d.nbd().port(), api.port());
  std::atomic<bool> stop{false};
  std::vector<std::thread> hydrators;
  for (int i = 0; i < std::max(1, o.hydration_threads); ++i) hydrators.emplace_back([&] { d.HydrateLoop(&stop); });
  for (int i = 0; i < o.prefetch_threads; ++i) hydrators.emplace_back([&] { d.PrefetchLoop(&stop); });
  for (int tick = 0; !CancelRequested(); ++tick) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (tick % 5 == 0) d.SampleBandwidth();
    if (tick % 5 == 0) d.PollLearner();
  }
  stop = true;
  d.WakePrefetchers();
  for (auto& t : hydrators) t.join();
  api.Stop();
  d.StopSnapshots();
  d.nbd().Stop();
  return Status::Ok();
}

}  // namespace ferry::volume
