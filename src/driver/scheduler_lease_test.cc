// What an attempt learns of the store's lease (AttemptContext::LeaseHeld):
// the built-in executors check it at the last moment before they act, so a
// scheduler paused past its lease after an attempt began starts nothing that
// another node may own by now.
#include <atomic>
#include <memory>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "chime/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/driver/driver.h"
#include "src/store/memory_store.h"
#include "testing/fault_injection_store.h"
#include "testing/status_matchers.h"

namespace chime::driver {
namespace {

using ::chime::testing::FaultInjectionStore;
using ::chime::testing::IsOk;

// An attempt begins while the lease is held; then the store stops answering,
// the lease's renewals fail, and the scheduler gives the lease up. The
// running attempt sees it: LeaseHeld() turns false, as it would for a
// scheduler woken from a SIGSTOP longer than its lease.
TEST(SchedulerLeaseTest, AnAttemptSeesTheLeaseLostWhileItRuns) {
  auto store = std::make_shared<FaultInjectionStore>(
      std::make_unique<store::MemoryStore>(
          store::MemoryStore::Options{&RealClock::Get(), 1024}));
  absl::Notification lost;
  SchedulerOptions options;
  options.store = store;
  options.lease_ttl = absl::Milliseconds(900);  // renewed every 300 ms
  options.on_lease_lost = [&](const absl::Status&) { lost.Notify(); };
  absl::StatusOr<std::unique_ptr<Scheduler>> s = CreateScheduler(options);
  ASSERT_THAT(s, IsOk());

  absl::Notification started;
  std::atomic<int> held_at_start{-1}, held_after_loss{-1};
  JobSpec spec;
  spec.key.id = "tick";
  spec.trigger.expression = "@every 1s";
  spec.overlap.action = OverlapAction::kSkip;
  ASSERT_THAT((*s)->AddJob(spec,
                           [&](const AttemptContext& ctx) {
                             if (started.HasBeenNotified())
                               return absl::OkStatus();
                             held_at_start = ctx.LeaseHeld() ? 1 : 0;
                             started.Notify();
                             if (lost.WaitForNotificationWithTimeout(
                                     absl::Seconds(10))) {
                               held_after_loss = ctx.LeaseHeld() ? 1 : 0;
                             }
                             return absl::OkStatus();
                           }),
              IsOk());
  ASSERT_THAT((*s)->Start(), IsOk());
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  store->FailNextWrites(1'000'000);  // the lease's renewals too
  ASSERT_TRUE(lost.WaitForNotificationWithTimeout(absl::Seconds(10)));
  store->Crash();  // nothing more is written: shutdown does not wait on it
  (*s)->Shutdown(absl::ZeroDuration());
  EXPECT_EQ(held_at_start.load(), 1);
  EXPECT_EQ(held_after_loss.load(), 0);
}

// Without a store there is no lease to lose: always held.
TEST(SchedulerLeaseTest, WithoutAStoreTheLeaseIsAlwaysHeld) {
  absl::StatusOr<std::unique_ptr<Scheduler>> s =
      CreateScheduler(SchedulerOptions{});
  ASSERT_THAT(s, IsOk());
  absl::Notification ran;
  std::atomic<bool> held{false};
  JobSpec spec;
  spec.key.id = "once";
  spec.trigger.kind = Trigger::Kind::kAt;
  spec.trigger.at = absl::Now();
  ASSERT_THAT((*s)->AddJob(spec,
                           [&](const AttemptContext& ctx) {
                             held = ctx.LeaseHeld();
                             ran.Notify();
                             return absl::OkStatus();
                           }),
              IsOk());
  ASSERT_THAT((*s)->Start(), IsOk());
  ASSERT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(10)));
  (*s)->Shutdown(absl::ZeroDuration());
  EXPECT_TRUE(held.load());
}

}  // namespace
}  // namespace chime::driver
