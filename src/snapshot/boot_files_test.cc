#include "snapshot/boot_files.h"

#include <gtest/gtest.h>

#include "base/test_shell.h"

namespace ferry::snapshot {
namespace {

// The machine's own /usr/bin/true: a dynamic ELF program (Debian's).
TEST(BootFiles, ReadsAnElfProgramsLoaderAndLibraries) {
  std::string bytes = ReadWholeFile("/usr/bin/true");
  ASSERT_FALSE(bytes.empty());
  auto deps = ParseElfDeps(bytes);
  ASSERT_TRUE(deps.has_value());
  EXPECT_EQ(deps->interp, "/lib64/ld-linux-x86-64.so.2");
  EXPECT_NE(std::find(deps->needed.begin(), deps->needed.end(), "libc.so.6"), deps->needed.end());
  // Cut short, or not an ELF file at all: nothing, and no crash.
  for (size_t cut : {size_t{10}, size_t{64}, size_t{300}, bytes.size() / 2}) {
    auto part = ParseElfDeps(std::string_view(bytes).substr(0, cut));
    if (part) {
      EXPECT_TRUE(part->needed.empty() || part->needed[0] == "libc.so.6");
    }
  }
  EXPECT_FALSE(ParseElfDeps("#!/bin/sh\n").has_value());
  std::string spoiled = bytes;
  spoiled[4] = 1;  // 32-bit class
  EXPECT_FALSE(ParseElfDeps(spoiled).has_value());
}

TEST(BootFiles, ScriptsNameTheirInterpreterAndPrograms) {
  EXPECT_EQ(ShebangOf("#!/bin/bash -e\necho hi\n"), "/bin/bash");
  EXPECT_EQ(ShebangOf("#! /usr/bin/env python3\n"), "/usr/bin/env");
  EXPECT_EQ(ShebangOf("echo\n"), "");
  std::string script =
      "#!/bin/bash\n"
      "# a comment\n"
      "export PATH=/usr/bin\n"
      "mount -t proc proc /proc\n"
      "exec </dev/console\n"
      "off() {\n"
      "  sync\n"
      "}\n"
      "python3 -c 'print(1)' || failed x\n"
      "if [ -x /sbin/foo ]; then /sbin/foo; fi\n"
      "VAR=1 other\n"
      "exec /usr/lib/thing --flag\n"
      "$cmd arg\n"
      "mount -o remount,ro /\n"
      "echo done\n";
  EXPECT_EQ(ScriptCommands(script),
            (std::vector<std::string>{"mount", "sync", "python3", "/usr/lib/thing"}));
}

TEST(BootFiles, PythonStartsWithItsLandmarkAndEncodings) {
  EXPECT_EQ(
      StartupFilesOf("/usr/bin/python3.11"),
      (std::vector<std::string>{
          "/usr/lib/python3.11/os.py", "/usr/lib/python3.11/encodings/__init__.py",
          "/usr/lib/python3.11/encodings/aliases.py", "/usr/lib/python3.11/encodings/utf_8.py"}));
  EXPECT_TRUE(StartupFilesOf("/usr/bin/python3").empty());  // the link; its target is the program
  EXPECT_TRUE(StartupFilesOf("/usr/bin/python3.x").empty());
  EXPECT_TRUE(StartupFilesOf("/usr/bin/bash").empty());
}

TEST(BootFiles, UnitsNameTheUnitsAndProgramsTheyPullIn) {
  UnitDeps d = ParseUnit(
      "[Unit]\n"
      "Description=x\n"
      "Wants=a.service b.socket\n"
      "Requires = c.target\n"
      "After=d.service\n"
      "# Wants=commented.service\n"
      "[Service]\n"
      "ExecStartPre=-/usr/bin/pre --x\n"
      "ExecStart=@/usr/sbin/daemon daemon -f\n"
      "ExecStop=/bin/stop\n"
      "ExecStartPost=relative\n"
      "[Install]\n"
      "Also=e.service\n");
  EXPECT_EQ(d.units, (std::vector<std::string>{"a.service", "b.socket", "c.target", "e.service"}));
  EXPECT_EQ(d.programs, (std::vector<std::string>{"/usr/bin/pre", "/usr/sbin/daemon"}));
}

}  // namespace
}  // namespace ferry::snapshot
