#pragma once
// A prediction, made from the image alone when a snapshot is made, of what
// a Linux guest reads while it boots from it, in the order it needs it:
// the file system's superblock and group descriptors (with the journal's
// superblock and the first group's bitmaps), the kernel and initrd
// a boot loader reads from /boot, the init program (/sbin/init, /init) with
// its dynamic loader and libraries (ELF DT_NEEDED) or a script's
// interpreter and the programs it runs, /etc, and the systemd units
// default.target pulls in with the programs they start. Each file brings
// its inode's block, its directories and links, its extent tree and data.
// The file system is read through libext2fs (ext4_image.h); which files
// follow from which is boot_files.h's. Stored as the snapshot's prefetch
// order (manifest.h) until a recorded boot replaces it.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "snapshot/ext4_image.h"

namespace ferry::snapshot {

struct BootSetOptions {
  uint64_t max_bytes = 512ull << 20;  // stop adding files past this many bytes
  size_t max_files = 5000;
  uint64_t max_etc_file = 1 << 20;  // larger files under /etc are left out
};

struct BootSet {
  uint64_t fs_offset = 0;          // where the file system starts in the image
  std::vector<ByteRange> ranges;   // in order of need (they may overlap)
  std::vector<std::string> files;  // the files found, in order
  uint64_t bytes = 0;              // the ranges' total
};

// kNotFound when the image holds no ext2/3/4 file system (bare, or in an
// MBR or GPT partition).
Result<BootSet> PredictBootSet(const std::string& image_path, const BootSetOptions& options = {});

// The chunks the ranges touch, first need first, each once, below
// `chunk_count`.
std::vector<uint32_t> PrefetchOrder(const std::vector<ByteRange>& ranges, uint64_t chunk_size,
                                    uint64_t chunk_count);

}  // namespace ferry::snapshot
