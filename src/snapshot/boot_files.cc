#include "snapshot/boot_files.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "base/strings.h"

namespace ferry::snapshot {

namespace {

template <typename T>
bool ReadAt(std::string_view file, uint64_t offset, T* out) {
  if (offset > file.size() || file.size() - offset < sizeof(T)) return false;
  std::memcpy(out, file.data() + offset, sizeof(T));
  return true;
}

// The NUL-terminated string at `offset`, or nullopt when it runs off the end.
std::optional<std::string> StringAt(std::string_view file, uint64_t offset) {
  if (offset >= file.size()) return std::nullopt;
  size_t end = file.find('\0', offset);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(file.substr(offset, end - offset));
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

std::optional<ElfDeps> ParseElfDeps(std::string_view file) {
  Elf64_Ehdr eh;
  if (!ReadAt(file, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_phentsize != sizeof(Elf64_Phdr)) {
    return std::nullopt;
  }
  ElfDeps deps;
  std::vector<Elf64_Phdr> loads;
  std::optional<Elf64_Phdr> dynamic;
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!ReadAt(file, eh.e_phoff + uint64_t{i} * sizeof ph, &ph)) return std::nullopt;
    if (ph.p_type == PT_LOAD) loads.push_back(ph);
    if (ph.p_type == PT_DYNAMIC) dynamic = ph;
    if (ph.p_type == PT_INTERP) {
      auto s = StringAt(file, ph.p_offset);
      if (!s) return std::nullopt;
      deps.interp = *s;
    }
  }
  if (!dynamic) return deps;
  // DT_STRTAB is an address: the PT_LOAD holding it says where it is in the file.
  auto file_offset = [&](uint64_t vaddr) -> std::optional<uint64_t> {
    for (const Elf64_Phdr& l : loads) {
      if (vaddr >= l.p_vaddr && vaddr - l.p_vaddr < l.p_filesz)
        return vaddr - l.p_vaddr + l.p_offset;
    }
    return std::nullopt;
  };
  std::optional<uint64_t> strtab;
  std::vector<uint64_t> needed;
  for (uint64_t at = dynamic->p_offset;
       at + sizeof(Elf64_Dyn) <= dynamic->p_offset + dynamic->p_filesz; at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn d;
    if (!ReadAt(file, at, &d) || d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_NEEDED) needed.push_back(d.d_un.d_val);
    if (d.d_tag == DT_STRTAB) strtab = file_offset(d.d_un.d_ptr);
  }
  if (!strtab) return needed.empty() ? std::optional<ElfDeps>(deps) : std::nullopt;
  for (uint64_t n : needed) {
    auto s = StringAt(file, *strtab + n);
    if (!s) return std::nullopt;
    deps.needed.push_back(*s);
  }
  return deps;
}

const std::vector<std::string>& LibraryDirs() {
  static const std::vector<std::string> dirs = {"/lib/x86_64-linux-gnu",
                                                "/usr/lib/x86_64-linux-gnu",
                                                "/lib64",
                                                "/usr/lib64",
                                                "/lib",
                                                "/usr/lib"};
  return dirs;
}

const std::vector<std::string>& ProgramDirs() {
  static const std::vector<std::string> dirs = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                                "/usr/bin",        "/sbin",          "/bin"};
  return dirs;
}

std::string ShebangOf(std::string_view file) {
  if (file.substr(0, 2) != "#!") return "";
  std::string_view line = Trim(file.substr(
      2, file.find('\n') == std::string_view::npos ? std::string_view::npos : file.find('\n') - 2));
  auto words = Words(line);
  return words.empty() ? "" : std::string(words[0]);
}

std::vector<std::string> ScriptCommands(std::string_view script) {
  static const std::set<std::string_view> kNotPrograms = {
      "if",    "then",     "else", "elif",  "fi",       "for",    "while",   "until",   "do",
      "done",  "case",     "esac", "in",    "function", "{",      "}",       "(",       ")",
      ";;",    "!",        "[",    "[[",    "echo",     "printf", "read",    "cd",      "export",
      "local", "return",   "exit", "set",   "unset",    "shift",  "trap",    "wait",    "eval",
      "exec",  "source",   ".",    "true",  "false",    "test",   "let",     "declare", "readonly",
      "break", "continue", ":",    "umask", "ulimit",   "type",   "command", "builtin", "alias"};
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (std::string_view line : SplitLines(script)) {
    auto words = Words(Trim(line));
    size_t w = 0;
    // "exec prog ..." and "command prog ..." run prog.
    while (w < words.size() && (words[w] == "exec" || words[w] == "command" || words[w] == "!"))
      ++w;
    if (w >= words.size()) continue;
    std::string_view word = words[w];
    if (word.front() == '#' || word.find('=') != std::string_view::npos ||
        word.find('(') != std::string_view::npos || word.front() == '$' || word.front() == '<' ||
        word.front() == '>' || word.front() == '"' || word.front() == '\'' ||
        kNotPrograms.count(word)) {
      continue;
    }
    while (!word.empty() && (word.back() == ';' || word.back() == '&' || word.back() == '|'))
      word.remove_suffix(1);
    if (word.empty() || word.find_first_of("$`*?\\") != std::string_view::npos) continue;
    if (seen.insert(std::string(word)).second) out.emplace_back(word);
  }
  return out;
}

std::vector<std::string> StartupFilesOf(const std::string& program) {
  std::string_view name = program;
  name.remove_prefix(name.rfind('/') == std::string_view::npos ? 0 : name.rfind('/') + 1);
  constexpr std::string_view kPython = "python3.";
  if (name.substr(0, kPython.size()) != kPython || name.size() == kPython.size() ||
      name.find_first_not_of("0123456789", kPython.size()) != std::string_view::npos) {
    return {};
  }
  const std::string lib = "/usr/lib/" + std::string(name);
  return {lib + "/os.py", lib + "/encodings/__init__.py", lib + "/encodings/aliases.py",
          lib + "/encodings/utf_8.py"};
}

UnitDeps ParseUnit(std::string_view unit) {
  static const std::set<std::string_view> kUnitKeys = {"Wants", "Requires", "Requisite", "BindsTo",
                                                       "Also"};
  static const std::set<std::string_view> kExecKeys = {"ExecStart", "ExecStartPre",
                                                       "ExecStartPost"};
  UnitDeps d;
  for (std::string_view line : SplitLines(unit)) {
    line = Trim(line);
    size_t eq = line.find('=');
    if (line.empty() || line.front() == '#' || line.front() == ';' || eq == std::string_view::npos)
      continue;
    std::string_view key = Trim(line.substr(0, eq)), value = Trim(line.substr(eq + 1));
    if (kUnitKeys.count(key)) {
      for (std::string_view u : Words(value)) d.units.emplace_back(u);
    } else if (kExecKeys.count(key)) {
      auto words = Words(value);
      if (words.empty()) continue;
      std::string_view prog = words[0];
      // Prefixes: - (failure ignored), @ (argv[0] follows), +, !, !! (privileges).
      while (!prog.empty() && std::strchr("-@+!:", prog.front())) prog.remove_prefix(1);
      if (!prog.empty() && prog.front() == '/') d.programs.emplace_back(prog);
    }
  }
  return d;
}

}  // namespace ferry::snapshot
