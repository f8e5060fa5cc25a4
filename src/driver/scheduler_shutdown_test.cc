// Shutdown: stop starting runs, let running attempts finish within the grace
// period on the injected clock, cancel the rest, record every outcome, and stop
// the threads.
#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/driver/scheduler_test_util.h"
#include "testing/status_matchers.h"

namespace chime::driver::testing {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST_F(SchedulerTest, ShutdownLetsAttemptsFinishWithinGraceThenCancelsTheRest) {
  // Without a store, runs not started are cancelled at shutdown (with one they
  // are left to the next scheduler: scheduler_recovery_test.cc).
  store_ = nullptr;
  SchedulerOptions options;
  options.worker_threads = 2;
  Create(options);
  // All three fire at 00:01; `quick` and `stubborn` take the two slots,
  // `queued` waits.
  JobSpec quick = Cron("quick", "* * * * *");
  quick.priority = 1;
  JobSpec stubborn = Cron("stubborn", "* * * * *");
  stubborn.priority = 1;
  Gate quick_gate;
  absl::Notification stubborn_entered;
  std::atomic<const std::atomic<bool>*> stubborn_flag{nullptr};
  std::atomic<bool> stubborn_saw_cancel{false};
  ASSERT_THAT(scheduler_->AddJob(quick,
                                 [&](const AttemptContext&) {
                                   quick_gate.Pass();
                                   return absl::OkStatus();
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->AddJob(stubborn,
                                 [&](const AttemptContext& ctx) {
                                   stubborn_flag = ctx.cancelled;
                                   stubborn_entered.Notify();
                                   stubborn_saw_cancel =
                                       WaitUntilCancelled(ctx);
                                   return absl::CancelledError("stopped");
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->AddJob(Cron("queued", "* * * * *"),
                                 Returns(absl::OkStatus())),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  ASSERT_TRUE(quick_gate.WaitEntered());
  ASSERT_TRUE(stubborn_entered.WaitForNotificationWithTimeout(kLimit));

  std::thread shutdown([&] { scheduler_->Shutdown(absl::Minutes(2)); });
  // The run that had not started is cancelled at once: the scheduler thread
  // began shutting down.
  const RunEvent queued =
      recorder_.WaitForEvent(FireId("queued", absl::Minutes(1)), "cancelled");
  EXPECT_THAT(queued.detail, HasSubstr("removed"));
  EXPECT_THAT(
      scheduler_->AddJob(Cron("late", "* * * * *"), Returns(absl::OkStatus())),
      StatusIs(absl::StatusCode::kFailedPrecondition));
  quick_gate.Open();
  recorder_.WaitForEvent(FireId("quick", absl::Minutes(1)), "succeeded");
  // The grace period ends at 00:03, past the 00:02 and 00:03 fires: none of
  // them may start, and `stubborn` is asked to stop only then.
  AdvanceTo(absl::Minutes(3) - absl::Seconds(1));
  EXPECT_FALSE(stubborn_flag.load()->load())
      << "cancelled within the grace period";
  AdvanceTo(absl::Minutes(3));
  const RunEvent cancelled =
      recorder_.WaitForEvent(FireId("stubborn", absl::Minutes(1)), "cancelled");
  shutdown.join();
  EXPECT_TRUE(stubborn_saw_cancel);
  EXPECT_THAT(cancelled.detail, StartsWith("shutdown: stopped"));
  EXPECT_EQ(cancelled.at, Wall(absl::Minutes(3)))
      << "cancelled before the grace period ended";
  for (const RunEvent& e : recorder_.events()) {
    EXPECT_THAT(e.fire_id, ::testing::EndsWith("00:01:00Z"))
        << "a fire after shutdown began";
  }
  EXPECT_THAT(recorder_.Transitions(FireId("queued", absl::Minutes(1))),
              ElementsAre("claiming->pending", "pending->cancelled"));
}

TEST_F(SchedulerTest, ShutdownIsIdempotentAndRefusesEverythingAfterwards) {
  Create();
  ASSERT_THAT(
      scheduler_->AddJob(Cron("a", "* * * * *"), Returns(absl::OkStatus())),
      IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  scheduler_->Shutdown(
      absl::Seconds(10));  // nothing running: returns without the clock moving
  scheduler_->Shutdown(absl::Seconds(10));
  EXPECT_THAT(scheduler_->Start(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(
      scheduler_->AddJob(Cron("b", "* * * * *"), Returns(absl::OkStatus())),
      StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(scheduler_->TriggerJob(Key("a")),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(scheduler_->NextFireTime(Key("a")),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(clock_.NumWaiters(), 0) << "the scheduler thread is gone";
}

TEST_F(SchedulerTest, ShutdownBeforeStartNeedsNoThreads) {
  Create();
  ASSERT_THAT(
      scheduler_->AddJob(Cron("a", "* * * * *"), Returns(absl::OkStatus())),
      IsOk());
  scheduler_->Shutdown(absl::Seconds(10));
  EXPECT_THAT(scheduler_->Start(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(SchedulerTest, DestroyingARunningSchedulerCancelsItsAttemptsAtOnce) {
  Create();
  std::atomic<bool> saw_cancel{false};
  absl::Notification entered;
  ASSERT_THAT(scheduler_->AddJob(Cron("a", "* * * * *"),
                                 [&](const AttemptContext& ctx) {
                                   entered.Notify();
                                   // Blocks without polling: the flag is
                                   // notified when set.
                                   ctx.cancelled->wait(false);
                                   saw_cancel = ctx.IsCancelled();
                                   return absl::CancelledError("bye");
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  ASSERT_TRUE(entered.WaitForNotificationWithTimeout(kLimit));
  scheduler_.reset();  // Shutdown(0): no clock advance needed
  EXPECT_TRUE(saw_cancel);
  const std::vector<RunEvent> events = recorder_.events();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().to, "cancelled");
  EXPECT_EQ(events.back().detail, "shutdown: bye");
}

}  // namespace
}  // namespace chime::driver::testing
