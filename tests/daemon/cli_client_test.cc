// `chime job ...` and `chime run ...` against the real daemon, run in
// process (cli::RunCli) with the daemon on 127.0.0.1.
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/app.h"
#include "cli/job_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/cli_runner.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using Result = CliResult;

class CliClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("jobs/jobs.yaml", R"(
jobs:
  - id: report
    namespace: ops
    schedule: "30 2 * * *"
    zone: Europe/Berlin
    labels: { team: data }
    retry: { max_attempts: 3, initial_backoff: 10s }
    shell: { command: "echo report-output" }
  - id: idle
    schedule: "0 0 1 1 *"
    paused: true
    shell: { command: "true" }
)");
    dir_.Write("chime.yaml", R"(
api_tokens:
  - { name: reader, role: read, token: reader-0123456789abcdef }
  - { name: ci, role: write, token: writer-0123456789abcdef }
  - { name: ops, role: admin, token: admin-0123456789abcdef }
)");
    auto d =
        DaemonProcess::StartIn(dir_, {"--config", dir_.path() + "/chime.yaml"});
    ASSERT_TRUE(d.ok()) << d.status();
    daemon_ = *std::move(d);
    server_ = absl::StrCat("http://127.0.0.1:", daemon_->port());
    // The jobs reach the store behind the load.
    for (int i = 0; i < 100; ++i) {
      if (Chime({"job", "list", "--token", kWriter}).out.find("ops/report") !=
          std::string::npos)
        break;
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  // `chime <args> --server <daemon>`.
  Result Chime(std::vector<std::string> args) {
    args.push_back("--server");
    args.push_back(server_);
    return RunChime(std::move(args), {cli::AddJobCommand, cli::AddRunCommand});
  }

  static constexpr char kReader[] = "reader-0123456789abcdef";
  static constexpr char kWriter[] = "writer-0123456789abcdef";
  static constexpr char kAdmin[] = "admin-0123456789abcdef";
  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string server_;
};

TEST_F(CliClientTest, JobListIsATable) {
  const Result r = Chime({"job", "list", "--token", kReader});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("NAME        SCHEDULE    ZONE           PAUSED"
                                "  GENERATION\n"));
  EXPECT_THAT(r.out, HasSubstr("ops/report  30 2 * * *  Europe/Berlin  no"));
  EXPECT_THAT(r.out, HasSubstr("idle        0 0 1 1 *   UTC            yes"));
  const Result filtered =
      Chime({"job", "list", "--label", "team=data", "--token", kReader});
  EXPECT_THAT(filtered.out, Not(HasSubstr("idle")));
  const Result json = Chime({"job", "list", "--json", "--token", kReader});
  ASSERT_EQ(json.status, 0);
  EXPECT_EQ(nlohmann::json::parse(json.out)["jobs"].size(), 2u);
}

TEST_F(CliClientTest, JobGetPrintsAJobFileWithItsStatusAsComments) {
  const Result r = Chime({"job", "get", "ops/report", "--token", kReader});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("# ops/report: generation 1, revision "));
  EXPECT_THAT(r.out, HasSubstr("\nid: report\nnamespace: ops\n"
                               "schedule: \"30 2 * * *\"\n"
                               "zone: Europe/Berlin\n"));
  EXPECT_THAT(r.out,
              HasSubstr("retry: { max_attempts: 3, initial_backoff: 10s }"));
  const Result json =
      Chime({"job", "get", "ops/report", "--json", "--token", kReader});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["spec"]["zone"], "Europe/Berlin");
}

TEST_F(CliClientTest, JobNextMarksTheDaylightSavingChange) {
  const Result r = Chime({"job", "next", "ops/report", "-n", "2", "--from",
                          "2026-03-27T12:00:00Z", "--token", kReader});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "TIME (UTC)            LOCAL\n"
            "2026-03-28T01:30:00Z  2026-03-28T02:30:00+01:00\n"
            "2026-03-29T01:00:00Z  2026-03-29T03:00:00+02:00  offset +01:00 "
            "-> +02:00 at 2026-03-29T01:00:00Z\n");
}

TEST_F(CliClientTest, TriggerThenRunListGetAndLogs) {
  const Result t = Chime({"job", "trigger", "ops/report", "--token", kWriter});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_THAT(t.out, StartsWith("triggered ops/report: run "));
  const std::string run(
      absl::StripAsciiWhitespace(t.out.substr(t.out.rfind(' ') + 1)));
  Result logs;
  for (int i = 0; i < 100; ++i) {
    logs = Chime({"run", "logs", "ops/report", run, "--token", kReader});
    if (logs.status == 0 && !logs.out.empty()) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(logs.out, "report-output\n");
  const Result list = Chime({"run", "list", "ops/report", "--token", kReader});
  EXPECT_THAT(list.out, StartsWith("RUN  SCHEDULED"));
  EXPECT_THAT(list.out, HasSubstr(absl::StrCat("\n", run, " ")));
  const Result get =
      Chime({"run", "get", "ops/report", run, "--token", kReader});
  EXPECT_THAT(get.out, HasSubstr("state:      succeeded\n"));
  EXPECT_THAT(get.out, HasSubstr("fire id:    ops/report:1:"));
}

// Without a job, `run list` lists every job's runs (GET /v1/runs) with a
// JOB column; --dead lists the dead letters (GET /v1/dead-letters): failed
// runs only.
TEST_F(CliClientTest, RunListWithoutAJobListsEveryJobsRunsOrTheDeadLetters) {
  const Result t = Chime({"job", "trigger", "ops/report", "--token", kWriter});
  ASSERT_EQ(t.status, 0) << t.err;
  const std::string run(
      absl::StripAsciiWhitespace(t.out.substr(t.out.rfind(' ') + 1)));
  // The run's line: "<run>  ops/report  <time>  succeeded  1".
  Result all;
  std::string line;
  for (int i = 0; i < 100 && line.find("succeeded") == std::string::npos; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
    all = Chime({"run", "list", "--token", kReader});
    ASSERT_EQ(all.status, 0) << all.err;
    const size_t at = all.out.find(absl::StrCat("\n", run, " "));
    if (at != std::string::npos)
      line = all.out.substr(at + 1, all.out.find('\n', at + 1) - at - 1);
  }
  EXPECT_THAT(all.out, StartsWith("RUN  JOB         SCHEDULED"));
  EXPECT_THAT(line, HasSubstr("  ops/report  "));
  EXPECT_THAT(line, HasSubstr("  succeeded  1"));
  EXPECT_THAT(
      Chime({"run", "list", "--namespace", "default", "--token", kReader}).out,
      Not(HasSubstr("ops/report")));
  // A succeeded run is no dead letter.
  const Result dead = Chime({"run", "list", "--dead", "--token", kReader});
  ASSERT_EQ(dead.status, 0) << dead.err;
  EXPECT_EQ(dead.out, "RUN  JOB  SCHEDULED  STATE  ATTEMPT  DETAIL\n");
  const Result json =
      Chime({"run", "list", "--dead", "--json", "--token", kReader});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out),
            nlohmann::json::parse(R"({"runs": [], "next_cursor": null})"));
  // --dead is every job's failed runs: not with a job, nor another state.
  EXPECT_EQ(
      Chime({"run", "list", "ops/report", "--dead", "--token", kReader}).status,
      2);
  EXPECT_EQ(
      Chime({"run", "list", "--dead", "--state", "failed", "--token", kReader})
          .status,
      2);
}

TEST_F(CliClientTest, ExitStatusesScriptsCanRelyOn) {
  Result r = Chime({"job", "get", "ops/nope", "--token", kReader});
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "chime: no job ops/nope\n");
  r = Chime({"job", "list"});
  EXPECT_EQ(r.status, 4);
  EXPECT_THAT(r.err, HasSubstr("needs a token"));
  r = Chime({"job", "trigger", "ops/report", "--token", kReader});
  EXPECT_EQ(r.status, 4);
  EXPECT_THAT(r.err, HasSubstr("has role read; this needs write"));
  r = Chime(
      {"run", "list", "ops/report", "--state", "done", "--token", kReader});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("state: \"done\" is not one of"));
  // Nothing listening: exit 1.
  std::vector<const char*> argv = {"chime", "job", "list", "--server",
                                   "http://127.0.0.1:1"};
  std::istringstream in;
  std::ostringstream out, err;
  const cli::Io io{in, out, err, absl::Now()};
  EXPECT_EQ(cli::RunCli(static_cast<int>(argv.size()), argv.data(), io,
                        {cli::AddJobCommand}),
            1);
  EXPECT_THAT(err.str(), HasSubstr("http://127.0.0.1:1: "));
}

// `chime run cancel` stops a running attempt; `chime run retry` runs the job
// again for the cancelled run; a finished run cannot be cancelled (exit 5).
TEST_F(CliClientTest, RunCancelAndRetry) {
  dir_.Write("slow.yaml",
             "id: slow\nschedule: \"0 0 1 1 *\"\nshell: { command: "
             "\"sleep 30\" }\n");
  ASSERT_EQ(Chime({"job", "apply", "-f", dir_.path() + "/slow.yaml", "--token",
                   kAdmin})
                .status,
            0);
  const Result t = Chime({"job", "trigger", "slow", "--token", kWriter});
  ASSERT_EQ(t.status, 0) << t.err;
  const std::string run(
      absl::StripAsciiWhitespace(t.out.substr(t.out.rfind(' ') + 1)));
  Result get;
  for (int i = 0; i < 200; ++i) {
    get = Chime({"run", "get", "slow", run, "--token", kReader});
    if (get.out.find("state:      running") != std::string::npos) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_THAT(get.out, HasSubstr("state:      running"));
  Result r = Chime({"run", "cancel", "slow", run, "--token", kWriter});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("run " + run + " of slow: cancel requested"));
  for (int i = 0; i < 200; ++i) {
    get = Chime({"run", "get", "slow", run, "--token", kReader});
    if (get.out.find("state:      cancelled") != std::string::npos) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_THAT(get.out, HasSubstr("cancelled through the API by ci"));
  r = Chime({"run", "cancel", "slow", run, "--token", kWriter});
  EXPECT_EQ(r.status, 5);
  r = Chime({"run", "retry", "slow", run, "--token", kWriter});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("run " + run + " of slow: retried as run "));
}

// `chime job apply -f` takes a job file: its errors point into it and send
// nothing; its jobs are created, then replaced; pause, resume and delete
// follow, and jobs of the daemon's own files are refused with exit 5.
TEST_F(CliClientTest, ApplyPauseResumeDelete) {
  dir_.Write("mine.yaml", R"(
jobs:
  - id: hook
    namespace: web
    schedule: "0 0 1 1 *"
    http: { url: "http://127.0.0.1:1/x" }
  - id: cmd
    namespace: web
    schedule: "0 0 1 1 *"
    shell: { command: "true" }
)");
  const std::string file = dir_.path() + "/mine.yaml";
  // A write token may not create the job that runs a command: the other is
  // applied, and the exit status says not allowed.
  Result r = Chime({"job", "apply", "-f", file, "--token", kWriter});
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_THAT(r.out, HasSubstr("web/hook: applied (revision"));
  EXPECT_THAT(r.err, HasSubstr("web/cmd: a job that runs a command needs role "
                               "admin"));
  r = Chime({"job", "apply", "-f", file, "--token", kAdmin});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("web/cmd: applied"));
  EXPECT_EQ(Chime({"job", "get", "web/cmd", "--token", kReader}).status, 0);

  dir_.Write("bad.yaml",
             "id: x\nschedule: \"61 * * * *\"\nshell: {command: a}\n");
  r = Chime(
      {"job", "apply", "-f", dir_.path() + "/bad.yaml", "--token", kAdmin});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr(dir_.path() + "/bad.yaml:2:"));
  EXPECT_EQ(Chime({"job", "get", "x", "--token", kReader}).status, 3);

  r = Chime({"job", "pause", "web/hook", "--token", kWriter});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "web/hook: paused\n");
  EXPECT_THAT(Chime({"job", "get", "web/hook", "--token", kReader}).out,
              HasSubstr(", paused,"));
  EXPECT_EQ(Chime({"job", "resume", "web/hook", "--token", kWriter}).out,
            "web/hook: resumed\n");
  r = Chime({"job", "delete", "web/hook", "--token", kWriter});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "web/hook: deleted\n");
  EXPECT_EQ(Chime({"job", "get", "web/hook", "--token", kReader}).status, 3);

  r = Chime({"job", "delete", "ops/report", "--token", kWriter});
  EXPECT_EQ(r.status, 5);
  EXPECT_THAT(r.err, HasSubstr("is defined by the job file"));
}

}  // namespace
}  // namespace chime::daemon_test
