// Examples of JobToJson and JobToYaml: the exact text for small jobs, and for
// every kind of field and awkward string that both texts read back (with
// ParseJobFile) as the spec they were written from. What the format cannot
// express is checked to be refused rather than misread. The random round
// trips are in job_writer_property_test.cc.
#include "src/config/job_writer.h"

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/config/job_file.h"
#include "testing/job_specs.h"
#include "testing/status_matchers.h"

namespace chime {

// Failure messages show a spec as the YAML it is written as.
void PrintTo(const JobSpec& spec, std::ostream* os) {
  *os << "\n" << config::JobToYaml(spec);
}

namespace config {
namespace {

using ::chime::testing::CronJob;
using ::chime::testing::IsOk;
using ::chime::testing::IsOkAndHolds;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

absl::Time Utc(int y, int mo, int d, int h = 0, int mi = 0) {
  return absl::FromCivil(absl::CivilMinute(y, mo, d, h, mi),
                         absl::UTCTimeZone());
}

// The one job of a job file's text.
absl::StatusOr<JobSpec> ReadBack(absl::string_view text) {
  absl::StatusOr<std::vector<JobSpec>> jobs = ParseJobFile("job.yaml", text);
  if (!jobs.ok()) return jobs.status();
  if (jobs->size() != 1) return absl::InternalError("not one job");
  return jobs->front();
}

// `text` reads back as `spec` (printed as YAML when it does not).
void ExpectReadsBackAs(absl::string_view text, const JobSpec& spec) {
  absl::StatusOr<JobSpec> back = ReadBack(text);
  ASSERT_THAT(back, IsOk()) << text;
  EXPECT_EQ(*back, spec) << text;
}

// Both texts of a valid spec read back as the spec.
void ExpectRoundTrip(const JobSpec& spec) {
  ASSERT_THAT(ValidateJobSpec(spec), IsOk());
  ExpectReadsBackAs(JobToYaml(spec), spec);
  ExpectReadsBackAs(JobToJson(spec).dump(), spec);
}

JobSpec ShellJob(std::string command) {
  JobSpec spec = CronJob("nightly-report", "0 6 * * MON-FRI");
  spec.executor.kind = ExecutorSpec::Kind::kShell;
  spec.executor.shell.command = std::move(command);
  return spec;
}

// testing::EveryFieldSet made valid: a schedule job with a shell executor.
JobSpec EveryShellField() {
  JobSpec spec = ::chime::testing::EveryFieldSet();
  spec.trigger.kind = Trigger::Kind::kSchedule;
  spec.trigger.expression = "0 30 2 ? * MON-FRI";
  spec.trigger.at = absl::InfinitePast();
  spec.executor.shell.command.clear();
  spec.executor.http = HttpExecutorSpec();
  spec.source_file.clear();  // not a key of job files: the daemon sets it
  return spec;
}

TEST(JobToYaml, WritesASmallJobInTheShapeOfTheDocs) {
  EXPECT_EQ(JobToYaml(ShellJob("/opt/reports/run.sh")),
            "id: nightly-report\n"
            "schedule: \"0 6 * * MON-FRI\"\n"
            "shell: { command: /opt/reports/run.sh }\n");
  EXPECT_EQ(JobToJson(ShellJob("/opt/reports/run.sh")).dump(),
            R"({"id":"nightly-report","schedule":"0 6 * * MON-FRI",)"
            R"("shell":{"command":"/opt/reports/run.sh"}})");
}

TEST(JobToYaml, WritesTheDaylightSavingExampleOfTheDocs) {
  JobSpec spec = CronJob("nightly", "30 2 * * *");
  spec.key.name_space = "ops";
  spec.trigger.zone = "Europe/Berlin";
  spec.trigger.dst = {.gap = cron::GapPolicy::kSkip,
                      .repeat = cron::RepeatPolicy::kTwice};
  spec.executor.kind = ExecutorSpec::Kind::kShell;
  spec.executor.shell.argv = {"pg_dump", "--format=custom", "db name"};
  spec.executor.shell.env = {{"PGHOST", "db.internal"}, {"PGPORT", "5432"}};
  EXPECT_EQ(JobToYaml(spec),
            "id: nightly\n"
            "namespace: ops\n"
            "schedule: \"30 2 * * *\"\n"
            "zone: Europe/Berlin\n"
            "dst: { gap: skip, repeat: twice }\n"
            "shell:\n"
            "  argv: [pg_dump, --format=custom, db name]\n"
            "  env: { PGHOST: db.internal, PGPORT: \"5432\" }\n");
  ExpectRoundTrip(spec);
}

TEST(JobToYaml, WritesEveryFieldOfAShellJob) {
  const JobSpec spec = EveryShellField();
  EXPECT_EQ(JobToYaml(spec),
            "id: nightly\n"
            "namespace: batch\n"
            "schedule: \"0 30 2 ? * MON-FRI\"\n"
            "zone: Europe/Berlin\n"
            "dialect: quartz\n"
            "day_match: all\n"
            "dst: { gap: skip, repeat: twice }\n"
            "start: 2023-11-14T22:13:20Z\n"
            "end: 2030-03-17T17:46:40.123456789Z\n"
            "jitter: 1s500ms\n"
            "misfire: { policy: run_all, threshold: 5s, max_catchup: 7, "
            "catchup_window: 2h }\n"
            "overlap: { policy: buffer_all, max_buffered: 3 }\n"
            "retry:\n"
            "  max_attempts: 4\n"
            "  initial_backoff: 250ms\n"
            "  multiplier: 1.5\n"
            "  max_backoff: 2m\n"
            "  max_retry_duration: 1h\n"
            "  on_failure: false\n"
            "  on_timeout: false\n"
            "timeout: { attempt: 3m, grace: 1s }\n"
            "delivery: at_least_once\n"
            "priority: -3\n"
            "labels: { team: data, tier: \"\" }\n"
            "paused: true\n"
            "shell:\n"
            "  argv: [/usr/bin/backup, --all, \"\"]\n"
            "  working_dir: /var/backups\n"
            "  env: { EMPTY: \"\", MODE: full }\n"
            "  user: backup\n"
            "  group: staff\n"
            "  output_limit: 1234\n");
  ExpectRoundTrip(spec);
}

TEST(JobToJson, LeavesOutWhatIsAtItsDefault) {
  // A default JobSpec is not valid (no id, no schedule), but it is shown.
  EXPECT_EQ(JobToYaml(JobSpec()), "id: \"\"\nschedule: \"\"\n");
  JobSpec spec = ShellJob("true");
  spec.key.name_space = "default";
  spec.trigger.zone = "UTC";
  spec.retry.max_attempts = 3;  // the rest of the retry policy is default
  EXPECT_EQ(JobToJson(spec).dump(),
            R"({"id":"nightly-report","schedule":"0 6 * * MON-FRI",)"
            R"("retry":{"max_attempts":3},"shell":{"command":"true"}})");
}

TEST(JobToJson, WritesValuesInTheFormsTheReaderAccepts) {
  JobSpec spec = ShellJob("true");
  spec.jitter = absl::Seconds(90);
  spec.misfire.threshold = absl::Milliseconds(1500);
  spec.misfire.catchup_window = absl::Hours(36);
  spec.retry.max_retry_duration = absl::Hours(2) + absl::Milliseconds(1);
  spec.retry.multiplier = 3;
  spec.timeout.grace = absl::ZeroDuration();
  spec.start = Utc(2026, 12, 24, 18);
  spec.end = Utc(2027, 1, 1) + absl::Milliseconds(250);
  spec.executor.shell.output_limit = 2 << 20;
  const nlohmann::ordered_json j = JobToJson(spec);
  EXPECT_EQ(j["jitter"], "1m30s");
  EXPECT_EQ(j["misfire"]["threshold"], "1s500ms");
  EXPECT_EQ(j["misfire"]["catchup_window"], "1d12h");
  EXPECT_EQ(j["retry"]["max_retry_duration"], "2h1ms");
  EXPECT_EQ(j["retry"]["multiplier"].dump(), "3");
  EXPECT_EQ(j["timeout"]["grace"], "0s");
  EXPECT_EQ(j["start"], "2026-12-24T18:00:00Z");
  EXPECT_EQ(j["end"], "2027-01-01T00:00:00.25Z");
  EXPECT_EQ(j["shell"]["output_limit"], "2MiB");
  ExpectRoundTrip(spec);
}

TEST(JobToYaml, RoundTripsEachExecutor) {
  JobSpec command = ShellJob("pg_dump app > /var/backups/app.sql");
  ExpectRoundTrip(command);

  JobSpec argv = ShellJob("");
  argv.executor.shell.argv = {
      "sh", "-c", "echo \"a b\" 'c d' \\ e", "  two  spaces  ", "--flag=x y",
      "-",  "- x"};
  ExpectRoundTrip(argv);

  JobSpec http = CronJob("ping", "@every 5m");
  http.executor.kind = ExecutorSpec::Kind::kHttp;
  HttpExecutorSpec& h = http.executor.http;
  h.method = "GET";
  h.url = "https://status.example.com/ping?x=1#top";
  h.headers = {{"Authorization", "Bearer abc123"},
               {"Content-Type", "application/json"}};
  h.body = "{\"target\": \"docs\"}";
  h.verify_tls = false;
  h.success_statuses = {{200, 299}, {409, 409}};
  h.connect_timeout = absl::Seconds(5);
  h.response_limit = 4096;
  EXPECT_EQ(JobToYaml(http),
            "id: ping\n"
            "schedule: \"@every 5m\"\n"
            "http:\n"
            "  method: GET\n"
            "  url: https://status.example.com/ping?x=1#top\n"
            "  headers: { Authorization: Bearer abc123, Content-Type: "
            "application/json }\n"
            "  body: \"{\\\"target\\\": \\\"docs\\\"}\"\n"
            "  verify_tls: false\n"
            "  success_statuses: [\"200-299\", 409]\n"
            "  connect_timeout: 5s\n"
            "  response_limit: 4KiB\n");
  ExpectRoundTrip(http);
}

TEST(JobToYaml, RoundTripsEveryPolicyAwayFromItsDefault) {
  for (MisfireAction action : {MisfireAction::kSkip, MisfireAction::kRunAll}) {
    JobSpec spec = ShellJob("true");
    spec.misfire = {.action = action,
                    .threshold = absl::ZeroDuration(),
                    .max_catchup = 1,
                    .catchup_window = absl::Milliseconds(1)};
    ExpectRoundTrip(spec);
  }
  for (OverlapAction action :
       {OverlapAction::kAllow, OverlapAction::kBufferOne,
        OverlapAction::kBufferAll, OverlapAction::kReplace}) {
    JobSpec spec = ShellJob("true");
    spec.overlap = {.action = action, .max_buffered = 2147483647};
    ExpectRoundTrip(spec);
  }
  JobSpec spec = ShellJob("true");
  spec.retry = {.max_attempts = 10,
                .initial_backoff = absl::ZeroDuration(),
                .multiplier = 1.0000000000000002,
                .max_backoff = absl::Milliseconds(1'000'000'000'000'000),
                .max_retry_duration = absl::Milliseconds(1),
                .retry_on_failure = false,
                .retry_on_timeout = true};
  spec.timeout = {.attempt_timeout = absl::Milliseconds(1),
                  .grace = absl::Hours(1)};
  spec.delivery = Delivery::kAtLeastOnce;
  spec.priority = -2147483647 - 1;
  spec.paused = true;
  spec.jitter = absl::Milliseconds(999);
  ExpectRoundTrip(spec);
}

TEST(JobToYaml, RoundTripsTriggers) {
  JobSpec at = ShellJob("true");
  at.trigger = {.kind = Trigger::Kind::kAt,
                .at = Utc(2026, 12, 24, 18) + absl::Nanoseconds(1)};
  EXPECT_EQ(JobToYaml(at),
            "id: nightly-report\n"
            "at: 2026-12-24T18:00:00.000000001Z\n"
            "shell: { command: \"true\" }\n");
  ExpectRoundTrip(at);

  for (const char* expression :
       {"*/5 * * * *", "@daily", "CRON_TZ=America/New_York 0 9 * * *",
        "0 0 12 ? * MON#2 *", "0 15 10 L * ?"}) {
    JobSpec spec = ShellJob("true");
    spec.trigger.expression = expression;
    spec.trigger.zone = "Asia/Kolkata";
    spec.trigger.dialect = cron::Dialect::kAuto;
    spec.trigger.day_match = cron::DayMatch::kAll;
    spec.trigger.dst.gap = cron::GapPolicy::kSkip;
    spec.start = Utc(1, 1, 1);
    spec.end = Utc(9999, 12, 31, 23, 59) + absl::Nanoseconds(59999999999);
    ExpectRoundTrip(spec);
  }
}

// Strings that YAML would misread if they were written plain.
// clang-format off
const char* const kOddStrings[] = {
    "", " ", "yes", "No", "null", "~", "1.5", "007", "0x1F", "1:30", "-1",
    ".inf", "2026-01-01", "=", "<<", "*", "&anchor", "!tag", "@daily", "%x",
    "`x`", "|", ">", "-", "- item", "? key", ": x", "a: b", "a:", "a:?b",
    "a #b", "#comment", "---", "...", "[a, b]", "{a: b}", "a,b", "'single'",
    "\"double\"", "back\\slash", " leading", "trailing ", "tab\there",
    "line 1\nline 2", "line 1\nline 2\n", "\nleading break",
    "  indented\nx", "trailing breaks\n\n\n", "crlf\r\nline",
    "caf\u00e9 \u65e5\u672c", "emoji \U0001F600", "nbsp\u00a0x", "bom\ufeffx",
    "ls\u2028x", "ps\u2029x", "nel\u0085x", "del\x7fx", "c1\u0080x",
    "bell\x07x", "nonchar\uffffx", "nul\0x"};
// clang-format on

std::string Odd(const char* s) {
  // "nul\0x" is the one with an embedded NUL.
  return absl::string_view(s) == "nul" ? std::string("nul\0x", 5)
                                       : std::string(s);
}

TEST(JobToYaml, RoundTripsOddStringsWherePlainYamlWouldMisreadThem) {
  for (const char* raw : kOddStrings) {
    const std::string s = Odd(raw);
    SCOPED_TRACE(s);
    JobSpec spec = ShellJob(s.empty() ? "x" : s);
    spec.labels = {{s, s}, {"k", s}};
    spec.executor.shell.argv = {"x", s};
    spec.executor.shell.command.clear();
    spec.executor.shell.working_dir = s;
    spec.executor.shell.env = {{"V", s}};
    ExpectReadsBackAs(JobToYaml(spec), spec);

    JobSpec http = CronJob("h", "* * * * *");
    http.executor.kind = ExecutorSpec::Kind::kHttp;
    http.executor.http.url = "https://x/" + s;
    http.executor.http.body = s;
    ASSERT_THAT(ValidateJobSpec(http), IsOk());
    ExpectReadsBackAs(JobToYaml(http), http);
  }
}

TEST(JobToYaml, WritesTextThatSpansLinesAsALiteralBlock) {
  JobSpec spec = ShellJob("set -e\ncd /tmp\n  make all\n");
  EXPECT_EQ(JobToYaml(spec),
            "id: nightly-report\n"
            "schedule: \"0 6 * * MON-FRI\"\n"
            "shell:\n"
            "  command: |\n"
            "    set -e\n"
            "    cd /tmp\n"
            "      make all\n");
  ExpectRoundTrip(spec);
}

TEST(JobToJson, DumpsLabelsThatLibyamlRefusesAsJsonButNotAsYaml) {
  // A key over 1024 characters: JobToYaml writes it as an explicit key.
  JobSpec spec = ShellJob("true");
  spec.labels = {{std::string(1100, 'k'), "v"}};
  ExpectReadsBackAs(JobToYaml(spec), spec);
  EXPECT_THAT(ReadBack(JobToJson(spec).dump()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  spec.labels = {{"a\u2028b", "v"}};
  ExpectReadsBackAs(JobToYaml(spec), spec);
  EXPECT_THAT(ReadBack(JobToJson(spec).dump()),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(JobToJson, DumpsTextThatLibyamlReadsExceptWhereTheHeaderSaysNot) {
  JobSpec spec = ShellJob("caf\u00e9 \"q\" \\ \t\r\n\x01 / \U0001F600");
  ExpectRoundTrip(spec);
  // An escaped '/' and \u escapes, which nlohmann's dump() does not write
  // but other JSON writers do, read back too.
  EXPECT_THAT(ReadBack(R"({"id":"x","at":"2026-01-01T00:00:00Z",)"
                       R"("shell":{"command":"\/bin\/caf\u00e9"}})"),
              IsOkAndHolds(::testing::Field(
                  &JobSpec::executor,
                  ::testing::Field(&ExecutorSpec::shell,
                                   ::testing::Field(&ShellExecutorSpec::command,
                                                    "/bin/caf\u00e9")))));

  // U+0085 and U+2028 are line breaks to YAML: JobToYaml escapes them,
  // dump() does not.
  JobSpec breaks = ShellJob("a\u0085b \u2028");
  ExpectReadsBackAs(JobToYaml(breaks), breaks);
  JobSpec misread = breaks;
  misread.executor.shell.command = "a b\u2028";
  ExpectReadsBackAs(JobToJson(breaks).dump(), misread);
  EXPECT_THAT(ReadBack(JobToJson(ShellJob("a\x7f")).dump()),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(JobToYaml, WritesWhatTheFormatCannotExpressSoThatTheReaderRefusesIt) {
  const auto refused = [](const JobSpec& spec, absl::string_view why) {
    ASSERT_THAT(ValidateJobSpec(spec), IsOk());
    EXPECT_THAT(ReadBack(JobToYaml(spec)),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(why)))
        << JobToYaml(spec);
    EXPECT_THAT(ReadBack(JobToJson(spec).dump()),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(why)));
  };
  JobSpec function = CronJob("f", "@hourly");
  refused(function, "missing executor");
  JobSpec sub_ms = ShellJob("true");
  sub_ms.jitter = absl::Microseconds(1500);
  EXPECT_EQ(JobToJson(sub_ms)["jitter"], "1.5ms");
  refused(sub_ms, "jitter");
  JobSpec too_long = ShellJob("true");
  too_long.jitter = absl::Milliseconds(1'000'000'000'000'001);
  refused(too_long, "jitter");
  JobSpec both_triggers = ShellJob("true");
  both_triggers.trigger.at = Utc(2026, 1, 1);
  refused(both_triggers, "not both");
  JobSpec both_executors = ShellJob("true");
  both_executors.executor.http.url = "https://x.test/";
  refused(both_executors, "not both");
  JobSpec zone_at = ShellJob("true");
  zone_at.trigger.kind = Trigger::Kind::kAt;
  zone_at.trigger.expression.clear();
  zone_at.trigger.at = Utc(2026, 1, 1);
  zone_at.trigger.zone = "Europe/Berlin";
  refused(zone_at, "applies only to a schedule");
  JobSpec far = ShellJob("true");
  far.end =
      absl::FromCivil(absl::CivilSecond(10000, 1, 1), absl::UTCTimeZone());
  refused(far, "end");
}

TEST(JobToJson, HoldsStringsThatAreNotUtf8ButCannotDumpThem) {
  const JobSpec spec = ShellJob("caf\xe9");
  EXPECT_EQ(JobToJson(spec)["shell"]["command"], "caf\xe9");
  EXPECT_THROW(JobToJson(spec).dump(), nlohmann::json::type_error);
  EXPECT_THAT(ReadBack(JobToYaml(spec)),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(JobToYaml, DropsThePartOfATimeBelowANanosecond) {
  JobSpec spec = ShellJob("true");
  spec.start = Utc(2026, 1, 1) + absl::Nanoseconds(1) / 4;
  JobSpec truncated = spec;
  truncated.start = Utc(2026, 1, 1);
  ExpectReadsBackAs(JobToYaml(spec), truncated);
}

}  // namespace
}  // namespace config
}  // namespace chime
