#pragma once
// zstd against a raw dictionary: the bytes of an earlier response, used as
// a prefix the new content may refer back into (RFC 9842's "dcz" content
// coding; RFC 8878 section 5 calls these raw content dictionaries). A
// frame made here carries no dictionary ID, so a decoder must be handed
// the same bytes. The window obeys RFC 9842 section 5.2: at most 8 MB or
// 1.25 times the dictionary, whichever is larger (and 128 MB at most),
// and only as large as dictionary and content need.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::codec {

// The largest window log a dcz frame against `dict_size` bytes may use.
int DczMaxWindowLog(uint64_t dict_size);

// One frame of `in` against `dict` (level 1..19), with its content size
// and checksum.
Result<std::string> ZstdCompressWithPrefix(std::string_view in, std::string_view dict, int level);

// Every frame of `in` decoded against `dict`; kCorruption on damage, a
// window over DczMaxWindowLog or output past `max_size` bytes.
Result<std::string> ZstdDecompressWithPrefix(std::string_view in, std::string_view dict,
                                             uint64_t max_size);

// A dictionary trained from samples of small bodies (libzstd's ZDICT):
// frames made with it name it by its ID, so a reader finds the dictionary
// a frame needs. Immutable once made; thread-safe (each thread keeps its
// own coder contexts).
class ZstdTrainedDictionary {
 public:
  // Trains at most `capacity` bytes of dictionary from `samples`; a
  // kInvalidArgument when libzstd finds too little to learn from.
  static Result<std::shared_ptr<const ZstdTrainedDictionary>> Train(
      const std::vector<std::string>& samples, size_t capacity, int level);
  // From a dictionary's bytes (as bytes() gave them); kCorruption when
  // they are not one.
  static Result<std::shared_ptr<const ZstdTrainedDictionary>> Load(std::string bytes, int level);
  ~ZstdTrainedDictionary();
  ZstdTrainedDictionary(const ZstdTrainedDictionary&) = delete;
  ZstdTrainedDictionary& operator=(const ZstdTrainedDictionary&) = delete;

  uint32_t id() const { return id_; }
  const std::string& bytes() const { return bytes_; }
  // One frame of `in` (with its size and this dictionary's ID; no checksum).
  Result<std::string> Compress(std::string_view in) const;
  // One frame made with this dictionary; kCorruption on damage or a size
  // other than `size`.
  Result<std::string> Decompress(std::string_view in, uint64_t size) const;

 private:
  struct Handles;
  ZstdTrainedDictionary(std::string bytes, uint32_t id, std::unique_ptr<Handles> h);
  std::string bytes_;
  uint32_t id_;
  std::unique_ptr<Handles> handles_;
};

// The dictionary ID the zstd frame starting `frame` names (0: none).
uint32_t ZstdFrameDictionaryId(std::string_view frame);

}  // namespace ferry::codec
