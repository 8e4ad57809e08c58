#pragma once
// Which files a Linux boot reads next, from the files it has read: pure
// functions over a file's bytes, for the boot-set prediction (boot_set.h).
// - An ELF program or library needs its interpreter (PT_INTERP) and its
//   DT_NEEDED libraries, found in the usual library directories.
// - A script needs its interpreter (the #! line) and the programs its
//   lines start with, found in PATH.
// - A systemd unit needs the units it wants or requires and the programs
//   its Exec*= lines run.
// Nothing here reads a disk; boot_set.cc feeds it the image's files.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::snapshot {

struct ElfDeps {
  std::string interp;               // "" when static
  std::vector<std::string> needed;  // DT_NEEDED names, in order
};
// A 64-bit little-endian ELF file's dependencies; nullopt when `file` is
// not one, or is malformed (every offset is checked against its size).
std::optional<ElfDeps> ParseElfDeps(std::string_view file);

// Where the dynamic loader looks for a DT_NEEDED name (Debian's multiarch
// directories first), in order.
const std::vector<std::string>& LibraryDirs();
// Where a script's bare command names are looked for, in order.
const std::vector<std::string>& ProgramDirs();

// A script's interpreter (the path after "#!", without its argument), or
// "" when `file` does not start with "#!".
std::string ShebangOf(std::string_view file);
// The first word of each line of a shell script that may name a program:
// not a comment, a keyword, a builtin, an assignment or a function
// definition; in order, each once. Absolute paths are kept as they are.
std::vector<std::string> ScriptCommands(std::string_view script);

// Files an interpreter reads each time it starts, beside its libraries:
// for /usr/bin/python3.N (Debian's), the landmark its prefix is found by
// (os.py) and the encodings it imports before any script (the rest of its
// start-up modules are frozen into the binary since 3.11). Empty for other
// programs.
std::vector<std::string> StartupFilesOf(const std::string& program);

struct UnitDeps {
  std::vector<std::string>
      units;  // the units its Wants=, Requires=... name (not After=: order only)
  std::vector<std::string> programs;  // absolute paths of Exec*= programs
};
// A systemd unit file's dependencies (Wants=, Requires=, Requisite=,
// BindsTo=, Also= and the programs of ExecStart=, ExecStartPre= and
// ExecStartPost=).
UnitDeps ParseUnit(std::string_view unit);

}  // namespace ferry::snapshot
