// Request bodies that define a job (job_body.h): what the fuzz target
// (tests/fuzz/job_body_fuzzer.cc) found, pinned down.
#include "src/api/job_body.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::api {
namespace {

using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

std::string Nested(int depth) {
  return "{\"id\": \"a\", \"labels\": " + std::string(depth, '[') +
         std::string(depth, ']') + "}";
}

TEST(ParseJsonObject, RefusesDeepNestingBeforeItCanOverflowTheStack) {
  // 64 levels in all (the body's object and 63 arrays) still parse.
  EXPECT_TRUE(ParseJsonObject(Nested(63)).ok());
  EXPECT_THAT(ParseJsonObject(Nested(64)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "body: arrays and objects nested more than 64 deep"));
  // A 1 MiB body of '[' (the API's limit) is an answer, not a crash.
  EXPECT_THAT(ParseJsonObject("{\"a\": " + std::string(1 << 20, '[')),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("body: not valid JSON: ")));
  EXPECT_THAT(ParseJsonObject(Nested(500'000)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("nested more than 64 deep")));
}

TEST(ParseJsonObject, ErrorsNameThePositionOrTheType) {
  EXPECT_THAT(ParseJsonObject("{\"id\": "),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("body: not valid JSON: parse error at line "
                                 "1, column 8")));
  EXPECT_THAT(ParseJsonObject("[1]"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "body: a job is a JSON object, not array"));
  EXPECT_THAT(ParseJsonObject("{\"p\": 1e400}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("body: not valid JSON: number overflow")));
}

}  // namespace
}  // namespace chime::api
