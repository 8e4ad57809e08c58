#include "base/prom_parse.h"

#include <cstdlib>

namespace ferry {
namespace {

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':';
}

// Labels from just after '{' to '}': name="value" pairs, with \\, \" and \n
// escapes. False when malformed.
bool ParseLabels(std::string_view s, size_t* at, std::map<std::string, std::string>* out) {
  size_t i = *at;
  while (i < s.size() && s[i] != '}') {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    if (i < s.size() && s[i] == '}') break;
    const size_t start = i;
    while (i < s.size() && NameChar(s[i])) ++i;
    std::string name(s.substr(start, i - start));
    if (name.empty() || i + 1 >= s.size() || s[i] != '=' || s[i + 1] != '"') return false;
    i += 2;
    std::string value;
    for (; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        ++i;
        value += s[i] == 'n' ? '\n' : s[i];
      } else {
        value += s[i];
      }
    }
    if (i >= s.size()) return false;
    ++i;  // the closing quote
    (*out)[std::move(name)] = std::move(value);
  }
  if (i >= s.size()) return false;
  *at = i + 1;
  return true;
}

}  // namespace

std::vector<PromSample> ParsePromText(std::string_view text) {
  std::vector<PromSample> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    PromSample s;
    size_t i = 0;
    while (i < line.size() && NameChar(line[i])) ++i;
    s.name = std::string(line.substr(0, i));
    if (s.name.empty()) continue;
    if (i < line.size() && line[i] == '{') {
      ++i;
      if (!ParseLabels(line, &i, &s.labels)) continue;
    }
    while (i < line.size() && line[i] == ' ') ++i;
    const std::string number(line.substr(i, line.find(' ', i) - i));
    if (number.empty()) continue;
    char* parsed_end = nullptr;
    s.value = std::strtod(number.c_str(), &parsed_end);  // also +Inf, -Inf, NaN
    if (parsed_end != number.c_str() + number.size()) continue;
    out.push_back(std::move(s));
  }
  return out;
}

double PromSum(const std::vector<PromSample>& samples, std::string_view name,
               std::string_view label, std::string_view value) {
  double sum = 0;
  for (const auto& s : samples) {
    if (s.name != name) continue;
    if (!label.empty()) {
      auto it = s.labels.find(std::string(label));
      if (it == s.labels.end() || it->second != value) continue;
    }
    sum += s.value;
  }
  return sum;
}

}  // namespace ferry
