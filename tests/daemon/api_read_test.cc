// The read-only REST routes (src/api/read_routes.h) on the real daemon: jobs
// from job files listed, filtered, paged and fetched; the schedule preview;
// errors as problem+json.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kJobs[] = R"(
jobs:
  - id: a
    namespace: ops
    schedule: "0 3 * * *"
    zone: Europe/Berlin
    labels: { team: data }
    shell: { command: "true" }
  - id: b
    namespace: ops
    schedule: "@every 10m"
    labels: { team: web }
    retry: { max_attempts: 3, initial_backoff: 10s }
    shell: { command: "true" }
  - id: c
    schedule: "0 4 * * *"
    labels: { team: data }
    http: { url: "http://127.0.0.1:1/hook" }
  - id: d
    schedule: "0 5 * * *"
    paused: true
    shell: { command: "true" }
  - id: e
    namespace: ops
    schedule: "0 6 * * *"
    shell: { command: "true" }
)";

class ApiReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("jobs/jobs.yaml", kJobs);
    auto d = DaemonProcess::Start(
        {.data_dir = dir_.path() + "/data", .jobs_dir = dir_.path() + "/jobs"});
    ASSERT_TRUE(d.ok()) << d.status();
    daemon_ = *std::move(d);
    // The jobs reach the store behind the load; wait until all are there.
    for (int i = 0; i < 200; ++i) {
      if (Names("/v1/jobs").size() == 5) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  nlohmann::json GetJson(const std::string& path, long want_status = 200) {
    absl::StatusOr<HttpResult> r = daemon_->Get(path);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return nullptr;
    EXPECT_EQ(r->status, want_status) << path << ": " << r->body;
    nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r->body;
    return j;
  }
  std::vector<std::string> Names(const std::string& path) {
    std::vector<std::string> names;
    absl::StatusOr<HttpResult> r = daemon_->Get(path);
    if (!r.ok() || r->status != 200) return names;
    const nlohmann::json page = nlohmann::json::parse(r->body);
    for (const auto& job : page["jobs"]) names.push_back(job["name"]);
    return names;
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(ApiReadTest, ListsJobsInTheJobFileShape) {
  const nlohmann::json page = GetJson("/v1/jobs");
  ASSERT_EQ(page["jobs"].size(), 5u);
  EXPECT_TRUE(page["next_cursor"].is_null());
  const nlohmann::json& b = page["jobs"][1];
  EXPECT_EQ(b["name"], "ops/b");
  EXPECT_EQ(b["spec"]["schedule"], "@every 10m");
  EXPECT_EQ(b["spec"]["retry"]["max_attempts"], 3);
  EXPECT_EQ(b["spec"]["retry"]["initial_backoff"], "10s");
  EXPECT_EQ(b["spec"]["shell"]["command"], "true");
  EXPECT_EQ(b["status"]["generation"], 1);
  EXPECT_EQ(b["status"]["paused"], false);
}

TEST_F(ApiReadTest, FiltersByNamespaceLabelAndPausedState) {
  EXPECT_THAT(Names("/v1/jobs?namespace=ops"),
              ElementsAre("ops/a", "ops/b", "ops/e"));
  EXPECT_THAT(Names("/v1/jobs?label=team%3Ddata"), ElementsAre("ops/a", "c"));
  EXPECT_THAT(Names("/v1/jobs?label=team=data&namespace=ops"),
              ElementsAre("ops/a"));
  EXPECT_THAT(Names("/v1/jobs?paused=true"), ElementsAre("d"));
}

TEST_F(ApiReadTest, PagesWithACursorUntilTheEnd) {
  std::vector<std::string> all;
  std::string path = "/v1/jobs?limit=2";
  int pages = 0;
  while (pages < 10) {
    const nlohmann::json page = GetJson(path);
    ++pages;
    for (const auto& job : page["jobs"]) all.push_back(job["name"]);
    if (page["next_cursor"].is_null()) break;
    path = "/v1/jobs?limit=2&cursor=" + page["next_cursor"].get<std::string>();
  }
  EXPECT_EQ(pages, 3);
  EXPECT_THAT(all, ElementsAre("ops/a", "ops/b", "c", "d", "ops/e"));
}

TEST_F(ApiReadTest, GetsOneJobWithItsNextFireTime) {
  const nlohmann::json job = GetJson("/v1/jobs/ops/a");
  EXPECT_EQ(job["name"], "ops/a");
  EXPECT_EQ(job["spec"]["zone"], "Europe/Berlin");
  EXPECT_EQ(job["spec"]["labels"]["team"], "data");
  ASSERT_TRUE(job["status"]["next_fire_time"].is_string()) << job.dump();
  // 03:00 in Berlin is 01:00 or 02:00 UTC.
  EXPECT_THAT(job["status"]["next_fire_time"].get<std::string>(),
              HasSubstr("T0"));
  const nlohmann::json paused = GetJson("/v1/jobs/default/d");
  EXPECT_EQ(paused["status"]["paused"], true);
  EXPECT_TRUE(paused["status"]["next_fire_time"].is_null());
}

TEST_F(ApiReadTest, ErrorsAreProblemsWithPreciseDetails) {
  nlohmann::json p = GetJson("/v1/jobs/ops/nope", 404);
  EXPECT_EQ(p["status"], 404);
  EXPECT_EQ(p["title"], "Not Found");
  EXPECT_EQ(p["detail"], "no job ops/nope");
  p = GetJson("/v1/jobs/ops", 404);
  EXPECT_THAT(p["detail"].get<std::string>(),
              HasSubstr("/v1/jobs/{namespace}/{id}"));
  p = GetJson("/v1/jobs?limit=0", 400);
  EXPECT_EQ(p["detail"], "limit: 0 is outside 1..1000");
  p = GetJson("/v1/jobs?limt=5", 400);
  EXPECT_THAT(p["detail"].get<std::string>(),
              StartsWith("unknown query parameter \"limt\""));
  p = GetJson("/v1/jobs?paused=maybe", 400);
  EXPECT_EQ(p["detail"], "paused: \"maybe\" is not true or false");
  p = GetJson("/v1/jobs?cursor=xyz", 400);
  EXPECT_THAT(p["detail"].get<std::string>(), HasSubstr("cursor"));
}

TEST_F(ApiReadTest, PreviewMarksTheDaylightSavingChange) {
  // Europe/Berlin springs forward on 2026-03-29 at 02:00 local: the 02:30
  // fire that day runs at the transition (03:00 CEST, 01:00 UTC).
  const nlohmann::json p = GetJson(
      "/v1/schedule/preview?expression=30+2+*+*+*&zone=Europe/Berlin"
      "&from=2026-03-27T12:00:00Z&count=3");
  EXPECT_EQ(p["zone"], "Europe/Berlin");
  EXPECT_THAT(p["description"].get<std::string>(), HasSubstr("02:30"));
  ASSERT_EQ(p["next"].size(), 3u);
  EXPECT_EQ(p["next"][0]["time"], "2026-03-28T01:30:00Z");
  EXPECT_EQ(p["next"][0]["local"], "2026-03-28T02:30:00+01:00");
  EXPECT_FALSE(p["next"][0].contains("offset_changed"));
  EXPECT_EQ(p["next"][1]["time"], "2026-03-29T01:00:00Z");
  EXPECT_EQ(p["next"][1]["local"], "2026-03-29T03:00:00+02:00");
  EXPECT_EQ(p["next"][1]["offset_changed"]["at"], "2026-03-29T01:00:00Z");
  EXPECT_EQ(p["next"][1]["offset_changed"]["before"], "+01:00");
  EXPECT_EQ(p["next"][1]["offset_changed"]["after"], "+02:00");
  EXPECT_EQ(p["next"][2]["local"], "2026-03-30T02:30:00+02:00");
}

TEST_F(ApiReadTest, PreviewRefusesBadInputNamingWhat) {
  nlohmann::json p = GetJson("/v1/schedule/preview?expression=0+0+32+*+*", 400);
  EXPECT_THAT(
      p["detail"].get<std::string>(),
      AllOf(StartsWith("expression: day-of-month"), HasSubstr("column")));
  p = GetJson("/v1/schedule/preview?expression=0+0+*+*+*&zone=Mars/Base", 400);
  EXPECT_THAT(p["detail"].get<std::string>(), StartsWith("zone: "));
  p = GetJson("/v1/schedule/preview", 400);
  EXPECT_EQ(p["detail"], "expression: required");
  p = GetJson("/v1/schedule/preview?expression=%zz", 400);
  EXPECT_THAT(p["detail"].get<std::string>(), HasSubstr("two hex digits"));
}

}  // namespace
}  // namespace chime::daemon_test
