#include "migrate/runner.h"

#include "migrate/runner_impl.h"

namespace ferry::migrate {
namespace runner_internal {

std::string Runner::CircuitText() {
  std::string out;
  auto add = [&](const char* name, CircuitBreaker& c) {
    if (c.state() == CircuitState::kClosed) return;
    if (!out.empty()) out += ", ";
    out += std::string(name) + " " + ToString(c.state());
  };
  add("source", src_circuit_);
  add("destination", dst_circuit_);
  add("state store", state_circuit_);
  return out;
}

bool Runner::Admit() {
  // Look first, then take probes: a probe taken from one circuit while
  // another refuses would be wasted (it times out, see CircuitOptions).
  const std::array<CircuitBreaker*, 3> all = {&state_circuit_, &dst_circuit_, &src_circuit_};
  for (CircuitBreaker* c : all) {
    if (!c->WouldAllow()) return false;
  }
  for (CircuitBreaker* c : all) {
    if (c->state() != CircuitState::kClosed && !c->Allow()) return false;
  }
  return true;
}

Status Runner::Setup() {
  FERRY_RETURN_IF_ERROR(ClaimJob());
  if (over_) return Status::Ok();
  MakeLimits();
  FERRY_RETURN_IF_ERROR(OpenStores());
  pending_ = job_.counters.pending;
  queue_ = std::make_unique<WorkQueue>(static_cast<size_t>(std::max(8, spec_.concurrency * 2)));
  return Status::Ok();
}

Status Runner::ClaimJob() {
  FERRY_ASSIGN_OR_RETURN(job_, store_.GetJob(id_));
  FERRY_ASSIGN_OR_RETURN(spec_, SpecFromJson(job_.spec));
  if (spec_.pool && state::IsFinal(job_.state)) {
    over_ = true;  // another runner finished it: nothing to do
    return Status::Ok();
  }
  int64_t now = NowUnixMs();
  bool dead = !job_.runner.empty() && RunnerIsDead(job_.runner);
  Status got = store_.AcquireJob(id_, runner_, now, now + opt_.lease.count(), opt_.force || dead);
  if (spec_.pool && got.code() == ErrorCode::kNotFound) {
    // Finished and archived by another runner since the read above.
    auto again = store_.GetJob(id_);
    if (again.ok() && again->archived) {
      over_ = true;
      return Status::Ok();
    }
  }
  if (spec_.pool && got.code() == ErrorCode::kPreconditionFailed) {
    lists_at_start_ = false;  // another runner lists; this one transfers beside it
  } else if (!got.ok()) {
    return got;
  }
  // The previous runner is gone: its leases are void now, not at expiry.
  // (In the pool the holder of the listing may be alive and transferring.)
  if (lists_at_start_ && !job_.runner.empty() && job_.runner != runner_ && (!spec_.pool || dead)) {
    FERRY_RETURN_IF_ERROR(store_.ReleaseOwner(id_, job_.runner).status());
  }
  FERRY_ASSIGN_OR_RETURN(job_, store_.GetJob(id_));
  return Status::Ok();
}

void Runner::MakeLimits() {
  // Gentle AIMD: throttles that arrive at random (not from overload) must
  // not collapse the limit, yet a storm of them (few successes) still does.
  PacerOptions po;
  po.max = spec_.concurrency;
  po.increase_every = 4;
  po.decrease = 0.75;
  src_pacer_ = std::make_unique<Pacer>(po);
  dst_pacer_ = std::make_unique<Pacer>(po);
  tps_ = std::make_unique<RateLimiter>(spec_.tps_limit);
  bw_ = std::make_unique<RateLimiter>(spec_.bwlimit);
  budget_ = std::make_unique<ByteBudget>(opt_.buffer_budget);
  buffers_ = std::make_unique<BufferPool>(opt_.buffer_budget);
}

// Each side: its profile, its pacer and circuit, and a pooled connection
// for every request that can be in flight (with the default of 64 and 256
// in flight the pool reopened 1,200 connections per 30,000 objects).
OpenOptions Runner::SideOptions(const std::string& profile, Pacer* pacer,
                                CircuitBreaker* circuit) const {
  OpenOptions o = opt_.open;
  o.profile = profile;
  o.hooks = std::make_shared<EndpointHooks>(pacer, tps_.get(), circuit);
  o.http.max_idle_per_endpoint = std::max<size_t>(
      o.http.max_idle_per_endpoint, static_cast<size_t>(spec_.concurrency) *
                                        static_cast<size_t>(std::max(1, spec_.part_concurrency)));
  o.http.io_threads = std::max(o.http.io_threads, 2);
  return o;
}

Status Runner::OpenStores() {
  FERRY_ASSIGN_OR_RETURN(Location src_loc, ParseLocation(spec_.src));
  FERRY_ASSIGN_OR_RETURN(Location dst_loc, ParseLocation(spec_.dst));
  OpenOptions so = SideOptions(spec_.src_profile, src_pacer_.get(), &src_circuit_);
  FERRY_ASSIGN_OR_RETURN(src_, OpenStore(src_loc, so));
  OpenOptions dopt = SideOptions(spec_.dst_profile, dst_pacer_.get(), &dst_circuit_);
  dopt.create_local = true;
  FERRY_ASSIGN_OR_RETURN(dst_, OpenStore(dst_loc, dopt));

  ctx_.src = src_.get();
  ctx_.dst = dst_.get();
  ctx_.state = &store_;
  ctx_.job = id_;
  ctx_.spec = spec_;
  ctx_.keys = KeyMapFor(src_loc, dst_loc);
  src_loc_remote_ = src_loc.is_remote();
  ctx_.same_store = src_loc.is_remote() && dst_loc.is_remote() &&
                    spec_.src_profile == spec_.dst_profile &&
                    StoreIdentity(src_loc, so) == StoreIdentity(dst_loc, dopt);
  ctx_.job_started_ms = job_.started_ms;
  ctx_.bwlimit = bw_.get();
  ctx_.budget = budget_.get();
  ctx_.buffers = buffers_.get();
  ctx_.fence = &fence_;
  return Status::Ok();
}

Result<RunResult> Runner::Run() {
  if (Status s = Setup(); !s.ok()) {
    // Taken but not runnable (a store that does not open): give it back.
    auto job = store_.GetJob(id_);
    if (job.ok() && job->runner == runner_) {
      (void)store_.SetJobState(id_, state::JobState::kInterrupted, NowUnixMs(), 0, true);
    }
    return s;
  }
  if (over_) {
    RunResult done;
    done.job = job_;
    return done;
  }
  lease_ = std::make_unique<JobLease>(store_, id_, runner_, opt_.lease, spec_.pool, lists_at_start_);
  const auto start = Clock::now();
  fence_.Renewed(NowUnixMs() + opt_.lease.count());  // every claim comes after this
  const int64_t done0 = job_.counters.transferred + job_.counters.skipped;
  const int64_t bytes0 = job_.counters.bytes;
  if (lease_->lists()) StartListing();
  std::thread dispatcher([&] { Dispatch(); });
  std::thread committer([&] { Commit(); });
  std::thread failures([&] { HandleFailures(); });
  std::vector<std::thread> workers;
  for (int i = 0; i < spec_.concurrency; ++i) workers.emplace_back([&] { Work(); });

  Monitored m = Monitor(start, done0, bytes0);

  stop_ = true;
  list_stop_ = true;
  queue_->Close();
  if (listing_thread_.joinable()) listing_thread_.join();
  dispatcher.join();
  for (auto& w : workers) w.join();
  // Transfers still in flight on the stores' loops end soon (a cancelled
  // run's reads stop at their next buffer; retries skip their waits).
  while (in_flight_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CloseAndJoin(failed_mu_, failed_cv_, failed_closed_, failures);
  CloseAndJoin(commit_mu_, commit_cv_, commit_closed_, committer);
  if (m.status.ok() && !listing_status_.ok()) m.status = listing_status_;
  return Finish(m, start, done0, bytes0);
}

void Runner::CloseAndJoin(std::mutex& mu, std::condition_variable& cv, bool& closed, std::thread& t) {
  {
    std::lock_guard<std::mutex> lock(mu);
    closed = true;
    cv.notify_all();
  }
  t.join();
}

void Runner::StartListing() {
  listing_thread_ = std::thread([this] {
    ListerContext lc;
    lc.src = src_.get();
    lc.state = &store_;
    lc.job = id_;
    lc.keys = ctx_.keys;
    lc.filter = spec_.filter;
    lc.filter_prefix = spec_.filter_prefix;
    lc.unchanged_before_ms = spec_.since_ms;
    lc.top_level_only = spec_.top_level_only;
    lc.list_concurrency = spec_.list_concurrency;
    lc.check_known_keys = src_loc_remote_;
    lc.page_size = spec_.list_chunk;
    lc.stop = &list_stop_;
    lc.wait_for_room = [this] {
      // Also when the listing lease is lost meanwhile: the monitor may be
      // joining this thread to list again itself.
      while (pending_.load() >= opt_.max_pending) {
        if (Stopping() || list_stop_) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      return !Stopping() && !list_stop_;
    };
    lc.on_page = [this](int64_t n) { pending_ += n; };
    lc.on_warning = [this](const std::string& w) { Emit({Event::Kind::kWarning, "", "", w, 0}); };
    listing_status_ = RunListing(lc);
    if (listing_status_.ok() && !Stopping() && !list_stop_) listing_returned_ = true;
    if (!listing_status_.ok()) stop_ = true;
  });
}

// Renews the leases (moving the listing in a pool), then on its own
// rhythm reads the job: progress, circuits, and whether it is over.
Runner::Monitored Runner::Monitor(Clock::time_point start, int64_t done0, int64_t bytes0) {
  Monitored m;
  auto last_renew = Clock::now();
  auto last_report = Clock::time_point{};
  std::string circuits;
  bool listing_announced = job_.listing_done;
  while (true) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (CancelRequested() || stop_) return m;
    auto now = Clock::now();
    if (now - last_renew >= opt_.lease / 4) {
      JobLease::Round r = lease_->Renew(NowUnixMs(), job_);
      if (r.taken_over) {
        m.status = r.why;
        m.taken_over = true;
        return m;
      }
      if (r.listing_lost) list_stop_ = true;
      if (r.listing_taken) {
        if (listing_thread_.joinable()) listing_thread_.join();
        list_stop_ = false;
        StartListing();
      }
      if (r.objects_until) fence_.Renewed(*r.objects_until);
      last_renew = now;
    }
    if (now - last_report < std::chrono::milliseconds(100)) continue;
    auto job = store_.GetJob(id_);
    if (job.ok()) {
      state_circuit_.OnSuccess();
    } else {
      state_circuit_.OnFailure(job.status());
    }
    // Reported also while the state store is away: that is when it opens.
    if (std::string c = CircuitText(); c != circuits) {
      Emit({Event::Kind::kCircuit, "", c.empty() ? "closed" : c, "", 0});
      circuits = c;
    }
    if (!job.ok()) continue;
    job_ = *job;
    // In the pool, other runners finish keys too: the listing's
    // back-pressure follows the shared count.
    if (spec_.pool) pending_ = job_.counters.pending;
    if (job_.listing_done && !listing_announced) {
      listing_announced = true;
      listing_seconds_ = std::chrono::duration<double>(now - start).count();
      Emit({Event::Kind::kListingDone, "", "", "", 0});
    }
    if (now - last_report >= opt_.progress_every) {
      Report(job_, start, done0, bytes0);
      last_report = now;
    }
    JobObservation o{job_.state,  job_.listing_done, job_.counters.pending, job_.counters.failed,
                     spec_.pool,  lease_->lists(),   listing_returned_.load(), in_flight_.load()};
    if ((m.ended = DecideJobEnd(o))) return m;
  }
}

// Once every thread is joined: no upload of a job that is over stays open
// at the destination; the job's state is recorded (and a final one
// archived), or left to the runner that holds it now.
Result<RunResult> Runner::Finish(Monitored m, Clock::time_point start, int64_t done0, int64_t bytes0) {
  RunResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.interrupted = CancelRequested();
  result.buffers_reused = buffers_->reused();
  result.listing_seconds = listing_seconds_.load();
  if (m.ended) {
    // (Only a cancelled job normally has any.)
    auto uploads = store_.ListUploads(id_);
    if (uploads.ok()) {
      for (const auto& [key, rec] : *uploads) (void)AbandonUpload(ctx_, key);
    }
  }
  {
    std::lock_guard<std::mutex> lock(fatal_mu_);
    if (m.status.ok() && !fatal_.ok()) m.status = fatal_;
  }
  Ending e = DecideEnding(m.taken_over, spec_.pool, m.ended);
  if (e.kind == Ending::Kind::kNothing) return m.status;
  (void)store_.ReleaseOwner(id_, runner_);
  if (e.kind == Ending::Kind::kLeaveToPool) {
    // Only the listing lease is ended: the job's state is left to the
    // runners still at it, which may have finished or cancelled it meanwhile.
    FERRY_RETURN_IF_ERROR(lease_->GiveBackListing(NowUnixMs()));
  } else if (Status set = store_.SetJobState(id_, e.record, NowUnixMs(), result.seconds, true); !set.ok()) {
    // In the pool another runner may have ended the job and archived it
    // first: then there is nothing left to record.
    auto now_job = store_.GetJob(id_);
    if (!(spec_.pool && now_job.ok() && now_job->archived)) return set;
  } else if (e.archive) {
    // Out of the live tables, into the archive (its summary and dead
    // letters stay readable; `dlq --retry` brings it back).
    Status archived = store_.ArchiveJob(id_, NowUnixMs());
    if (!archived.ok()) {
      Emit({Event::Kind::kWarning, "", "the job could not be archived yet", archived.ToString(), 0});
    }
  }
  FERRY_ASSIGN_OR_RETURN(result.job, store_.GetJob(id_));
  Report(result.job, start, done0, bytes0);
  if (!m.status.ok()) return m.status;
  return result;
}

}  // namespace runner_internal

std::string NewRunnerId() {
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  std::mt19937_64 rng{std::random_device{}()};
  char nonce[17];
  std::snprintf(nonce, sizeof(nonce), "%016llx", static_cast<unsigned long long>(rng()));
  return std::string(host) + ":" + std::to_string(::getpid()) + ":" + nonce;
}

bool RunnerIsDead(const std::string& runner) {
  size_t a = runner.find(':');
  size_t b = a == std::string::npos ? a : runner.find(':', a + 1);
  if (b == std::string::npos) return false;
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  if (runner.substr(0, a) != host) return false;  // another machine: wait for its lease
  pid_t pid = static_cast<pid_t>(std::strtol(runner.c_str() + a + 1, nullptr, 10));
  if (pid <= 0) return false;
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

Result<RunResult> RunJob(state::StateStore& store, const std::string& id, const RunOptions& o) {
  runner_internal::Runner r(store, id, o);
  return r.Run();
}

}  // namespace ferry::migrate
