// FireSource: a trigger clipped to start/end, and the sharing of parsed
// schedules between jobs with the same trigger.
#include "src/core/fire_source.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "testing/job_specs.h"

namespace chime::core {
namespace {

using ::chime::testing::CronJob;

// The end date is inclusive; the first fire past it is when the job is seen
// to have ended.
TEST(FireSource, FirstAfterEndIsTheTriggersFirstFirePastTheEndDate) {
  JobSpec hourly = CronJob("h", "0 * * * *");
  auto open = FireSource::Create(hourly);
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->FirstAfterEnd(), absl::InfiniteFuture());

  const absl::Time five = absl::FromUnixSeconds(1'767'243'600);  // 05:00 UTC
  hourly.end = five;
  auto ending = FireSource::Create(hourly);
  ASSERT_TRUE(ending.ok());
  EXPECT_EQ(ending->Next(five - absl::Seconds(1)), five);
  EXPECT_EQ(ending->Next(five), absl::InfiniteFuture());
  EXPECT_EQ(ending->FirstAfterEnd(), five + absl::Hours(1));

  JobSpec once = CronJob("o", "0 * * * *");
  once.trigger.kind = Trigger::Kind::kAt;
  once.trigger.at = five + absl::Minutes(1);
  once.end = five;
  auto late = FireSource::Create(once);
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->Next(absl::InfinitePast()), absl::InfiniteFuture());
  EXPECT_EQ(late->FirstAfterEnd(), five + absl::Minutes(1));
  once.trigger.at = five;
  auto in_time = FireSource::Create(once);
  ASSERT_TRUE(in_time.ok());
  EXPECT_EQ(in_time->FirstAfterEnd(), absl::InfiniteFuture());
}

// The first job of an expression parses it and enters only its key in the
// cache; the second parses it again and enters the schedule, which every
// later job shares.
TEST(FireSource, JobsWithTheSameTriggerShareOneSchedule) {
  auto first = FireSource::Create(CronJob("first", "*/5 * * * *"));
  auto a = FireSource::Create(CronJob("a", "*/5 * * * *"));
  auto b = FireSource::Create(CronJob("b", "*/5 * * * *"));
  auto b2 = FireSource::Create(CronJob("b2", "*/5 * * * *"));
  ASSERT_TRUE(first.ok() && a.ok() && b.ok() && b2.ok());
  EXPECT_NE(first->schedule(), a->schedule());
  EXPECT_EQ(a->schedule(), b->schedule());
  EXPECT_EQ(a->schedule(), b2->schedule());
  // Anything the parse depends on makes another schedule.
  JobSpec berlin = CronJob("c", "*/5 * * * *");
  berlin.trigger.zone = "Europe/Berlin";
  auto c = FireSource::Create(berlin);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->schedule(), c->schedule());
  const absl::Time t = absl::FromUnixSeconds(1'790'000'000);
  EXPECT_EQ(a->Next(t), b->Next(t));
}

// The cache is bounded: 20,000 distinct expressions pass through it while
// 1,000 jobs on one common expression are added among them; the common one is
// parsed again (twice) only after a distinct one took its slot, so its jobs
// share a few copies, not one each.
TEST(FireSource, ACommonScheduleStaysSharedAmongManyDistinctOnes) {
  std::vector<FireSource> kept;
  absl::flat_hash_set<const cron::Schedule*> common;
  for (int i = 0; i < 20'000; ++i) {
    const std::string expr = absl::StrCat(i % 60, " ", (i / 60) % 60, " ",
                                          (i / 3600) % 24, " 1 * ", i % 7);
    auto distinct = FireSource::Create(CronJob("d", expr));
    ASSERT_TRUE(distinct.ok()) << expr;
    kept.push_back(*std::move(distinct));
    if (i % 20 == 0) {
      auto c = FireSource::Create(CronJob("c", "*/7 * * * *"));
      ASSERT_TRUE(c.ok());
      common.insert(c->schedule());
      kept.push_back(*std::move(c));
    }
  }
  EXPECT_LE(common.size(), 20u);
}

TEST(FireSource, HashedFieldsAreNotSharedBetweenJobs) {
  // Each job's three in a row: a's key and b's may share a slot.
  auto a = FireSource::Create(CronJob("a", "H * * * *"));
  auto a2 = FireSource::Create(CronJob("a", "H * * * *"));
  auto a3 = FireSource::Create(CronJob("a", "H * * * *"));
  auto b = FireSource::Create(CronJob("b", "H * * * *"));
  auto b2 = FireSource::Create(CronJob("b", "H * * * *"));
  auto b3 = FireSource::Create(CronJob("b", "H * * * *"));
  ASSERT_TRUE(a.ok() && b.ok() && a2.ok() && a3.ok() && b2.ok() && b3.ok());
  EXPECT_NE(a2->schedule(), b2->schedule());
  EXPECT_EQ(a2->schedule(), a3->schedule());
  EXPECT_EQ(b2->schedule(), b3->schedule());
  const absl::Time t = absl::FromUnixSeconds(1'790'000'000);
  EXPECT_EQ(a->Next(t), a3->Next(t));
}

TEST(FireSource, ScheduleStaysValidAfterEveryJobUsingItIsGone) {
  const cron::Schedule* first;
  {
    auto seen = FireSource::Create(CronJob("s", "7 7 7 7 *"));
    auto a = FireSource::Create(CronJob("a", "7 7 7 7 *"));
    ASSERT_TRUE(seen.ok() && a.ok());
    first = a->schedule();
    auto again = FireSource::Create(CronJob("b", "7 7 7 7 *"));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->schedule(), first);
  }
  // Every source is gone: the cache holds no schedule alive.
  auto later = FireSource::Create(CronJob("c", "7 7 7 7 *"));
  ASSERT_TRUE(later.ok());
  const absl::Time t = absl::FromUnixSeconds(1'790'000'000);
  EXPECT_GT(later->Next(t), t);
}

}  // namespace
}  // namespace chime::core
