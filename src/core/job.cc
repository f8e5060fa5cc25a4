#include "chime/job.h"

#include "absl/strings/str_cat.h"
#include "src/core/job_validation.h"
#include "src/time/rfc3339.h"

namespace chime {
namespace {

bool ValidName(absl::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

}  // namespace

std::string JobKey::ToString() const {
  return name_space == "default" ? id : absl::StrCat(name_space, "/", id);
}

std::string FireKey::ToString() const {
  std::string out = absl::StrCat(job.ToString(), ":", generation, ":");
  time::AppendUtc(scheduled_time, &out);
  if (manual) out += ":manual";
  return out;
}

absl::Status ValidateJobSpec(const JobSpec& spec) {
  return core::ValidateJobSpec(spec, [&]() -> absl::Status {
    const Trigger& t = spec.trigger;
    auto s =
        cron::Schedule::Parse(t.expression, {.dialect = t.dialect,
                                             .day_match = t.day_match,
                                             .zone = t.zone,
                                             .hash_key = spec.key.ToString(),
                                             .dst = t.dst});
    if (!s.ok()) return FieldError("trigger.schedule", s.status().message());
    return absl::OkStatus();
  });
}

absl::Status core::ValidateJobSpec(
    const JobSpec& spec, absl::FunctionRef<absl::Status()> check_schedule) {
  if (!ValidName(spec.key.name_space)) {
    return FieldError(
        "namespace",
        absl::StrCat("\"", spec.key.name_space,
                     "\" must be 1-128 characters of A-Z a-z 0-9 . _ -"));
  }
  if (!ValidName(spec.key.id)) {
    return FieldError(
        "id", absl::StrCat("\"", spec.key.id,
                           "\" must be 1-128 characters of A-Z a-z 0-9 . _ -"));
  }
  const Trigger& t = spec.trigger;
  if (t.kind == Trigger::Kind::kSchedule) {
    if (absl::Status s = check_schedule(); !s.ok()) return s;
  } else if (t.at == absl::InfinitePast() || t.at == absl::InfiniteFuture()) {
    return FieldError("trigger.at", "a one-shot trigger needs a finite time");
  }
  if (spec.end <= spec.start) return FieldError("end", "must be after start");
  if (spec.jitter < absl::ZeroDuration())
    return FieldError("jitter", "must not be negative");
  const MisfirePolicy& m = spec.misfire;
  if (m.threshold < absl::ZeroDuration()) {
    return FieldError("misfire.threshold", "must not be negative");
  }
  if (m.max_catchup < 1) {
    return FieldError("misfire.max_catchup",
                      absl::StrCat(m.max_catchup, " is below 1"));
  }
  if (m.catchup_window <= absl::ZeroDuration()) {
    return FieldError("misfire.catchup_window", "must be positive");
  }
  if (spec.overlap.max_buffered < 1) {
    return FieldError("overlap.max_buffered",
                      absl::StrCat(spec.overlap.max_buffered, " is below 1"));
  }
  const RetryPolicy& r = spec.retry;
  if (r.max_attempts < 1) {
    return FieldError("retry.max_attempts",
                      absl::StrCat(r.max_attempts, " is below 1"));
  }
  if (r.initial_backoff < absl::ZeroDuration() ||
      r.max_backoff < r.initial_backoff) {
    return FieldError("retry.backoff",
                      "needs 0 <= initial_backoff <= max_backoff");
  }
  if (!(r.multiplier >= 1.0 && r.multiplier <= 1000.0)) {
    return FieldError("retry.multiplier", "must be between 1 and 1000");
  }
  if (r.max_retry_duration <= absl::ZeroDuration()) {
    return FieldError("retry.max_retry_duration", "must be positive");
  }
  if (spec.timeout.attempt_timeout <= absl::ZeroDuration()) {
    return FieldError("timeout.attempt", "must be positive");
  }
  if (spec.timeout.grace < absl::ZeroDuration()) {
    return FieldError("timeout.grace", "must not be negative");
  }
  return absl::OkStatus();
}

}  // namespace chime
