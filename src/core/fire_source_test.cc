// FireSource: a trigger clipped to start/end, and the sharing of parsed
// schedules between jobs with the same trigger.
#include "src/core/fire_source.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "testing/job_specs.h"

namespace chime::core {
namespace {

using ::chime::testing::CronJob;

TEST(FireSource, JobsWithTheSameTriggerShareOneSchedule) {
  auto a = FireSource::Create(CronJob("a", "*/5 * * * *"));
  auto b = FireSource::Create(CronJob("b", "*/5 * * * *"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->schedule(), b->schedule());
  // Anything the parse depends on makes another schedule.
  JobSpec berlin = CronJob("c", "*/5 * * * *");
  berlin.trigger.zone = "Europe/Berlin";
  auto c = FireSource::Create(berlin);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->schedule(), c->schedule());
  const absl::Time t = absl::FromUnixSeconds(1'790'000'000);
  EXPECT_EQ(a->Next(t), b->Next(t));
}

TEST(FireSource, HashedFieldsAreNotSharedBetweenJobs) {
  auto a = FireSource::Create(CronJob("a", "H * * * *"));
  auto b = FireSource::Create(CronJob("b", "H * * * *"));
  auto a2 = FireSource::Create(CronJob("a", "H * * * *"));
  ASSERT_TRUE(a.ok() && b.ok() && a2.ok());
  EXPECT_NE(a->schedule(), b->schedule());
  EXPECT_EQ(a->schedule(), a2->schedule());
}

TEST(FireSource, ScheduleStaysValidAfterEveryJobUsingItIsGone) {
  const cron::Schedule* first;
  {
    auto a = FireSource::Create(CronJob("a", "7 7 7 7 *"));
    ASSERT_TRUE(a.ok());
    first = a->schedule();
    auto again = FireSource::Create(CronJob("b", "7 7 7 7 *"));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->schedule(), first);
  }
  // Both sources are gone: the cache holds no schedule alive.
  auto later = FireSource::Create(CronJob("c", "7 7 7 7 *"));
  ASSERT_TRUE(later.ok());
  const absl::Time t = absl::FromUnixSeconds(1'790'000'000);
  EXPECT_GT(later->Next(t), t);
}

}  // namespace
}  // namespace chime::core
