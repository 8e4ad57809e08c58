#include "snapshot/ext4_image.h"

extern "C" {
#include <et/com_err.h>  // error_message (this header has no C++ guards)
}
#include <ext2fs/ext2fs.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace ferry::snapshot {

struct Ext4Image::Impl {
  ext2_filsys fs = nullptr;
  uint64_t offset = 0;  // of the file system in the image
  ~Impl() {
    if (fs) ext2fs_close_free(&fs);
  }
  uint64_t BlockAt(blk64_t b) const { return offset + b * fs->blocksize; }
};

Ext4Image::Ext4Image(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Ext4Image::~Ext4Image() = default;

Result<std::unique_ptr<Ext4Image>> Ext4Image::Open(const std::string& path, uint64_t offset) {
  auto impl = std::make_unique<Impl>();
  impl->offset = offset;
  std::string io_options = "offset=" + std::to_string(offset);
  errcode_t err = ext2fs_open2(path.c_str(), io_options.c_str(),
                               EXT2_FLAG_64BITS | EXT2_FLAG_IGNORE_CSUM_ERRORS, 0, 0,
                               unix_io_manager, &impl->fs);
  if (err) {
    impl->fs = nullptr;
    return Status(ErrorCode::kNotFound, path + ": no ext2/3/4 file system at byte " +
                                            std::to_string(offset) + " that libext2fs opens (" +
                                            error_message(err) + ")");
  }
  return std::unique_ptr<Ext4Image>(new Ext4Image(std::move(impl)));
}

Result<Ext4Image::Node> Ext4Image::Resolve(const std::string& path,
                                           std::vector<uint32_t>* visited) {
  ext2_filsys fs = impl_->fs;
  std::vector<std::string> todo;  // components left, last first
  auto push_path = [&](const std::string& p) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < p.size();) {
      size_t j = p.find('/', i);
      if (j == std::string::npos) j = p.size();
      if (j > i) parts.push_back(p.substr(i, j - i));
      i = j + 1;
    }
    todo.insert(todo.end(), parts.rbegin(), parts.rend());
  };
  push_path(path);
  std::vector<ext2_ino_t> stack = {EXT2_ROOT_INO};  // directories from the root
  visited->push_back(EXT2_ROOT_INO);
  int links = 0;
  ext2_inode inode;
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    if (name == ".") continue;
    if (name == "..") {
      if (stack.size() > 1) stack.pop_back();
      continue;
    }
    ext2_ino_t ino = 0;
    if (ext2fs_lookup(fs, stack.back(), name.c_str(), static_cast<int>(name.size()), nullptr,
                      &ino) ||
        ext2fs_read_inode(fs, ino, &inode)) {
      return Status(ErrorCode::kNotFound, path + ": not in the image");
    }
    visited->push_back(ino);
    if (LINUX_S_ISLNK(inode.i_mode)) {
      if (++links > 40) return Status(ErrorCode::kNotFound, path + ": too many symbolic links");
      std::string target;
      if (ext2fs_is_fast_symlink(&inode)) {
        target.assign(reinterpret_cast<const char*>(inode.i_block),
                      strnlen(reinterpret_cast<const char*>(inode.i_block), sizeof inode.i_block));
      } else {
        auto t = Read(ino, 4096);
        if (!t.ok()) return t.status();
        target = *t;
      }
      if (!target.empty() && target[0] == '/') stack.resize(1);
      push_path(target);
      continue;
    }
    if (!todo.empty() && !LINUX_S_ISDIR(inode.i_mode))
      return Status(ErrorCode::kNotFound, path + ": not a directory");
    if (todo.empty()) {
      return Node{ino, LINUX_S_ISDIR(inode.i_mode), LINUX_S_ISREG(inode.i_mode),
                  EXT2_I_SIZE(&inode), name};
    }
    stack.push_back(ino);
  }
  return Node{stack.back(), true, false, 0, ""};
}

namespace {

int CollectBlock(ext2_filsys, blk64_t* block, e2_blkcnt_t, blk64_t, int, void* priv) {
  static_cast<std::vector<blk64_t>*>(priv)->push_back(*block);
  return 0;
}

}  // namespace

std::vector<ByteRange> Ext4Image::RangesOf(uint32_t ino) {
  ext2_filsys fs = impl_->fs;
  std::vector<ByteRange> out;
  // The inode table block holding this inode.
  dgrp_t group = ext2fs_group_of_ino(fs, ino);
  uint64_t index = (ino - 1) % fs->super->s_inodes_per_group;
  uint64_t in_table = index * EXT2_INODE_SIZE(fs->super);
  out.push_back(
      {impl_->BlockAt(ext2fs_inode_table_loc(fs, group)) + in_table / fs->blocksize * fs->blocksize,
       fs->blocksize});
  std::vector<blk64_t> blocks;
  ext2_inode inode;
  if (ext2fs_read_inode(fs, ino, &inode) == 0) {
    // An extended attribute block (security labels, read at exec).
    if (blk64_t acl = ext2fs_file_acl_block(fs, &inode)) blocks.push_back(acl);
    // Not a fast symlink, inline data or a device: blocks of its own. A
    // damaged tree ends the walk where it is (what was found still counts).
    if (ext2fs_inode_has_valid_blocks2(fs, &inode)) {
      (void)ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY, nullptr, CollectBlock, &blocks);
    }
  }
  for (blk64_t b : blocks) {
    uint64_t at = impl_->BlockAt(b);
    if (!out.empty() && out.back().offset + out.back().length == at) {
      out.back().length += fs->blocksize;
    } else {
      out.push_back({at, fs->blocksize});
    }
  }
  return out;
}

std::vector<ByteRange> Ext4Image::MetadataRanges() const {
  ext2_filsys fs = impl_->fs;
  // Block 0 (or 1 with 1 KiB blocks) holds the superblock; the group
  // descriptors follow it.
  uint64_t end = impl_->BlockAt(fs->super->s_first_data_block + 1 + fs->desc_blocks);
  std::vector<ByteRange> out = {{impl_->offset, end - impl_->offset}};
  // What mounting it read-write reads next: the journal's superblock, and
  // the first group's bitmaps, where the root directory's new files go.
  blk64_t journal = 0;
  if (fs->super->s_journal_inum != 0 &&
      ext2fs_bmap2(fs, fs->super->s_journal_inum, nullptr, nullptr, 0, 0, nullptr, &journal) == 0 &&
      journal != 0) {
    out.push_back({impl_->BlockAt(journal), fs->blocksize});
  }
  for (blk64_t b : {ext2fs_block_bitmap_loc(fs, 0), ext2fs_inode_bitmap_loc(fs, 0)}) {
    if (b != 0) out.push_back({impl_->BlockAt(b), fs->blocksize});
  }
  return out;
}

Result<std::string> Ext4Image::Read(uint32_t ino, uint64_t max) {
  ext2_file_t file = nullptr;
  if (ext2fs_file_open(impl_->fs, ino, 0, &file))
    return Status(ErrorCode::kIoError, "cannot open inode " + std::to_string(ino));
  std::string out;
  char buf[65536];
  while (out.size() < max) {
    unsigned int got = 0;
    unsigned int want = static_cast<unsigned int>(std::min<uint64_t>(sizeof buf, max - out.size()));
    if (ext2fs_file_read(file, buf, want, &got) || got == 0) break;
    out.append(buf, got);
  }
  ext2fs_file_close(file);
  return out;
}

namespace {

int CollectName(ext2_dir_entry* entry, int, int, char*, void* priv) {
  int len = ext2fs_dirent_name_len(entry);
  std::string name(entry->name, static_cast<size_t>(len));
  if (name != "." && name != "..") static_cast<std::vector<std::string>*>(priv)->push_back(name);
  return 0;
}

}  // namespace

Result<std::vector<std::string>> Ext4Image::List(uint32_t ino) {
  std::vector<std::string> names;
  if (ext2fs_dir_iterate(impl_->fs, ino, 0, nullptr, CollectName, &names)) {
    return Status(ErrorCode::kIoError, "cannot list directory inode " + std::to_string(ino));
  }
  return names;
}

namespace {

bool HasExtMagic(int fd, uint64_t offset) {
  unsigned char m[2];
  return ::pread(fd, m, 2, static_cast<off_t>(offset + 1024 + 56)) == 2 && m[0] == 0x53 &&
         m[1] == 0xEF;
}

uint64_t Le(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

}  // namespace

Result<uint64_t> FindExtFilesystem(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (HasExtMagic(fd, 0)) return uint64_t{0};
  unsigned char mbr[512];
  if (::pread(fd, mbr, sizeof mbr, 0) != 512 || mbr[510] != 0x55 || mbr[511] != 0xAA) {
    return Status(ErrorCode::kNotFound,
                  path + ": neither an ext2/3/4 file system nor a partitioned disk");
  }
  std::vector<uint64_t> starts;  // partitions' first bytes
  bool gpt = false;
  for (int i = 0; i < 4; ++i) {
    const unsigned char* e = mbr + 446 + 16 * i;
    if (e[4] == 0xEE) gpt = true;
    if (e[4] != 0 && e[4] != 0xEE) starts.push_back(Le(e + 8, 4) * 512);
  }
  if (gpt) {
    unsigned char h[92];
    if (::pread(fd, h, sizeof h, 512) == sizeof h && std::memcmp(h, "EFI PART", 8) == 0) {
      uint64_t entries = Le(h + 72, 8) * 512, count = std::min<uint64_t>(Le(h + 80, 4), 256);
      uint64_t size = Le(h + 84, 4);
      for (uint64_t i = 0; i < count && size >= 128 && size <= 4096; ++i) {
        unsigned char e[128];
        if (::pread(fd, e, sizeof e, static_cast<off_t>(entries + i * size)) != sizeof e) break;
        uint64_t first = Le(e + 32, 8);
        if (first != 0) starts.push_back(first * 512);
      }
    }
  }
  for (uint64_t s : starts) {
    if (HasExtMagic(fd, s)) return s;
  }
  return Status(ErrorCode::kNotFound, path + ": no partition holds an ext2/3/4 file system");
}

}  // namespace ferry::snapshot
