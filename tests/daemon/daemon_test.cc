// The real daemon, end to end: job files edited while it runs, shell
// commands with timeouts and retries, graceful shutdown and restarts after
// kill -9 with runs in flight. Each test starts `chime serve` on 127.0.0.1
// (port 0) in its own temporary directories.
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/sqlite_store.h"
#include "src/time/rfc3339.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class DaemonTest : public ::testing::Test {
 protected:
  std::unique_ptr<DaemonProcess> StartDaemon(
      std::vector<std::string> args = {}) {
    auto d = DaemonProcess::Start({.data_dir = dir_.path() + "/data",
                                   .jobs_dir = dir_.path() + "/jobs",
                                   .args = std::move(args)});
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? *std::move(d) : nullptr;
  }
  std::string Path(const std::string& name) const {
    return dir_.path() + "/" + name;
  }
  std::string Read(const std::string& name) const {
    std::ifstream in(Path(name));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::vector<std::string> Lines(const std::string& name) const {
    return absl::StrSplit(Read(name), '\n', absl::SkipEmpty());
  }
  // Waits (at most 20 s) until `pred` holds.
  static bool Eventually(const std::function<bool()>& pred,
                         absl::Duration limit = absl::Seconds(20)) {
    const absl::Time deadline = absl::Now() + limit;
    while (!pred()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return true;
  }
  // An RFC 3339 time `d` from now, whole seconds (a one-shot job's `at`).
  static std::string In(absl::Duration d) {
    return time::FormatUtc(
        absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now() + d) + 1));
  }
  static bool Alive(pid_t pid) {
    return std::filesystem::exists(absl::StrCat("/proc/", pid));
  }

  TempDir dir_;
  TempDir& jobs() { return dir_; }
  void WriteJobs(const std::string& name, const std::string& yaml) {
    dir_.Write("jobs/" + name, yaml);
  }
};

TEST_F(DaemonTest, JobFileEditedBrokenAndFixedWhileRunning) {
  const auto job = [&](const std::string& version, const std::string& extra) {
    return absl::StrCat("id: tick\nschedule: \"@every 1s\"\nshell: \"echo ",
                        version, " >> ", Path("out"), "\"\n", extra);
  };
  WriteJobs("a.yaml", job("v1", ""));
  auto d = StartDaemon();
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(Eventually([&] {
    return Read("out").find("v1") != std::string::npos;
  })) << d->LogText();

  WriteJobs("a.yaml", job("v2", ""));
  ASSERT_TRUE(Eventually([&] {
    return Read("out").find("v2") != std::string::npos;
  })) << d->LogText();
  EXPECT_FALSE(d->WaitForMsg("job changed").is_null());

  // Broken: the version loaded before stays in force, and the error says
  // where.
  WriteJobs("a.yaml", job("v3", "retry: { max_attempts: 0 }\n"));
  const nlohmann::json error = d->WaitForMsg("job file not loaded");
  ASSERT_FALSE(error.is_null()) << d->LogText();
  EXPECT_THAT(error["error"].get<std::string>(),
              HasSubstr("a.yaml:4:24: retry.max_attempts: 0 is below 1"));
  auto ready = d->Get("/readyz");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 200);
  EXPECT_THAT(ready->body, HasSubstr("a.yaml:4:24"));
  auto metrics = d->Get("/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(MetricValue(metrics->body, "chime_job_file_errors"), 1);
  const size_t v2_lines = Lines("out").size();
  ASSERT_TRUE(Eventually([&] { return Lines("out").size() >= v2_lines + 2; }))
      << "the old version stopped running";
  EXPECT_EQ(Read("out").find("v3"), std::string::npos);

  // Fixed: applied, errors cleared.
  WriteJobs("a.yaml", job("v4", ""));
  ASSERT_TRUE(Eventually([&] {
    return Read("out").find("v4") != std::string::npos;
  })) << d->LogText();
  ASSERT_TRUE(Eventually([&] {
    auto r = d->Get("/readyz");
    return r.ok() && r->body.find("a.yaml") == std::string::npos;
  }));

  // Deleted: the job stops.
  std::filesystem::remove(Path("jobs/a.yaml"));
  EXPECT_FALSE(d->WaitForMsg("job removed").is_null()) << d->LogText();
  EXPECT_EQ(d->Terminate(), 0);
}

TEST_F(DaemonTest, TimeoutKillsTheWholeProcessTree) {
  // The command starts a grandchild that ignores SIGTERM, writes its pid,
  // and waits.
  WriteJobs("t.yaml",
            absl::StrCat("id: stuck\nat: ", In(absl::Seconds(1)), "\n",
                         "timeout: { attempt: 1s, grace: 1s }\n",
                         "shell: \"(trap '' TERM; sleep 300) & echo $! > ",
                         Path("grandchild"), "; wait\"\n"));
  auto d = StartDaemon();
  ASSERT_NE(d, nullptr);
  const nlohmann::json failed = d->WaitForMsg("run failed", "stuck:");
  ASSERT_FALSE(failed.is_null()) << d->LogText();
  EXPECT_THAT(failed["detail"].get<std::string>(), HasSubstr("timed out"));
  pid_t grandchild = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(Read("grandchild")),
                               &grandchild));
  EXPECT_TRUE(Eventually([&] { return !Alive(grandchild); }, absl::Seconds(10)))
      << "grandchild " << grandchild << " survived the timeout";
  EXPECT_EQ(d->Terminate(), 0);
}

TEST_F(DaemonTest, RetriesWithBackoffAreLoggedAndTheRunFailsAfterTheLast) {
  WriteJobs("r.yaml",
            absl::StrCat(
                "id: flaky\nat: ", In(absl::Seconds(1)), "\n",
                "retry: { max_attempts: 3, initial_backoff: 1s, multiplier: 2, "
                "max_backoff: 2s }\n",
                "shell: \"echo attempt $CHIME_ATTEMPT | tee -a ",
                Path("attempts"), "; exit 3\"\n"));
  auto d = StartDaemon();
  ASSERT_NE(d, nullptr);
  const nlohmann::json failed =
      d->WaitForMsg("run failed", "flaky:", absl::Seconds(30));
  ASSERT_FALSE(failed.is_null()) << d->LogText();
  EXPECT_EQ(failed["attempt"], 3);
  EXPECT_THAT(failed["detail"].get<std::string>(), HasSubstr("exit status 3"));
  EXPECT_THAT(Lines("attempts"),
              ElementsAre("attempt 1", "attempt 2", "attempt 3"));
  // Each retry is announced with its backoff, within [0, cap].
  int retries = 0;
  for (const nlohmann::json& j : d->Logs()) {
    if (j.value("msg", "") != "run retrying") continue;
    ++retries;
    EXPECT_THAT(j["detail"].get<std::string>(), HasSubstr("retry in"));
  }
  EXPECT_EQ(retries, 2);
  auto metrics = d->Get("/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(MetricValue(metrics->body, "chime_retries_total"), 2);
  EXPECT_EQ(
      MetricValue(metrics->body, "chime_runs_finished_total{state=\"failed\"}"),
      1);
  EXPECT_EQ(MetricValue(metrics->body,
                        "chime_runs{namespace=\"default\",state=\"running\"}"),
            0);
  EXPECT_EQ(MetricValue(metrics->body, "chime_run_duration_seconds_count"), 1);
  EXPECT_EQ(d->Terminate(), 0);

  // The run's history in the store: three attempts, each with its output,
  // each retry starting no earlier than the failure before it.
  auto store = store::SqliteStore::Open({.data_dir = Path("data")});
  ASSERT_TRUE(store.ok()) << store.status();
  auto page = (*store)->ListRuns({}, MonoTime::Infinite());
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->runs.size(), 1u);
  auto run = (*store)->GetRun(page->runs[0].id, MonoTime::Infinite());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->run.state, RunState::kFailed);
  ASSERT_EQ(run->attempts.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const AttemptRecord& a = run->attempts[i];
    EXPECT_EQ(a.number, i + 1);
    EXPECT_EQ(a.output, absl::StrCat("attempt ", i + 1, "\n"));
    EXPECT_THAT(a.detail, HasSubstr("exit status 3"));
    EXPECT_EQ(a.exit_code, 3);
    if (i > 0) EXPECT_GE(a.started_at, run->attempts[i - 1].finished_at);
  }
}

// Failures before the target could run are failed attempts with a precise
// error (and go through the retry policy), counted by kind.
TEST_F(DaemonTest, ExecutorFailuresAreFailedAttemptsWithPreciseErrors) {
  // Port 1 on loopback: nothing listens there.
  const std::string at = In(absl::Seconds(1));
  WriteJobs(
      "e.yaml",
      absl::StrCat(
          "jobs:\n"
          "  - id: nocmd\n    at: ",
          at,
          "\n"
          "    retry: { max_attempts: 2, initial_backoff: 100ms, max_backoff: "
          "100ms }\n"
          "    shell: { argv: [no-such-command-chime, x] }\n"
          "  - id: nodir\n    at: ",
          at,
          "\n"
          "    shell: { command: \"true\", working_dir: /nonexistent/dir }\n"
          "  - id: refused\n    at: ",
          at,
          "\n"
          "    http: { url: \"http://127.0.0.1:1/hook\" }\n"));
  auto d = StartDaemon();
  ASSERT_NE(d, nullptr);
  const nlohmann::json nocmd = d->WaitForMsg("run failed", "nocmd:");
  ASSERT_FALSE(nocmd.is_null()) << d->LogText();
  EXPECT_EQ(nocmd["attempt"], 2);  // retried
  EXPECT_THAT(nocmd["detail"].get<std::string>(),
              HasSubstr("command not found: \"no-such-command-chime\""));
  const nlohmann::json nodir = d->WaitForMsg("run failed", "nodir:");
  ASSERT_FALSE(nodir.is_null()) << d->LogText();
  EXPECT_THAT(nodir["detail"].get<std::string>(),
              HasSubstr("working_dir \"/nonexistent/dir\""));
  const nlohmann::json refused = d->WaitForMsg("run failed", "refused:");
  ASSERT_FALSE(refused.is_null()) << d->LogText();
  EXPECT_THAT(refused["detail"].get<std::string>(),
              HasSubstr("http://127.0.0.1:1/hook"));
  auto metrics = d->Get("/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(MetricValue(metrics->body,
                        "chime_executor_errors_total{executor=\"shell\","
                        "kind=\"not_found\"}"),
            3);  // two attempts of nocmd, one of nodir
  EXPECT_EQ(MetricValue(metrics->body,
                        "chime_executor_errors_total{executor=\"http\","
                        "kind=\"unavailable\"}"),
            1);
  EXPECT_EQ(d->Terminate(), 0);
}

TEST_F(DaemonTest, GracefulShutdownLetsRunsFinishWithinTheGrace) {
  WriteJobs("g.yaml", absl::StrCat("id: slow\nat: ", In(absl::Seconds(1)), "\n",
                                   "shell: \"sleep 1; echo done > ",
                                   Path("done"), "\"\n"));
  auto d = StartDaemon({"--shutdown-grace", "20s"});
  ASSERT_NE(d, nullptr);
  ASSERT_FALSE(d->WaitForMsg("run running", "slow:").is_null()) << d->LogText();
  EXPECT_EQ(d->Terminate(), 0);
  EXPECT_EQ(Read("done"), "done\n");
  EXPECT_FALSE(
      d->WaitForMsg("run succeeded", "slow:", absl::Seconds(1)).is_null());
}

TEST_F(DaemonTest, ShutdownCancelsRunsStillGoingAfterTheGrace) {
  WriteJobs("g.yaml", absl::StrCat("id: endless\nat: ", In(absl::Seconds(1)),
                                   "\nshell: \"sleep 300\"\n"));
  auto d = StartDaemon({"--shutdown-grace", "1s"});
  ASSERT_NE(d, nullptr);
  ASSERT_FALSE(d->WaitForMsg("run running", "endless:").is_null())
      << d->LogText();
  const absl::Time start = absl::Now();
  EXPECT_EQ(d->Terminate(), 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  const nlohmann::json cancelled =
      d->WaitForMsg("run cancelled", "endless:", absl::Seconds(1));
  ASSERT_FALSE(cancelled.is_null()) << d->LogText();
  EXPECT_THAT(cancelled["detail"].get<std::string>(), HasSubstr("shutdown"));
}

// kill -9 with a run of each delivery in flight: the next daemon kills the
// orphaned commands first; the at-most-once run is recorded lost, the
// at-least-once one runs again as attempt 2.
TEST_F(DaemonTest, RestartAfterKillNineWithRunsInFlight) {
  const std::string at = In(absl::Seconds(1));
  const auto job = [&](const std::string& id, const std::string& delivery) {
    return absl::StrCat("  - id: ", id, "\n    at: ", at,
                        "\n    delivery: ", delivery,
                        "\n    shell: \"echo $$ >> ", Path(id + ".pids"),
                        "; echo $CHIME_ATTEMPT >> ", Path(id + ".attempts"),
                        "; [ $CHIME_ATTEMPT -ge 2 ] || sleep 300\"\n");
  };
  WriteJobs("d.yaml", "jobs:\n" + job("amo", "at_most_once") +
                          job("alo", "at_least_once"));
  auto first = StartDaemon();
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(Eventually([&] {
    return Lines("amo.pids").size() == 1 && Lines("alo.pids").size() == 1;
  })) << first->LogText();
  pid_t amo = 0, alo = 0;
  ASSERT_TRUE(absl::SimpleAtoi(Lines("amo.pids")[0], &amo));
  ASSERT_TRUE(absl::SimpleAtoi(Lines("alo.pids")[0], &alo));
  first->Kill();
  ASSERT_TRUE(Alive(amo) && Alive(alo)) << "the commands died with the daemon";

  auto second = StartDaemon();
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(second->WaitForMsg("killed processes left by an earlier daemon")
                   .is_null())
      << second->LogText();
  EXPECT_TRUE(Eventually([&] { return !Alive(amo) && !Alive(alo); }))
      << "orphans still running";
  EXPECT_FALSE(second->WaitForMsg("run lost", "amo:").is_null())
      << second->LogText();
  EXPECT_FALSE(second->WaitForMsg("run succeeded", "alo:").is_null())
      << second->LogText();
  EXPECT_THAT(Lines("alo.attempts"), ElementsAre("1", "2"));
  EXPECT_THAT(Lines("amo.attempts"), ElementsAre("1"));
  EXPECT_EQ(second->Terminate(), 0);
}

// A poison pill: an at-least-once job whose command kills the daemon. Each
// restart records the run lost and starts it again -- until it has been lost
// max_losses (3) times: the fourth daemon records it failed, says why, and
// stays up.
TEST_F(DaemonTest, AnAttemptThatKillsTheDaemonIsGivenUpAfterThreeLosses) {
  WriteJobs("p.yaml", absl::StrCat("id: poison\nat: ", In(absl::Seconds(1)),
                                   "\ndelivery: at_least_once\nshell: \"echo "
                                   "$CHIME_ATTEMPT >> ",
                                   Path("attempts"), "; kill -9 $PPID\"\n"));
  for (int start = 1; start <= 3; ++start) {
    auto d = DaemonProcess::Start({.data_dir = Path("data"),
                                   .jobs_dir = Path("jobs"),
                                   .wait_until_serving = false});
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ((*d)->WaitForExit(absl::Seconds(30)), 128 + SIGKILL)
        << "start " << start << ": " << (*d)->LogText();
    ASSERT_EQ(Lines("attempts").size(), static_cast<size_t>(start));
  }
  auto last = StartDaemon();
  ASSERT_NE(last, nullptr);
  const nlohmann::json failed = last->WaitForMsg("run failed", "poison:");
  ASSERT_FALSE(failed.is_null()) << last->LogText();
  EXPECT_THAT(failed.dump(), HasSubstr("lost 3 times"));
  EXPECT_THAT(Lines("attempts"), ElementsAre("1", "2", "3"));
  const nlohmann::json dead = last->GetJson("/v1/dead-letters");
  ASSERT_EQ(dead["runs"].size(), 1u) << dead.dump();
  EXPECT_THAT(dead["runs"][0]["detail"].get<std::string>(),
              HasSubstr("lost 3 times"));
  EXPECT_EQ(last->Terminate(), 0);
}

TEST_F(DaemonTest, SighupRereadsTheConfiguration) {
  dir_.Write("chime.yaml", "shutdown_grace: 5s\n");
  auto d = StartDaemon({"--config", Path("chime.yaml")});
  ASSERT_NE(d, nullptr);
  dir_.Write("chime.yaml", "shutdown_grace: 5s\nlog_levl: debug\n");
  d->Hangup();
  const nlohmann::json bad = d->WaitForMsg("configuration not reloaded");
  ASSERT_FALSE(bad.is_null()) << d->LogText();
  EXPECT_THAT(bad["error"].get<std::string>(),
              HasSubstr("chime.yaml:2:1: unknown key \"log_levl\""));
  dir_.Write("chime.yaml", "shutdown_grace: 9s\n");
  d->Hangup();
  EXPECT_FALSE(d->WaitForMsg("configuration changed; settings other than "
                             "log_level apply at the next start")
                   .is_null())
      << d->LogText();
  auto ready = d->Get("/readyz");
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(d->Terminate(), 0);
}

// Retention keeps the history bounded: finished runs beyond the newest
// history_keep_per_job of a job are deleted while the daemon runs.
TEST_F(DaemonTest, HistoryIsPrunedToTheNewestRunsPerJob) {
  dir_.Write("chime.yaml",
             "history_keep_per_job: 2\nhistory_check_interval: 1s\n");
  WriteJobs("h.yaml", "id: tick\nschedule: \"@every 1s\"\nshell: \"true\"\n");
  auto d = StartDaemon({"--config", Path("chime.yaml")});
  ASSERT_NE(d, nullptr);
  const nlohmann::json pruned = d->WaitForMsg("history pruned");
  ASSERT_FALSE(pruned.is_null()) << d->LogText();
  EXPECT_GE(pruned["runs"].get<int>(), 1);
  auto metrics = d->Get("/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_GE(
      MetricValue(metrics->body, "chime_history_deleted_total{kind=\"runs\"}"),
      1);
  EXPECT_EQ(d->Terminate(), 0);
  int succeeded = 0;
  for (const nlohmann::json& j : d->Logs())
    succeeded += j.value("msg", "") == "run succeeded";
  auto store = store::SqliteStore::Open({.data_dir = Path("data")});
  ASSERT_TRUE(store.ok()) << store.status();
  auto page = (*store)->ListRuns({.limit = 1000}, MonoTime::Infinite());
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_LT(static_cast<int>(page->runs.size()), succeeded);
}

TEST_F(DaemonTest, HealthAndBadConfiguration) {
  auto d = StartDaemon();
  ASSERT_NE(d, nullptr);
  auto health = d->Get("/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200);
  auto ready = d->Get("/readyz");
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ(ready->status, 200);
  EXPECT_THAT(ready->body, HasSubstr("\"ready\":true"));
  // A second daemon on the same data directory is refused, naming it.
  auto second = DaemonProcess::Start(
      {.data_dir = dir_.path() + "/data", .jobs_dir = dir_.path() + "/jobs"});
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(d->Terminate(), 0);
}

}  // namespace
}  // namespace chime::daemon_test
