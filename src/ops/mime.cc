#include "ops/mime.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace ferry {

std::string GuessContentType(std::string_view path) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {"txt", "text/plain"},          {"html", "text/html"},
      {"htm", "text/html"},           {"css", "text/css"},
      {"csv", "text/csv"},            {"md", "text/markdown"},
      {"js", "application/javascript"}, {"mjs", "application/javascript"},
      {"json", "application/json"},   {"xml", "application/xml"},
      {"svg", "image/svg+xml"},       {"png", "image/png"},
      {"jpg", "image/jpeg"},          {"jpeg", "image/jpeg"},
      {"gif", "image/gif"},           {"webp", "image/webp"},
      {"ico", "image/vnd.microsoft.icon"}, {"pdf", "application/pdf"},
      {"zip", "application/zip"},     {"gz", "application/gzip"},
      {"tar", "application/x-tar"},   {"zst", "application/zstd"},
      {"mp4", "video/mp4"},           {"webm", "video/webm"},
      {"mp3", "audio/mpeg"},          {"wasm", "application/wasm"},
      {"woff", "font/woff"},          {"woff2", "font/woff2"},
      {"iso", "application/x-iso9660-image"}, {"img", "application/octet-stream"},
      {"bin", "application/octet-stream"},
  };
  size_t slash = path.find_last_of('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t dot = name.find_last_of('.');
  if (dot == std::string_view::npos || dot == 0) return "";
  std::string ext(name.substr(dot + 1));
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& [e, type] : kTypes) {
    if (e == ext) return std::string(type);
  }
  return "";
}

}  // namespace ferry
