#include "gateway/conditions.h"

#include <gtest/gtest.h>

#include "http/date.h"

namespace ferry::gateway {
namespace {

using std::chrono::system_clock;

const system_clock::time_point kModified =
    system_clock::time_point(std::chrono::seconds(1'700'000'000));

std::string Date(int64_t offset_s) {
  return http::FormatHttpDate(
      std::chrono::floor<std::chrono::seconds>(kModified + std::chrono::seconds(offset_s)));
}

TEST(ConditionsTest, Table) {
  struct Case {
    const char* name;
    RequestConditions c;
    Precondition want;
  } cases[] = {
      {"none", {}, Precondition::kProceed},
      {"if-match same", {"\"abc\"", "", "", ""}, Precondition::kProceed},
      {"if-match in a list", {"\"x\", \"abc\"", "", "", ""}, Precondition::kProceed},
      {"if-match other", {"\"x\"", "", "", ""}, Precondition::kFailed},
      {"if-match star", {"*", "", "", ""}, Precondition::kProceed},
      {"if-match weak never", {"W/\"abc\"", "", "", ""}, Precondition::kFailed},
      {"if-none-match same", {"", "\"abc\"", "", ""}, Precondition::kNotModified},
      {"if-none-match weak", {"", "W/\"abc\"", "", ""}, Precondition::kNotModified},
      {"if-none-match other", {"", "\"x\"", "", ""}, Precondition::kProceed},
      {"if-none-match star", {"", "*", "", ""}, Precondition::kNotModified},
      {"modified since before", {"", "", Date(-10), ""}, Precondition::kProceed},
      {"modified since at", {"", "", Date(0), ""}, Precondition::kNotModified},
      {"modified since ignored with inm", {"", "\"x\"", Date(10), ""}, Precondition::kProceed},
      {"unmodified since before", {"", "", "", Date(-10)}, Precondition::kFailed},
      {"unmodified since after", {"", "", "", Date(10)}, Precondition::kProceed},
      {"unmodified since ignored with if-match",
       {"\"abc\"", "", "", Date(-10)},
       Precondition::kProceed},
      {"a bad date is ignored", {"", "", "yesterday", "not a date"}, Precondition::kProceed},
      {"412 before 304", {"\"x\"", "\"abc\"", "", ""}, Precondition::kFailed},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Evaluate(c.c, "abc", kModified), c.want) << c.name;
  }
}

}  // namespace
}  // namespace ferry::gateway
