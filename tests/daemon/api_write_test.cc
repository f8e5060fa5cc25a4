// Creating, changing, pausing and deleting jobs through the REST API
// (src/api/write_routes.cc, daemon/job_registry.h) on the real daemon: the
// success and error cases of each route, jobs of job files refused, API jobs
// kept across restarts, Idempotency-Key on POST.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::HasSubstr;

constexpr char kJson[] = "Content-Type: application/json";

constexpr char kFileJobs[] = R"(
jobs:
  - id: nightly
    namespace: ops
    schedule: "0 3 * * *"
    shell: { command: "true" }
)";

// An HTTP job (no command: no admin role needed) that never fires on its own.
constexpr char kHook[] =
    R"({"schedule": "0 0 1 1 *", "http": {"url": "http://127.0.0.1:1/x"}})";

class ApiWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("jobs/jobs.yaml", kFileJobs);
    ASSERT_NO_FATAL_FAILURE(Start());
  }
  void Start(bool wait_for_file_jobs = true) {
    auto d = DaemonProcess::StartIn(dir_);
    ASSERT_TRUE(d.ok()) << d.status();
    daemon_ = *std::move(d);
    // The job files' jobs reach the store behind the load.
    for (int i = 0; wait_for_file_jobs && i < 200; ++i) {
      absl::StatusOr<HttpResult> r = daemon_->Get("/v1/jobs?namespace=ops");
      if (r.ok() && r->body.find("ops/nightly") != std::string::npos) break;
      absl::SleepFor(absl::Milliseconds(25));
    }
  }
  void Restart() {
    ASSERT_EQ(daemon_->Terminate(), 0);
    daemon_.reset();
    ASSERT_NO_FATAL_FAILURE(Start());
  }
  HttpResult Do(const std::string& method, const std::string& path,
                const std::string& body = "",
                std::vector<std::string> headers = {kJson}) {
    absl::StatusOr<HttpResult> r =
        HttpDo(daemon_->port(), method, path, headers, body);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : HttpResult{};
  }
  nlohmann::json Job(const std::string& path) {
    HttpResult r = Do("GET", path);
    EXPECT_EQ(r.status, 200) << r.body;
    return nlohmann::json::parse(r.body, nullptr, false);
  }
  // The problem detail of a response that must be `status`.
  std::string Detail(const HttpResult& r, long status) {
    EXPECT_EQ(r.status, status) << r.body;
    nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
    if (!j.is_object() || !j.contains("detail")) return "";
    return j["detail"];
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(ApiWriteTest, PostCreatesAJobOnce) {
  const std::string body =
      R"({"id": "hook", "namespace": "web", "schedule": "0 0 1 1 *",
          "labels": {"team": "web"},
          "http": {"url": "http://127.0.0.1:1/x"}})";
  HttpResult r = Do("POST", "/v1/jobs", body);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.Header("Location"), "/v1/jobs/web/hook");
  const nlohmann::json made = nlohmann::json::parse(r.body);
  EXPECT_EQ(
      r.Header("ETag"),
      absl::StrCat("\"", made["status"]["revision"].get<int64_t>(), "\""));
  EXPECT_EQ(made["name"], "web/hook");
  EXPECT_EQ(made["spec"]["labels"]["team"], "web");
  EXPECT_EQ(made["status"]["managed_by"], "api");
  EXPECT_EQ(made["status"]["generation"], 1);
  const nlohmann::json got = Job("/v1/jobs/web/hook");
  EXPECT_EQ(got["spec"], made["spec"]);
  EXPECT_EQ(got["status"]["next_fire_time"], "2027-01-01T00:00:00Z");
  EXPECT_THAT(Detail(Do("POST", "/v1/jobs", body), 409),
              HasSubstr("job web/hook already exists; PUT /v1/jobs/web/hook "
                        "replaces it"));
}

TEST_F(ApiWriteTest, PutCreatesThenReplacesAndIfMatchGuardsAgainstLostUpdates) {
  // If-Match: * replaces only a job that exists.
  EXPECT_THAT(
      Detail(Do("PUT", "/v1/jobs/web/hook", kHook, {kJson, "If-Match: *"}),
             412),
      HasSubstr("job web/hook does not exist (If-Match: *)"));
  EXPECT_THAT(
      Detail(Do("DELETE", "/v1/jobs/web/hook", "", {"If-Match: *"}), 412),
      HasSubstr("does not exist"));
  HttpResult r = Do("PUT", "/v1/jobs/web/hook", kHook);
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string etag = r.Header("ETag");
  ASSERT_FALSE(etag.empty());
  const std::string changed =
      R"({"schedule": "*/5 * * * *", "http": {"url": "http://127.0.0.1:1/y"}})";
  r = Do("PUT", "/v1/jobs/web/hook", changed, {kJson, "If-Match: " + etag});
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json replaced = nlohmann::json::parse(r.body);
  EXPECT_EQ(replaced["spec"]["schedule"], "*/5 * * * *");
  // A changed schedule is a new generation: its fires never collide with
  // the old one's.
  EXPECT_EQ(replaced["status"]["generation"], 2);
  EXPECT_NE(r.Header("ETag"), etag);
  // The first writer's ETag is stale now.
  EXPECT_THAT(Detail(Do("PUT", "/v1/jobs/web/hook", kHook,
                        {kJson, "If-Match: " + etag}),
                     412),
              HasSubstr("has changed since revision"));
  EXPECT_THAT(
      Detail(Do("PUT", "/v1/jobs/web/hook", kHook, {kJson, "If-None-Match: *"}),
             409),
      HasSubstr("already exists"));
  EXPECT_EQ(Job("/v1/jobs/web/hook")["spec"]["schedule"], "*/5 * * * *");
  r = Do("PUT", "/v1/jobs/web/hook", kHook, {kJson, "If-Match: *"});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Do("DELETE", "/v1/jobs/web/hook", "", {"If-Match: *"}).status, 204);
}

TEST_F(ApiWriteTest, PatchMergesIntoTheStoredJob) {
  ASSERT_EQ(Do("PUT", "/v1/jobs/web/hook", kHook).status, 201);
  HttpResult r =
      Do("PATCH", "/v1/jobs/web/hook",
         R"({"retry": {"max_attempts": 4}, "labels": {"tier": "1"}})",
         {"Content-Type: application/merge-patch+json"});
  ASSERT_EQ(r.status, 200) << r.body;
  nlohmann::json job = nlohmann::json::parse(r.body);
  EXPECT_EQ(job["spec"]["retry"]["max_attempts"], 4);
  EXPECT_EQ(job["spec"]["labels"]["tier"], "1");
  EXPECT_EQ(job["spec"]["http"]["url"], "http://127.0.0.1:1/x");
  EXPECT_EQ(job["status"]["generation"], 1);  // the schedule is unchanged
  // null removes a field (back to its default).
  r = Do("PATCH", "/v1/jobs/web/hook", R"({"retry": null})");
  ASSERT_EQ(r.status, 200) << r.body;
  job = nlohmann::json::parse(r.body);
  EXPECT_FALSE(job["spec"].contains("retry")) << job;
  EXPECT_THAT(Detail(Do("PATCH", "/v1/jobs/web/hook",
                        R"({"retry": {"max_attempts": 0}})"),
                     400),
              HasSubstr("retry.max_attempts: 0 is below 1"));
  EXPECT_EQ(Detail(Do("PATCH", "/v1/jobs/web/nope", "{}"), 404),
            "no job web/nope");
}

TEST_F(ApiWriteTest, BadBodiesAreRefusedNamingWhatIsWrong) {
  const std::string path = "/v1/jobs/web/hook";
  EXPECT_THAT(Detail(Do("PUT", path, R"({"schedule": )"), 400),
              HasSubstr("body: not valid JSON: parse error at line 1"));
  EXPECT_THAT(Detail(Do("PUT", path, R"(["a"])"), 400),
              HasSubstr("body: a job is a JSON object, not array"));
  EXPECT_THAT(Detail(Do("PUT", path,
                        R"({"schedule": "@daily", "shedule": "x",
                    "http": {"url": "http://127.0.0.1:1/x"}})"),
                     400),
              HasSubstr("shedule"));
  EXPECT_THAT(Detail(Do("PUT", path,
                        R"({"schedule": "@daily", "retry": {"max_attempts":
                            "many"}, "http": {"url": "http://127.0.0.1:1/x"}})"),
                     400),
              HasSubstr("retry.max_attempts"));
  EXPECT_THAT(Detail(Do("PUT", path,
                        R"({"schedule": "61 * * * *",
                            "http": {"url": "http://127.0.0.1:1/x"}})"),
                     400),
              HasSubstr("schedule"));
  EXPECT_THAT(Detail(Do("PUT", path, R"({"id": "other", "schedule": "@daily",
                            "http": {"url": "http://127.0.0.1:1/x"}})"),
                     400),
              HasSubstr("id: \"other\" is not the path's \"hook\""));
  EXPECT_THAT(Detail(Do("PUT", path, kHook, {"Content-Type: text/plain"}), 415),
              HasSubstr("this takes application/json"));
  // Over the listener's body limit (1 MiB): refused before any handler.
  EXPECT_EQ(Do("PUT", path, std::string(2 << 20, ' ')).status, 413);
  // Nothing was created by any of them.
  EXPECT_EQ(Do("GET", path).status, 404);
}

TEST_F(ApiWriteTest, JobsOfJobFilesAreNotChangedThroughTheApi) {
  const nlohmann::json job = Job("/v1/jobs/ops/nightly");
  EXPECT_EQ(job["status"]["managed_by"], "file");
  EXPECT_EQ(job["status"]["file"], dir_.path() + "/jobs/jobs.yaml");
  const std::string because = "is defined by the job file " + dir_.path() +
                              "/jobs/jobs.yaml; change it there";
  EXPECT_THAT(Detail(Do("PUT", "/v1/jobs/ops/nightly", kHook), 409),
              HasSubstr(because));
  // A creation is refused by the store unread, then read to say why.
  EXPECT_THAT(
      Detail(Do("POST", "/v1/jobs",
                absl::StrCat(R"({"id": "nightly", "namespace": "ops", )",
                             std::string(kHook).substr(1))),
             409),
      HasSubstr(because));
  EXPECT_THAT(Detail(Do("PATCH", "/v1/jobs/ops/nightly", "{}"), 409),
              HasSubstr(because));
  EXPECT_THAT(Detail(Do("DELETE", "/v1/jobs/ops/nightly"), 409),
              HasSubstr(because));
  EXPECT_THAT(Detail(Do("POST", "/v1/jobs/ops/nightly/pause"), 409),
              HasSubstr(because));
  // Running it now does not change its definition.
  EXPECT_EQ(Do("POST", "/v1/jobs/ops/nightly/trigger").status, 201);
  EXPECT_EQ(Job("/v1/jobs/ops/nightly")["status"]["revision"],
            job["status"]["revision"]);
}

// Clients changing jobs at once are written in batches (one commit each,
// daemon/job_registry.h): every change is answered as if alone -- each new
// job created once, two changes of one job one after the other -- and
// everything answered is there after a restart.
TEST_F(ApiWriteTest, ChangesFromManyClientsAtOnceAreEachAnsweredAndKept) {
  constexpr int kClients = 16;
  constexpr int kJobsPerClient = 8;
  std::vector<std::vector<long>> created(kClients), shared(kClients);
  std::vector<std::vector<int64_t>> revisions(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int j = 0; j < kJobsPerClient; ++j) {
        absl::StatusOr<HttpResult> r = HttpDo(
            daemon_->port(), "POST", "/v1/jobs", {kJson},
            absl::StrCat(R"({"id": "c)", c, "-", j,
                         R"(", "namespace": "many", "schedule": "0 0 1 1 *",)",
                         R"( "http": {"url": "http://127.0.0.1:1/x"}})"));
        created[c].push_back(r.ok() ? r->status : 0);
        // Every client also replaces one job every client changes, each
        // time with another definition.
        r = HttpDo(
            daemon_->port(), "PUT", "/v1/jobs/many/shared", {kJson},
            absl::StrCat(R"({"schedule": "0 0 1 1 *", "labels": )",
                         R"({"by": "c)", c, "-", j, R"("},)",
                         R"( "http": {"url": "http://127.0.0.1:1/x"}})"));
        shared[c].push_back(r.ok() ? r->status : 0);
        if (r.ok() && (r->status == 200 || r->status == 201)) {
          revisions[c].push_back(
              nlohmann::json::parse(r->body)["status"]["revision"]);
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  int shared_created = 0;
  std::vector<int64_t> all_revisions;
  for (int c = 0; c < kClients; ++c) {
    EXPECT_THAT(created[c], ::testing::Each(201)) << "client " << c;
    for (long status : shared[c]) {
      EXPECT_TRUE(status == 200 || status == 201) << status;
      shared_created += status == 201;
    }
    all_revisions.insert(all_revisions.end(), revisions[c].begin(),
                         revisions[c].end());
  }
  EXPECT_EQ(shared_created, 1);
  // Each change was its own write (an unchanged definition would keep its
  // revision).
  std::sort(all_revisions.begin(), all_revisions.end());
  EXPECT_EQ(std::adjacent_find(all_revisions.begin(), all_revisions.end()),
            all_revisions.end());
  EXPECT_EQ(all_revisions.size(), size_t{kClients * kJobsPerClient});
  ASSERT_NO_FATAL_FAILURE(Restart());
  const nlohmann::json listed = Job("/v1/jobs?namespace=many&limit=1000");
  EXPECT_EQ(listed["jobs"].size(), size_t{kClients * kJobsPerClient + 1});
}

// Creations, replacements and deletions of the same few jobs from many
// clients at once (two batches of puts may be under way at a time, beside
// the deletes): in the end the scheduler has exactly the jobs the store has,
// each in the version the store has.
TEST_F(ApiWriteTest,
       ConcurrentChangesOfTheSameJobsLeaveStoreAndSchedulerAgreeing) {
  constexpr int kClients = 12;
  constexpr int kRounds = 12;
  constexpr int kJobs = 4;
  std::vector<std::thread> clients;
  std::atomic<int> unexpected{0};
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) {
        const int job = (c + r) % kJobs;
        const std::string path = absl::StrCat("/v1/jobs/same/j", job);
        // Each version fires on its own day of January.
        const std::string body =
            absl::StrCat(R"({"schedule": "0 0 )", 1 + (c * kRounds + r) % 28,
                         R"( 1 *", "http": {"url": "http://127.0.0.1:1/x"}})");
        absl::StatusOr<HttpResult> res;
        long ok1 = 0, ok2 = 0;
        switch ((c * 7 + r) % 3) {
          case 0:
            res = HttpDo(daemon_->port(), "PUT", path, {kJson}, body);
            ok1 = 200, ok2 = 201;
            break;
          case 1:
            res = HttpDo(daemon_->port(), "DELETE", path, {}, "");
            ok1 = 204, ok2 = 404;
            break;
          default:
            res = HttpDo(
                daemon_->port(), "POST", "/v1/jobs", {kJson},
                absl::StrCat(R"({"id": "j)", job, R"(", "namespace": "same", )",
                             body.substr(1)));
            ok1 = 201, ok2 = 409;
        }
        if (!res.ok() || (res->status != ok1 && res->status != ok2)) {
          ++unexpected;
          ADD_FAILURE() << path << ": "
                        << (res.ok() ? absl::StrCat(res->status, " ", res->body)
                                     : res.status().ToString());
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  ASSERT_EQ(unexpected.load(), 0);
  int in_store = 0;
  for (int job = 0; job < kJobs; ++job) {
    HttpResult r = Do("GET", absl::StrCat("/v1/jobs/same/j", job));
    if (r.status == 404) continue;
    ASSERT_EQ(r.status, 200) << r.body;
    ++in_store;
    const nlohmann::json j = nlohmann::json::parse(r.body);
    // "0 0 <day> 1 *": the scheduler's next fire is that day of January.
    const std::string schedule = j["spec"]["schedule"];
    const std::string day = schedule.substr(4, schedule.find(' ', 4) - 4);
    ASSERT_TRUE(j["status"].contains("next_fire_time")) << r.body;
    EXPECT_THAT(std::string(j["status"]["next_fire_time"]),
                HasSubstr(absl::StrCat("-01-", day.size() == 1 ? "0" : "", day,
                                       "T00:00:00Z")))
        << r.body;
  }
  const nlohmann::json status = Job("/v1/status");
  // The job files' one job besides.
  EXPECT_EQ(status["scheduler"]["jobs"], in_store + 1) << status.dump();
}

TEST_F(ApiWriteTest, PauseResumeAndDelete) {
  ASSERT_EQ(Do("PUT", "/v1/jobs/web/hook", kHook).status, 201);
  HttpResult r = Do("POST", "/v1/jobs/web/hook/pause");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["status"]["paused"], true);
  EXPECT_EQ(Job("/v1/jobs/web/hook")["status"]["paused"], true);
  // Pausing twice is no error.
  EXPECT_EQ(Do("POST", "/v1/jobs/web/hook/pause").status, 200);
  r = Do("POST", "/v1/jobs/web/hook/resume");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["status"]["paused"], false);
  EXPECT_EQ(nlohmann::json::parse(r.body)["status"]["next_fire_time"],
            "2027-01-01T00:00:00Z");
  EXPECT_EQ(Detail(Do("POST", "/v1/jobs/web/nope/pause"), 404),
            "no job web/nope");

  r = Do("DELETE", "/v1/jobs/web/hook", "", {"If-Match: \"1\""});
  EXPECT_THAT(Detail(r, 412), HasSubstr("has changed since revision 1"));
  EXPECT_EQ(Do("DELETE", "/v1/jobs/web/hook").status, 204);
  EXPECT_EQ(Do("GET", "/v1/jobs/web/hook").status, 404);
  EXPECT_EQ(Detail(Do("DELETE", "/v1/jobs/web/hook"), 404), "no job web/hook");
  // Created again, it continues the old generation: fires of the two lives
  // never share an id.
  r = Do("PUT", "/v1/jobs/web/hook", kHook);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["status"]["generation"], 2);
}

TEST_F(ApiWriteTest, ApiJobsRunAndOutliveRestartsWithTheirPauseState) {
  // A job created through the API runs.
  HttpResult r = Do("PUT", "/v1/jobs/web/tick",
                    R"({"schedule": "@every 1s",
                        "shell": {"command": "echo tick"}})");
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_FALSE(daemon_->WaitForMsg("run succeeded", "web/tick:").is_null())
      << daemon_->LogText();
  ASSERT_EQ(Do("PUT", "/v1/jobs/web/hook", kHook).status, 201);
  ASSERT_EQ(Do("POST", "/v1/jobs/web/hook/pause").status, 200);
  ASSERT_NO_FATAL_FAILURE(Restart());
  // Both come back, the paused one paused, and the first runs again.
  EXPECT_EQ(Job("/v1/jobs/web/hook")["status"]["paused"], true);
  EXPECT_EQ(Job("/v1/jobs/web/tick")["status"]["managed_by"], "api");
  ASSERT_FALSE(daemon_->WaitForMsg("run succeeded", "web/tick:").is_null())
      << daemon_->LogText();
}

// A job created through the API is decided from its creation on, also when
// the daemon dies right after answering: its watermark is written with it, so
// the fires of the downtime are accounted for after the restart, none
// silently dropped.
TEST_F(ApiWriteTest, AJobCreatedJustBeforeACrashHasItsDowntimeFiresRecorded) {
  HttpResult r = Do("PUT", "/v1/jobs/web/tick",
                    R"({"schedule": "@every 1s",
                        "misfire": {"policy": "skip", "threshold": "1s"},
                        "shell": {"command": "true"}})");
  ASSERT_EQ(r.status, 201) << r.body;
  daemon_->Kill();
  const nlohmann::json made = nlohmann::json::parse(r.body);
  ASSERT_TRUE(made["status"]["watermark"].is_string()) << r.body;
  absl::Time created;
  std::string error;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full,
                              made["status"]["watermark"].get<std::string>(),
                              &created, &error))
      << error;
  absl::SleepFor(absl::Seconds(4));
  ASSERT_NO_FATAL_FAILURE(Start());
  // The downtime's fires are missed (skip), from one of the first two after
  // the creation on (the first may have run before the kill). They are
  // recorded by the scheduler's first pass, just after the start.
  nlohmann::json page;
  for (int i = 0; i < 100; ++i) {
    page = Job("/v1/jobs/web/tick/missed");
    if (!page["missed"].empty()) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_FALSE(page["missed"].empty()) << page.dump();
  // Oldest first (docs/api.md): a later range (an overlap of a run after
  // the restart) may follow the downtime's.
  const nlohmann::json& first = page["missed"].front();
  EXPECT_EQ(first["reason"], "misfire_skip") << page.dump();
  absl::Time first_missed;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full,
                              first["first"].get<std::string>(), &first_missed,
                              &error))
      << error;
  EXPECT_GT(first_missed, created);
  EXPECT_LE(first_missed, created + absl::Seconds(2)) << page.dump();
}

TEST_F(ApiWriteTest, JobsOfFilesRemovedWhileDownAreDeletedAtStart) {
  ASSERT_EQ(daemon_->Terminate(), 0);
  daemon_.reset();
  dir_.Write("jobs/jobs.yaml", "jobs: []\n");
  ASSERT_NO_FATAL_FAILURE(Start(/*wait_for_file_jobs=*/false));
  EXPECT_EQ(Do("GET", "/v1/jobs/ops/nightly").status, 404);
  EXPECT_FALSE(daemon_->WaitForMsg("job deleted: its file no longer defines it")
                   .is_null());
}

TEST_F(ApiWriteTest, IdempotencyKeyAnswersARepeatedPostWithTheFirstAnswer) {
  // overlap allow: a trigger is never refused because the last run is still
  // going.
  const std::string body = R"({"id": "hook", "schedule": "0 0 1 1 *",
                               "overlap": "allow",
                               "http": {"url": "http://127.0.0.1:1/x"}})";
  HttpResult first =
      Do("POST", "/v1/jobs", body, {kJson, "Idempotency-Key: create-hook-1"});
  ASSERT_EQ(first.status, 201) << first.body;
  HttpResult again =
      Do("POST", "/v1/jobs", body, {kJson, "Idempotency-Key: create-hook-1"});
  EXPECT_EQ(again.status, 201) << again.body;
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(again.Header("Idempotent-Replayed"), "true");
  EXPECT_EQ(again.Header("Location"), "/v1/jobs/default/hook");
  // Without the key the second create is a conflict.
  EXPECT_EQ(Do("POST", "/v1/jobs", body).status, 409);
  // The same key for another request is refused.
  EXPECT_THAT(Detail(Do("POST", "/v1/jobs", kHook,
                        {kJson, "Idempotency-Key: create-hook-1"}),
                     422),
              HasSubstr("was used for a different request"));
  // A triggered run is started once per key.
  const std::vector<std::string> key = {"Idempotency-Key: run-1"};
  HttpResult run1 = Do("POST", "/v1/jobs/default/hook/trigger", "", key);
  ASSERT_EQ(run1.status, 201) << run1.body;
  HttpResult run2 = Do("POST", "/v1/jobs/default/hook/trigger", "", key);
  EXPECT_EQ(run2.body, run1.body);
  HttpResult run3 = Do("POST", "/v1/jobs/default/hook/trigger", "", {});
  ASSERT_EQ(run3.status, 201) << run3.body;
  EXPECT_NE(nlohmann::json::parse(run3.body)["run_id"],
            nlohmann::json::parse(run1.body)["run_id"]);
  // Keys outlive a restart (they are in the store).
  ASSERT_NO_FATAL_FAILURE(Restart());
  EXPECT_EQ(Do("POST", "/v1/jobs/default/hook/trigger", "", key).body,
            run1.body);
}

// Waits (at most 20 s) until run `run` of `job` is in `state`; its JSON.
nlohmann::json WaitForRunState(const DaemonProcess& d, const std::string& job,
                               int64_t run, const std::string& state) {
  nlohmann::json last;
  for (int i = 0; i < 400; ++i) {
    absl::StatusOr<HttpResult> r =
        d.Get(absl::StrCat("/v1/jobs/", job, "/runs/", run));
    if (r.ok() && r->status == 200) {
      last = nlohmann::json::parse(r->body);
      if (last["state"] == state) return last;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  ADD_FAILURE() << "run " << run << " never " << state << ": " << last;
  return nullptr;
}

TEST_F(ApiWriteTest, CancelStopsARunningAttemptAndRetryRunsTheJobAgain) {
  ASSERT_EQ(Do("PUT", "/v1/jobs/web/slow",
               R"({"schedule": "0 0 1 1 *", "retry": {"max_attempts": 3},
                   "shell": {"command": "sleep 30"}})")
                .status,
            201);
  HttpResult r = Do("POST", "/v1/jobs/web/slow/trigger");
  ASSERT_EQ(r.status, 201) << r.body;
  const int64_t run = nlohmann::json::parse(r.body)["run_id"];
  ASSERT_FALSE(WaitForRunState(*daemon_, "web/slow", run, "running").is_null());
  // A running run cannot be retried.
  EXPECT_THAT(
      Detail(Do("POST", absl::StrCat("/v1/jobs/web/slow/runs/", run, "/retry")),
             409),
      HasSubstr("is running; only a failed, cancelled or lost run"));
  r = Do("POST", absl::StrCat("/v1/jobs/web/slow/runs/", run, "/cancel"));
  ASSERT_EQ(r.status, 202) << r.body;
  const nlohmann::json done =
      WaitForRunState(*daemon_, "web/slow", run, "cancelled");
  ASSERT_FALSE(done.is_null());
  EXPECT_THAT(done["detail"].get<std::string>(),
              HasSubstr("cancelled through the API"));
  ASSERT_EQ(done["attempts"].size(), 1u);  // not retried
  EXPECT_THAT(Detail(Do("POST", absl::StrCat("/v1/jobs/web/slow/runs/", run,
                                             "/cancel")),
                     409),
              HasSubstr("is not going (cancelled)"));
  r = Do("POST", absl::StrCat("/v1/jobs/web/slow/runs/", run, "/retry"));
  ASSERT_EQ(r.status, 201) << r.body;
  const nlohmann::json again = nlohmann::json::parse(r.body);
  EXPECT_EQ(again["retry_of"], run);
  EXPECT_NE(again["run_id"], run);
  EXPECT_FALSE(WaitForRunState(*daemon_, "web/slow", again["run_id"], "running")
                   .is_null());
  // A run of another job, or none, is 404.
  ASSERT_EQ(Do("PUT", "/v1/jobs/web/hook", kHook).status, 201);
  EXPECT_EQ(Do("POST", absl::StrCat("/v1/jobs/web/hook/runs/", run, "/cancel"))
                .status,
            404);
  EXPECT_EQ(Do("POST", "/v1/jobs/web/slow/runs/999999/cancel").status, 404);
}

}  // namespace
}  // namespace chime::daemon_test
