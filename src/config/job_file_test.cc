#include "src/config/job_file.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/job_specs.h"
#include "testing/status_matchers.h"

namespace chime::config {
namespace {

using ::chime::testing::CronJob;
using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

absl::Time Utc(int y, int mo, int d, int h = 0, int mi = 0) {
  return absl::FromCivil(absl::CivilMinute(y, mo, d, h, mi),
                         absl::UTCTimeZone());
}

constexpr absl::string_view kEveryField = R"yaml(
jobs:
  - id: backup
    namespace: ops
    schedule: "30 2 * * *"
    zone: Europe/Berlin
    dialect: vixie
    day_match: all
    dst: { gap: skip, repeat: twice }
    start: 2026-01-01T00:00:00Z
    end: 2027-01-01T01:00:00+01:00
    jitter: 30s
    misfire: { policy: run_all, threshold: 2m, max_catchup: 5, catchup_window: 12h }
    overlap: { policy: buffer_all, max_buffered: 7 }
    retry:
      max_attempts: 3
      initial_backoff: 500ms
      multiplier: 1.5
      max_backoff: 1h30m
      max_retry_duration: 1d
      on_failure: false
      on_timeout: FALSE
    timeout: { attempt: 10m, grace: 0 }
    delivery: at_least_once
    priority: -5
    labels: { team: data, tier: "1" }
    paused: true
    shell:
      argv: [pg_dump, --format=custom, "db name"]
      working_dir: /var/backups
      env: { PGHOST: db.internal, PGPORT: 5432 }
      user: postgres
      group: backup
      output_limit: 1MiB
  - id: ping
    at: 2026-12-24T18:00:00Z
    http:
      method: PUT
      url: https://example.com/hook
      headers: { Authorization: Bearer x, Content-Type: application/json }
      body: '{"ok": true}'
      verify_tls: false
      success_statuses: ["200-299", 409]
      connect_timeout: 5s
      response_limit: 4KiB
)yaml";

JobSpec ExpectedBackup() {
  JobSpec s;
  s.key = {.name_space = "ops", .id = "backup"};
  s.trigger.expression = "30 2 * * *";
  s.trigger.zone = "Europe/Berlin";
  s.trigger.dialect = cron::Dialect::kVixie;
  s.trigger.day_match = cron::DayMatch::kAll;
  s.trigger.dst = {.gap = cron::GapPolicy::kSkip,
                   .repeat = cron::RepeatPolicy::kTwice};
  s.start = Utc(2026, 1, 1);
  s.end = Utc(2027, 1, 1);
  s.jitter = absl::Seconds(30);
  s.misfire = {.action = MisfireAction::kRunAll,
               .threshold = absl::Minutes(2),
               .max_catchup = 5,
               .catchup_window = absl::Hours(12)};
  s.overlap = {.action = OverlapAction::kBufferAll, .max_buffered = 7};
  s.retry = {.max_attempts = 3,
             .initial_backoff = absl::Milliseconds(500),
             .multiplier = 1.5,
             .max_backoff = absl::Minutes(90),
             .max_retry_duration = absl::Hours(24),
             .retry_on_failure = false,
             .retry_on_timeout = false};
  s.timeout = {.attempt_timeout = absl::Minutes(10),
               .grace = absl::ZeroDuration()};
  s.delivery = Delivery::kAtLeastOnce;
  s.priority = -5;
  s.labels = {{"team", "data"}, {"tier", "1"}};
  s.paused = true;
  s.executor.kind = ExecutorSpec::Kind::kShell;
  s.executor.shell = {.argv = {"pg_dump", "--format=custom", "db name"},
                      .working_dir = "/var/backups",
                      .env = {{"PGHOST", "db.internal"}, {"PGPORT", "5432"}},
                      .user = "postgres",
                      .group = "backup",
                      .output_limit = 1 << 20};
  return s;
}

JobSpec ExpectedPing() {
  JobSpec s;
  s.key.id = "ping";
  s.trigger.kind = Trigger::Kind::kAt;
  s.trigger.at = Utc(2026, 12, 24, 18);
  s.executor.kind = ExecutorSpec::Kind::kHttp;
  s.executor.http = {.method = "PUT",
                     .url = "https://example.com/hook",
                     .headers = {{"Authorization", "Bearer x"},
                                 {"Content-Type", "application/json"}},
                     .body = R"({"ok": true})",
                     .verify_tls = false,
                     .success_statuses = {{200, 299}, {409, 409}},
                     .connect_timeout = absl::Seconds(5),
                     .response_limit = 4096};
  return s;
}

TEST(ParseJobFile, ReadsEveryFieldOfTheModel) {
  auto jobs = ParseJobFile("a.yaml", kEveryField);
  ASSERT_THAT(jobs, IsOk());
  EXPECT_THAT(*jobs, ElementsAre(ExpectedBackup(), ExpectedPing()));
}

TEST(ParseJobFile, ReportsWhereEachJobStarts) {
  auto jobs = ParseJobFileWithLocations("a.yaml", kEveryField);
  ASSERT_THAT(jobs, IsOk());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].line, 3);
  EXPECT_EQ((*jobs)[0].column, 5);
  EXPECT_EQ((*jobs)[0].field_path, "jobs[0]");
  EXPECT_EQ((*jobs)[1].line, 35);
  EXPECT_EQ((*jobs)[1].field_path, "jobs[1]");
}

TEST(ParseJobFile, SingleJobFileLeavesEverythingElseAtTheModelDefaults) {
  JobSpec expected = CronJob("nightly", "0 3 * * *");
  expected.executor.kind = ExecutorSpec::Kind::kShell;
  expected.executor.shell.command = "echo hi > /tmp/x";
  auto jobs = ParseJobFile("a.yaml",
                           "id: nightly\n"
                           "schedule: 0 3 * * *\n"
                           "shell: { command: echo hi > /tmp/x }\n");
  ASSERT_THAT(jobs, IsOk());
  EXPECT_THAT(*jobs, ElementsAre(expected));
  auto located = ParseJobFileWithLocations("a.yaml",
                                           "# nightly\nid: n\n"
                                           "schedule: '@daily'\n"
                                           "shell: 'true'\n");
  ASSERT_THAT(located, IsOk());
  EXPECT_EQ(located->at(0).line, 2);
  EXPECT_EQ(located->at(0).column, 1);
  EXPECT_EQ(located->at(0).field_path, "");
}

TEST(ParseJobFile, AcceptsShortForms) {
  auto jobs = ParseJobFile("a.yaml", R"yaml(
jobs:
  - id: a
    schedule: "@every 10m"
    shell: echo hi
    timeout: 5m
    overlap: replace
    misfire: skip
    jitter: 0s
  - id: b
    schedule: "*/5 * * * *"
    shell: [ls, -l, /tmp]
    timeout: { attempt: unlimited, grace: unlimited }
    retry: { max_retry_duration: unlimited, max_backoff: unlimited }
    misfire: { threshold: unlimited, catchup_window: unlimited }
)yaml");
  ASSERT_THAT(jobs, IsOk());
  ASSERT_EQ(jobs->size(), 2u);
  const JobSpec& a = (*jobs)[0];
  EXPECT_EQ(a.executor.shell.command, "echo hi");
  EXPECT_EQ(a.timeout.attempt_timeout, absl::Minutes(5));
  EXPECT_EQ(a.timeout.grace, TimeoutPolicy().grace);
  EXPECT_EQ(a.overlap.action, OverlapAction::kReplace);
  EXPECT_EQ(a.misfire.action, MisfireAction::kSkip);
  EXPECT_EQ(a.jitter, absl::ZeroDuration());
  const JobSpec& b = (*jobs)[1];
  EXPECT_THAT(b.executor.shell.argv, ElementsAre("ls", "-l", "/tmp"));
  EXPECT_EQ(b.timeout.attempt_timeout, absl::InfiniteDuration());
  EXPECT_EQ(b.timeout.grace, absl::InfiniteDuration());
  EXPECT_EQ(b.retry.max_backoff, absl::InfiniteDuration());
  EXPECT_EQ(b.misfire.threshold, absl::InfiniteDuration());
  EXPECT_EQ(b.misfire.catchup_window, absl::InfiniteDuration());
  EXPECT_EQ(b.retry.max_retry_duration, absl::InfiniteDuration());
}

TEST(ParseJobFile, SizesAndDurationsTakeTheirUnits) {
  auto jobs = ParseJobFile("a.yaml", R"yaml(
jobs:
  - id: a
    schedule: "@hourly"
    shell: { command: x, output_limit: 65536 }
    misfire: { threshold: 1d, catchup_window: 2h }
  - id: b
    schedule: "@hourly"
    shell: { command: x, output_limit: 2 KiB }
    timeout: 1h30m15s
)yaml");
  ASSERT_THAT(jobs, IsOk());
  EXPECT_EQ((*jobs)[0].executor.shell.output_limit, 65536);
  EXPECT_EQ((*jobs)[0].misfire.threshold, absl::Hours(24));
  EXPECT_EQ((*jobs)[0].misfire.catchup_window, absl::Hours(2));
  EXPECT_EQ((*jobs)[1].executor.shell.output_limit, 2048);
  EXPECT_EQ((*jobs)[1].timeout.attempt_timeout,
            absl::Hours(1) + absl::Minutes(30) + absl::Seconds(15));
}

TEST(ParseJobFile, FilesWithoutJobsAreEmpty) {
  for (const char* text : {"", "# all jobs retired\n", "jobs: []\n", "---\n"}) {
    SCOPED_TRACE(text);
    auto jobs = ParseJobFile("a.yaml", text);
    ASSERT_THAT(jobs, IsOk());
    EXPECT_THAT(*jobs, IsEmpty());
  }
}

TEST(ParseJobFile, ATrailingEmptyDocumentIsIgnored) {
  auto jobs =
      ParseJobFile("a.yaml", "id: a\nschedule: '@daily'\nshell: x\n---\n");
  ASSERT_THAT(jobs, IsOk());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].key.id, "a");
}

}  // namespace
}  // namespace chime::config
