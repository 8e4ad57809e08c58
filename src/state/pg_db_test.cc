#include "state/pg_db.h"

#include <gtest/gtest.h>

namespace ferry::state::pg {
namespace {

TEST(ClassifySqlState, Table) {
  struct Case {
    const char* state;
    ErrorCode code;
    bool retryable;
  };
  const Case cases[] = {
      {"08006", ErrorCode::kNetwork, true},        // connection failure
      {"08001", ErrorCode::kNetwork, true},        // cannot establish
      {"57P01", ErrorCode::kNetwork, true},        // admin shutdown
      {"57P03", ErrorCode::kNetwork, true},        // cannot connect now (starting up)
      {"40001", ErrorCode::kServerError, true},    // serialization failure
      {"40P01", ErrorCode::kServerError, true},    // deadlock
      {"53300", ErrorCode::kServerError, true},    // too many connections
      {"23505", ErrorCode::kAlreadyExists, false}, // unique violation
      {"28P01", ErrorCode::kAccessDenied, false},  // bad password
      {"3D000", ErrorCode::kNotFound, false},      // no such database
      {"42601", ErrorCode::kInternal, false},      // syntax error: a bug
      {"22P02", ErrorCode::kInternal, false},      // bad text for a type
      {"57014", ErrorCode::kInternal, false},      // query cancelled
  };
  for (const Case& c : cases) {
    Status s = ClassifySqlState(c.state, "m");
    EXPECT_EQ(s.code(), c.code) << c.state;
    EXPECT_EQ(s.retryable(), c.retryable) << c.state;
    EXPECT_EQ(s.message(), "m");
  }
}

TEST(PgArrays, ElementsAreQuotedSoAnyKeySurvives) {
  EXPECT_EQ(TextArray({}), "{}");
  EXPECT_EQ(TextArray({"a", "b c"}), R"({"a","b c"})");
  EXPECT_EQ(TextArray({R"(q"uote)", R"(back\slash)", "{,}", "NULL", ""}),
            R"({"q\"uote","back\\slash","{,}","NULL",""})");
  EXPECT_EQ(IntArray({}), "{}");
  EXPECT_EQ(IntArray({1, -2, 9000000000}), "{1,-2,9000000000}");
  EXPECT_EQ(BoolArray({true, false}), "{t,f}");
}

}  // namespace
}  // namespace ferry::state::pg
