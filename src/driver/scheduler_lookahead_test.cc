// The lookahead: fires of `allow` jobs are claimed and handed to the workers
// before their time, and start at it; removing such a job before its time
// means the fire never runs. Time is a SimulatedClock.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/driver/scheduler_test_util.h"
#include "testing/status_matchers.h"

namespace chime::driver::testing {
namespace {

using ::chime::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

JobSpec Allow(std::string id, std::string expression) {
  JobSpec spec = Cron(std::move(id), std::move(expression));
  spec.overlap.action = OverlapAction::kAllow;
  return spec;
}

SchedulerOptions WithLookahead(absl::Duration lookahead) {
  SchedulerOptions options;
  options.lookahead = lookahead;
  return options;
}

TEST_F(SchedulerTest, AllowJobIsClaimedAheadAndStartsAtItsTime) {
  Create(WithLookahead(absl::Seconds(10)));
  ASSERT_THAT(scheduler_->AddJob(Allow("a", "* * * * *"), Returns({})), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  const std::string fire = FireId("a", absl::Minutes(1));
  AdvanceTo(absl::Seconds(55));
  // Claimed 5 s ahead, durable, and waiting: the clock has not reached 60 s.
  recorder_.WaitForEvent(fire, "pending");
  EXPECT_TRUE(GetClaim(FireAt("a", absl::Minutes(1))).has_value());
  EXPECT_THAT(recorder_.seen(), IsEmpty());

  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(fire, "succeeded");
  const std::vector<Seen> seen = recorder_.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].started_at, Wall(absl::Minutes(1)));
  EXPECT_EQ(seen[0].scheduled_time, Wall(absl::Minutes(1)));
  EXPECT_THAT(recorder_.Transitions(fire),
              ElementsAre("claiming->pending", "pending->running",
                          "running->succeeded"));
  const RunEvent running = recorder_.WaitForEvent(fire, "running");
  EXPECT_EQ(running.at, Wall(absl::Minutes(1)))
      << "recorded running when it started, not when it was staged";
}

TEST_F(SchedulerTest, AllowJobRemovedBeforeItsTimeNeverRuns) {
  Create(WithLookahead(absl::Seconds(10)));
  ASSERT_THAT(scheduler_->AddJob(Allow("a", "* * * * *"), Returns({})), IsOk());
  // A second job due at the same instant shows that the instant was reached.
  ASSERT_THAT(scheduler_->AddJob(Allow("b", "* * * * *"), Returns({})), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  const std::string fire = FireId("a", absl::Minutes(1));
  AdvanceTo(absl::Seconds(55));
  recorder_.WaitForEvent(fire, "pending");
  ASSERT_THAT(scheduler_->RemoveJob(Key("a")), IsOk());
  const RunEvent cancelled = recorder_.WaitForEvent(fire, "cancelled");
  EXPECT_EQ(cancelled.detail, "job removed");

  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("b", absl::Minutes(1)), "succeeded");
  scheduler_->Shutdown(absl::ZeroDuration());  // every worker has returned
  for (const Seen& s : recorder_.seen()) {
    EXPECT_NE(s.fire_id, fire) << "a removed job's fire ran";
  }
  EXPECT_THAT(recorder_.Transitions(fire),
              ElementsAre("claiming->pending", "pending->cancelled"));
}

TEST_F(SchedulerTest, JobsWithOtherOverlapPoliciesAreDecidedAtTheirTime) {
  Create(WithLookahead(absl::Seconds(10)));
  ASSERT_THAT(scheduler_->AddJob(Allow("a", "* * * * *"), Returns({})), IsOk());
  ASSERT_THAT(scheduler_->AddJob(Cron("s", "* * * * *"), Returns({})),
              IsOk());  // overlap skip, the default
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Seconds(55));
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)), "pending");
  EXPECT_FALSE(GetClaim(FireAt("s", absl::Minutes(1))).has_value());
  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("s", absl::Minutes(1)), "succeeded");
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)), "succeeded");
}

JobSpec AllowAt(std::string id, absl::Duration at) {
  JobSpec spec = Allow(std::move(id), "* * * * *");
  spec.trigger.kind = Trigger::Kind::kAt;
  spec.trigger.at = Wall(at);
  return spec;
}

TEST_F(SchedulerTest, WithoutAStoreAFireWithinASecondIsDecidedAtItsTime) {
  // Nothing to commit before a start: a one-shot fire at an instant of its
  // own (60.25 s) is claimed at its time, and a fire at a whole second --
  // the instants many fires share -- still ahead.
  store_.reset();
  Create(WithLookahead(absl::Seconds(10)));
  ASSERT_THAT(scheduler_->AddJob(AllowAt("lone", absl::Milliseconds(60'250)),
                                 Returns({})),
              IsOk());
  ASSERT_THAT(
      scheduler_->AddJob(AllowAt("round", absl::Seconds(60)), Returns({})),
      IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Seconds(55));
  const std::string round = FireId("round", absl::Seconds(60));
  // Decided ahead: at 50 s, or when the moved clock is read (up to 55 s).
  EXPECT_LE(recorder_.WaitForEvent(round, "pending").at,
            Wall(absl::Seconds(55)));
  AdvanceTo(absl::Seconds(60));
  recorder_.WaitForEvent(round, "succeeded");
  AdvanceTo(absl::Milliseconds(60'250));
  const std::string lone = FireId("lone", absl::Milliseconds(60'250));
  recorder_.WaitForEvent(lone, "succeeded");
  EXPECT_EQ(recorder_.WaitForEvent(lone, "pending").at,
            Wall(absl::Milliseconds(60'250)))
      << "claimed ahead of its time";
  const RunEvent running = recorder_.WaitForEvent(lone, "running");
  EXPECT_EQ(running.at, Wall(absl::Milliseconds(60'250)));
}

TEST_F(SchedulerTest, OnAStoreAFireWithinASecondIsClaimedAhead) {
  // Its claim must be durable before it starts: decided ahead, or the
  // commit would make it late.
  Create(WithLookahead(absl::Seconds(10)));
  ASSERT_THAT(scheduler_->AddJob(AllowAt("lone", absl::Milliseconds(60'250)),
                                 Returns({})),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Seconds(55));
  const std::string lone = FireId("lone", absl::Milliseconds(60'250));
  EXPECT_LE(recorder_.WaitForEvent(lone, "pending").at,
            Wall(absl::Seconds(55)));
  AdvanceTo(absl::Milliseconds(60'250));
  recorder_.WaitForEvent(lone, "succeeded");
  EXPECT_EQ(recorder_.WaitForEvent(lone, "running").at,
            Wall(absl::Milliseconds(60'250)));
}

}  // namespace
}  // namespace chime::driver::testing
