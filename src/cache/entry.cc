#include "cache/entry.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "base/json_text.h"
#include "crypto/digest.h"

namespace ferry::cache {
namespace {

using nlohmann::json;

// Metadata larger than this is damage, not a response's headers.
constexpr uint32_t kMaxMetaSize = 1 << 20;

const char* EncodingName(StoredEncoding e) { return e == StoredEncoding::kZstd ? "zstd" : "identity"; }

Status EntryDamaged(const std::string& what) { return Status::Corruption("cache entry: " + what); }

Sha256Digest Checksum(std::string_view meta, std::string_view body) {
  StreamingDigest d(StreamingDigest::Kind::kSha256);
  d.Update(meta);
  d.Update(body);
  std::string raw = d.Finish();
  Sha256Digest out;
  std::copy(raw.begin(), raw.end(), out.begin());
  return out;
}

// Header values may hold any byte (obs-text), but JSON strings are UTF-8:
// each byte is written as the code point of the same value (Latin-1 to
// UTF-8) and read back the same way, so every string round-trips exactly.
std::string Latin1ToUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (unsigned char c : bytes) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

std::string Utf8ToLatin1(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if ((c == 0xC2 || c == 0xC3) && i + 1 < text.size()) {
      out.push_back(static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(text[++i]) & 0x3F)));
    } else {
      throw std::invalid_argument("a metadata string outside Latin-1");
    }
  }
  return out;
}

}  // namespace

std::string EncodeEntry(EntryMeta meta, std::string_view body) {
  meta.stored_length = body.size();
  json headers = json::array();
  for (const auto& [k, v] : meta.headers) headers.push_back({Latin1ToUtf8(k), Latin1ToUtf8(v)});
  std::string m = json{{"key", Latin1ToUtf8(meta.key)},
                       {"status", meta.status},
                       {"headers", headers},
                       {"encoding", EncodingName(meta.encoding)},
                       {"logical_length", meta.logical_length},
                       {"stored_length", meta.stored_length},
                       {"request_time", meta.request_time},
                       {"response_time", meta.response_time}}
                      .dump();
  std::string out;
  out.reserve(kEntryMagic.size() + 4 + m.size() + body.size() + kEntryChecksumSize);
  out.append(kEntryMagic);
  uint32_t n = static_cast<uint32_t>(m.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  out.append(m);
  out.append(body);
  Sha256Digest sum = Checksum(m, body);
  out.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  return out;
}

Result<DecodedEntry> DecodeEntry(std::string_view file) {
  if (file.size() < kEntryMagic.size() + 4 + kEntryChecksumSize ||
      file.substr(0, kEntryMagic.size()) != kEntryMagic) {
    return EntryDamaged("not an entry file (bad magic or too short)");
  }
  size_t at = kEntryMagic.size();
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<uint32_t>(static_cast<uint8_t>(file[at + i])) << (8 * i);
  at += 4;
  if (n > kMaxMetaSize || n > file.size() - at - kEntryChecksumSize) {
    return EntryDamaged("metadata length " + std::to_string(n) + " does not fit the file");
  }
  std::string_view m = file.substr(at, n);
  std::string_view rest = file.substr(at + n);
  std::string_view body = rest.substr(0, rest.size() - kEntryChecksumSize);
  std::string_view sum = rest.substr(rest.size() - kEntryChecksumSize);
  Sha256Digest want = Checksum(m, body);
  if (sum != std::string_view(reinterpret_cast<const char*>(want.data()), want.size())) {
    return EntryDamaged("checksum mismatch");
  }
  // The checksum held, so the metadata is what was written; still, read it
  // defensively (an entry from another version, say).
  json j = json::parse(m, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return EntryDamaged("metadata is not a JSON object");
  DecodedEntry e;
  try {
    e.meta.key = Utf8ToLatin1(j.at("key").get<std::string>());
    e.meta.status = JsonInt<int>(j.at("status"));
    for (const auto& h : j.at("headers")) {
      e.meta.headers.emplace_back(Utf8ToLatin1(h.at(0).get<std::string>()),
                                  Utf8ToLatin1(h.at(1).get<std::string>()));
    }
    std::string enc = j.at("encoding").get<std::string>();
    if (enc != "zstd" && enc != "identity") return EntryDamaged("unknown encoding '" + enc + "'");
    e.meta.encoding = enc == "zstd" ? StoredEncoding::kZstd : StoredEncoding::kIdentity;
    e.meta.logical_length = JsonInt<uint64_t>(j.at("logical_length"));
    e.meta.stored_length = JsonInt<uint64_t>(j.at("stored_length"));
    e.meta.request_time = JsonInt<int64_t>(j.at("request_time"));
    e.meta.response_time = JsonInt<int64_t>(j.at("response_time"));
  } catch (const json::exception& ex) {
    return EntryDamaged(std::string("metadata: ") + ex.what());
  } catch (const std::invalid_argument& ex) {
    return EntryDamaged(std::string("metadata: ") + ex.what());
  }
  if (e.meta.stored_length != body.size()) {
    return EntryDamaged("body is " + std::to_string(body.size()) + " bytes, metadata says " +
                   std::to_string(e.meta.stored_length));
  }
  if (e.meta.encoding == StoredEncoding::kIdentity && e.meta.logical_length != body.size()) {
    return EntryDamaged("an unencoded body must be its logical length");
  }
  e.body = body;
  return e;
}

}  // namespace ferry::cache
