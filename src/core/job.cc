#include "chime/job.h"

#include "absl/strings/match.h"
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

bool ValidEnvName(absl::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// An HTTP token (RFC 9110): method and header names.
bool ValidToken(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') ||
        absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

constexpr int64_t kMaxKeptOutput = int64_t{64} << 20;

absl::Status ValidateShell(const ShellExecutorSpec& s) {
  if (s.argv.empty() == s.command.empty()) {
    return FieldError("executor.shell",
                      "needs exactly one of argv (a list) and command (a "
                      "string run by /bin/sh -c)");
  }
  if (!s.argv.empty() && s.argv[0].empty()) {
    return FieldError("executor.shell.argv", "argv[0] is empty");
  }
  for (const auto& [name, value] : s.env) {
    if (!ValidEnvName(name)) {
      return FieldError("executor.shell.env",
                        absl::StrCat("\"", name,
                                     "\" is not a variable name "
                                     "([A-Za-z_][A-Za-z0-9_]*)"));
    }
  }
  if (s.output_limit < 0 || s.output_limit > kMaxKeptOutput) {
    return FieldError("executor.shell.output_limit",
                      absl::StrCat(s.output_limit, " is outside 0..",
                                   kMaxKeptOutput, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status ValidateHttp(const HttpExecutorSpec& h) {
  if (!ValidToken(h.method)) {
    return FieldError("executor.http.method",
                      absl::StrCat("\"", h.method, "\" is not an HTTP method"));
  }
  if (!absl::StartsWith(h.url, "http://") &&
      !absl::StartsWith(h.url, "https://")) {
    return FieldError(
        "executor.http.url",
        absl::StrCat("\"", h.url, "\" must start with http:// or https://"));
  }
  for (const auto& [name, value] : h.headers) {
    if (!ValidToken(name)) {
      return FieldError("executor.http.headers",
                        absl::StrCat("\"", name, "\" is not a header name"));
    }
    if (value.find_first_of("\r\n") != std::string::npos) {
      return FieldError("executor.http.headers",
                        absl::StrCat(name, ": the value has a line break"));
    }
  }
  for (const auto& [lo, hi] : h.success_statuses) {
    if (lo < 100 || hi > 599 || lo > hi) {
      return FieldError(
          "executor.http.success_statuses",
          absl::StrCat(lo, "-", hi, " is not a range within 100-599"));
    }
  }
  if (h.connect_timeout <= absl::ZeroDuration()) {
    return FieldError("executor.http.connect_timeout", "must be positive");
  }
  if (h.response_limit < 0 || h.response_limit > kMaxKeptOutput) {
    return FieldError("executor.http.response_limit",
                      absl::StrCat(h.response_limit, " is outside 0..",
                                   kMaxKeptOutput, " bytes"));
  }
  return absl::OkStatus();
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
  if (spec.jitter == absl::InfiniteDuration())
    return FieldError("jitter", "must be finite");
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
  switch (spec.executor.kind) {
    case ExecutorSpec::Kind::kFunction:
      return absl::OkStatus();
    case ExecutorSpec::Kind::kShell:
      return ValidateShell(spec.executor.shell);
    case ExecutorSpec::Kind::kHttp:
      return ValidateHttp(spec.executor.http);
  }
  return absl::OkStatus();
}

}  // namespace chime
