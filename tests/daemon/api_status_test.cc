// GET /v1/status and GET /v1/namespaces (src/api/status_routes.cc) on the
// real daemon, and `chime status` / `chime namespace list` against it.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/app.h"
#include "cli/status_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/cli_runner.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::json;

constexpr char kReaderToken[] = "reader-0123456789abcdef";
constexpr char kReader[] = "Authorization: Bearer reader-0123456789abcdef";
constexpr char kWriter[] = "Authorization: Bearer writer-0123456789abcdef";

class ApiStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    before_start_ = absl::Now();
    // Five jobs in three namespaces, one paused (its fires are recorded
    // missed, reason "paused"), and a job file that does not load.
    dir_.Write("jobs/jobs.yaml", R"(
jobs:
  - id: hello
    namespace: ops
    schedule: "0 0 1 1 *"
    shell: { command: "echo hello" }
  - id: slow
    namespace: ops
    schedule: "0 0 1 1 *"
    shell: { command: "sleep 60" }
  - id: tick
    namespace: ops
    schedule: "@every 1s"
    paused: true
    shell: { command: "true" }
  - id: hook
    schedule: "0 0 1 1 *"
    http: { url: "http://127.0.0.1:1/hook" }
  - id: nightly
    namespace: batch
    schedule: "0 0 1 1 *"
    shell: { command: "true" }
)");
    dir_.Write("jobs/broken.yaml", "jobs:\n  - id: [\n");
    dir_.Write("chime.yaml", R"(
api_tokens:
  - { name: reader, role: read, token: reader-0123456789abcdef }
  - { name: ci, role: write, token: writer-0123456789abcdef }
)");
    auto d =
        DaemonProcess::StartIn(dir_, {"--config", dir_.path() + "/chime.yaml"});
    ASSERT_TRUE(d.ok()) << d.status();
    daemon_ = *std::move(d);
    // The jobs reach the store behind the load.
    for (int i = 0; i < 200; ++i) {
      if (Get("/v1/namespaces")["jobs_counted"] == 5) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  HttpResult Do(const std::string& method, const std::string& path,
                const std::vector<std::string>& headers,
                const std::string& body = "") {
    absl::StatusOr<HttpResult> r =
        HttpDo(daemon_->port(), method, path, headers, body);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : HttpResult{};
  }
  // GET `path` as the reader; the body as JSON (null unless 200).
  Json Get(const std::string& path) {
    const HttpResult r = Do("GET", path, {kReader});
    if (r.status != 200) return nullptr;
    return Json::parse(r.body, nullptr, false);
  }
  // Polls GET `path` (at most 20 s) until `done` holds; the last answer.
  Json WaitFor(const std::string& path,
               const std::function<bool(const Json&)>& done) {
    Json j;
    for (int i = 0; i < 400; ++i) {
      j = Get(path);
      if (j.is_object() && done(j)) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return j;
  }

  using Result = CliResult;
  // `chime <args> --server <daemon>`, in process.
  Result Chime(std::vector<std::string> args) {
    args.push_back("--server");
    args.push_back(absl::StrCat("http://127.0.0.1:", daemon_->port()));
    return RunChime(std::move(args),
                    {cli::AddStatusCommand, cli::AddNamespaceCommand});
  }

  absl::Time before_start_;
  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(ApiStatusTest, StatusShowsVersionUptimeCountsErrorsAndStore) {
  EXPECT_EQ(Do("GET", "/v1/status", {}).status, 401);
  Json s = Get("/v1/status");
  ASSERT_TRUE(s.is_object());
  EXPECT_EQ(s["version"], CHIME_VERSION);
  absl::Time started, now;
  std::string error;
  ASSERT_TRUE(absl::ParseTime(
      absl::RFC3339_full, s["started_at"].get<std::string>(), &started, &error))
      << error;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, s["time"].get<std::string>(),
                              &now, &error))
      << error;
  EXPECT_GE(started, before_start_ - absl::Seconds(1));
  EXPECT_LE(started, now);
  EXPECT_LE(now, absl::Now() + absl::Seconds(1));
  EXPECT_EQ(s["uptime_seconds"], absl::ToInt64Seconds(now - started));

  const Json& sched = s["scheduler"];
  EXPECT_EQ(sched["jobs"], 5);
  EXPECT_EQ(sched["jobs_paused"], 1);
  EXPECT_EQ(sched["clock_steps"], 0);
  ASSERT_EQ(s["job_file_errors"].size(), 1u) << s.dump();
  EXPECT_THAT(s["job_file_errors"][0].get<std::string>(),
              HasSubstr("broken.yaml:"));
  EXPECT_EQ(s["store"]["jobs"], 5);

  // A run that succeeds, and fires recorded missed: those of a job paused
  // through the API, as one range when it is resumed. The job ends before it
  // is resumed, so that none of its fires can run however slow the machine.
  ASSERT_EQ(Do("POST", "/v1/jobs/ops/hello/trigger", {kWriter}).status, 201);
  const std::string end = absl::FormatTime(
      absl::RFC3339_full, absl::Now() + absl::Milliseconds(3400),
      absl::UTCTimeZone());
  const HttpResult put = Do(
      "PUT", "/v1/jobs/ops/ticker", {kWriter, "Content-Type: application/json"},
      absl::StrCat(R"({"schedule": "@every 1s", "paused": true, "end": ")", end,
                   R"(", "http": {"url": "http://127.0.0.1:1/"}})"));
  ASSERT_EQ(put.status, 201) << put.body;
  absl::SleepFor(absl::Milliseconds(3500));
  ASSERT_EQ(Do("POST", "/v1/jobs/ops/ticker/resume", {kWriter}).status, 200);
  ASSERT_EQ(Do("POST", "/v1/jobs/ops/ticker/pause", {kWriter}).status, 200);
  s = WaitFor("/v1/status", [](const Json& j) {
    return j["scheduler"]["runs_succeeded"] == 1 &&
           j["scheduler"]["fires_not_run"].value("paused", 0) >= 1 &&
           j["store"]["runs"] == 1;
  });
  EXPECT_EQ(s["scheduler"]["runs_succeeded"], 1) << s.dump();
  EXPECT_EQ(s["scheduler"]["runs_failed"], 0);
  EXPECT_GE(s["scheduler"]["fires_run"], 1);
  EXPECT_GE(s["scheduler"]["fires_not_run"].value("paused", 0), 2) << s.dump();
  EXPECT_EQ(s["store"]["runs"], 1);
  EXPECT_GT(s["store"]["run_bytes"], 0);
  EXPECT_GE(s["store"]["max_run_id"], 1);
  // This daemon holds its store's lease.
  ASSERT_EQ(s["store"]["leases"].size(), 1u) << s.dump();
  const Json& lease = s["store"]["leases"][0];
  EXPECT_EQ(lease["name"], "scheduler");
  EXPECT_THAT(lease["holder"].get<std::string>(),
              ::testing::MatchesRegex(".* pid [0-9]+ scheduler 1"));
  EXPECT_GE(lease["epoch"], 1);
  EXPECT_GT(lease["remaining_seconds"], 0);

  const HttpResult bad = Do("GET", "/v1/status?verbose=1", {kReader});
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("unknown query parameter \\\"verbose\\\""));
}

TEST_F(ApiStatusTest, NamespacesCountJobsPausedJobsAndRunsGoing) {
  EXPECT_EQ(Do("GET", "/v1/namespaces", {}).status, 401);
  Json n = Get("/v1/namespaces");
  ASSERT_TRUE(n.is_object());
  EXPECT_EQ(n["namespaces"], Json::parse(R"([
      {"name": "batch", "jobs": 1, "paused": 0, "runs_pending": 0, "runs_running": 0},
      {"name": "default", "jobs": 1, "paused": 0, "runs_pending": 0, "runs_running": 0},
      {"name": "ops", "jobs": 3, "paused": 1, "runs_pending": 0, "runs_running": 0}])"))
      << n.dump();
  EXPECT_EQ(n["jobs_counted"], 5);
  EXPECT_EQ(n["jobs_capped"], false);

  // A job created through the API is counted too, in its namespace; a
  // running run shows in its job's namespace.
  const HttpResult put = Do(
      "PUT", "/v1/jobs/web/ping", {kWriter, "Content-Type: application/json"},
      R"({"schedule": "0 0 1 1 *", "http": {"url": "http://127.0.0.1:1/"}})");
  ASSERT_EQ(put.status, 201) << put.body;
  const HttpResult slow = Do("POST", "/v1/jobs/ops/slow/trigger", {kWriter});
  ASSERT_EQ(slow.status, 201) << slow.body;
  n = WaitFor("/v1/namespaces", [](const Json& j) {
    return j["namespaces"].size() == 4 &&
           j["namespaces"][2]["runs_running"] == 1;
  });
  ASSERT_EQ(n["namespaces"].size(), 4u) << n.dump();
  EXPECT_EQ(n["namespaces"][2]["name"], "ops");
  EXPECT_EQ(n["namespaces"][2]["runs_running"], 1) << n.dump();
  EXPECT_EQ(n["namespaces"][3],
            Json::parse(R"({"name": "web", "jobs": 1, "paused": 0,
                            "runs_pending": 0, "runs_running": 0})"));
  EXPECT_EQ(n["jobs_counted"], 6);
  // Not left sleeping after the test: cancelled, and its process gone.
  const std::string run = Json::parse(slow.body)["run"];
  EXPECT_EQ(Do("POST", run + "/cancel", {kWriter}).status, 202);
  EXPECT_EQ(
      WaitFor(run,
              [](const Json& j) { return j["state"] == "cancelled"; })["state"],
      "cancelled");
}

TEST_F(ApiStatusTest, ChimeStatusIsAReadableSummary) {
  const Result r = Chime({"status", "--token", kReaderToken});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith(absl::StrCat(
                         "chime ", CHIME_VERSION,
                         " at http://127.0.0.1:", daemon_->port(), ", up ")));
  EXPECT_THAT(r.out,
              ContainsRegex(", up [0-9][0-9dhms ]* \\(since "
                            "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\\)\n"));
  EXPECT_THAT(r.out, HasSubstr("\njobs:         5 scheduled, 1 paused\n"
                               "runs now:     0 pending, 0 running\n"));
  EXPECT_THAT(r.out, HasSubstr("\nstore:        5 jobs, 0 runs (0 B of run "
                               "history)\n"));
  EXPECT_THAT(r.out, ContainsRegex("\nlease:        scheduler held by .* pid "
                                   "[0-9]+ scheduler 1 \\(epoch [0-9]+, "
                                   "[0-9][0-9dhms ]* left\\)\n"));
  EXPECT_THAT(r.out, HasSubstr("\njob files:    1 error (the version loaded "
                               "before stays in force)\n  "));
  EXPECT_THAT(r.out, HasSubstr("broken.yaml:"));

  const Result json = Chime({"status", "--json", "--token", kReaderToken});
  ASSERT_EQ(json.status, 0) << json.err;
  const Json j = Json::parse(json.out);
  EXPECT_EQ(j["version"], CHIME_VERSION);
  EXPECT_EQ(j["scheduler"]["jobs"], 5);

  // No token: not allowed (exit 4), said on stderr.
  const Result denied = Chime({"status"});
  EXPECT_EQ(denied.status, 4);
  EXPECT_THAT(denied.err, StartsWith("chime: "));
  EXPECT_EQ(denied.out, "");
}

TEST_F(ApiStatusTest, ChimeNamespaceListIsATable) {
  const Result r = Chime({"namespace", "list", "--token", kReaderToken});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "NAMESPACE  JOBS  PAUSED  PENDING  RUNNING\n"
            "batch         1       0        0        0\n"
            "default       1       0        0        0\n"
            "ops           3       1        0        0\n");
  const Result json =
      Chime({"namespace", "list", "--json", "--token", kReaderToken});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(Json::parse(json.out)["namespaces"].size(), 3u);
  EXPECT_EQ(Chime({"namespace"}).status, 2);  // a subcommand is required
}

// On IPv6 loopback: the "chime serving" line names the address as a URL
// needs it (bracketed), and the CLI reaches the daemon there.
// `top -H`, `ps -L` and perf tell the daemon's threads apart by name.
TEST_F(ApiStatusTest, TheDaemonsThreadsAreNamedForWhatTheyDo) {
  std::map<std::string, int> names;
  const std::string tasks = absl::StrCat("/proc/", daemon_->pid(), "/task");
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    ++names[name];
  }
  for (const char* name :
       {"chime-scheduler", "chime-store", "chime-writer", "chime-http",
        "chime-worker", "chime-housekeep", "chime-dirwatch"}) {
    EXPECT_GE(names[name], 1) << name;
  }
}

TEST(DaemonOnIpv6, ServesAndLogsABracketedAddress) {
  {
    const int s = socket(AF_INET6, SOCK_STREAM, 0);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    const bool v6 =
        s >= 0 && bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    if (s >= 0) close(s);
    if (!v6) GTEST_SKIP() << "this machine has no IPv6 loopback";
  }
  TempDir dir;
  auto d = DaemonProcess::StartIn(dir, {"--listen", "[::1]:0"});
  ASSERT_TRUE(d.ok()) << d.status();
  const nlohmann::json serving = (*d)->WaitForMsg("chime serving");
  const std::string url = absl::StrCat("http://[::1]:", (*d)->port());
  EXPECT_EQ(serving["listen"], absl::StrCat("[::1]:", (*d)->port()));
  EXPECT_EQ(serving["ui"], url + "/");
  EXPECT_EQ(serving["metrics"], url + "/metrics");
  const CliResult r =
      RunChime({"status", "--server", url}, {cli::AddStatusCommand});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat(" at ", url, ", up ")));
  EXPECT_EQ((*d)->Terminate(), 0);
}

TEST(HumanFormats, DurationsAndSizes) {
  EXPECT_EQ(cli::internal::HumanDuration(absl::Seconds(45)), "45s");
  EXPECT_EQ(cli::internal::HumanDuration(absl::Seconds(725)), "12m 5s");
  EXPECT_EQ(cli::internal::HumanDuration(absl::Hours(3) + absl::Minutes(12)),
            "3h 12m");
  EXPECT_EQ(cli::internal::HumanDuration(absl::Hours(52)), "2d 4h");
  EXPECT_EQ(cli::internal::HumanDuration(-absl::Seconds(3)), "0s");
  EXPECT_EQ(cli::internal::HumanBytes(0), "0 B");
  EXPECT_EQ(cli::internal::HumanBytes(1023), "1023 B");
  EXPECT_EQ(cli::internal::HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(cli::internal::HumanBytes(12 * 1024 * 1024), "12.0 MiB");
}

}  // namespace
}  // namespace chime::daemon_test
