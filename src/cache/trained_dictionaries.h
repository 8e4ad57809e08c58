#pragma once
// Dictionaries trained on the cache's own small bodies, so that what is
// too small to gain from zstd alone (API JSON, HTML fragments under
// --min-size) is stored compressed at rest (as Pingora does for headers).
//
// Per content class (json, html, css, js, xml, text: ClassOf), the bodies
// offered are kept as samples (at most sample_bytes per class, a
// reservoir past that). At first_samples bodies a trainer thread trains a
// dictionary from them (libzstd's ZDICT), again at 4x as many, up to
// max_versions per class. Each dictionary is stored (Storage) under its ID
// and becomes its class's current one; bodies offered after that are
// compressed with it when that saves at least min_saving of their size.
// A frame names its dictionary's ID, so entries made with an older
// version keep decoding after a newer one is trained, and after a restart
// (the current version per class is loaded from Storage, the others when
// a frame names them).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "codec/zstd_dictionary.h"

namespace ferry::cache {

// The class a Content-Type trains with ("" for types it does not train).
std::string ClassOf(std::string_view content_type);

struct TrainedSettings {
  bool enabled = true;
  size_t dictionary_bytes = 16 << 10;  // capacity of each dictionary
  size_t first_samples = 256;          // bodies seen before the first training
  uint64_t sample_bytes = 8 << 20;     // samples kept per class
  double min_saving = 0.1;             // a smaller saving stores the body as it came
  int max_versions = 4;                // trainings per class
  int level = 3;                       // zstd level
};

struct TrainedStats {
  uint64_t trained = 0;     // dictionaries trained
  uint64_t compressed = 0;  // bodies compressed with one
  uint64_t failed = 0;      // trainings libzstd refused
};

class TrainedDictionaries {
 public:
  // Where dictionaries live (the disk store, under keys no request maps to).
  struct Storage {
    std::function<Status(const std::string& key, const std::string& bytes)> put;
    std::function<std::optional<std::string>(const std::string& key)> get;  // nullopt: absent
  };
  TrainedDictionaries(TrainedSettings settings, Storage storage);
  ~TrainedDictionaries();  // stops the trainer (a training under way ends first)

  // A small body of `content_type` filled: taken as a sample, and returned
  // compressed with its class's dictionary when that saves enough.
  std::optional<std::string> Offer(std::string_view content_type, std::string_view body);
  // A frame Offer made, of `size` bytes decoded; kNotFound when its
  // dictionary is gone, kCorruption when it does not decode.
  Result<std::string> Decompress(std::string_view frame, uint64_t size);
  // Whether the dictionary `frame` names can be had.
  bool Knows(std::string_view frame);
  TrainedStats stats() const;
  // Returns when no training is queued or under way (for tests).
  void WaitIdle();

 private:
  struct Class {
    std::vector<std::string> samples;
    uint64_t sample_bytes = 0;
    uint64_t seen = 0;
    int versions = 0;
    uint64_t next_training = 0;  // seen count that queues the next one
    std::shared_ptr<const codec::ZstdTrainedDictionary> current;
  };
  void Sample(Class* c, std::string_view body);  // mu_ held
  void Run();                                    // the trainer thread
  void Train(const std::string& name);
  std::shared_ptr<const codec::ZstdTrainedDictionary> ById(uint32_t id);

  const TrainedSettings settings_;
  const Storage storage_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Class> classes_;                                           // guarded by mu_
  std::map<uint32_t, std::shared_ptr<const codec::ZstdTrainedDictionary>> by_id_;  // guarded by mu_
  std::deque<std::string> queue_;  // guarded by mu_: classes to train
  bool training_ = false;          // guarded by mu_
  bool stop_ = false;              // guarded by mu_
  TrainedStats stats_;             // guarded by mu_
  std::mt19937_64 rng_{42};        // guarded by mu_: the reservoir's choices
  std::thread trainer_;            // last: started once the rest is ready
};

}  // namespace ferry::cache
