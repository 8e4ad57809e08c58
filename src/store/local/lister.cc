#include "store/local/lister.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <unordered_set>
#include <vector>

#include <spdlog/spdlog.h>

#include "store/local/fs_util.h"
#include "store/local/key_path.h"
#include "store/local/sidecar.h"

namespace ferry::local {

namespace {

// Files another tool put in the tree under names that are not canonical key
// encodings (say "100%.txt"; key_path.h) are not listed: say so, once per
// name in this process, so a copy of the tree never skips them silently.
void WarnForeign(const std::string& rel) {
  static std::mutex mu;
  static std::unordered_set<std::string> warned;
  std::lock_guard lock(mu);
  if (warned.size() >= 10000 || !warned.insert(rel).second) return;
  spdlog::warn("local store: '{}' is not a name ferry can map to an object key (a '%' not written as %25, "
               "or not UTF-8); it is not listed",
               rel);
}

}  // namespace

namespace {

constexpr int kMaxKeysCap = 1000;
// Continuation chains of valid keys are at most ~13 deep (1024 '%' bytes).
constexpr int kMaxContinuationDepth = 16;
constexpr size_t kMaxSidecarBytes = 1 << 20;
// Continuation tokens: a tag then the last key ('o') or common prefix ('p').
constexpr char kObjectTag = 'o';
constexpr char kPrefixTag = 'p';

struct Entry {
  std::string name;  // decoded segment
  bool is_dir = false;
  std::string rel;       // physical path below the root
  std::string sort_key;  // name, plus '/' for a directory
};

std::string JoinEncodedSegment(std::string_view segment) {
  std::string out;
  for (const std::string& c : EncodeSegment(segment)) {
    if (!out.empty()) out += '/';
    out += c;
  }
  return out;
}

// True if every string starting with `range_prefix` is less than `s`.
bool PastRange(std::string_view s, std::string_view range_prefix) {
  return s > range_prefix && !s.starts_with(range_prefix);
}

class TreeLister {
 public:
  TreeLister(const std::string& root, const ListOptions& options)
      : root_(root), options_(options) {}

  Result<ListPage> Run() {
    if (options_.max_keys < 1) return Status::InvalidArgument("max_keys must be at least 1");
    max_keys_ = std::min(options_.max_keys, kMaxKeysCap);
    lower_bound_ = options_.start_after;
    const std::string& token = options_.continuation_token;
    if (!token.empty()) {
      if (token[0] != kObjectTag && token[0] != kPrefixTag) {
        return Status::InvalidArgument("malformed continuation token");
      }
      std::string last = token.substr(1);
      if (token[0] == kPrefixTag) last_prefix_ = last;
      lower_bound_ = std::max(lower_bound_, last);
    }
    // Start in the deepest directory the prefix fixes: "a/b/c" -> "a/b/".
    const std::string& prefix = options_.prefix;
    std::string start_rel;
    std::string start_key;
    size_t slash = prefix.rfind('/');
    if (slash != std::string::npos) {
      start_key = prefix.substr(0, slash + 1);
      std::string_view fixed(prefix.data(), slash);
      if (fixed.size() > kMaxKeyBytes || !IsValidUtf8(fixed) ||
          fixed.find('\0') != std::string_view::npos) {
        return ListPage{};  // no valid key has this prefix
      }
      size_t begin = 0;
      for (;;) {
        size_t end = fixed.find('/', begin);
        std::string_view segment = fixed.substr(
            begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
        start_rel = JoinPath(start_rel, JoinEncodedSegment(segment));
        if (end == std::string_view::npos) break;
        begin = end + 1;
      }
    }
    FERRY_RETURN_IF_ERROR(Walk(start_rel, start_key));
    if (page_.truncated) page_.next_continuation_token = last_token_;
    return std::move(page_);
  }

 private:
  std::string Abs(const std::string& rel) const { return rel.empty() ? root_ : root_ + "/" + rel; }

  // The logical entries of directory `rel_dir`, sorted by sort_key.
  Result<std::vector<Entry>> ReadLogicalDir(const std::string& rel_dir) {
    std::vector<Entry> entries;
    FERRY_RETURN_IF_ERROR(ReadPhysical(rel_dir, rel_dir, "", 0, &entries));
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.sort_key < b.sort_key; });
    return entries;
  }

  // Adds the entries of physical directory `rel` to `out`; `rel` is
  // `logical_rel` itself or a continuation directory below it whose pieces
  // so far decode to `name_prefix`.
  Status ReadPhysical(const std::string& logical_rel, const std::string& rel,
                      const std::string& name_prefix, int depth, std::vector<Entry>* out) {
    std::string path = Abs(rel);
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) {
      if (errno == ENOENT || errno == ENOTDIR) return Status::Ok();  // deleted under us
      return Status::FromErrno(errno, "list " + path);
    }
    struct Child {
      std::string name;
      DecodedComponent decoded;
      bool is_dir;
    };
    std::vector<Child> children;
    while (struct dirent* e = ::readdir(dir)) {
      std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      auto decoded = DecodeComponent(name);
      if (!decoded.ok()) {  // reserved: ours, or a foreign name that is no key
        if (!IsInternalName(name)) WarnForeign(rel.empty() ? std::string(name) : rel + "/" + std::string(name));
        continue;
      }
      bool is_dir;
      if (e->d_type == DT_DIR) {
        is_dir = true;
      } else if (e->d_type == DT_REG) {
        is_dir = false;
      } else if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
        struct stat st;
        if (::fstatat(::dirfd(dir), e->d_name, &st, 0) != 0) continue;
        if (S_ISREG(st.st_mode)) {
          is_dir = false;
        } else if (S_ISDIR(st.st_mode) && e->d_type == DT_UNKNOWN) {
          is_dir = true;  // directory symlinks are not followed (loops)
        } else {
          continue;
        }
      } else {
        continue;  // fifos, sockets, devices
      }
      children.push_back(Child{std::string(name), std::move(*decoded), is_dir});
    }
    ::closedir(dir);
    for (Child& c : children) {
      std::string child_rel = JoinPath(rel, c.name);
      std::string full_name = name_prefix + c.decoded.text;
      if (c.decoded.continuation) {
        if (!c.is_dir || depth >= kMaxContinuationDepth) continue;
        FERRY_RETURN_IF_ERROR(ReadPhysical(logical_rel, child_rel, full_name, depth + 1, out));
        continue;
      }
      // Canonical check: the segment re-encodes to exactly this chain.
      std::string_view chain(child_rel);
      if (!logical_rel.empty()) chain.remove_prefix(logical_rel.size() + 1);
      if (JoinEncodedSegment(full_name) != chain) continue;
      Entry entry;
      entry.sort_key = c.is_dir ? full_name + "/" : full_name;
      entry.name = std::move(full_name);
      entry.is_dir = c.is_dir;
      entry.rel = std::move(child_rel);
      out->push_back(std::move(entry));
    }
    return Status::Ok();
  }

  // Visits, in key order, the entries of directory `rel_dir` whose keys all
  // start with `key_prefix` ("" or ending in '/').
  Status Walk(const std::string& rel_dir, const std::string& key_prefix) {
    FERRY_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadLogicalDir(rel_dir));
    const std::string& prefix = options_.prefix;
    for (const Entry& e : entries) {
      if (done_) return Status::Ok();
      std::string key = key_prefix + e.sort_key;  // for a directory: "<dir>/"
      if (!e.is_dir) {
        if (key <= lower_bound_) continue;
        if (!key.starts_with(prefix)) {
          if (key > prefix) done_ = true;  // past the prefix: nothing after matches
          continue;
        }
        FERRY_RETURN_IF_ERROR(VisitObject(key, e));
        continue;
      }
      if (!key.starts_with(prefix) && !std::string_view(prefix).starts_with(key)) {
        if (PastRange(key, prefix)) done_ = true;
        continue;
      }
      if (PastRange(lower_bound_, key)) continue;  // every key below is <= the bound
      if (!options_.delimiter.empty() && key.size() >= prefix.size()) {
        size_t pos = key.find(options_.delimiter, prefix.size());
        if (pos != std::string::npos) {
          std::string common = key.substr(0, pos + options_.delimiter.size());
          if (common == last_prefix_) continue;
          FERRY_ASSIGN_OR_RETURN(bool any, HasObjectBelow(key));
          if (any) EmitPrefix(common);
          continue;
        }
      }
      FERRY_RETURN_IF_ERROR(Walk(e.rel, key));
    }
    return Status::Ok();
  }

  // True if some key after the lower bound starts with `dir_prefix`.
  Result<bool> HasObjectBelow(const std::string& dir_prefix) {
    ListOptions probe;
    probe.prefix = dir_prefix;
    probe.start_after = lower_bound_;
    probe.max_keys = 1;
    FERRY_ASSIGN_OR_RETURN(ListPage page, TreeLister(root_, probe).Run());
    return !page.objects.empty();
  }

  Status VisitObject(const std::string& key, const Entry& e) {
    if (!options_.delimiter.empty()) {
      size_t pos = key.find(options_.delimiter, options_.prefix.size());
      if (pos != std::string::npos) {
        std::string common = key.substr(0, pos + options_.delimiter.size());
        if (common != last_prefix_) EmitPrefix(common);
        return Status::Ok();
      }
    }
    std::string path = Abs(e.rel);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return Status::Ok();  // gone
    if (!Admit()) return Status::Ok();
    ObjectInfo info;
    info.key = key;
    info.size = static_cast<uint64_t>(st.st_size);
    info.last_modified = TimePoint(
        std::chrono::duration_cast<TimePoint::duration>(std::chrono::nanoseconds(MtimeNs(st))));
    auto [dir, name] = SplitDirName(e.rel);
    auto text = ReadSmallFile(Abs(JoinPath(dir, SidecarName(name))), kMaxSidecarBytes);
    if (text.ok()) {
      std::optional<ObjectMeta> meta = ParseMeta(*text);
      if (meta && MetaMatches(*meta, st)) info.etag = std::move(meta->etag);
    }
    page_.objects.push_back(std::move(info));
    last_token_ = kObjectTag + key;
    return Status::Ok();
  }

  void EmitPrefix(const std::string& common) {
    if (!Admit()) return;
    page_.common_prefixes.push_back(common);
    last_prefix_ = common;
    last_token_ = kPrefixTag + common;
  }

  // Makes room for one more entry, or marks the page truncated and done.
  bool Admit() {
    if (count_ >= max_keys_) {
      page_.truncated = true;
      done_ = true;
      return false;
    }
    ++count_;
    return true;
  }

  const std::string& root_;
  const ListOptions& options_;
  int max_keys_ = kMaxKeysCap;
  std::string lower_bound_;  // keys must be strictly greater
  std::string last_prefix_;  // the common prefix emitted last (or resumed from)
  std::string last_token_;
  ListPage page_;
  int count_ = 0;
  bool done_ = false;
};

}  // namespace

Result<ListPage> ListTree(const std::string& root, const ListOptions& options) {
  return TreeLister(root, options).Run();
}

}  // namespace ferry::local
