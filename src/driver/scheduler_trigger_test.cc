// Trigger now: a manual fire of the job, answered by TriggerJob once it is
// claimed, or through a callback by TriggerJobAsync.
#include <optional>
#include <string>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/driver/scheduler_test_util.h"
#include "testing/status_matchers.h"

namespace chime::driver::testing {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;

TEST_F(SchedulerTest, TriggerRunsTheJobNowAsAManualFire) {
  Create();
  Gate gate;
  ASSERT_THAT(scheduler_->AddJob(Cron("yearly", "0 0 1 1 *"),
                                 [&](const AttemptContext& ctx) {
                                   recorder_.Record(ctx);
                                   gate.Pass();
                                   return absl::OkStatus();
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Seconds(10) + absl::Milliseconds(500));
  absl::StatusOr<uint64_t> run = scheduler_->TriggerJob(Key("yearly"));
  ASSERT_THAT(run, IsOk());
  ASSERT_TRUE(gate.WaitEntered());
  // Overlap skip (the default) refuses a second run while the first is going.
  EXPECT_THAT(scheduler_->TriggerJob(Key("yearly")),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  gate.Open();
  const std::string fire_id = "yearly:1:2026-01-01T00:00:10.5Z:manual";
  recorder_.WaitForEvent(fire_id, "succeeded");
  ASSERT_EQ(recorder_.seen().size(), 1u);
  const Seen seen = recorder_.seen()[0];
  EXPECT_EQ(seen.fire_id, fire_id);
  EXPECT_EQ(seen.run_id, *run);
  EXPECT_TRUE(seen.manual);
  EXPECT_EQ(seen.scheduled_time,
            Wall(absl::Seconds(10) + absl::Milliseconds(500)));
  EXPECT_THAT(scheduler_->TriggerJob(Key("nope")),
              StatusIs(absl::StatusCode::kNotFound));
}

// The callback gets what TriggerJob would answer, once the claim is in the
// store; a call the scheduler cannot take is answered at once.
TEST_F(SchedulerTest, TriggerJobAsyncAnswersOnceTheClaimIsDurable) {
  Create();
  ASSERT_THAT(scheduler_->AddJob(Cron("yearly", "0 0 1 1 *"),
                                 Returns(absl::OkStatus())),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Seconds(5));
  std::optional<absl::StatusOr<uint64_t>> answer;
  std::optional<absl::StatusOr<RunDetail>> stored;
  absl::Notification done;
  scheduler_->TriggerJobAsync(Key("yearly"), [&](absl::StatusOr<uint64_t> r) {
    if (r.ok()) stored = store_->GetRun(*r, kForever);
    answer = std::move(r);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_THAT(*answer, IsOk());
  ASSERT_TRUE(stored.has_value());
  ASSERT_THAT(*stored, IsOk());
  EXPECT_TRUE((*stored)->run.fire.manual);
  recorder_.WaitForEvent("yearly:1:2026-01-01T00:00:05Z:manual", "succeeded");

  absl::Notification unknown;
  scheduler_->TriggerJobAsync(Key("nope"), [&](absl::StatusOr<uint64_t> r) {
    EXPECT_THAT(r, StatusIs(absl::StatusCode::kNotFound));
    unknown.Notify();
  });
  ASSERT_TRUE(unknown.WaitForNotificationWithTimeout(absl::Seconds(10)));

  scheduler_->Shutdown(absl::ZeroDuration());
  bool answered = false;
  scheduler_->TriggerJobAsync(Key("yearly"), [&](absl::StatusOr<uint64_t> r) {
    EXPECT_THAT(r, StatusIs(absl::StatusCode::kFailedPrecondition));
    answered = true;
  });
  EXPECT_TRUE(answered);  // on this thread, before the call returned
}

}  // namespace
}  // namespace chime::driver::testing
