#include "snapshot/boot_set.h"

#include <deque>
#include <optional>
#include <set>

#include "snapshot/boot_files.h"

namespace ferry::snapshot {

namespace {

constexpr uint64_t kMaxProgram = 64 << 20;  // an ELF file read whole for its dependencies
constexpr size_t kMaxUnits = 400;

class Walk {
 public:
  Walk(Ext4Image* image, const BootSetOptions& o, BootSet* out) : image_(image), o_(o), out_(out) {}

  bool Full() const { return out_->bytes >= o_.max_bytes || out_->files.size() >= o_.max_files; }

  // Adds `path`'s inodes and blocks; its node, or nullopt when absent.
  std::optional<Ext4Image::Node> AddFile(const std::string& path) {
    if (Full()) return std::nullopt;
    std::vector<uint32_t> visited;
    auto node = image_->Resolve(path, &visited);
    if (!node.ok()) return std::nullopt;
    for (uint32_t ino : visited) {
      if (!inodes_.insert(ino).second) continue;
      for (const ByteRange& r : image_->RangesOf(ino)) {
        out_->ranges.push_back(r);
        out_->bytes += r.length;
      }
    }
    if (files_.insert(path).second) out_->files.push_back(path);
    return *node;
  }

  // A program: its file, then what it needs to run.
  void AddProgram(const std::string& path) {
    if (!programs_.insert(path).second) return;
    auto node = AddFile(path);
    if (!node || !node->regular) return;
    std::optional<ElfDeps> elf;
    std::string interp;
    std::vector<std::string> commands;
    {
      // The file's bytes go before the walk goes deeper.
      auto bytes = image_->Read(node->ino, kMaxProgram);
      if (!bytes.ok()) return;
      elf = ParseElfDeps(*bytes);
      if (!elf) {
        interp = ShebangOf(*bytes);
        if (!interp.empty()) commands = ScriptCommands(*bytes);
      }
    }
    if (elf) {
      if (!elf->interp.empty()) AddProgram(elf->interp);
      for (const std::string& lib : elf->needed) AddLibrary(lib);
      for (const std::string& f : StartupFilesOf(node->name))
        AddFile(f);  // the program, after links
      return;
    }
    if (interp.empty()) return;
    AddProgram(interp);
    for (const std::string& cmd : commands) {
      if (cmd[0] == '/') {
        AddProgram(cmd);
        continue;
      }
      for (const std::string& dir : ProgramDirs()) {
        std::vector<uint32_t> ignored;
        auto found = image_->Resolve(dir + "/" + cmd, &ignored);
        if (found.ok() && found->regular) {
          AddProgram(dir + "/" + cmd);
          break;
        }
      }
    }
  }

  void AddLibrary(const std::string& name) {
    if (name.find('/') != std::string::npos) return AddProgram(name);
    for (const std::string& dir : LibraryDirs()) {
      std::vector<uint32_t> ignored;
      auto found = image_->Resolve(dir + "/" + name, &ignored);
      if (found.ok() && found->regular) return AddProgram(dir + "/" + name);
    }
  }

  // Every file of the tree under `dir`, small ones only; each directory
  // once (a link to an ancestor or elsewhere is not walked again).
  void AddTree(const std::string& dir, int depth = 0) {
    auto node = AddFile(dir);
    if (!node || !node->dir || depth > 8 || !trees_.insert(node->ino).second) return;
    auto names = image_->List(node->ino);
    if (!names.ok()) return;
    for (const std::string& name : *names) {
      if (Full()) return;
      std::string path = dir + "/" + name;
      std::vector<uint32_t> ignored;
      auto child = image_->Resolve(path, &ignored);
      if (!child.ok()) continue;
      if (child->dir) {
        AddTree(path, depth + 1);
      } else if (child->regular && child->size <= o_.max_etc_file) {
        AddFile(path);
      }
    }
  }

  // The units default.target pulls in, breadth first, and their programs.
  void AddUnits() {
    static const char* kDirs[] = {"/etc/systemd/system", "/run/systemd/system",
                                  "/lib/systemd/system", "/usr/lib/systemd/system"};
    std::deque<std::string> queue = {"default.target"};
    std::set<std::string> seen = {"default.target"};
    auto want = [&](const std::string& unit) {
      if (seen.size() < kMaxUnits && seen.insert(unit).second) queue.push_back(unit);
    };
    while (!queue.empty() && !Full()) {
      std::string unit = queue.front();
      queue.pop_front();
      for (const char* dir : kDirs) {
        std::string path = std::string(dir) + "/" + unit;
        auto node = AddFile(path);
        if (node && node->name != unit)
          want(node->name);  // an alias: the unit's own .wants/ go by its name
        if (node && node->regular) {
          auto text = image_->Read(node->ino, 1 << 20);
          if (text.ok()) {
            UnitDeps deps = ParseUnit(*text);
            for (const std::string& u : deps.units) want(u);
            for (const std::string& p : deps.programs) AddProgram(p);
          }
        }
        for (const char* suffix : {".wants", ".requires"}) {
          std::vector<uint32_t> ignored;
          auto d = image_->Resolve(path + suffix, &ignored);
          if (!d.ok() || !d->dir) continue;
          AddFile(path + suffix);
          auto names = image_->List(d->ino);
          if (names.ok()) {
            for (const std::string& u : *names) want(u);
          }
        }
      }
    }
  }

 private:
  Ext4Image* image_;
  const BootSetOptions& o_;
  BootSet* out_;
  std::set<uint32_t> inodes_, trees_;
  std::set<std::string> files_, programs_;
};

}  // namespace

Result<BootSet> PredictBootSet(const std::string& image_path, const BootSetOptions& options) {
  FERRY_ASSIGN_OR_RETURN(uint64_t offset, FindExtFilesystem(image_path));
  FERRY_ASSIGN_OR_RETURN(auto image, Ext4Image::Open(image_path, offset));
  BootSet out;
  out.fs_offset = offset;
  for (const ByteRange& r : image->MetadataRanges()) {
    out.ranges.push_back(r);
    out.bytes += r.length;
  }
  Walk walk(image.get(), options, &out);
  // What a boot loader reads: its configuration, the kernel, the initrd.
  walk.AddFile("/boot/grub/grub.cfg");
  std::vector<uint32_t> ignored;
  if (auto boot = image->Resolve("/boot", &ignored); boot.ok() && boot->dir) {
    auto names = image->List(boot->ino);
    for (const std::string& n : names.ok() ? *names : std::vector<std::string>()) {
      if (n.rfind("vmlinuz", 0) == 0 || n.rfind("initrd.img", 0) == 0) walk.AddFile("/boot/" + n);
    }
  }
  walk.AddProgram("/sbin/init");
  walk.AddProgram("/init");
  walk.AddTree("/etc");
  walk.AddUnits();
  return out;
}

std::vector<uint32_t> PrefetchOrder(const std::vector<ByteRange>& ranges, uint64_t chunk_size,
                                    uint64_t chunk_count) {
  std::vector<uint32_t> order;
  std::vector<bool> seen(chunk_count);
  for (const ByteRange& r : ranges) {
    if (r.length == 0) continue;
    for (uint64_t c = r.offset / chunk_size;
         c <= (r.offset + r.length - 1) / chunk_size && c < chunk_count; ++c) {
      if (seen[c]) continue;
      seen[c] = true;
      order.push_back(static_cast<uint32_t>(c));
    }
  }
  return order;
}

}  // namespace ferry::snapshot
