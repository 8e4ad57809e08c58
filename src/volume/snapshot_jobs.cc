#include "volume/snapshot_jobs.h"

#include <spdlog/spdlog.h>

#include "base/cancel.h"

namespace ferry::volume {

using nlohmann::json;

SnapshotJobs::~SnapshotJobs() { Stop(); }

void SnapshotJobs::Reap() {
  for (auto& [_, job] : jobs_) {
    if (job->done && job->thread.joinable()) job->thread.join();
  }
}

Status SnapshotJobs::Start(const std::string& volume, const std::string& to, std::unique_ptr<VolumeSnapshot> snapshot,
                           const VolumeSnapshotOptions& options) {
  std::lock_guard lock(mu_);
  Reap();
  if (stop_) return CancelledStatus();
  if (running_ >= kMaxRunning) {
    return Status(ErrorCode::kThrottled, std::to_string(kMaxRunning) + " snapshots are uploading; try again later");
  }
  auto job = std::make_shared<Job>();
  job->volume = volume;
  job->to = to;
  job->name = snapshot->name();
  job->written = snapshot->written_chunks();
  job->snapshot = std::move(snapshot);
  jobs_[{volume, job->name}] = job;
  ++running_;
  VolumeSnapshotOptions o = options;
  o.cancelled = [this, outer = options.cancelled] { return stop_.load() || (outer && outer()); };
  job->thread = std::thread([this, job, o] {
    auto result = job->snapshot->Upload(o);
    if (result.ok()) {
      spdlog::info("volume {}: snapshot {}: {} written chunks, {} uploaded", job->volume, job->to,
                   result->written_chunks, result->uploaded_chunks);
    } else {
      spdlog::warn("volume {}: snapshot {} failed: {}", job->volume, job->to, result.status().ToString());
    }
    std::unique_ptr<VolumeSnapshot> finished;
    std::lock_guard lock(mu_);
    finished = std::move(job->snapshot);  // its capture ended; gone once this scope ends
    job->result = std::move(result);
    job->done = true;
    --running_;
  });
  return Status::Ok();
}

bool SnapshotJobs::Running(const std::string& volume) const {
  std::lock_guard lock(mu_);
  for (const auto& [key, job] : jobs_) {
    if (key.first == volume && !job->done) return true;
  }
  return false;
}

int SnapshotJobs::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

json SnapshotJobs::Report(const Job& job) const {
  json j{{"volume", job.volume}, {"snapshot", job.name}, {"to", job.to}, {"written_chunks", job.written}};
  if (!job.done) {
    j["state"] = "uploading";
    j["taken_chunks"] = job.snapshot ? job.snapshot->taken_chunks() : 0;
    return j;
  }
  if (!job.result.ok()) {
    j["state"] = "failed";
    j["error"] = job.result.status().ToString();
    return j;
  }
  const VolumeSnapshotStats& s = *job.result;
  j["state"] = "done";
  j["taken_chunks"] = s.written_chunks;
  j["chunks"] = s.chunks;
  j["parent_chunks"] = s.parent_chunks;
  j["uploaded_chunks"] = s.uploaded_chunks;
  j["uploaded_bytes"] = s.uploaded_bytes;
  j["reused_chunks"] = s.reused_chunks;
  j["zero_chunks"] = s.zero_chunks;
  j["spooled_chunks"] = s.spooled_chunks;
  return j;
}

std::optional<json> SnapshotJobs::Describe(const std::string& volume, const std::string& snapshot) const {
  std::lock_guard lock(mu_);
  auto it = jobs_.find({volume, snapshot});
  if (it == jobs_.end()) return std::nullopt;
  return Report(*it->second);
}

json SnapshotJobs::List(const std::string& volume) const {
  std::lock_guard lock(mu_);
  json out = json::array();
  for (const auto& [key, job] : jobs_) {
    if (key.first == volume) out.push_back(Report(*job));
  }
  return out;
}

void SnapshotJobs::Forget(const std::string& volume) {
  std::lock_guard lock(mu_);
  Reap();
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    it = it->first.first == volume && it->second->done ? jobs_.erase(it) : std::next(it);
  }
}

void SnapshotJobs::Stop() {
  stop_ = true;
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    for (auto& [_, job] : jobs_) {
      if (job->thread.joinable()) threads.push_back(std::move(job->thread));
    }
  }
  for (auto& t : threads) t.join();
}

}  // namespace ferry::volume
