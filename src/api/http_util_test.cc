#include "src/api/http_util.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::api {
namespace {

using ::chime::testing::IsOkAndHolds;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(Problem, IsProblemJsonWithStatusTitleAndDetail) {
  const http::Response r = Problem(404, "no job ops/backup");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.content_type, "application/problem+json");
  const auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["title"], "Not Found");
  EXPECT_EQ(body["status"], 404);
  EXPECT_EQ(body["detail"], "no job ops/backup");
}

TEST(Problem, StatusCodesMapAndInternalMessagesStayInside) {
  EXPECT_EQ(ProblemFromStatus(absl::InvalidArgumentError("x")).status, 400);
  EXPECT_EQ(ProblemFromStatus(absl::NotFoundError("x")).status, 404);
  EXPECT_EQ(ProblemFromStatus(absl::FailedPreconditionError("x")).status, 409);
  EXPECT_EQ(ProblemFromStatus(absl::UnavailableError("x")).status, 503);
  const http::Response internal =
      ProblemFromStatus(absl::InternalError("sqlite: disk I/O error at 0x1"));
  EXPECT_EQ(internal.status, 500);
  EXPECT_THAT(internal.body, Not(HasSubstr("sqlite")));
}

TEST(JsonTextResponse, IsTheTextWithANewlineAsJson) {
  const http::Response r = JsonTextResponse(R"({"a":1})", 201);
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, "{\"a\":1}\n");
  EXPECT_EQ(JsonResponse(nlohmann::ordered_json{{"a", 1}}, 201).body, r.body);
}

TEST(PercentDecode, DecodesEscapesAndRefusesBadOnes) {
  EXPECT_THAT(PercentDecode("a%20b%2Fc%e2%82%ac"),
              IsOkAndHolds("a b/c\xe2\x82\xac"));
  EXPECT_THAT(PercentDecode("a+b"), IsOkAndHolds("a+b"));
  for (const char* bad : {"%", "%2", "%zz", "a%2g"}) {
    EXPECT_THAT(PercentDecode(bad),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("is not followed by two hex digits")))
        << bad;
  }
}

TEST(Query, ParsesDecodesAndRepeats) {
  absl::StatusOr<Query> q = Query::Parse(
      "label=team%3Ddata&label=tier=0&expression=*/5+*+*+*+*&limit=7",
      {"label", "expression", "limit"});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_THAT(q->All("label"), ElementsAre("team=data", "tier=0"));
  EXPECT_THAT(q->One("expression"),
              IsOkAndHolds(std::optional<std::string>("*/5 * * * *")));
  EXPECT_THAT(q->Int("limit", 100, 1, 1000), IsOkAndHolds(7));
  EXPECT_THAT(q->Int("absent", 100, 1, 1000), IsOkAndHolds(100));
  EXPECT_THAT(q->One("absent"), IsOkAndHolds(std::optional<std::string>()));
  EXPECT_THAT(q->One("label"), StatusIs(absl::StatusCode::kInvalidArgument,
                                        "label: given more than once"));
}

TEST(Query, RefusesUnknownNamesAndBadNumbers) {
  EXPECT_THAT(Query::Parse("limt=5", {"limit", "cursor"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "unknown query parameter \"limt\"; known: limit, "
                       "cursor"));
  absl::StatusOr<Query> q = Query::Parse("limit=x&count=0", {"limit", "count"});
  ASSERT_TRUE(q.ok());
  EXPECT_THAT(q->Int("limit", 1, 1, 10),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "limit: \"x\" is not a whole number"));
  EXPECT_THAT(q->Int("count", 1, 1, 10),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "count: 0 is outside 1..10"));
}

TEST(PathSegments, SplitsAndDecodesBelowThePrefix) {
  EXPECT_THAT(PathSegments("/v1/jobs/ops/back%2Dup", "/v1/jobs/"),
              IsOkAndHolds(ElementsAre("ops", "back-up")));
  EXPECT_THAT(PathSegments("/v1/jobs/", "/v1/jobs/"), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(PathSegments("/v1/jobs/a/", "/v1/jobs/"),
              IsOkAndHolds(ElementsAre("a", "")));
}

}  // namespace
}  // namespace chime::api
