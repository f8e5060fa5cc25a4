// Every class of job file error, with the exact message a user sees.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/config/job_file.h"
#include "testing/status_matchers.h"

namespace chime::config {
namespace {

using ::chime::testing::StatusIs;

struct ErrorCase {
  const char* name;
  const char* text;
  const char* message;
};

// A valid job, for rows that break one thing after it.
#define GOOD_JOB                \
  "  - id: good\n"              \
  "    schedule: '0 * * * *'\n" \
  "    shell: 'true'\n"

const ErrorCase kErrors[] = {
    {"validator message points at the field",
     "jobs:\n" GOOD_JOB "  - id: flaky\n"
     "    schedule: '@hourly'\n"
     "    shell: 'true'\n"
     "    retry: { max_attempts: 0 }\n",
     "jobs/a.yaml:8:28: jobs[1].retry.max_attempts: 0 is below 1"},
    {"unknown choice lists the accepted ones",
     "jobs:\n"
     "  - id: a\n"
     "    schedule: '@hourly'\n"
     "    shell: 'true'\n"
     "    overlap: { policy: skp }\n",
     "jobs/a.yaml:5:24: jobs[0].overlap.policy: \"skp\" is not one of allow, "
     "skip, buffer_one, buffer_all, replace"},
    {"short form choice",
     "id: a\nschedule: '@hourly'\nshell: x\nmisfire: run_twice\n",
     "jobs/a.yaml:4:10: misfire: \"run_twice\" is not one of skip, run_once, "
     "run_all"},
    {"unknown key suggests the nearest and lists all",
     "jobs:\n"
     "  - id: a\n"
     "    schedule: '@hourly'\n"
     "    shell: 'true'\n"
     "    retry: { max_attempt: 3 }\n",
     "jobs/a.yaml:5:14: jobs[0].retry: unknown key \"max_attempt\" (did you "
     "mean \"max_attempts\"?); expected one of max_attempts, initial_backoff, "
     "multiplier, max_backoff, max_retry_duration, on_failure, on_timeout"},
    {"unknown job key",
     "id: a\nschedule: '@hourly'\nshell: x\nlables: {a: b}\n",
     "jobs/a.yaml:4:1: unknown key \"lables\" (did you mean \"labels\"?); "
     "expected one of id, namespace, schedule, at, zone, dialect, day_match, "
     "dst, start, end, jitter, misfire, overlap, retry, timeout, delivery, "
     "priority, labels, paused, shell, http"},
    {"unknown top-level key next to jobs", "jobs: []\ndefaults: {zone: UTC}\n",
     "jobs/a.yaml:2:1: unknown key \"defaults\"; expected one of jobs"},
    {"repeated key", "id: a\nschedule: '@hourly'\nshell: x\nid: b\n",
     "jobs/a.yaml:4:1: key \"id\" appears twice (first at 1:1)"},
    {"duration given a list",
     "id: a\nschedule: '@hourly'\nshell: x\njitter: [30s]\n",
     "jobs/a.yaml:4:9: jitter: expected a duration such as 30s, got a list"},
    {"duration without a unit",
     "id: a\nschedule: '@hourly'\nshell: x\ntimeout: {grace: 30}\n",
     "jobs/a.yaml:4:18: timeout.grace: duration \"30\" needs a unit after 30 "
     "(expected d, h, m, s or ms, e.g. 90s or 1h30m)"},
    {"negative duration", "id: a\nschedule: '@hourly'\nshell: x\njitter: -5s\n",
     "jobs/a.yaml:4:9: jitter: must not be negative"},
    {"repeated key in a flow mapping",
     "id: a\nschedule: '@hourly'\nshell: x\nretry: {max_attempts: 3, "
     "max_attempts: 4}\n",
     "jobs/a.yaml:4:26: retry: key \"max_attempts\" appears twice (first at "
     "4:9)"},
    {"empty value points at its key",
     "id: a\nschedule: '@hourly'\nshell: x\njitter:\npriority: 1\n",
     "jobs/a.yaml:4:1: jitter: expected a duration such as 30s, got nothing"},
    {"whole number", "id: a\nschedule: '@hourly'\nshell: x\npriority: high\n",
     "jobs/a.yaml:4:11: priority: expected a whole number, got \"high\""},
    {"boolean", "id: a\nschedule: '@hourly'\nshell: x\npaused: yes\n",
     "jobs/a.yaml:4:9: paused: expected true or false, got \"yes\""},
    {"size",
     "id: a\nschedule: '@hourly'\nshell: {command: x, output_limit: 64KB}\n",
     "jobs/a.yaml:3:35: shell.output_limit: expected a size in bytes such as "
     "65536, 64KiB or 1MiB, got \"64KB\""},
    {"time", "id: a\nat: 2026-12-24 18:00\nshell: x\n",
     "jobs/a.yaml:2:5: at: "},
    {"status range",
     "id: a\nschedule: '@hourly'\nhttp: {url: 'http://x', "
     "success_statuses: [2xx]}\n",
     "jobs/a.yaml:3:44: http.success_statuses[0]: expected a status such as "
     "200 or a range such as 200-299, got \"2xx\""},
    {"yaml syntax error is 1-based", "jobs:\n  - id: a\n    schedule: [1, 2\n",
     "jobs/a.yaml:4:1: invalid YAML: end of sequence flow not found"},
    {"unquoted cron expression",
     "jobs:\n  - id: a\n    schedule: */5 * * * *\n",
     "jobs/a.yaml:3:15: invalid YAML: the referenced anchor is not defined "
     "(quote a value that starts with *, e.g. schedule: \"*/5 * * * *\")"},
    {"unquoted macro", "id: a\nschedule: @daily\n",
     "jobs/a.yaml:2:11: invalid YAML: unknown token (quote a value that "
     "starts with @, e.g. schedule: \"*/5 * * * *\")"},
    {"two documents", "id: a\nschedule: '@hourly'\nshell: x\n---\nid: b\n",
     "jobs/a.yaml:5:1: a job file holds one YAML document; list several jobs "
     "under jobs:"},
    {"top level is not a job", "- id: a\n",
     "jobs/a.yaml:1:1: expected a job (a mapping with id, schedule and shell), "
     "got a list"},
    {"jobs is not a list", "jobs: {id: a}\n",
     "jobs/a.yaml:1:7: jobs: expected a list of jobs, got a mapping"},
    {"missing id", "jobs:\n" GOOD_JOB "  - schedule: '@hourly'\n    shell: x\n",
     "jobs/a.yaml:5:5: jobs[1]: missing id (the job's name, e.g. id: backup)"},
    {"missing executor", "jobs:\n  - id: a\n    schedule: '@hourly'\n",
     "jobs/a.yaml:2:5: jobs[0]: missing executor: shell (a command to run) or "
     "http (a request to make)"},
    {"two executors",
     "id: a\nschedule: '@hourly'\nshell: x\nhttp: {url: 'http://x'}\n",
     "jobs/a.yaml:4:7: http: a job has one executor, shell or http, not both"},
    {"missing schedule", "id: a\nshell: x\n",
     "jobs/a.yaml:1:1: missing schedule (a cron expression or @every "
     "interval) or at (a time to run once)"},
    {"schedule and at",
     "id: a\nschedule: '@hourly'\nat: 2026-12-24T18:00:00Z\nshell: x\n",
     "jobs/a.yaml:3:5: at: a job has schedule (to repeat) or at (to run "
     "once), not both"},
    {"zone with at",
     "id: a\nat: 2026-12-24T18:00:00Z\nzone: Europe/Berlin\nshell: x\n",
     "jobs/a.yaml:3:7: zone: applies only to a schedule; a job with at runs "
     "once at an absolute time"},
    {"unknown zone points at the zone",
     "id: a\nschedule: '0 9 * * *'\nzone: Europe/Berln\nshell: x\n",
     "jobs/a.yaml:3:7: zone: "},
    {"bad cron expression points at the schedule",
     "id: a\nschedule: '0 0 32 * *'\nshell: x\n",
     "jobs/a.yaml:2:11: schedule: day-of-month: 32 is outside 1-31 (field 3, "
     "column 5)"},
    {"validator field left at its default points at the enclosing key",
     "id: a\nschedule: '@hourly'\nshell: x\nretry:\n  initial_backoff: 10m\n",
     "jobs/a.yaml:5:3: retry.backoff: needs 0 <= initial_backoff <= "
     "max_backoff"},
    {"validator executor field",
     "id: a\nschedule: '@hourly'\nshell: {command: x, env: {1X: y}}\n",
     "jobs/a.yaml:3:26: shell.env: \"1X\" is not a variable name "
     "([A-Za-z_][A-Za-z0-9_]*)"},
    {"validator names the id", "id: a b\nschedule: '@hourly'\nshell: x\n",
     "jobs/a.yaml:1:5: id: \"a b\" must be 1-128 characters of A-Z a-z 0-9 . "
     "_ -"},
    {"same job twice in a file",
     "jobs:\n" GOOD_JOB "  - id: good\n    schedule: '@daily'\n    shell: x\n",
     "jobs/a.yaml:5:5: jobs[1]: job \"good\" is already defined at 2:5 "
     "(jobs[0])"},
};

TEST(ParseJobFile, ErrorsSayWhereWhatAndWhatWouldBeAccepted) {
  for (const ErrorCase& c : kErrors) {
    SCOPED_TRACE(c.name);
    const std::string message = c.message;
    // A row ending in ": " stops where another module's wording begins (time
    // parsing, zone lookup); the rest are exact.
    const ::testing::Matcher<std::string> matcher =
        message.back() == ' '
            ? ::testing::Matcher<std::string>(::testing::StartsWith(message))
            : ::testing::Matcher<std::string>(::testing::Eq(message));
    const absl::Status status = ParseJobFile("jobs/a.yaml", c.text).status();
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, matcher));
  }
}

}  // namespace
}  // namespace chime::config
