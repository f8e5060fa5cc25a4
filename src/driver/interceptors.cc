#include "src/driver/interceptors.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace chime::driver {
namespace {

absl::Status FromException(absl::string_view who) {
  try {
    throw;
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(who, " threw: ", e.what()));
  } catch (...) {
    return absl::InternalError(
        absl::StrCat(who, " threw a non-standard exception"));
  }
}

}  // namespace

core::AttemptOutcome ClassifyAttempt(const absl::Status& status,
                                     bool cancelled) {
  if (status.ok()) return core::AttemptOutcome::kSucceeded;
  if (cancelled) return core::AttemptOutcome::kCancelled;
  if (absl::IsDeadlineExceeded(status)) return core::AttemptOutcome::kTimedOut;
  return core::AttemptOutcome::kFailed;
}

absl::string_view AttemptOutcomeName(core::AttemptOutcome outcome) {
  switch (outcome) {
    case core::AttemptOutcome::kSucceeded:
      return "succeeded";
    case core::AttemptOutcome::kFailed:
      return "failed";
    case core::AttemptOutcome::kTimedOut:
      return "timed_out";
    case core::AttemptOutcome::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

// ---------------------------------------------------------------- chain

InterceptorChain::InterceptorChain(
    std::vector<std::shared_ptr<Interceptor>> interceptors)
    : interceptors_(std::move(interceptors)) {
  for (const auto& i : interceptors_) {
    if (i == nullptr) {
      std::fprintf(stderr,
                   "chime::driver::InterceptorChain: null interceptor\n");
      std::abort();
    }
  }
}

absl::Status InterceptorChain::Run(const AttemptContext& ctx,
                                   const JobFunction& fn) const {
  return RunFrom(0, ctx, fn);
}

absl::Status InterceptorChain::RunFrom(size_t i, const AttemptContext& ctx,
                                       const JobFunction& fn) const {
  if (i == interceptors_.size()) {
    try {
      return fn(ctx);
    } catch (...) {
      return FromException("job function");
    }
  }
  bool called = false;
  const std::function<absl::Status(const AttemptContext&)> next =
      [&](const AttemptContext& inner) -> absl::Status {
    if (called) {
      return absl::FailedPreconditionError(
          absl::StrCat("interceptor ", i, " called next more than once"));
    }
    called = true;
    return RunFrom(i + 1, inner, fn);
  };
  try {
    return interceptors_[i]->Intercept(ctx, next);
  } catch (...) {
    return FromException(absl::StrCat("interceptor ", i));
  }
}

// ---------------------------------------------------------------- logging

absl::Status LoggingInterceptor::Intercept(
    const AttemptContext& ctx,
    const std::function<absl::Status(const AttemptContext&)>& next) {
  sink_(absl::StrCat("start ", ctx.fire_id(), " attempt=", ctx.attempt,
                     " token=", ctx.fencing_token));
  const MonoTime start = clock_.MonoNow();
  absl::Status status = next(ctx);
  std::string line = absl::StrCat(
      "end ", ctx.fire_id(), " attempt=", ctx.attempt, " outcome=",
      AttemptOutcomeName(ClassifyAttempt(status, ctx.IsCancelled())),
      " duration=", absl::FormatDuration(clock_.MonoNow() - start));
  if (!status.ok()) absl::StrAppend(&line, " error=", status.message());
  sink_(line);
  return status;
}

// ---------------------------------------------------------------- metrics

absl::Status MetricsInterceptor::Intercept(
    const AttemptContext& ctx,
    const std::function<absl::Status(const AttemptContext&)>& next) {
  {
    absl::MutexLock lock(&mu_);
    ++counts_.started;
  }
  const MonoTime start = clock_.MonoNow();
  absl::Status status = next(ctx);
  const absl::Duration took = clock_.MonoNow() - start;
  absl::MutexLock lock(&mu_);
  switch (ClassifyAttempt(status, ctx.IsCancelled())) {
    case core::AttemptOutcome::kSucceeded:
      ++counts_.succeeded;
      break;
    case core::AttemptOutcome::kFailed:
      ++counts_.failed;
      break;
    case core::AttemptOutcome::kTimedOut:
      ++counts_.timed_out;
      break;
    case core::AttemptOutcome::kCancelled:
      ++counts_.cancelled;
      break;
  }
  counts_.duration_sum += took;
  return status;
}

MetricsInterceptor::Snapshot MetricsInterceptor::snapshot() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

}  // namespace chime::driver
