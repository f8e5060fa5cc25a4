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
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Result {
  int status = -1;
  std::string out;
  std::string err;
};

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
    args.insert(args.begin(), "chime");
    args.push_back("--server");
    args.push_back(server_);
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    std::istringstream in;
    std::ostringstream out, err;
    const cli::Io io{in, out, err, absl::Now()};
    Result r;
    r.status = cli::RunCli(static_cast<int>(argv.size()), argv.data(), io,
                           {cli::AddJobCommand, cli::AddRunCommand});
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  static constexpr char kReader[] = "reader-0123456789abcdef";
  static constexpr char kWriter[] = "writer-0123456789abcdef";
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

}  // namespace
}  // namespace chime::daemon_test
