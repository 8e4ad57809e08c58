#include "cache/trained_dictionaries.h"

#include <spdlog/spdlog.h>

#include "base/strings.h"
#include "cache/transcode_policy.h"

namespace ferry::cache {
namespace {

std::string DictionaryKey(uint32_t id) { return "\nzdict\n" + std::to_string(id); }
std::string CurrentKey(const std::string& name) { return "\nzdict\ncurrent\n" + name; }

constexpr const char* kClasses[] = {"json", "html", "css", "js", "xml", "text"};

}  // namespace

std::string ClassOf(std::string_view content_type) {
  static const std::pair<const char*, std::vector<std::string>> kTypes[] = {
      {"json", {"application/json", "*+json"}},
      {"html", {"text/html", "application/xhtml+xml"}},
      {"css", {"text/css"}},
      {"js", {"application/javascript", "text/javascript", "application/x-javascript"}},
      {"xml", {"application/xml", "text/xml", "*+xml"}},
      {"text", {"text/*"}},
  };
  for (const auto& [name, types] : kTypes) {
    if (CompressibleType(content_type, types)) return name;
  }
  return "";
}

TrainedDictionaries::TrainedDictionaries(TrainedSettings settings, Storage storage)
    : settings_(settings), storage_(std::move(storage)) {
  for (const char* name : kClasses) {
    Class& c = classes_[name];
    c.next_training = settings_.first_samples;
    auto id = storage_.get(CurrentKey(name));
    if (!id) continue;
    char* end = nullptr;
    unsigned long n = std::strtoul(id->c_str(), &end, 10);
    if (end == id->c_str() || *end != '\0') continue;
    if (auto d = ById(static_cast<uint32_t>(n))) {
      c.current = d;
      c.versions = 1;  // at least: retrained once more samples come
      c.next_training = settings_.first_samples * 4;
    }
  }
  // spdlog's registry is made on first use inside libspdlog, whose guard
  // ThreadSanitizer cannot see: made here, before the trainer thread
  // starts, it is ordered before the trainer's logging.
  (void)spdlog::default_logger_raw();
  trainer_ = std::thread([this] { Run(); });
}

TrainedDictionaries::~TrainedDictionaries() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  trainer_.join();
}

void TrainedDictionaries::Sample(Class* c, std::string_view body) {
  c->seen++;
  if (c->sample_bytes + body.size() <= settings_.sample_bytes) {
    c->samples.emplace_back(body);
    c->sample_bytes += body.size();
  } else if (!c->samples.empty()) {  // a reservoir: each body seen kept with equal chance
    uint64_t slot = std::uniform_int_distribution<uint64_t>(0, c->seen - 1)(rng_);
    if (slot < c->samples.size()) {
      c->sample_bytes = c->sample_bytes - c->samples[slot].size() + body.size();
      c->samples[slot] = std::string(body);
    }
  }
}

std::optional<std::string> TrainedDictionaries::Offer(std::string_view content_type,
                                                      std::string_view body) {
  if (!settings_.enabled || body.empty()) return std::nullopt;
  const std::string name = ClassOf(content_type);
  if (name.empty()) return std::nullopt;
  std::shared_ptr<const codec::ZstdTrainedDictionary> dict;
  {
    std::lock_guard lock(mu_);
    Class& c = classes_[name];
    Sample(&c, body);
    if (c.seen >= c.next_training && c.versions < settings_.max_versions) {
      c.next_training = c.seen * 4;
      queue_.push_back(name);
      cv_.notify_all();
    }
    dict = c.current;
  }
  if (!dict) return std::nullopt;
  auto frame = dict->Compress(body);
  if (!frame.ok() || frame->size() > body.size() * (1.0 - settings_.min_saving))
    return std::nullopt;
  std::lock_guard lock(mu_);
  stats_.compressed++;
  return std::move(frame).value();
}

Result<std::string> TrainedDictionaries::Decompress(std::string_view frame, uint64_t size) {
  const uint32_t id = codec::ZstdFrameDictionaryId(frame);
  auto dict = id == 0 ? nullptr : ById(id);
  if (!dict)
    return Status::NotFound("the dictionary " + std::to_string(id) + " of a stored entry is gone");
  return dict->Decompress(frame, size);
}

bool TrainedDictionaries::Knows(std::string_view frame) {
  const uint32_t id = codec::ZstdFrameDictionaryId(frame);
  return id != 0 && ById(id) != nullptr;
}

std::shared_ptr<const codec::ZstdTrainedDictionary> TrainedDictionaries::ById(uint32_t id) {
  {
    std::lock_guard lock(mu_);
    auto it = by_id_.find(id);
    if (it != by_id_.end()) return it->second;
  }
  auto bytes = storage_.get(DictionaryKey(id));
  if (!bytes) return nullptr;
  auto dict = codec::ZstdTrainedDictionary::Load(std::move(*bytes), settings_.level);
  if (!dict.ok() || (*dict)->id() != id) return nullptr;
  std::lock_guard lock(mu_);
  return by_id_.emplace(id, *dict).first->second;
}

void TrainedDictionaries::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::string name = queue_.front();
    queue_.pop_front();
    training_ = true;
    lock.unlock();
    Train(name);
    lock.lock();
    training_ = false;
    cv_.notify_all();
  }
}

void TrainedDictionaries::Train(const std::string& name) {
  std::vector<std::string> samples;
  {
    std::lock_guard lock(mu_);
    samples = classes_[name].samples;
  }
  auto dict =
      codec::ZstdTrainedDictionary::Train(samples, settings_.dictionary_bytes, settings_.level);
  if (!dict.ok()) {
    spdlog::info("cache: no {} dictionary from {} samples: {}", name, samples.size(),
                 dict.status().ToString());
    std::lock_guard lock(mu_);
    stats_.failed++;
    return;
  }
  const uint32_t id = (*dict)->id();
  // Stored before it is used: an entry never names a dictionary the store lacks.
  Status st = storage_.put(DictionaryKey(id), (*dict)->bytes());
  if (st.ok()) st = storage_.put(CurrentKey(name), std::to_string(id));
  if (!st.ok()) {
    spdlog::warn("cache: a trained {} dictionary was not stored, not used: {}", name,
                 st.ToString());
    std::lock_guard lock(mu_);
    stats_.failed++;
    return;
  }
  spdlog::info("cache: trained a {} dictionary ({} bytes, id {}) from {} samples", name,
               (*dict)->bytes().size(), id, samples.size());
  std::lock_guard lock(mu_);
  Class& c = classes_[name];
  c.current = *dict;
  c.versions++;
  by_id_[id] = *dict;
  stats_.trained++;
}

TrainedStats TrainedDictionaries::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void TrainedDictionaries::WaitIdle() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && !training_; });
}

}  // namespace ferry::cache
