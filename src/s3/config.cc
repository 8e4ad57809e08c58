#include "s3/config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ferry::s3 {
namespace {

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::optional<IniFile> ReadIni(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseIni(ss.str());
}

std::string Home(const EnvLookup& env) {
  auto h = env("HOME");
  return h ? *h : std::string();
}

std::string Lookup(const IniFile& ini, const std::string& section, const std::string& key) {
  auto s = ini.find(section);
  if (s == ini.end()) return "";
  auto k = s->second.find(key);
  return k == s->second.end() ? "" : k->second;
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

IniFile ParseIni(std::string_view text) {
  IniFile ini;
  std::string section, block;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view raw = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    std::string line = Trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = Trim(line.substr(1, line.size() - 2));
      block.clear();
      ini[section];
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string::npos || section.empty()) continue;
    std::string key = Trim(line.substr(0, eq));
    std::string value = Trim(line.substr(eq + 1));
    if (value.empty()) {
      block = key;  // start of a nested block such as "s3 ="
      continue;
    }
    if (!indented) block.clear();
    ini[section][block.empty() ? key : block + "." + key] = value;
  }
  return ini;
}

Result<S3Config> ResolveS3Config(const std::string& profile, const EnvLookup& env) {
  S3Config cfg;
  bool explicit_profile = !profile.empty();
  cfg.profile = explicit_profile ? profile : env("AWS_PROFILE").value_or("default");

  std::string home = Home(env);
  std::string cred_path =
      env("AWS_SHARED_CREDENTIALS_FILE").value_or(home.empty() ? "" : home + "/.aws/credentials");
  std::string conf_path = env("AWS_CONFIG_FILE").value_or(home.empty() ? "" : home + "/.aws/config");
  IniFile creds_file = ReadIni(cred_path).value_or(IniFile{});
  IniFile conf_file = ReadIni(conf_path).value_or(IniFile{});
  std::string conf_section = cfg.profile == "default" ? "default" : "profile " + cfg.profile;
  bool profile_exists = creds_file.count(cfg.profile) || conf_file.count(conf_section);
  if (explicit_profile && !profile_exists) {
    return Status::InvalidArgument("profile " + cfg.profile + " not found in " + cred_path +
                                   " or " + conf_path);
  }
  auto from_profile = [&](const std::string& key) {
    std::string v = Lookup(creds_file, cfg.profile, key);
    return v.empty() ? Lookup(conf_file, conf_section, key) : v;
  };

  auto env_key = env("AWS_ACCESS_KEY_ID");
  auto env_secret = env("AWS_SECRET_ACCESS_KEY");
  if (!explicit_profile && env_key && env_secret) {
    cfg.credentials = {*env_key, *env_secret, env("AWS_SESSION_TOKEN").value_or("")};
  } else {
    cfg.credentials = {from_profile("aws_access_key_id"), from_profile("aws_secret_access_key"),
                       from_profile("aws_session_token")};
  }
  if (cfg.credentials.access_key_id.empty() || cfg.credentials.secret_access_key.empty()) {
    return Status::AccessDenied(
        "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or configure profile " +
        cfg.profile + " in " + cred_path);
  }

  cfg.region = env("AWS_REGION")
                   .value_or(env("AWS_DEFAULT_REGION").value_or(from_profile("region")));
  if (cfg.region.empty()) cfg.region = "us-east-1";

  if (auto e = env("AWS_ENDPOINT_URL_S3")) {
    cfg.endpoint_url = *e;
  } else if (auto e2 = env("AWS_ENDPOINT_URL")) {
    cfg.endpoint_url = *e2;
  } else {
    cfg.endpoint_url = from_profile("s3.endpoint_url");
    if (cfg.endpoint_url.empty()) cfg.endpoint_url = from_profile("endpoint_url");
  }
  cfg.ca_bundle = env("AWS_CA_BUNDLE").value_or(from_profile("ca_bundle"));
  return cfg;
}

}  // namespace ferry::s3
