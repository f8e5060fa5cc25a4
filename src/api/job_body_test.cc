// Request bodies that define a job (job_body.h): what the fuzz target
// (tests/fuzz/job_body_fuzzer.cc) found, pinned down.
#include "src/api/job_body.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/config/job_writer.h"
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

// What the API reads of `text` on the path that builds the JSON value.
absl::StatusOr<JobSpec> ThroughTheValue(absl::string_view text) {
  absl::StatusOr<nlohmann::ordered_json> body = ParseJsonObject(text);
  if (!body.ok()) return body.status();
  return ReadJobJson(*std::move(body), nullptr);
}

// The spec as its job-file JSON (a JobSpec has no operator==), or the error.
std::string Outcome(const absl::StatusOr<JobSpec>& spec) {
  if (!spec.ok()) return spec.status().ToString();
  return config::JobToJson(*spec).dump();
}

TEST(ReadJobText, GivesWhatReadingTheParsedValueGives) {
  const std::string job =
      R"("schedule": "0 0 1 1 *", "http": {"url": "http://127.0.0.1:1/x"})";
  const std::vector<std::string> texts = {
      "{\"id\": \"a\", " + job + "}",
      "{\"id\": \"a\", \"namespace\": \"n\", \"labels\": {\"k\": \"v\"}, " +
          job + "}",
      // A key twice: the value keeps the last value, at the first place.
      "{\"id\": \"a\", " + job + ", \"id\": \"b\"}",
      "{\"id\": \"a\", \"labels\": {\"k\": \"1\", \"k\": \"2\"}, " + job + "}",
      "{\"id\": \"a\", \"schedule\": \"not cron\", \"http\": {\"url\": 1}}",
      "{\"id\": \"a\", \"retry\": {\"max_attempts\": 0}, " + job + "}",
      "{\"id\": \"a\", \"timeout\": 1.5e3, " + job + "}",
      "{\"id\": \"a\", \"bogus\": [null, true, -1, 18446744073709551615], " +
          job + "}",
      "{\"jobs\": [{\"id\": \"a\", " + job + "}, {\"id\": \"b\", " + job +
          "}]}",
      Nested(63),
      Nested(64),
      "[1]",
      "\"job\"",
      "",
      "{\"id\": ",
      "{\"id\": \"a\", " + job + "} trailing",
      "{\"id\": \"caf\xc3\", " + job + "}",
      "{\"id\": \"\\ud800\", " + job + "}",
      "{\"p\": 1e400}",
  };
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    EXPECT_EQ(Outcome(ReadJobText(text)), Outcome(ThroughTheValue(text)));
  }
  // Many keys in one object (past the short list of seen keys), once each
  // and with the first given again at the end.
  std::string labels;
  for (int i = 0; i < 200; ++i)
    labels += absl::StrCat(i == 0 ? "" : ", ", "\"k", i, "\": \"v\"");
  for (const std::string& text :
       {"{\"id\": \"a\", \"labels\": {" + labels + "}, " + job + "}",
        "{\"id\": \"a\", \"labels\": {" + labels + ", \"k0\": \"w\"}, " + job +
            "}"}) {
    SCOPED_TRACE(text.substr(0, 80));
    EXPECT_EQ(Outcome(ReadJobText(text)), Outcome(ThroughTheValue(text)));
    ASSERT_TRUE(ReadJobText(text).ok());
    EXPECT_EQ(ReadJobText(text)->labels.size(), 200u);
  }
  // The cases above are not all refused (nor all taken).
  EXPECT_TRUE(ReadJobText(texts[0]).ok());
  EXPECT_EQ(ReadJobText(texts[2])->key.id, "b");
  EXPECT_FALSE(ReadJobText(texts[4]).ok());
}

}  // namespace
}  // namespace chime::api
