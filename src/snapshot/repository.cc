#include "snapshot/repository.h"

#include <filesystem>

#include "store/location.h"
#include "store/stream.h"
#include "store/stream_taps.h"

namespace ferry::snapshot {

std::string Repository::ChunkKey(const std::string& hash) const {
  return prefix_ + "chunks/" + hash.substr(0, 2) + "/" + hash;
}

std::string Repository::ManifestKey(const std::string& name) const { return prefix_ + "snapshots/" + name; }

Result<bool> Repository::HasChunk(const std::string& hash) {
  auto info = store_->Head(ChunkKey(hash));
  if (info.ok()) return true;
  if (info.status().code() == ErrorCode::kNotFound) return false;
  return info.status();
}

Status Repository::PutChunk(const std::string& hash, std::string_view bytes) {
  ViewSource source(bytes);
  PutOptions po;
  po.content_md5 = Base64Encode(Md5(bytes));
  auto r = store_->Put(ChunkKey(hash), source, bytes.size(), po);
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::string> Repository::GetChunk(const std::string& hash) {
  StringSink sink;
  // Hashed as it arrives, piece by piece on the HTTP client's I/O thread
  // (about 45 us per 64 KB read), so the check adds little after the last byte.
  Sha256Sink hashed(sink);
  auto r = store_->Get(ChunkKey(hash), GetOptions{}, hashed);
  if (!r.ok()) return r.status();
  std::string data = std::move(sink.data());
  if (hashed.HexDigest() != hash) {
    return Status::Corruption("chunk " + hash + " does not hash to its name");
  }
  return data;
}

Status Repository::PutManifest(const Manifest& m) {
  std::string text = EncodeManifest(m);
  ViewSource source(text);
  PutOptions po;
  po.headers.content_type = "application/json";
  auto r = store_->Put(ManifestKey(m.name), source, text.size(), po);
  return r.ok() ? Status::Ok() : r.status();
}

Result<Manifest> Repository::GetManifest(const std::string& name) {
  StringSink sink;
  auto r = store_->Get(ManifestKey(name), GetOptions{}, sink);
  if (!r.ok()) {
    if (r.status().code() == ErrorCode::kNotFound) {
      return Status(ErrorCode::kNotFound, "no snapshot '" + name + "'");
    }
    return r.status();
  }
  auto m = DecodeManifest(sink.data());
  if (!m.ok()) return m.status().WithContext("snapshot '" + name + "'");
  if (m->name != name) return Status::Corruption("snapshot '" + name + "': its manifest names '" + m->name + "'");
  return m;
}

Result<std::vector<std::string>> Repository::List() {
  std::vector<std::string> names;
  ListOptions lo;
  lo.prefix = prefix_ + "snapshots/";
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(ListPage page, store_->List(lo));
    for (const auto& o : page.objects) names.push_back(o.key.substr(lo.prefix.size()));
    if (!page.truncated) break;
    lo.continuation_token = page.next_continuation_token;
  }
  return names;
}

Result<Repository> OpenRepository(const std::string& location, const OpenOptions& options, bool create) {
  FERRY_ASSIGN_OR_RETURN(Location loc, ParseLocation(location));
  OpenOptions oo = options;
  oo.create_local = create;
  FERRY_ASSIGN_OR_RETURN(auto store, OpenStore(loc, oo));
  std::string prefix = loc.is_remote() ? loc.key : "";
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  return Repository(std::shared_ptr<ObjectStore>(std::move(store)), prefix);
}

bool SameRepository(const std::string& a, const std::string& b) {
  auto la = ParseLocation(a), lb = ParseLocation(b);
  if (!la.ok() || !lb.ok() || la->kind != lb->kind) return false;
  auto trim = [](std::string s) {
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
  };
  if (la->is_remote()) {
    return la->account == lb->account && la->bucket == lb->bucket && trim("/" + la->key) == trim("/" + lb->key);
  }
  std::error_code ec;
  auto canonical = [&](const std::string& p) {
    return std::filesystem::weakly_canonical(std::filesystem::absolute(p.empty() ? "." : p, ec), ec);
  };
  return canonical(trim(la->path)) == canonical(trim(lb->path));
}

Result<std::pair<std::string, std::string>> SplitSnapshotLocation(const std::string& where) {
  std::string s = where;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  size_t slash = s.rfind('/');
  std::string repo = slash == std::string::npos ? "." : s.substr(0, slash + 1);
  std::string name = slash == std::string::npos ? s : s.substr(slash + 1);
  if (repo == "s3://") return Status::InvalidArgument(where + ": expected s3://BUCKET[/PREFIX]/NAME");
  if (!ValidSnapshotName(name)) {
    return Status::InvalidArgument(where + ": expected REPOSITORY/NAME, NAME of A-Z a-z 0-9 . _ -");
  }
  return std::make_pair(repo, name);
}

}  // namespace ferry::snapshot
