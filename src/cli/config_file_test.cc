// Daemons' config files: keys become flags, the command line wins, the
// command's section applies and another daemon's is skipped, and every
// mistake is one line naming the file. JSON logs parse as JSON.
#include "cli/config_file.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/test_temp_dir.h"
#include "cli/registry.h"

namespace ferry::cli {
namespace {

struct Serve {
  std::string listen = "127.0.0.1:8080";
  std::vector<std::string> origins;
  int level = 3;
  bool no_http2 = false;
};

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto* cache = app_.add_subcommand("cache");
    auto* serve = cache->add_subcommand("serve");
    serve->add_option("--listen", s_.listen);
    serve->add_option("--origin", s_.origins);
    serve->add_option("--level", s_.level);
    serve->add_flag("--no-http2", s_.no_http2);
    AddDaemonOptions(serve, "cache serve");
    auto* volume = app_.add_subcommand("volume")->add_subcommand("serve");
    volume->add_option("--nbd", nbd_);
    AddDaemonOptions(volume, "volume serve");
    app_.add_subcommand("ls")->add_option("--config", ls_config_);
  }
  std::string File(const std::string& text) {
    std::string path = dir_ / ("c" + std::to_string(++files_) + ".toml");
    std::ofstream(path) << text;
    return path;
  }
  // Expands and parses `args`; the expansion's error, "" when none.
  std::string Run(std::vector<std::string> args) {
    auto expanded = ExpandConfig(app_, args);
    if (!expanded.ok()) return expanded.status().message();
    args = *expanded;
    std::reverse(args.begin(), args.end());
    app_.parse(args);
    return "";
  }
  CLI::App app_;
  Serve s_;
  std::string nbd_, ls_config_;
  TestTempDir dir_;
  int files_ = 0;
};

TEST_F(ConfigFileTest, KeysBecomeFlags) {
  const auto f = File(
      "listen = \"127.0.0.1:9\"\norigin = [\"http://a\", \"http://b\"]\nlevel = 7\nno-http2 = "
      "true\n");
  ASSERT_EQ(Run({"cache", "serve", "--config", f}), "");
  EXPECT_EQ(s_.listen, "127.0.0.1:9");
  EXPECT_EQ(s_.origins, (std::vector<std::string>{"http://a", "http://b"}));
  EXPECT_EQ(s_.level, 7);
  EXPECT_TRUE(s_.no_http2);
}

TEST_F(ConfigFileTest, TheCommandLineWinsWhereverItStands) {
  const auto f = File("level = 7\norigin = [\"http://a\", \"http://b\"]\nno-http2 = false\n");
  ASSERT_EQ(Run({"cache", "serve", "--level=9", "--config=" + f, "--origin", "http://c"}), "");
  EXPECT_EQ(s_.level, 9);
  EXPECT_EQ(s_.origins, std::vector<std::string>{"http://c"});
  EXPECT_FALSE(s_.no_http2);
}

TEST_F(ConfigFileTest, TheCommandsSectionAppliesAndAnotherDaemonsIsSkipped) {
  const auto f = File(
      "level = 5\n[volume.serve]\nnbd = \"127.0.0.1:1\"\n[cache.serve]\nlisten = "
      "\"127.0.0.1:2\"\n");
  ASSERT_EQ(Run({"cache", "serve", "--config", f}), "");
  EXPECT_EQ(s_.level, 5);
  EXPECT_EQ(s_.listen, "127.0.0.1:2");
  EXPECT_EQ(nbd_, "");
}

TEST_F(ConfigFileTest, MistakesAreOneLineNamingTheFile) {
  struct Case {
    std::string text, want;
  } cases[] = {
      {"bogus = 1\n", "unknown key 'bogus' (ferry cache serve has no --bogus)"},
      {"config = \"x\"\n", "unknown key 'config'"},
      {"[cache.serv]\nlevel = 1\n", "unknown section [cache.serv]"},
      {"  no-http2  = yes\n", "key 'no-http2' is a flag: true or false"},
      {"no-http2 = yes\n", "key 'no-http2' is a flag: true or false"},
  };
  for (const auto& c : cases) {
    const auto f = File("level = 3\n\n" + c.text);  // the mistake on line 3
    const std::string err = Run({"cache", "serve", "--config", f});
    EXPECT_NE(err.find("--config " + f + ":3: " + c.want), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
  const std::string missing = dir_ / "missing.toml";
  const std::string err = Run({"cache", "serve", "--config", missing});
  EXPECT_NE(err.find("--config " + missing + ": "), std::string::npos) << err;
}

TEST_F(ConfigFileTest, OtherCommandsAndNoConfigAreLeftAlone) {
  const std::vector<std::string> ls = {"ls", "--config", "whatever"};
  EXPECT_EQ(*ExpandConfig(app_, ls), ls);
  const std::vector<std::string> plain = {"cache", "serve", "--level", "4"};
  EXPECT_EQ(*ExpandConfig(app_, plain), plain);
  EXPECT_EQ(LogFormat(plain), "text");
  EXPECT_EQ(LogFormat({"cache", "serve", "--log-format=json"}), "json");
}

// Every long flag of each real daemon command is a key: a file setting all
// of them expands into every one of them.
TEST(DaemonConfigTest, EveryFlagOfEachDaemonIsAKey) {
  TestTempDir dir;
  CLI::App app;
  int code = 0;
  AddCacheCommand(app, &code);
  AddVolumeCommand(app, &code);
  AddWorkerCommand(app, &code);
  AddServerCommand(app, &code);
  for (const std::vector<std::string>& path :
       {std::vector<std::string>{"cache", "serve"}, {"volume", "serve"}, {"worker"}, {"server"}}) {
    CLI::App* cmd = &app;
    for (const auto& w : path) cmd = cmd->get_subcommand(w);
    std::string text;
    std::vector<std::string> want;
    for (const CLI::Option* o : cmd->get_options()) {
      if (o->get_lnames().empty() || o->get_lnames()[0] == "help" || o->get_lnames()[0] == "config")
        continue;
      const std::string& name = o->get_lnames()[0];
      const bool flag = o->get_expected_min() == 0;
      text += name + (flag ? " = true\n" : " = \"v\"\n");
      want.push_back(flag ? "--" + name : "--" + name + "=v");
    }
    ASSERT_GT(want.size(), 5u);
    const std::string file = dir / (path[0] + ".toml");
    std::ofstream(file) << text;
    std::vector<std::string> args = path;
    args.insert(args.end(), {"--config", file});
    auto expanded = ExpandConfig(app, args);
    ASSERT_TRUE(expanded.ok()) << expanded.status().message();
    for (const auto& w : want) {
      EXPECT_NE(std::find(expanded->begin(), expanded->end(), w), expanded->end())
          << path[0] << ": " << w;
    }
  }
}

TEST(JsonLogsTest, EachLineIsAnObjectWithTheMessageEscaped) {
  std::ostringstream out;
  auto logger = std::make_shared<spdlog::logger>(
      "jsontest", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  spdlog::register_logger(logger);
  UseJsonLogs();
  const std::string msg = "a \"quoted\" path\\x, a tab\t and a newline\n, é";
  logger->warn("{}", msg);
  logger->info("second");
  spdlog::drop("jsontest");
  std::istringstream lines(out.str());
  std::string line;
  std::vector<nlohmann::json> got;
  while (std::getline(lines, line)) got.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(got.size(), 2u) << out.str();
  EXPECT_EQ(got[0]["msg"], msg);
  EXPECT_EQ(got[0]["level"], "warning");
  EXPECT_EQ(got[0]["logger"], "jsontest");
  EXPECT_EQ(got[1]["msg"], "second");
  EXPECT_EQ(got[0]["time"].get<std::string>().back(), 'Z');
}

}  // namespace
}  // namespace ferry::cli
