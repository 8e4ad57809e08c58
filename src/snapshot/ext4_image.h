#pragma once
// An ext2/3/4 file system inside a disk image, read through libext2fs
// (e2fsprogs' own library, not a parser of ours): paths looked up from the
// root, files read, and where in the image each inode and block lives.
// Read-only; libext2fs stays inside ext4_image.cc.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace ferry::snapshot {

struct ByteRange {
  uint64_t offset = 0, length = 0;  // in the image file
};

class Ext4Image {
 public:
  // The file system at byte `offset` of the image at `path`; kNotFound when
  // there is no ext2/3/4 file system there.
  static Result<std::unique_ptr<Ext4Image>> Open(const std::string& path, uint64_t offset);
  ~Ext4Image();
  Ext4Image(const Ext4Image&) = delete;
  Ext4Image& operator=(const Ext4Image&) = delete;

  struct Node {
    uint32_t ino = 0;
    bool dir = false, regular = false;
    uint64_t size = 0;
    std::string name;  // the last component's, after links (systemd aliases a unit so)
  };
  // Looks `path` (absolute) up from the root, following symbolic links
  // (40 at most, as Linux); every inode met on the way (directories, links,
  // the file itself) is appended to *visited. kNotFound when it is not
  // there.
  Result<Node> Resolve(const std::string& path, std::vector<uint32_t>* visited);
  // Where inode `ino` is kept (its inode table block) and every block of
  // it, the extent tree's or indirect blocks with its data, in file order.
  std::vector<ByteRange> RangesOf(uint32_t ino);
  // The superblock and the group descriptors, the journal's superblock,
  // and the first block group's block and inode bitmaps.
  std::vector<ByteRange> MetadataRanges() const;
  // The first `max` bytes of a regular file.
  Result<std::string> Read(uint32_t ino, uint64_t max);
  // The names in directory `ino`, without "." and "..".
  Result<std::vector<std::string>> List(uint32_t ino);

 private:
  struct Impl;
  explicit Ext4Image(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Where the image's Linux file system starts: byte 0 when the image is a
// bare file system, else the first MBR or GPT partition holding an
// ext2/3/4 superblock. kNotFound when none does.
Result<uint64_t> FindExtFilesystem(const std::string& path);

}  // namespace ferry::snapshot
