#include "xml.h"

#include "s3/xml.h"

#include <cstdio>
#include <cstdlib>

namespace ferry::s3server {
namespace {

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::string XmlEscape(std::string_view text) { return s3::XmlEscape(text); }

std::string XmlUnescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    size_t semi = text.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12) {
      out += text[i];
      continue;
    }
    std::string_view ent = text.substr(i + 1, semi - i - 1);
    if (ent == "amp") out += '&';
    else if (ent == "lt") out += '<';
    else if (ent == "gt") out += '>';
    else if (ent == "quot") out += '"';
    else if (ent == "apos") out += '\'';
    else if (ent.size() > 1 && ent[0] == '#') {
      std::string digits(ent.substr(ent[1] == 'x' || ent[1] == 'X' ? 2 : 1));
      char* end = nullptr;
      unsigned long cp = std::strtoul(digits.c_str(), &end, ent[1] == 'x' || ent[1] == 'X' ? 16 : 10);
      if (digits.empty() || *end != '\0' || cp > 0x10FFFF) {
        out.append(text.substr(i, semi - i + 1));
      } else {
        AppendUtf8(static_cast<uint32_t>(cp), &out);
      }
    } else {
      out.append(text.substr(i, semi - i + 1));
    }
    i = semi;
  }
  return out;
}

std::vector<std::string_view> FindElements(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  std::string close = "</" + std::string(tag) + ">";
  size_t pos = 0;
  while ((pos = xml.find('<', pos)) != std::string_view::npos) {
    size_t name_start = pos + 1;
    if (xml.compare(name_start, tag.size(), tag) != 0) {
      ++pos;
      continue;
    }
    size_t after = name_start + tag.size();
    if (after >= xml.size()) break;
    char c = xml[after];
    if (c != '>' && c != ' ' && c != '/' && c != '\t' && c != '\n' && c != '\r') {
      ++pos;
      continue;
    }
    size_t gt = xml.find('>', after);
    if (gt == std::string_view::npos) break;
    if (xml[gt - 1] == '/') {
      out.emplace_back();
      pos = gt + 1;
      continue;
    }
    size_t end = xml.find(close, gt + 1);
    if (end == std::string_view::npos) break;
    out.push_back(xml.substr(gt + 1, end - gt - 1));
    pos = end + close.size();
  }
  return out;
}

std::string FirstElementText(std::string_view xml, std::string_view tag, std::string fallback) {
  auto found = FindElements(xml, tag);
  return found.empty() ? fallback : XmlUnescape(found.front());
}

XmlWriter::XmlWriter(std::string_view root, bool with_namespace) {
  out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<";
  out_ += root;
  if (with_namespace) out_ += " xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"";
  out_ += '>';
  open_.emplace_back(root);
}

void XmlWriter::Open(std::string_view tag) {
  out_ += '<';
  out_ += tag;
  out_ += '>';
  open_.emplace_back(tag);
}

void XmlWriter::Close() {
  out_ += "</";
  out_ += open_.back();
  out_ += '>';
  open_.pop_back();
}

void XmlWriter::Element(std::string_view tag, std::string_view text) {
  out_ += '<';
  out_ += tag;
  out_ += '>';
  out_ += XmlEscape(text);
  out_ += "</";
  out_ += tag;
  out_ += '>';
}

std::string XmlWriter::Finish() && {
  while (!open_.empty()) Close();
  return std::move(out_);
}

std::string ErrorXml(std::string_view code, std::string_view message, std::string_view resource,
                     std::string_view request_id) {
  XmlWriter w("Error", /*with_namespace=*/false);
  w.Element("Code", code);
  w.Element("Message", message);
  w.Element("Resource", resource);
  w.Element("RequestId", request_id);
  return std::move(w).Finish();
}

}  // namespace ferry::s3server
