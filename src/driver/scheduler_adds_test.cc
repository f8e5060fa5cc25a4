// A burst of adds: the scheduler thread applies them a slice at a time
// (SchedulerImpl::kAddsPerPass), looking at its timers in between, yet a
// command still sees every AddJob made before it, and a shutdown writes
// every job added.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "src/driver/scheduler_test_util.h"
#include "testing/status_matchers.h"

namespace chime::driver::testing {
namespace {

using ::chime::testing::IsOk;

// Several slices' worth, added faster than the scheduler thread applies
// them (each add also writes the job to the store).
constexpr int kBurst = 8 * 1024;

std::string Name(int i) { return absl::StrCat("j", i); }

// Adds kBurst yearly jobs j0, j1, ... sharing `fn`, as fast as AddJob takes
// them.
void AddBurst(Scheduler& scheduler, JobFunction fn) {
  const auto shared = std::make_shared<const JobFunction>(std::move(fn));
  for (int i = 0; i < kBurst; ++i) {
    ASSERT_THAT(scheduler.AddJob(Cron(Name(i), "0 0 1 1 *"), shared), IsOk());
  }
}

TEST_F(SchedulerTest, ACommandAfterABurstOfAddsSeesEveryOne) {
  Create();
  ASSERT_THAT(scheduler_->Start(), IsOk());
  ASSERT_NO_FATAL_FAILURE(AddBurst(*scheduler_, Returns({})));
  // Right away: the last add is still queued or being applied.
  ASSERT_THAT(scheduler_->PauseJob(Key(Name(kBurst - 1))), IsOk());
  absl::StatusOr<JobSpec> last = scheduler_->GetJob(Key(Name(kBurst - 1)));
  ASSERT_THAT(last, IsOk());
  EXPECT_TRUE(last->paused);
  absl::StatusOr<SchedulerStats> stats = scheduler_->Stats();
  ASSERT_THAT(stats, IsOk());
  EXPECT_EQ(stats->jobs, kBurst);
}

TEST_F(SchedulerTest, AShutdownRightAfterABurstOfAddsStoresEveryJob) {
  Create();
  ASSERT_THAT(scheduler_->Start(), IsOk());
  ASSERT_NO_FATAL_FAILURE(AddBurst(*scheduler_, Returns({})));
  scheduler_->Shutdown(absl::ZeroDuration());
  int stored = 0;
  for (int i = 0; i < kBurst; ++i) {
    if (IdOf(Key(Name(i))) != 0) ++stored;
  }
  EXPECT_EQ(stored, kBurst);
}

}  // namespace
}  // namespace chime::driver::testing
