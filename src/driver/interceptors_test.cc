#include "src/driver/interceptors.h"

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/driver/scheduler_test_util.h"
#include "testing/simulated_clock.h"
#include "testing/status_matchers.h"

namespace chime::driver::testing {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Appends "<name> before" and "<name> after" around the rest of the chain; when
// `refuse` is set, returns PermissionDenied without calling it.
class Tracing final : public Interceptor {
 public:
  Tracing(std::string name, std::vector<std::string>* log, absl::Mutex* mu)
      : name_(std::move(name)), log_(log), mu_(mu) {}
  std::atomic<bool> refuse{false};

  absl::Status Intercept(
      const AttemptContext& ctx,
      const std::function<absl::Status(const AttemptContext&)>& next) override {
    Append(name_ + " before");
    if (refuse) return absl::PermissionDeniedError("maintenance window");
    absl::Status s = next(ctx);
    Append(name_ + " after");
    return s;
  }

 private:
  void Append(std::string line) {
    absl::MutexLock lock(mu_);
    log_->push_back(std::move(line));
  }
  std::string name_;
  std::vector<std::string>* log_;
  absl::Mutex* mu_;
};

TEST_F(SchedulerTest,
       InterceptorsWrapEveryAttemptOutermostFirstAndMayShortCircuit) {
  absl::Mutex mu;
  std::vector<std::string> log;
  auto outer = std::make_shared<Tracing>("outer", &log, &mu);
  auto inner = std::make_shared<Tracing>("inner", &log, &mu);
  SchedulerOptions options;
  options.interceptors = {outer, inner};
  Create(options);
  ASSERT_THAT(scheduler_->AddJob(Cron("a", "* * * * *"),
                                 [&](const AttemptContext&) {
                                   absl::MutexLock lock(&mu);
                                   log.push_back("fn");
                                   return absl::OkStatus();
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)), "succeeded");
  {
    absl::MutexLock lock(&mu);
    EXPECT_THAT(log, ElementsAre("outer before", "inner before", "fn",
                                 "inner after", "outer after"));
    log.clear();
  }
  inner->refuse = true;
  AdvanceTo(absl::Minutes(2));
  const RunEvent failed =
      recorder_.WaitForEvent(FireId("a", absl::Minutes(2)), "failed");
  EXPECT_THAT(failed.detail, HasSubstr("maintenance window"));
  absl::MutexLock lock(&mu);
  EXPECT_THAT(log, ElementsAre("outer before", "inner before", "outer after"));
}

AttemptContext Context() {
  AttemptContext ctx;
  ctx.fire = FireKey{Key("report"), 1, Wall(absl::Hours(8))};
  ctx.attempt = 2;
  ctx.fencing_token = 7;
  return ctx;
}

TEST(InterceptorChain, ExceptionsBecomeInternalErrors) {
  InterceptorChain chain({});
  const JobFunction throws = [](const AttemptContext&) -> absl::Status {
    throw std::runtime_error("boom");
  };
  EXPECT_THAT(chain.Run(Context(), throws),
              StatusIs(absl::StatusCode::kInternal,
                       HasSubstr("job function threw: boom")));
}

class CallsNextTwice final : public Interceptor {
 public:
  absl::Status Intercept(
      const AttemptContext& ctx,
      const std::function<absl::Status(const AttemptContext&)>& next) override {
    (void)next(ctx);
    return next(ctx);
  }
};

TEST(InterceptorChain, SecondCallOfNextIsRefused) {
  InterceptorChain chain({std::make_shared<CallsNextTwice>()});
  int calls = 0;
  const JobFunction count = [&](const AttemptContext&) {
    ++calls;
    return absl::OkStatus();
  };
  EXPECT_THAT(chain.Run(Context(), count),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(calls, 1);
}

TEST(ClassifyAttempt, MapsResultAndCancelFlagToTheOutcome) {
  using core::AttemptOutcome;
  EXPECT_EQ(ClassifyAttempt(absl::OkStatus(), false),
            AttemptOutcome::kSucceeded);
  EXPECT_EQ(ClassifyAttempt(absl::OkStatus(), true),
            AttemptOutcome::kSucceeded);
  EXPECT_EQ(ClassifyAttempt(absl::InternalError("x"), false),
            AttemptOutcome::kFailed);
  EXPECT_EQ(ClassifyAttempt(absl::InternalError("x"), true),
            AttemptOutcome::kCancelled);
  EXPECT_EQ(ClassifyAttempt(absl::DeadlineExceededError("x"), false),
            AttemptOutcome::kTimedOut);
  EXPECT_EQ(ClassifyAttempt(absl::DeadlineExceededError("x"), true),
            AttemptOutcome::kCancelled);
}

// A job function that takes `d` of simulated time (the test thread is the only
// one moving it).
JobFunction Takes(SimulatedClock& clock, absl::Duration d,
                  absl::Status result) {
  return [&clock, d, result](const AttemptContext&) {
    clock.AdvanceBy(d);
    return result;
  };
}

TEST(LoggingInterceptor, WritesOneLineAtStartAndOneAtEnd) {
  SimulatedClock clock;
  std::vector<std::string> lines;
  InterceptorChain chain({std::make_shared<LoggingInterceptor>(
      clock, [&](absl::string_view line) { lines.emplace_back(line); })});
  EXPECT_THAT(chain.Run(Context(), Takes(clock, absl::Milliseconds(2500),
                                         absl::UnavailableError("disk full"))),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(
      lines,
      ElementsAre("start report:1:2026-01-01T08:00:00Z attempt=2 token=7",
                  "end report:1:2026-01-01T08:00:00Z attempt=2 outcome=failed "
                  "duration=2.5s error=disk full"));
}

TEST(MetricsInterceptor, CountsAttemptsByOutcomeAndSumsTheirDurations) {
  SimulatedClock clock;
  auto metrics = std::make_shared<MetricsInterceptor>(clock);
  InterceptorChain chain({metrics});
  std::atomic<bool> cancelled{false};
  AttemptContext ctx = Context();
  ctx.cancelled = &cancelled;
  (void)chain.Run(ctx, Takes(clock, absl::Seconds(1), absl::OkStatus()));
  (void)chain.Run(ctx,
                  Takes(clock, absl::Seconds(2), absl::InternalError("x")));
  (void)chain.Run(
      ctx, Takes(clock, absl::Seconds(3), absl::DeadlineExceededError("x")));
  cancelled = true;
  (void)chain.Run(ctx,
                  Takes(clock, absl::Seconds(4), absl::CancelledError("x")));
  const MetricsInterceptor::Snapshot s = metrics->snapshot();
  EXPECT_EQ(s.started, 4);
  EXPECT_EQ(s.succeeded, 1);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.timed_out, 1);
  EXPECT_EQ(s.cancelled, 1);
  EXPECT_EQ(s.finished(), 4);
  EXPECT_EQ(s.duration_sum, absl::Seconds(10));
}

}  // namespace
}  // namespace chime::driver::testing
