#include "src/exec/attempt_identity.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/attempt_context.h"

namespace chime::exec {
namespace {

using ::testing::ElementsAre;
using ::testing::MatchesRegex;
using ::testing::Pair;

AttemptContext Context(int attempt) {
  return ::chime::testing::TestAttemptContext("backup", attempt);
}

TEST(AttemptIdentityTest, FieldsNameTheFireAttemptAndToken) {
  EXPECT_THAT(IdentityFields(Context(2)),
              ElementsAre(Pair("JOB", "ops/backup"),
                          Pair("FIRE_ID", "ops/backup:3:2026-11-18T11:06:40Z"),
                          Pair("SCHEDULED_TIME", "2026-11-18T11:06:40Z"),
                          Pair("ATTEMPT", "2"), Pair("FENCING_TOKEN", "17"),
                          Pair("RUN_ID", "42")));
}

TEST(AttemptIdentityTest, HeaderNamesAreHeaderCase) {
  EXPECT_EQ(HeaderName("FIRE_ID"), "Fire-Id");
  EXPECT_EQ(HeaderName("JOB"), "Job");
  EXPECT_EQ(HeaderName("SCHEDULED_TIME"), "Scheduled-Time");
}

TEST(AttemptIdentityTest, TraceparentIsOneTracePerFireOneSpanPerAttempt) {
  const std::string first = Traceparent(Context(1));
  const std::string second = Traceparent(Context(2));
  EXPECT_THAT(first, MatchesRegex("00-[0-9a-f]{32}-[0-9a-f]{16}-01"));
  EXPECT_EQ(first.substr(0, 35), second.substr(0, 35));    // same trace id
  EXPECT_NE(first.substr(36, 16), second.substr(36, 16));  // other span
  EXPECT_EQ(Traceparent(Context(1)), first);               // stable
  AttemptContext other = Context(1);
  other.fire.scheduled_time += absl::Seconds(1);  // another fire
  EXPECT_NE(Traceparent(other).substr(3, 32), first.substr(3, 32));
}

}  // namespace
}  // namespace chime::exec
