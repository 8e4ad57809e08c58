// Fuzz target: the cache's files as read back from disk — damaged by a
// crash, a bad disk or a hand — through every reader: a segment record
// (DecodeRecord), the metadata codec, an entry file of the old layout, a
// big object's seek table and whole file (BigObject::Open, its frames),
// and a store opened on a segment holding the input after a sound segment
// header, unless the input starts with one (DiskStore::Open rebuilding its
// index).
// Invariants: what decodes encodes back to the same; a store opens on any
// segment (damage is cut off or counted, never fatal, never served); when
// the input is exactly one live record, the opened store answers its key
// with exactly its body.
#include <fstream>

#include "cache/big_object.h"
#include "cache/disk_store.h"
#include "cache/entry.h"
#include "cache/meta_codec.h"
#include "cache/seek_table.h"
#include "cache/segment_record.h"
#include "codec/zstd_codec.h"
#include "fuzz_util.h"

namespace {

using namespace ferry;
using namespace ferry::cache;
using ferry::fuzz::Check;

constexpr const char* kName = "cache_disk_fuzz";

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

bool SameMeta(const EntryMeta& a, const EntryMeta& b) {
  return a.key == b.key && a.status == b.status && a.headers == b.headers &&
         a.encoding == b.encoding && a.logical_length == b.logical_length &&
         a.stored_length == b.stored_length && a.request_time == b.request_time &&
         a.response_time == b.response_time;
}

// Returns the record when the input is exactly one live record.
std::optional<DecodedRecord> CheckRecord(std::string_view in) {
  auto r = DecodeRecord(in);
  if (!r.ok()) return std::nullopt;
  auto again = EncodeRecord(r->meta, r->body);
  Check(again.ok(), kName, "a decoded record does not encode");
  auto twice = DecodeRecord(*again);
  Check(twice.ok() && SameMeta(twice->meta, r->meta) && twice->body == r->body, kName,
        "a record changed through encode and decode");
  if (!r->head.live || r->head.size() != in.size()) return std::nullopt;
  return *r;
}

void CheckCodecs(std::string_view in) {
  if (auto m = DecodeMeta(in); m.ok()) {
    auto again = DecodeMeta(EncodeMeta(*m));
    Check(again.ok() && SameMeta(*again, *m), kName, "metadata changed through encode and decode");
  }
  if (auto e = DecodeEntry(in); e.ok()) {
    const std::string encoded = EncodeEntry(e->meta, e->body);  // the decoded body points into it
    auto again = DecodeEntry(encoded);
    Check(again.ok() && SameMeta(again->meta, e->meta) && again->body == e->body, kName,
          "an entry file changed through encode and decode");
  }
  if (auto t = SeekTable::Decode(in); t.ok()) {
    auto again = SeekTable::Decode(t->Encode());
    Check(again.ok() && again->size() == t->size() &&
              again->logical_length() == t->logical_length() &&
              again->stored_length() == t->stored_length(),
          kName, "a seek table changed through encode and decode");
  }
  if (in.size() >= 9) (void)SeekTable::FrameSizeFromFooter(in.substr(in.size() - 9));
}

void CheckBigObject(const std::string& dir, std::string_view in) {
  const std::string path = dir + "/big-object";
  WriteFile(path, in);
  auto big = BigObject::Open(path);
  if (!big.ok()) return;
  const SeekTable& t = (*big)->table();
  for (size_t i = 0; i < t.size() && i < 8; ++i) {
    auto frame = (*big)->ReadFrame(i);
    if (frame.ok())
      Check(frame->size() == t.frame(i).logical, kName,
            "a frame of another length than its table's");
  }
  (void)(*big)->ReadStored(0, 4096);
}

void CheckStore(const std::string& dir, std::string_view in,
                const std::optional<DecodedRecord>& only) {
  const std::string root = dir + "/store";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root + "/segments");
  // Records after a sound header (the common case: damage inside), unless
  // the input brings a header of its own.
  std::string segment(in);
  if (segment.rfind("FERRY-SEGMENT-1\n", 0) != 0) {
    std::string header = "FERRY-SEGMENT-1\n";
    header +=
        std::string("\x01\0\0\0\0\0\0\0", 8) + std::string(8, '\0');  // sequence 1, little-endian
    segment = header + segment;
  }
  WriteFile(root + "/segments/0000000000000001.seg", segment);
  DiskStoreOptions o;
  o.dir = root;
  o.sync = false;
  o.max_bytes = 1ull << 30;
  o.background_compaction = false;
  auto store = DiskStore::Open(o);
  Check(store.ok(), kName, "a store does not open on a damaged segment");
  if (only) {
    auto got = (*store)->Get(only->meta.key);
    Check(got.ok() && got->has_value(), kName, "a whole live record is not found after open");
    Check((*got)->body == only->body, kName, "a record's body is not what the store answers");
  }
  // It stays usable: a new entry goes in and comes back.
  EntryMeta m;
  m.key = "fuzz-probe";
  m.logical_length = 10;
  Check((*store)->Put(m, "probe body").ok(), kName, "a put after open failed");
  auto probe = (*store)->Get("fuzz-probe");
  Check(probe.ok() && probe->has_value() && (*probe)->body == "probe body", kName,
        "the probe is not read back");
}

// With FERRY_FUZZ_WRITE_SEEDS=DIR: the seed corpus, files as the cache
// writes them — records (identity, zstd-coded, dead), two records in one
// segment, an entry file of the old layout, metadata alone, a big object.
void WriteSeeds(const std::string& out, const std::string& dir) {
  EntryMeta m;
  m.key = "https://origin.test/page?q=1";
  m.headers = {{"Content-Type", "text/html"}, {"ETag", "\"v1\""}, {"Cache-Control", "max-age=60"}};
  m.logical_length = 11;
  m.request_time = 1700000000;
  m.response_time = 1700000001;
  std::string record = EncodeRecord(m, "hello world").value();
  WriteFile(out + "/record", record);
  std::string dead = record;
  dead[kRecordStateOffset] = kRecordDead;
  EntryMeta z = m;
  z.key = "zstd-entry";
  z.encoding = StoredEncoding::kZstd;
  z.logical_length = 24;
  std::string coded =
      EncodeRecord(z, codec::ZstdCompress("hello world, hello world", 3).value()).value();
  WriteFile(out + "/segment_two", coded + dead);
  WriteFile(out + "/segment_torn", record + coded.substr(0, coded.size() / 2));
  WriteFile(out + "/entry_file", EncodeEntry(m, "hello world"));
  WriteFile(out + "/meta", EncodeMeta(m));
  auto writer =
      BigObjectWriter::Create(dir + "/seed-big", m, /*compress=*/true, 1, /*frame_size=*/8192)
          .value();
  std::string body;
  for (int i = 0; i < 4000; ++i) body += "line " + std::to_string(i) + "\n";
  m.logical_length = body.size();
  Check(writer->Write(body).ok() && writer->Finish(false).ok(), kName,
        "the seed big object was not written");
  std::ifstream big(dir + "/seed-big", std::ios::binary);
  WriteFile(out + "/big_object", std::string(std::istreambuf_iterator<char>(big), {}));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = fuzz::ProcessTempDir("cache-disk");
  if (const char* out = getenv("FERRY_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(out, dir);
    exit(0);
  }
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto only = CheckRecord(in);
  CheckCodecs(in);
  CheckBigObject(dir, in);
  CheckStore(dir, in, only);
  return 0;
}
