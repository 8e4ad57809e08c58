#include "cli/config_file.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <fstream>
#include <map>
#include <memory>

namespace ferry::cli {
namespace {

// The daemon commands, by their path with dots ("cache.serve").
std::map<std::string, CLI::App*>& Daemons() {
  static std::map<std::string, CLI::App*> daemons;
  return daemons;
}

bool IsLong(const std::string& a) { return a.size() > 2 && a[0] == '-' && a[1] == '-'; }
std::string LongName(const std::string& a) { return a.substr(2, a.find('=') - 2); }

// The value of --NAME in `args` (either `--NAME V` or `--NAME=V`), and
// where the option's tokens end; npos when absent.
size_t FindLong(const std::vector<std::string>& args, const std::string& name, std::string* value) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--" + name && i + 1 < args.size()) {
      *value = args[i + 1];
      return i + 2;
    }
    if (args[i].rfind("--" + name + "=", 0) == 0) {
      *value = args[i].substr(name.size() + 3);
      return i + 1;
    }
  }
  return std::string::npos;
}

// The "json" escape of `s` appended to `out` (control characters as \uXXXX).
template <class Out>
void AppendJsonEscaped(std::string_view s, Out& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20) {
      const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(esc, esc + sizeof esc);
    } else {
      out.push_back(ch);
    }
  }
}

class JsonMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    AppendJsonEscaped(std::string_view(msg.payload.data(), msg.payload.size()), dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessage>();
  }
};

// The first line of `file` (1-based) that starts with `text` after any
// blanks, and, for a key, goes on with blanks and '='; 0 when none.
int LineOf(const std::string& file, const std::string& text) {
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t at = line.find_first_not_of(" \t");
    if (at == std::string::npos || line.compare(at, text.size(), text) != 0) continue;
    if (text[0] == '[') return n;
    const size_t next = line.find_first_not_of(" \t", at + text.size());
    if (next != std::string::npos && line[next] == '=') return n;
  }
  return 0;
}

}  // namespace

void AddDaemonOptions(CLI::App* cmd, const std::string& path) {
  std::string dotted = path;
  for (auto& c : dotted) c = c == ' ' ? '.' : c;
  Daemons()[dotted] = cmd;
  // Read before parsing (ExpandConfig, LogFormat); declared for --help and
  // so that parsing accepts them.
  static std::string ignored;
  cmd->add_option(
      "--config", ignored,
      "Read flags from this TOML file (KEY = VALUE per long flag, at the top or under [" + dotted +
          "]); a flag given here wins");
  cmd->add_option("--log-format", ignored, "Logs on stderr as text or json (one object per line)")
      ->check(CLI::IsMember({"text", "json"}));
}

Result<std::vector<std::string>> ExpandConfig(CLI::App& root,
                                              const std::vector<std::string>& args) {
  // The command the arguments run: the longest run of subcommand names.
  CLI::App* cmd = &root;
  std::string path;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    CLI::App* sub = nullptr;
    for (CLI::App* s : cmd->get_subcommands([](CLI::App*) { return true; })) {
      if (s->get_name() == args[i]) sub = s;
    }
    if (!sub) break;
    cmd = sub;
    path += (path.empty() ? "" : ".") + args[i];
  }
  std::string words = path;
  for (auto& c : words) c = c == '.' ? ' ' : c;
  auto daemon = Daemons().find(path);
  if (daemon == Daemons().end() || daemon->second != cmd) return args;
  const std::vector<std::string> own(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  std::string file;
  const size_t end = FindLong(own, "config", &file);
  if (end == std::string::npos) return args;
  // An error names the file and, when `text` is found at a line's start
  // (a key, a section), that line.
  auto fail = [&](const std::string& what, const std::string& text = "") {
    const int line = text.empty() ? 0 : LineOf(file, text);
    return Status::InvalidArgument("--config " + file +
                                   (line > 0 ? ":" + std::to_string(line) : "") + ": " + what);
  };
  std::vector<CLI::ConfigItem> items;
  try {
    items = CLI::ConfigTOML().from_file(file);
  } catch (const CLI::Error& e) {
    return fail(e.what());
  }
  std::vector<std::string> added;
  for (const auto& item : items) {
    if (item.name == "++" || item.name == "--")
      continue;  // CLI11's marks of a section's start and end
    const std::string section = CLI::detail::join(item.parents, ".");
    if (!section.empty() && section != path) {
      if (Daemons().count(section)) continue;  // another daemon's settings
      return fail("unknown section [" + section + "] (sections name a daemon: [" + path + "])",
                  "[" + section);
    }
    const CLI::Option* opt =
        item.name == "config" ? nullptr : cmd->get_option_no_throw("--" + item.name);
    if (!opt) {
      return fail(
          "unknown key '" + item.name + "' (ferry " + words + " has no --" + item.name + ")",
          item.name);
    }
    bool given = false;
    for (const auto& a : own)
      given = given || (IsLong(a) && cmd->get_option_no_throw("--" + LongName(a)) == opt);
    if (given) continue;                 // the command line wins
    if (opt->get_expected_min() == 0) {  // a flag
      if (item.inputs.size() != 1 || (item.inputs[0] != "true" && item.inputs[0] != "false")) {
        return fail("key '" + item.name + "' is a flag: true or false", item.name);
      }
      if (item.inputs[0] == "true") added.push_back("--" + item.name);
      continue;
    }
    for (const auto& v : item.inputs) added.push_back("--" + item.name + "=" + v);
  }
  std::vector<std::string> out(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i + end));
  out.insert(out.end(), added.begin(), added.end());
  out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i + end), args.end());
  return out;
}

std::string LogFormat(const std::vector<std::string>& args) {
  std::string v;
  return FindLong(args, "log-format", &v) == std::string::npos ? "text" : v;
}

namespace {
std::atomic<bool> json_logs{false};
}  // namespace

bool JsonLogsOn() { return json_logs.load(); }

void UseJsonLogs() {
  json_logs = true;
  auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  f->add_flag<JsonMessage>('*').set_pattern(
      R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n","msg":"%*"})");
  spdlog::set_formatter(std::move(f));
}

}  // namespace ferry::cli
