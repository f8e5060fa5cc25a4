// The interceptor chain around every attempt, the rule that turns an attempt's
// result into the outcome the Plan is told, and the two built-in interceptors:
// logging and metrics.
//
//   auto metrics = std::make_shared<chime::driver::MetricsInterceptor>(clock);
//   auto logging = std::make_shared<chime::driver::LoggingInterceptor>(
//       clock, [](absl::string_view line) { LOG(INFO) << line; });
//   // The logger outermost: the metrics' durations exclude the logging.
//   options.interceptors = {logging, metrics};
//   ...
//   metrics->snapshot().failed
//
// Thread-safety: every class here may be used from any number of worker threads
// at once.
#ifndef CHIME_SRC_DRIVER_INTERCEPTORS_H_
#define CHIME_SRC_DRIVER_INTERCEPTORS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "chime/clock.h"
#include "chime/scheduler.h"
#include "src/core/plan.h"

namespace chime::driver {

// What an attempt that returned `status` reports to the Plan; `cancelled` is
// the attempt's flag when it returned:
//   - OK: kSucceeded (its work is done, even if it was asked to stop);
//   - an error after `cancelled` was set: kCancelled (the Plan records a
//     timeout instead when its own timeout set the flag);
//   - DeadlineExceeded: kTimedOut (the function's own deadline passed);
//   - any other error: kFailed.
core::AttemptOutcome ClassifyAttempt(const absl::Status& status,
                                     bool cancelled);
// "succeeded", "failed", "timed_out", "cancelled".
absl::string_view AttemptOutcomeName(core::AttemptOutcome outcome);

// The interceptors of a scheduler, outermost first, around a job function.
// Built once.
class InterceptorChain {
 public:
  // REQUIRES: no element is null.
  explicit InterceptorChain(
      std::vector<std::shared_ptr<Interceptor>> interceptors);

  // Runs the interceptors in order, then `fn`, and returns what the outermost
  // returned. No exception escapes: one thrown by `fn` reaches the interceptors
  // as Internal("job function threw: <what>"), one thrown by an interceptor is
  // returned as such. An interceptor that calls `next` a second time gets
  // FailedPrecondition, and the rest of the chain does not run again.
  absl::Status Run(const AttemptContext& ctx, const JobFunction& fn) const;

 private:
  absl::Status RunFrom(size_t i, const AttemptContext& ctx,
                       const JobFunction& fn) const;

  std::vector<std::shared_ptr<Interceptor>> interceptors_;
};

// Writes one line when an attempt starts and one when it ends, to `sink` (the
// second line is wrapped here):
//   start report:1:2026-11-30T08:00:00Z attempt=1 token=1
//   end report:1:2026-11-30T08:00:00Z attempt=1 outcome=failed duration=2.5s
//       error=disk full
// The duration is measured on `clock`'s monotonic time. `sink` is called on
// worker threads, concurrently for concurrent attempts.
class LoggingInterceptor final : public Interceptor {
 public:
  using Sink = std::function<void(absl::string_view line)>;
  LoggingInterceptor(Clock& clock, Sink sink)
      : clock_(clock), sink_(std::move(sink)) {}

  absl::Status Intercept(
      const AttemptContext& ctx,
      const std::function<absl::Status(const AttemptContext&)>& next) override;

 private:
  Clock& clock_;
  const Sink sink_;
};

// Counts attempts by outcome (ClassifyAttempt on what the rest of the chain
// returned) and sums their durations on `clock`'s monotonic time. An attempt
// cancelled by a timeout counts as cancelled here: from inside the chain a
// timeout and any other cancel look alike.
class MetricsInterceptor final : public Interceptor {
 public:
  struct Snapshot {
    int64_t started = 0;
    int64_t succeeded = 0;
    int64_t failed = 0;
    int64_t timed_out = 0;
    int64_t cancelled = 0;
    absl::Duration duration_sum;  // of finished attempts
    int64_t finished() const {
      return succeeded + failed + timed_out + cancelled;
    }
  };

  explicit MetricsInterceptor(Clock& clock) : clock_(clock) {}

  absl::Status Intercept(
      const AttemptContext& ctx,
      const std::function<absl::Status(const AttemptContext&)>& next) override;

  Snapshot snapshot() const;

 private:
  Clock& clock_;
  mutable absl::Mutex mu_;
  Snapshot counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_INTERCEPTORS_H_
