#pragma once
// Reading Prometheus's text exposition format (0.0.4): the samples of a
// scrape, for a dashboard that shows another daemon's figures. Comments
// (# HELP, # TYPE) and lines that do not parse are skipped; timestamps are
// ignored.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ferry {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

std::vector<PromSample> ParsePromText(std::string_view text);

// The sum of the samples named `name` whose labels include `label`=`value`
// (every sample of that name when `label` is empty); 0 when none.
double PromSum(const std::vector<PromSample>& samples, std::string_view name,
               std::string_view label = {}, std::string_view value = {});

}  // namespace ferry
