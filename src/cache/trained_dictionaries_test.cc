#include "cache/trained_dictionaries.h"

#include <gtest/gtest.h>

#include <map>

#include "codec/zstd_codec.h"

namespace ferry::cache {
namespace {

// A small JSON API answer, one of many alike.
std::string ApiAnswer(int i) {
  return "{\"id\": " + std::to_string(i) +
         ", \"type\": \"user\", \"attributes\": {\"name\": \"User " +
         std::to_string(i * 37 % 1000) + "\", \"email\": \"user" + std::to_string(i) +
         "@example.com\", \"roles\": [\"reader\", \"" + (i % 3 ? "writer" : "admin") +
         "\"], \"created_at\": \"2026-11-" + std::to_string(10 + i % 20) +
         "T08:15:00Z\", \"settings\": {\"theme\": \"dark\", \"language\": \"en-GB\", "
         "\"notifications\": true}}, "
         "\"links\": {\"self\": \"https://api.example.com/v1/users/" +
         std::to_string(i) + "\"}}";
}

std::string Or(Result<std::string> r) { return r.ok() ? *r : "(" + r.status().ToString() + ")"; }

struct MemoryStorage {
  std::map<std::string, std::string> kept;
  TrainedDictionaries::Storage Get() {
    return {[this](const std::string& k, const std::string& v) {
              kept[k] = v;
              return Status::Ok();
            },
            [this](const std::string& k) -> std::optional<std::string> {
              auto it = kept.find(k);
              if (it == kept.end()) return std::nullopt;
              return it->second;
            }};
  }
};

TrainedSettings Small() {
  TrainedSettings s;
  s.first_samples = 100;
  s.dictionary_bytes = 8 << 10;
  return s;
}

TEST(TrainedDictionariesTest, ClassesByContentType) {
  EXPECT_EQ(ClassOf("application/json; charset=utf-8"), "json");
  EXPECT_EQ(ClassOf("application/vnd.api+json"), "json");
  EXPECT_EQ(ClassOf("text/html"), "html");
  EXPECT_EQ(ClassOf("text/css"), "css");
  EXPECT_EQ(ClassOf("text/javascript"), "js");
  EXPECT_EQ(ClassOf("image/svg+xml"), "xml");
  EXPECT_EQ(ClassOf("text/plain"), "text");
  EXPECT_EQ(ClassOf("image/png"), "");
}

TEST(TrainedDictionariesTest, TrainsThenCompressesAndOldFramesOutliveRetraining) {
  MemoryStorage storage;
  auto dicts = std::make_unique<TrainedDictionaries>(Small(), storage.Get());
  for (int i = 0; i < 99; ++i)
    EXPECT_FALSE(dicts->Offer("application/json", ApiAnswer(i)).has_value());
  dicts->Offer("application/json", ApiAnswer(99));  // the 100th: training queued
  dicts->WaitIdle();
  ASSERT_EQ(dicts->stats().trained, 1u);
  const std::string body = ApiAnswer(5000);
  auto frame = dicts->Offer("application/json", body);
  ASSERT_TRUE(frame.has_value());
  auto plain = codec::ZstdCompress(body, 3);
  ASSERT_TRUE(plain.ok());
  EXPECT_LT(frame->size() * 2, plain->size())
      << frame->size() << " with, " << plain->size() << " without";
  EXPECT_EQ(Or(dicts->Decompress(*frame, body.size())), body);
  EXPECT_FALSE(dicts->Decompress(*frame, body.size() + 1).ok());
  // Another class has no dictionary yet.
  EXPECT_FALSE(dicts->Offer("text/html", "<p>" + body + "</p>").has_value());

  // Retrained at 4x the samples: a new dictionary, the old frame still decodes.
  for (int i = 0; i < 300; ++i) dicts->Offer("application/json", ApiAnswer(100 + i));
  dicts->WaitIdle();
  EXPECT_EQ(dicts->stats().trained, 2u);
  auto newer = dicts->Offer("application/json", body);
  ASSERT_TRUE(newer.has_value());
  EXPECT_NE(codec::ZstdFrameDictionaryId(*newer), codec::ZstdFrameDictionaryId(*frame));
  EXPECT_EQ(Or(dicts->Decompress(*frame, body.size())), body);

  // After a restart: the current one is loaded, old frames decode.
  dicts.reset();
  dicts = std::make_unique<TrainedDictionaries>(Small(), storage.Get());
  EXPECT_EQ(Or(dicts->Decompress(*frame, body.size())), body);
  EXPECT_EQ(Or(dicts->Decompress(*newer, body.size())), body);
  auto again = dicts->Offer("application/json", body);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(codec::ZstdFrameDictionaryId(*again), codec::ZstdFrameDictionaryId(*newer));

  // A dictionary lost from the store: its frames are refused, not misread.
  storage.kept.clear();
  dicts = std::make_unique<TrainedDictionaries>(Small(), storage.Get());
  EXPECT_FALSE(dicts->Knows(*frame));
  EXPECT_EQ(dicts->Decompress(*frame, body.size()).status().code(), ErrorCode::kNotFound);
}

TEST(TrainedDictionariesTest, BodiesThatGainTooLittleStayAsTheyCame) {
  MemoryStorage storage;
  TrainedSettings s = Small();
  s.min_saving = 0.99;  // nothing saves that much
  TrainedDictionaries dicts(s, storage.Get());
  for (int i = 0; i < 100; ++i) dicts.Offer("application/json", ApiAnswer(i));
  dicts.WaitIdle();
  EXPECT_EQ(dicts.stats().trained, 1u);
  EXPECT_FALSE(dicts.Offer("application/json", ApiAnswer(7)).has_value());
  EXPECT_EQ(dicts.stats().compressed, 0u);
}

TEST(TrainedDictionariesTest, ADictionaryTheStoreRefusedIsNotUsed) {
  MemoryStorage storage;
  TrainedDictionaries::Storage refusing = storage.Get();
  refusing.put = [](const std::string&, const std::string&) {
    return Status(ErrorCode::kIoError, "disk full");
  };
  TrainedDictionaries dicts(Small(), refusing);
  for (int i = 0; i < 100; ++i) dicts.Offer("application/json", ApiAnswer(i));
  dicts.WaitIdle();
  EXPECT_EQ(dicts.stats().trained, 0u);
  EXPECT_EQ(dicts.stats().failed, 1u);
  EXPECT_FALSE(dicts.Offer("application/json", ApiAnswer(7))
                   .has_value());  // no entry names a lost dictionary
}

}  // namespace
}  // namespace ferry::cache
