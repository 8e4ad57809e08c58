#include "base/prom_text.h"

#include <fmt/format.h>

#include <cmath>

namespace ferry {
namespace {

void Escaped(std::string* out, std::string_view v) {
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out->push_back('\\');
      out->push_back(c);
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  return fmt::format("{}", v);
}

}  // namespace

PromText& PromText::Family(std::string_view name, std::string_view type, std::string_view help) {
  family_ = std::string(name);
  out_ += "# HELP " + family_ + " ";
  for (char c : help) out_ += c == '\n' ? ' ' : c;  // HELP is one line
  out_ += "\n# TYPE " + family_ + " " + std::string(type) + "\n";
  return *this;
}

PromText& PromText::Sample(double value, Labels labels) {
  Line("", value, labels);
  return *this;
}

void PromText::Line(std::string_view suffix, double value, Labels labels, std::string_view le) {
  out_ += family_;
  out_ += suffix;
  if (labels.size() > 0 || !le.empty()) {
    out_ += '{';
    bool first = true;
    for (const auto& [k, v] : labels) {
      if (!first) out_ += ',';
      first = false;
      out_ += k;
      out_ += "=\"";
      Escaped(&out_, v);
      out_ += '"';
    }
    if (!le.empty()) {
      out_ += first ? "le=\"" : ",le=\"";
      out_ += le;
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  out_ += Number(value);
  out_ += '\n';
}

PromText& PromText::Buckets(const std::vector<double>& bounds, const std::vector<uint64_t>& counts,
                            uint64_t overflow, double sum, Labels labels) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += i < counts.size() ? counts[i] : 0;
    Line("_bucket", static_cast<double>(cumulative), labels, Number(bounds[i]));
  }
  cumulative += overflow;
  Line("_bucket", static_cast<double>(cumulative), labels, "+Inf");
  Line("_sum", sum, labels);
  Line("_count", static_cast<double>(cumulative), labels);
  return *this;
}

PromText& PromText::Buckets(const LatencyHistogram::Snapshot& h, Labels labels) {
  static const std::vector<double> bounds(LatencyHistogram::kBounds.begin(), LatencyHistogram::kBounds.end());
  return Buckets(bounds, h.counts, h.overflow, h.sum, labels);
}

}  // namespace ferry
