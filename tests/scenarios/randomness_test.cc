// The random choices of the Plan, checked over many draws rather than one
// scenario: retry backoff is "full jitter" (uniform over [0, cap], the cap
// growing exponentially up to max_backoff), and start jitter is uniform over
// [scheduled, scheduled + jitter].
#include <algorithm>
#include <map>
#include <vector>

#include "gtest/gtest.h"
#include "tests/scenarios/sim_driver.h"

namespace chime::scenarios {
namespace {

const absl::Time kSpreadStart = absl::FromCivil(
    absl::CivilSecond(2026, 1, 1, 0, 0, 0), absl::UTCTimeZone());

struct Spread {
  double min = 1e300, max = 0, sum = 0;
  int n = 0;
  void Add(double x) {
    min = std::min(min, x);
    max = std::max(max, x);
    sum += x;
    ++n;
  }
  double mean() const { return sum / n; }
};

// Checks that `s` looks like n draws of uniform[0, cap]: within bounds,
// reaching both ends, centred. For n = 1000 the mean's standard deviation is
// cap / sqrt(12000), under 1% of cap; the 5% tolerance fails only for a real
// bias.
void ExpectUniform(const Spread& s, double cap, const char* what) {
  SCOPED_TRACE(what);
  ASSERT_GE(s.n, 1000);
  EXPECT_GE(s.min, 0);
  EXPECT_LE(s.max, cap);
  EXPECT_LT(s.min, 0.02 * cap);
  EXPECT_GT(s.max, 0.98 * cap);
  EXPECT_NEAR(s.mean(), cap / 2, 0.05 * cap);
}

TEST(RetryBackoff, EachDelayIsUniformUpToTheExponentialCapBoundedByMaxBackoff) {
  SimDriver driver(kSpreadStart);
  driver.set_logging(false);
  driver.SetExecutorConfig(
      ExecutorConfig{.finish_after = absl::Milliseconds(10),
                     .outcomes = {{core::AttemptOutcome::kFailed, "exit 1"}}});
  // When each attempt failed and the next one started, by run.
  std::map<core::RunId, std::vector<MonoTime>> failed, started;
  driver.on_action = [&](const core::Action& a) {
    if (const auto* t = std::get_if<core::TransitionAction>(&a)) {
      if (t->to == core::RunState::kRetrying)
        failed[t->run].push_back(driver.now().mono);
    } else if (const auto* s = std::get_if<core::StartAttemptAction>(&a)) {
      if (s->attempt > 1) started[s->run].push_back(driver.now().mono);
    }
  };
  JobSpec spec;
  spec.key.id = "flaky";
  spec.trigger.expression = "* * * * *";
  spec.retry.max_attempts = 4;
  spec.retry.initial_backoff = absl::Seconds(10);
  spec.retry.multiplier = 2;
  spec.retry.max_backoff =
      absl::Seconds(25);  // caps: 10s, 20s, then 25s instead of 40s
  ASSERT_TRUE(
      driver
          .Call([&](core::Plan& plan, core::Now now, core::Output* out) {
            return plan.UpsertJob(spec, now, out);
          })
          .ok());
  ASSERT_TRUE(driver.AdvanceBy(absl::Minutes(1200)).ok());

  Spread delay[3];
  for (const auto& [run, fails] : failed) {
    const std::vector<MonoTime>& starts = started[run];
    ASSERT_EQ(fails.size(), 3u)
        << "run " << run;  // attempts 1-3 retried, 4 exhausted
    ASSERT_EQ(starts.size(), 3u) << "run " << run;
    for (int i = 0; i < 3; ++i)
      delay[i].Add(absl::ToDoubleSeconds(starts[i] - fails[i]));
  }
  ExpectUniform(delay[0], 10, "after attempt 1");
  ExpectUniform(delay[1], 20, "after attempt 2");
  ExpectUniform(delay[2], 25, "after attempt 3 (max_backoff)");
  EXPECT_EQ(driver.plan().counters().runs_failed,
            static_cast<int64_t>(failed.size()));
}

TEST(Jitter, StartsAreUniformOverTheWindowAndFireIdsKeepTheScheduledTime) {
  SimDriver driver(kSpreadStart);
  driver.set_logging(false);
  driver.SetExecutorConfig(ExecutorConfig{.finish_after = absl::Seconds(1)});
  Spread offset;
  int64_t off_schedule_ids = 0;
  driver.on_action = [&](const core::Action& a) {
    if (const auto* s = std::get_if<core::StartAttemptAction>(&a)) {
      offset.Add(
          absl::ToDoubleSeconds(driver.now().wall - s->fire.scheduled_time));
      if (absl::ToUnixSeconds(s->fire.scheduled_time) % 120 != 0)
        ++off_schedule_ids;
    }
  };
  JobSpec spec;
  spec.key.id = "spread";
  spec.trigger.expression = "*/2 * * * *";
  spec.jitter = absl::Seconds(90);
  ASSERT_TRUE(
      driver
          .Call([&](core::Plan& plan, core::Now now, core::Output* out) {
            return plan.UpsertJob(spec, now, out);
          })
          .ok());
  ASSERT_TRUE(driver.AdvanceBy(absl::Minutes(2 * 1200)).ok());
  ExpectUniform(offset, 90, "start offset");
  EXPECT_EQ(off_schedule_ids, 0);
}

}  // namespace
}  // namespace chime::scenarios
