// The daemon's api_jobs policy (src/exec/job_policy.h) on the real daemon:
// jobs created through the API may run only the programs and call only the
// hosts it allows, their commands run as its user, and a policy made
// stricter also stops older API jobs -- while job files' jobs are the
// operator's and are not limited.
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::HasSubstr;

constexpr char kJson[] = "Content-Type: application/json";

constexpr char kPolicy[] = R"(
api_jobs:
  allowed_commands: [/usr/bin/id]
  allowed_http_hosts: ["127.0.0.1:9"]
  run_as: nobody
)";

class ApiPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("jobs/jobs.yaml", R"(
jobs:
  - id: operator
    schedule: "0 0 1 1 *"
    shell: { command: "echo from a file" }
)");
  }
  void Start(const std::string& config) {
    daemon_.reset();
    dir_.Write("chime.yaml", config);
    auto d =
        DaemonProcess::StartIn(dir_, {"--config", dir_.path() + "/chime.yaml"});
    ASSERT_TRUE(d.ok()) << d.status();
    daemon_ = *std::move(d);
  }
  HttpResult Do(const std::string& method, const std::string& path,
                const std::string& body = "") {
    absl::StatusOr<HttpResult> r =
        HttpDo(daemon_->port(), method, path, {kJson}, body);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : HttpResult{};
  }
  // POST /v1/jobs of job `id` with `executor` (a JSON member); the response.
  HttpResult Create(const std::string& id, const std::string& executor) {
    return Do("POST", "/v1/jobs",
              absl::StrCat(R"({"id": ")", id, R"(", "schedule": "0 0 1 1 *", )",
                           executor, "}"));
  }
  // Triggers `job` ("default/x") and waits (at most 20 s) for the run to
  // end; the run with its attempts.
  nlohmann::json TriggerAndWait(const std::string& job) {
    const std::string base = absl::StrCat("/v1/jobs/", job);
    HttpResult t = Do("POST", base + "/trigger");
    EXPECT_EQ(t.status, 201) << t.body;
    const nlohmann::json run = nlohmann::json::parse(t.body, nullptr, false);
    if (!run.is_object() || !run.contains("run")) return nullptr;
    const std::string path = run["run"];
    for (int i = 0; i < 200; ++i) {
      HttpResult r = Do("GET", path);
      nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
      if (r.status == 200 && j["state"] != "pending" &&
          j["state"] != "claimed" && j["state"] != "running" &&
          j["state"] != "retry_wait")
        return j;
      absl::SleepFor(absl::Milliseconds(100));
    }
    ADD_FAILURE() << path << " did not end";
    return nullptr;
  }
  static std::string Detail(const HttpResult& r) {
    nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
    return j.is_object() && j.contains("detail")
               ? j["detail"].get<std::string>()
               : r.body;
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(ApiPolicyTest, RefusesWhatItDoesNotAllowNamingTheField) {
  ASSERT_NO_FATAL_FAILURE(Start(kPolicy));
  HttpResult r = Create("line", R"("shell": {"command": "id -u"})");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_THAT(Detail(r), HasSubstr("shell.command: refused"));
  r = Create("sh", R"("shell": {"argv": ["/bin/sh", "-c", "id"]})");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_THAT(Detail(r), HasSubstr("shell.argv[0]: \"/bin/sh\" is not among "
                                   "api_jobs.allowed_commands (/usr/bin/id)"));
  r = Create("root", R"("shell": {"argv": ["/usr/bin/id"], "user": "root"})");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_THAT(Detail(r), HasSubstr("shell.user"));
  r = Create("preload", R"("shell": {"argv": ["/usr/bin/id"],
                                     "env": {"LD_PRELOAD": "/tmp/x.so"}})");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_THAT(Detail(r), HasSubstr("shell.env.LD_PRELOAD"));
  r = Create("out", R"("http": {"url": "http://127.0.0.1:9@example.com/"})");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_THAT(Detail(r), HasSubstr("host example.com:80 is not among"));
  // Nothing refused was created.
  HttpResult list = Do("GET", "/v1/jobs?namespace=default");
  for (const char* id : {"line", "sh", "root", "preload", "out"})
    EXPECT_THAT(
        list.body,
        ::testing::Not(HasSubstr(absl::StrCat("\"default/", id, "\""))));
  // What it allows is created.
  EXPECT_EQ(
      Create("hook", R"("http": {"url": "http://127.0.0.1:9/run"})").status,
      201);
  EXPECT_EQ(
      Create("whoami", R"("shell": {"argv": ["/usr/bin/id", "-u"]})").status,
      201);
  // A PATCH that would leave the policy is refused too.
  r = Do("PATCH", "/v1/jobs/default/whoami",
         R"({"shell": {"argv": ["/usr/bin/env"]}})");
  EXPECT_EQ(r.status, 403) << r.body;
}

TEST_F(ApiPolicyTest, ApiJobsRunAsTheConfiguredUser) {
  if (geteuid() != 0) GTEST_SKIP() << "switching users needs root (CI is)";
  ASSERT_NO_FATAL_FAILURE(Start(kPolicy));
  ASSERT_EQ(
      Create("whoami", R"("shell": {"argv": ["/usr/bin/id", "-u"]})").status,
      201);
  const nlohmann::json run = TriggerAndWait("default/whoami");
  ASSERT_TRUE(run.is_object());
  EXPECT_EQ(run["state"], "succeeded") << run.dump();
  ASSERT_FALSE(run["attempts"].empty()) << run.dump();
  EXPECT_EQ(run["attempts"][0]["output"], "65534\n");  // nobody
  // The operator's job files are not limited: it runs as the daemon does.
  const nlohmann::json file_run = TriggerAndWait("default/operator");
  ASSERT_TRUE(file_run.is_object());
  EXPECT_EQ(file_run["state"], "succeeded") << file_run.dump();
  EXPECT_EQ(file_run["attempts"][0]["output"], "from a file\n");
}

TEST_F(ApiPolicyTest, AStricterPolicyStopsOlderApiJobsAtTheirNextAttempt) {
  ASSERT_NO_FATAL_FAILURE(Start(""));
  ASSERT_EQ(Create("echo", R"("shell": {"argv": ["/bin/echo", "hi"]})").status,
            201);
  nlohmann::json run = TriggerAndWait("default/echo");
  ASSERT_TRUE(run.is_object());
  EXPECT_EQ(run["state"], "succeeded") << run.dump();
  ASSERT_EQ(daemon_->Terminate(), 0);
  ASSERT_NO_FATAL_FAILURE(Start(kPolicy));
  run = TriggerAndWait("default/echo");
  ASSERT_TRUE(run.is_object());
  EXPECT_EQ(run["state"], "failed") << run.dump();
  EXPECT_THAT(run["attempts"][0]["detail"].get<std::string>(),
              HasSubstr("refused by the daemon's api_jobs policy: "
                        "shell.argv[0]: \"/bin/echo\" is not among"));
  EXPECT_EQ(run["attempts"][0]["output"], "");
}

TEST_F(ApiPolicyTest, ABadPolicyStopsTheDaemonFromStarting) {
  dir_.Write("chime.yaml", "api_jobs:\n  run_as: no-such-user-chime\n");
  auto d =
      DaemonProcess::StartIn(dir_, {"--config", dir_.path() + "/chime.yaml"});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(std::string(d.status().message()),
              HasSubstr("api_jobs.run_as: no such user"));
}

}  // namespace
}  // namespace chime::daemon_test
