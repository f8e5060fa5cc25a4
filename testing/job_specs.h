// Job specs for tests: the smallest spec with a given trigger.
#ifndef CHIME_TESTING_JOB_SPECS_H_
#define CHIME_TESTING_JOB_SPECS_H_

#include <string>
#include <utility>

#include "chime/job.h"

namespace chime::testing {

// Job `id` in the default namespace on the cron `expression`, every other
// field at its default.
inline JobSpec CronJob(std::string id, std::string expression) {
  JobSpec spec;
  spec.key.id = std::move(id);
  spec.trigger.expression = std::move(expression);
  return spec;
}

// A spec with every field away from its default (not all of them make sense
// together: both executors are filled in), for tests of encodings.
inline JobSpec EveryFieldSet() {
  JobSpec spec;
  spec.key = {"batch", "nightly"};
  spec.trigger.kind = Trigger::Kind::kAt;
  spec.trigger.expression = "30 2 * * *";
  spec.trigger.zone = "Europe/Berlin";
  spec.trigger.dialect = cron::Dialect::kQuartz;
  spec.trigger.day_match = cron::DayMatch::kAll;
  spec.trigger.dst.gap = cron::GapPolicy::kSkip;
  spec.trigger.dst.repeat = cron::RepeatPolicy::kTwice;
  spec.trigger.at = absl::FromUnixSeconds(1800000000);
  spec.start = absl::FromUnixSeconds(1700000000);
  spec.end = absl::FromUnixNanos(1900000000123456789);
  spec.jitter = absl::Milliseconds(1500);
  spec.misfire.action = MisfireAction::kRunAll;
  spec.misfire.threshold = absl::Seconds(5);
  spec.misfire.max_catchup = 7;
  spec.misfire.catchup_window = absl::Hours(2);
  spec.overlap.action = OverlapAction::kBufferAll;
  spec.overlap.max_buffered = 3;
  spec.retry.max_attempts = 4;
  spec.retry.initial_backoff = absl::Milliseconds(250);
  spec.retry.multiplier = 1.5;
  spec.retry.max_backoff = absl::Minutes(2);
  spec.retry.max_retry_duration = absl::Hours(1);
  spec.retry.retry_on_failure = false;
  spec.retry.retry_on_timeout = false;
  spec.timeout.attempt_timeout = absl::Minutes(3);
  spec.timeout.grace = absl::Seconds(1);
  spec.delivery = Delivery::kAtLeastOnce;
  spec.priority = -3;
  spec.labels = {{"team", "data"}, {"tier", ""}};
  spec.paused = true;
  ExecutorSpec& e = spec.executor;
  e.kind = ExecutorSpec::Kind::kShell;
  e.shell.argv = {"/usr/bin/backup", "--all", ""};
  e.shell.command = "backup --all";
  e.shell.working_dir = "/var/backups";
  e.shell.env = {{"MODE", "full"}, {"EMPTY", ""}};
  e.shell.user = "backup";
  e.shell.group = "staff";
  e.shell.output_limit = 1234;
  e.http.method = "PUT";
  e.http.url = "https://example.test/hook";
  e.http.headers = {{"Authorization", "Bearer x"}};
  e.http.body = std::string("{\"a\":1}\0\xff", 9);
  e.http.verify_tls = false;
  e.http.success_statuses = {{200, 299}, {409, 409}};
  e.http.connect_timeout = absl::Milliseconds(2500);
  e.http.response_limit = 99;
  spec.source_file = "jobs/nightly.yaml";
  return spec;
}

}  // namespace chime::testing

#endif  // CHIME_TESTING_JOB_SPECS_H_
