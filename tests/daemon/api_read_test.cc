// The read-only REST routes (src/api/read_routes.h) on the real daemon: jobs
// from job files listed, filtered, paged and fetched; the schedule preview;
// errors as problem+json.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/openapi_doc.h"
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
  // Starts the daemon on a jobs directory holding `yaml`.
  void StartWith(const char* yaml) {
    dir_.Write("jobs/jobs.yaml", yaml);
    auto d = DaemonProcess::StartIn(dir_);
    ASSERT_TRUE(d.ok()) << d.status();
    daemon_ = *std::move(d);
  }
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartWith(kJobs));
    // The jobs reach the store behind the load; wait until all are there.
    for (int i = 0; i < 200; ++i) {
      if (Names("/v1/jobs").size() == 5) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
  }

  nlohmann::json GetJson(const std::string& path, long want_status = 200) {
    return daemon_->GetJson(path, want_status);
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

TEST_F(ApiReadTest, SearchesPartOfTheNameInAnyCase) {
  EXPECT_THAT(Names("/v1/jobs?search=OPS%2F"),
              ElementsAre("ops/a", "ops/b", "ops/e"));
  EXPECT_THAT(Names("/v1/jobs?search=c"), ElementsAre("c"));
  EXPECT_THAT(Names("/v1/jobs?search=s/b"), ElementsAre("ops/b"));
  EXPECT_THAT(Names("/v1/jobs?search=ops&paused=true"), ElementsAre());
  EXPECT_THAT(Names("/v1/jobs?search=nothing-like-it"), ElementsAre());
}

TEST_F(ApiReadTest, LastRunIsNullForAJobThatNeverRanAndAbsentUnlessAsked) {
  const nlohmann::json with = GetJson("/v1/jobs?last_run=true");
  ASSERT_EQ(with["jobs"].size(), 5u);
  for (const auto& job : with["jobs"]) {
    ASSERT_TRUE(job.contains("last_run")) << job.dump();
    EXPECT_TRUE(job["last_run"].is_null()) << job.dump();
  }
  const nlohmann::json without = GetJson("/v1/jobs");
  EXPECT_FALSE(without["jobs"][0].contains("last_run"));
  const nlohmann::json bad = GetJson("/v1/jobs?last_run=yes", 400);
  EXPECT_EQ(bad["detail"], "last_run: \"yes\" is not true or false");
}

TEST_F(ApiReadTest, ListingShowsEachScheduleInWordsAndItsNextTime) {
  const nlohmann::json page = GetJson("/v1/jobs");
  ASSERT_EQ(page["jobs"].size(), 5u);
  const nlohmann::json& a = page["jobs"][0]["status"];
  EXPECT_EQ(a["schedule_description"], "At 03:00, Europe/Berlin");
  // 03:00 in Berlin is 01:00 or 02:00 UTC, within a day from now.
  const std::string next = a["next_fire_time"];
  EXPECT_THAT(next, ::testing::MatchesRegex(".*T0[12]:00:00Z"));
  // d is paused: no next fire.
  EXPECT_EQ(page["jobs"][3]["name"], "d");
  EXPECT_TRUE(page["jobs"][3]["status"]["next_fire_time"].is_null());
  EXPECT_EQ(GetJson("/v1/jobs/ops/a")["status"]["schedule_description"],
            "At 03:00, Europe/Berlin");
}

TEST_F(ApiReadTest, WhoAmIWithoutTokensIsAnAnonymousAdmin) {
  const nlohmann::json me = GetJson("/v1/whoami");
  EXPECT_TRUE(me["name"].is_null());
  EXPECT_EQ(me["role"], "admin");
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

TEST_F(ApiReadTest, AJobsNextFireTimesFollowItsZoneAcrossDaylightSaving) {
  // ops/a runs at 03:00 Europe/Berlin, which springs forward on 2026-03-29.
  const nlohmann::json n =
      GetJson("/v1/jobs/ops/a/next?from=2026-03-27T12:00:00Z&count=3");
  EXPECT_EQ(n["name"], "ops/a");
  EXPECT_EQ(n["zone"], "Europe/Berlin");
  ASSERT_EQ(n["next"].size(), 3u);
  EXPECT_EQ(n["next"][0]["time"], "2026-03-28T02:00:00Z");
  EXPECT_EQ(n["next"][0]["local"], "2026-03-28T03:00:00+01:00");
  EXPECT_EQ(n["next"][1]["time"], "2026-03-29T01:00:00Z");
  EXPECT_EQ(n["next"][1]["local"], "2026-03-29T03:00:00+02:00");
  EXPECT_EQ(n["next"][1]["offset_changed"]["after"], "+02:00");
  EXPECT_EQ(n["next"][2]["time"], "2026-03-30T01:00:00Z");
  EXPECT_EQ(GetJson("/v1/jobs/default/d/next?count=1")["paused"], true);
  EXPECT_EQ(GetJson("/v1/jobs/ops/a/next?count=0", 400)["detail"],
            "count: 0 is outside 1..1000");
}

TEST_F(ApiReadTest, FilteredPagesNeitherSkipNorRepeat) {
  for (const auto& [query, want] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"namespace=ops", {"ops/a", "ops/b", "ops/e"}},
           {"label=team=data", {"ops/a", "c"}},
           {"paused=false", {"ops/a", "ops/b", "c", "ops/e"}}}) {
    std::vector<std::string> all;
    std::string path = "/v1/jobs?limit=1&" + query;
    int pages = 0;
    for (; pages < 10; ++pages) {
      const nlohmann::json page = GetJson(path);
      for (const auto& job : page["jobs"]) all.push_back(job["name"]);
      if (page["next_cursor"].is_null()) break;
      path = "/v1/jobs?limit=1&" + query +
             "&cursor=" + page["next_cursor"].get<std::string>();
    }
    EXPECT_EQ(all, want) << query;
    // One page per match, and at most one empty page at the end (the
    // server stops at the limit without looking further).
    EXPECT_LE(pages + 1, static_cast<int>(want.size()) + 1) << query;
  }
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

// docs/openapi.yaml's query parameters are the ones the daemon takes (it
// refuses unknown ones): each is sent on its own to the route.
TEST_F(ApiReadTest, EveryDocumentedQueryParameterIsAccepted) {
  absl::StatusOr<std::vector<testing::DocumentedOperation>> ops =
      testing::ReadOpenApi(CHIME_SOURCE_DIR "/docs/openapi.yaml");
  ASSERT_TRUE(ops.ok()) << ops.status();
  int checked = 0;
  for (const testing::DocumentedOperation& op : *ops) {
    for (const std::string& param : op.query_params) {
      const std::string path =
          absl::StrCat(op.SamplePath("default", "c"), "?", param, "=1");
      absl::StatusOr<HttpResult> r;
      if (op.method == "GET") {
        // Read as a stream: an event stream's answer does not end; its
        // head says the parameter was taken.
        absl::StatusOr<StreamedResult> streamed =
            HttpStream(daemon_->port(), path, {}, [](const HttpResult& so_far) {
              return absl::StrContains(so_far.Header("Content-Type"),
                                       "text/event-stream");
            });
        if (streamed.ok()) {
          r = streamed->http;
        } else {
          r = streamed.status();
        }
      } else {
        r = HttpDo(daemon_->port(), op.method, path, {});
      }
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_THAT(r->body, Not(HasSubstr("unknown query parameter")))
          << op.method << " " << path;
      ++checked;
    }
  }
  EXPECT_GE(checked, 15);
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

constexpr char kRunningJobs[] = R"(
jobs:
  - id: hello
    schedule: "@every 1s"
    shell: { command: "echo hello-$CHIME_ATTEMPT" }
  - id: fails
    schedule: "@every 1s"
    shell: { command: "echo oops >&2; exit 3" }
  - id: slow
    schedule: "@every 1s"
    overlap: skip
    shell: { command: "sleep 2.5" }
)";

class ApiRunsTest : public ApiReadTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartWith(kRunningJobs));
    // The job reaches the store behind the load.
    for (int i = 0; i < 200; ++i) {
      absl::StatusOr<HttpResult> r = daemon_->Get("/v1/jobs/default/hello");
      if (r.ok() && r->status == 200) break;
      absl::SleepFor(absl::Milliseconds(25));
    }
  }
  // Polls `path` (at most 20 s) until its `key` array has `n` items.
  nlohmann::json WaitForItems(const std::string& path, const std::string& key,
                              size_t n) {
    nlohmann::json page;
    for (int i = 0; i < 200; ++i) {
      absl::StatusOr<HttpResult> r = daemon_->Get(path);
      if (r.ok() && r->status == 200) {
        page = nlohmann::json::parse(r->body);
        if (page[key].size() >= n) return page;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    ADD_FAILURE() << path << " never had " << n << " " << key << ": "
                  << page.dump();
    return page;
  }
};

TEST_F(ApiRunsTest, ListsAJobsRunsNewestFirstAndPages) {
  WaitForItems("/v1/jobs/default/hello/runs?state=succeeded", "runs", 4);
  const nlohmann::json three =
      GetJson("/v1/jobs/default/hello/runs?state=succeeded&limit=3");
  ASSERT_EQ(three["runs"].size(), 3u);
  EXPECT_TRUE(three["next_cursor"].is_string());
  std::vector<std::string> times;
  for (const auto& run : three["runs"]) {
    EXPECT_EQ(run["state"], "succeeded");
    EXPECT_THAT(run["fire_id"].get<std::string>(), StartsWith("hello:1:"));
    times.push_back(run["scheduled_time"]);
  }
  EXPECT_GT(times[0], times[1]);
  EXPECT_GT(times[1], times[2]);
  // The second page goes on after the first, without repeating it.
  const nlohmann::json one =
      GetJson("/v1/jobs/default/hello/runs?state=succeeded&limit=1");
  const nlohmann::json next =
      GetJson("/v1/jobs/default/hello/runs?state=succeeded&limit=1&cursor=" +
              one["next_cursor"].get<std::string>());
  ASSERT_EQ(next["runs"].size(), 1u);
  EXPECT_LT(next["runs"][0]["scheduled_time"],
            one["runs"][0]["scheduled_time"]);
}

TEST_F(ApiRunsTest, ARunShowsItsAttemptsOutputAndTransitions) {
  const nlohmann::json page =
      WaitForItems("/v1/jobs/default/hello/runs?state=succeeded", "runs", 1);
  const int64_t id = page["runs"][0]["id"];
  const nlohmann::json run =
      GetJson(absl::StrCat("/v1/jobs/default/hello/runs/", id));
  EXPECT_EQ(run["state"], "succeeded");
  ASSERT_EQ(run["attempts"].size(), 1u);
  EXPECT_EQ(run["attempts"][0]["output"], "hello-1\n");
  EXPECT_EQ(run["attempts"][0]["exit_code"], 0);
  EXPECT_TRUE(run["attempts"][0]["finished_at"].is_string());
  std::vector<std::string> to;
  for (const auto& t : run["transitions"]) to.push_back(t["to"]);
  EXPECT_THAT(to, ElementsAre("running", "succeeded"));

  const nlohmann::json failed =
      WaitForItems("/v1/jobs/default/fails/runs?state=failed", "runs", 1);
  const nlohmann::json f = GetJson(absl::StrCat(
      "/v1/jobs/default/fails/runs/", failed["runs"][0]["id"].get<int64_t>()));
  EXPECT_EQ(f["attempts"][0]["exit_code"], 3);
  EXPECT_EQ(f["attempts"][0]["output"], "oops\n");
  // A run of another job is not found under this one.
  const nlohmann::json p =
      GetJson(absl::StrCat("/v1/jobs/default/fails/runs/", id), 404);
  EXPECT_EQ(p["detail"], absl::StrCat("no run ", id, " of job fails"));
}

TEST_F(ApiRunsTest, ListedJobsCarryTheirNewestRun) {
  const nlohmann::json failed =
      WaitForItems("/v1/jobs/default/fails/runs?state=failed", "runs", 1);
  const int64_t seen = failed["runs"][0]["id"];
  const nlohmann::json page = GetJson("/v1/jobs?search=fails&last_run=true");
  ASSERT_EQ(page["jobs"].size(), 1u);
  const nlohmann::json& last = page["jobs"][0]["last_run"];
  ASSERT_TRUE(last.is_object()) << page.dump();
  // The job runs every second: its newest run is the failed one seen or a
  // later one.
  EXPECT_GE(last["id"].get<int64_t>(), seen);
  EXPECT_GE(last["scheduled_time"].get<std::string>(),
            failed["runs"][0]["scheduled_time"].get<std::string>());
  EXPECT_THAT(last["state"].get<std::string>(),
              ::testing::AnyOf("pending", "running", "retrying", "failed"));
}

TEST_F(ApiRunsTest, CountsRunsPerMinuteByState) {
  WaitForItems("/v1/jobs/default/hello/runs?state=succeeded", "runs", 3);
  WaitForItems("/v1/jobs/default/fails/runs?state=failed", "runs", 1);
  const nlohmann::json counts = GetJson("/v1/runs/per-minute?minutes=5");
  ASSERT_EQ(counts["minutes"].size(), 5u);
  int64_t succeeded = 0, failed = 0, all = 0;
  std::string previous;
  for (const auto& m : counts["minutes"]) {
    const std::string minute = m["minute"];
    EXPECT_THAT(minute, ::testing::MatchesRegex(".*T..:..:00Z"));
    EXPECT_GT(minute, previous);  // oldest first
    previous = minute;
    succeeded += m["succeeded"].get<int64_t>();
    failed += m["failed"].get<int64_t>();
    for (const char* state : {"pending", "running", "retrying", "succeeded",
                              "failed", "cancelled", "lost"})
      all += m[state].get<int64_t>();
  }
  // The counts lag the listings read above by at most the runs since.
  EXPECT_GE(succeeded, 3);
  EXPECT_GE(failed, 1);
  EXPECT_EQ(all, counts["runs_counted"].get<int64_t>());
  EXPECT_EQ(counts["capped"], false);
  const nlohmann::json none =
      GetJson("/v1/runs/per-minute?minutes=5&namespace=elsewhere");
  EXPECT_EQ(none["runs_counted"], 0);
  EXPECT_EQ(GetJson("/v1/runs/per-minute?minutes=0", 400)["detail"],
            "minutes: 0 is outside 1..1440");
}

TEST_F(ApiRunsTest, MissedFiresSayWhy) {
  // `slow` runs 2.5 s every second with overlap skip: the fires in between
  // are recorded skipped.
  const nlohmann::json page =
      WaitForItems("/v1/jobs/default/slow/missed", "missed", 1);
  const nlohmann::json& m = page["missed"][0];
  EXPECT_EQ(m["reason"], "overlap");
  EXPECT_GE(m["count"].get<int64_t>(), 1);
  EXPECT_LE(m["first"], m["last"]);
}

TEST_F(ApiRunsTest, BadHistoryQueriesAreProblems) {
  nlohmann::json p = GetJson("/v1/jobs/default/hello/runs?state=done", 400);
  EXPECT_THAT(p["detail"].get<std::string>(),
              StartsWith("state: \"done\" is not one of pending"));
  p = GetJson("/v1/jobs/default/hello/runs?from=yesterday", 400);
  EXPECT_THAT(p["detail"].get<std::string>(), StartsWith("from: "));
  p = GetJson("/v1/jobs/default/hello/runs?cursor=12", 400);
  EXPECT_THAT(p["detail"].get<std::string>(), HasSubstr("cursor"));
  p = GetJson("/v1/jobs/default/hello/runs/abc", 404);
  p = GetJson("/v1/jobs/default/hello/bogus", 404);
  p = GetJson("/v1/jobs/default/nope/runs", 404);
  EXPECT_EQ(p["detail"], "no job nope");
}

}  // namespace
}  // namespace chime::daemon_test
