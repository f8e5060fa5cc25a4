// Access to the REST API on the real daemon: bearer tokens from chime.yaml,
// roles, the operations they allow, and what stays open (health, metrics).
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::HasSubstr;

constexpr char kReader[] = "Authorization: Bearer reader-0123456789abcdef";
constexpr char kWriter[] = "Authorization: Bearer writer-0123456789abcdef";
constexpr char kAdmin[] = "Authorization: Bearer admin-0123456789abcdef";
constexpr char kJson[] = "Content-Type: application/json";

class ApiAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("jobs/jobs.yaml", R"(
jobs:
  - id: report
    schedule: "0 0 1 1 *"
    shell: { command: "echo triggered" }
)");
    dir_.Write("chime.yaml", R"(
api_tokens:
  - name: grafana
    role: read
    token: reader-0123456789abcdef
  - name: ci
    role: write
    token: writer-0123456789abcdef
  - name: ops
    role: admin
    token: admin-0123456789abcdef
)");
    auto d =
        DaemonProcess::StartIn(dir_, {"--config", dir_.path() + "/chime.yaml"});
    ASSERT_TRUE(d.ok()) << d.status();
    daemon_ = *std::move(d);
  }
  HttpResult Do(const std::string& method, const std::string& path,
                const std::vector<std::string>& headers,
                const std::string& body = "") {
    absl::StatusOr<HttpResult> r =
        HttpDo(daemon_->port(), method, path, headers, body);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : HttpResult{};
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(ApiAuthTest, ReadsNeedAToken) {
  HttpResult r = Do("GET", "/v1/jobs", {});
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.body, HasSubstr("this request needs a token"));
  r = Do("GET", "/v1/jobs", {"Authorization: Bearer not-a-token-at-all"});
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.body, HasSubstr("not one of this server's"));
  r = Do("GET", "/v1/schedule/preview?expression=@daily", {kReader});
  EXPECT_EQ(r.status, 200) << r.body;
  // Health and metrics stay open (probes and Prometheus carry no token).
  EXPECT_EQ(Do("GET", "/healthz", {}).status, 200);
  EXPECT_EQ(Do("GET", "/metrics", {}).status, 200);
}

// A job that runs a command is code execution on the host: creating or
// changing one needs admin; an HTTP job needs write.
TEST_F(ApiAuthTest, JobsThatRunCommandsNeedTheAdminRole) {
  const std::string shell =
      R"({"schedule": "@daily", "shell": {"command": "id"}})";
  const std::string hook =
      R"({"schedule": "@daily", "http": {"url": "http://127.0.0.1:1/x"}})";
  HttpResult r = Do("PUT", "/v1/jobs/ops/cmd", {kReader, kJson}, shell);
  EXPECT_EQ(r.status, 403);
  r = Do("PUT", "/v1/jobs/ops/cmd", {kWriter, kJson}, shell);
  EXPECT_EQ(r.status, 403);
  EXPECT_THAT(r.body, HasSubstr("a job that runs a command needs role admin"));
  EXPECT_EQ(Do("GET", "/v1/jobs/ops/cmd", {kReader}).status, 404);
  r = Do("PUT", "/v1/jobs/ops/cmd", {kAdmin, kJson}, shell);
  EXPECT_EQ(r.status, 201) << r.body;
  r = Do("PUT", "/v1/jobs/ops/hook", {kWriter, kJson}, hook);
  EXPECT_EQ(r.status, 201) << r.body;
  // Turning the HTTP job into a command is a change that runs a command.
  r = Do("PATCH", "/v1/jobs/ops/hook", {kWriter, kJson},
         R"({"http": null, "shell": {"command": "id"}})");
  EXPECT_EQ(r.status, 403) << r.body;
  // Deleting, pausing and resuming need write only.
  EXPECT_EQ(Do("POST", "/v1/jobs/ops/cmd/pause", {kWriter}).status, 200);
  EXPECT_EQ(Do("DELETE", "/v1/jobs/ops/cmd", {kWriter}).status, 204);
  const nlohmann::json logged = daemon_->WaitForMsg("job deleted");
  ASSERT_FALSE(logged.is_null()) << daemon_->LogText();
  EXPECT_EQ(logged["token"], "ci");
  EXPECT_EQ(logged["job"], "ops/cmd");
}

TEST_F(ApiAuthTest, TriggerNeedsTheWriteRoleAndIsLoggedWithTheTokensName) {
  const std::string trigger = "/v1/jobs/default/report/trigger";
  HttpResult r = Do("POST", trigger, {kReader});
  EXPECT_EQ(r.status, 403);
  EXPECT_THAT(
      r.body,
      HasSubstr("token \\\"grafana\\\" has role read; this needs write"));
  r = Do("POST", trigger, {kWriter});
  ASSERT_EQ(r.status, 201) << r.body;
  const nlohmann::json made = nlohmann::json::parse(r.body);
  const int64_t run = made["run_id"];
  EXPECT_EQ(made["run"], absl::StrCat("/v1/jobs/default/report/runs/", run));
  const nlohmann::json logged = daemon_->WaitForMsg("job triggered");
  ASSERT_FALSE(logged.is_null()) << daemon_->LogText();
  EXPECT_EQ(logged["token"], "ci");
  EXPECT_EQ(logged["job"], "report");
  EXPECT_EQ(logged["detail"], absl::StrCat("run ", run));
  // The run happens, and its output is there to read.
  nlohmann::json got;
  for (int i = 0; i < 100; ++i) {
    r = Do("GET", made["run"], {kReader});
    got = nlohmann::json::parse(r.body, nullptr, false);
    if (r.status == 200 && got["state"] == "succeeded") break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(got["state"], "succeeded") << got.dump();
  EXPECT_EQ(got["manual"], true);
  EXPECT_EQ(got["attempts"][0]["output"], "triggered\n");
}

TEST_F(ApiAuthTest, WhoAmITellsTheTokensNameAndRole) {
  const std::vector<std::pair<const char*, nlohmann::json>> want = {
      {kReader, {{"name", "grafana"}, {"role", "read"}}},
      {kWriter, {{"name", "ci"}, {"role", "write"}}},
      {kAdmin, {{"name", "ops"}, {"role", "admin"}}},
  };
  for (const auto& [header, me] : want) {
    HttpResult r = Do("GET", "/v1/whoami", {header});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(nlohmann::json::parse(r.body), me) << header;
  }
  EXPECT_EQ(Do("GET", "/v1/whoami", {}).status, 401);
  EXPECT_EQ(Do("GET", "/v1/whoami", {"Authorization: Bearer wrong"}).status,
            401);
}

TEST_F(ApiAuthTest, UnknownJobsAndOperationsAreNotFound) {
  HttpResult r = Do("POST", "/v1/jobs/default/nope/trigger", {kWriter});
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body, HasSubstr("no job nope"));
  r = Do("POST", "/v1/jobs/default/report/explode", {kWriter});
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body, HasSubstr("no such operation"));
}

}  // namespace
}  // namespace chime::daemon_test
