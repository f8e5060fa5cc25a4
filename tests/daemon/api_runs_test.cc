// Every job's runs and the dead letters (src/api/run_routes.h) on the real
// daemon: GET /v1/runs across jobs, with the jobs' names and links, its
// filters, GET /v1/dead-letters, and paging through 10,000 runs written into
// the daemon's store before it starts.
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chime/job.h"
#include "chime/store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/sqlite_store.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string FormatUtc(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

absl::Time ParseUtc(const nlohmann::json& text) {
  absl::Time t;
  std::string error;
  EXPECT_TRUE(
      absl::ParseTime(absl::RFC3339_full, text.get<std::string>(), &t, &error))
      << text << ": " << error;
  return t;
}

// A run's path from its job's name ("ops/ok", "bad") and id.
std::string RunPath(const std::string& job, int64_t id) {
  const size_t slash = job.find('/');
  const std::string path =
      slash == std::string::npos ? absl::StrCat("default/", job) : job;
  return absl::StrCat("/v1/jobs/", path, "/runs/", id);
}

class ApiRunsBase : public ::testing::Test {
 protected:
  nlohmann::json GetJson(const std::string& path, long want_status = 200) {
    return daemon_->GetJson(path, want_status);
  }
  // Every run of a listing as (id, job name), following next_cursor from
  // `path` (which has a query) until it is null; *pages counts the pages
  // read.
  std::vector<std::pair<int64_t, std::string>> All(const std::string& path,
                                                   int* pages) {
    std::vector<std::pair<int64_t, std::string>> runs;
    std::string next = path;
    for (*pages = 0; *pages < 20'000;) {
      const nlohmann::json page = GetJson(next);
      ++*pages;
      if (!page.is_object() || !page["runs"].is_array()) break;
      for (const auto& run : page["runs"])
        runs.emplace_back(run["id"].get<int64_t>(), run["job"]);
      if (page["next_cursor"].is_null()) break;
      next = absl::StrCat(path,
                          "&cursor=", page["next_cursor"].get<std::string>());
    }
    return runs;
  }
  // Polls `path` (at most 20 s) until its runs hold one for which `match`.
  nlohmann::json WaitForRun(
      const std::string& path,
      const std::function<bool(const nlohmann::json&)>& match) {
    for (int i = 0; i < 200; ++i) {
      absl::StatusOr<HttpResult> r = daemon_->Get(path);
      if (r.ok() && r->status == 200) {
        const nlohmann::json page = nlohmann::json::parse(r->body);
        for (const auto& run : page["runs"])
          if (match(run)) return run;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    ADD_FAILURE() << path << " never had the run wanted";
    return nullptr;
  }

  DaemonProcess* daemon_ = nullptr;  // the fixture's daemon
};

// Runs as the scheduler makes them: ops/ok succeeds every second, bad fails
// both of its attempts.
class LiveRunsTest : public ApiRunsBase {
 protected:
  void SetUp() override {
    dir_.Write("jobs/jobs.yaml", R"(
jobs:
  - id: ok
    namespace: ops
    schedule: "@every 1s"
    shell: { command: "echo ok" }
  - id: bad
    schedule: "@every 1s"
    retry: { max_attempts: 2, initial_backoff: 50ms, max_backoff: 50ms }
    shell: { command: "echo no; exit 3" }
)");
    auto d = DaemonProcess::StartIn(dir_);
    ASSERT_TRUE(d.ok()) << d.status();
    owned_ = *std::move(d);
    daemon_ = owned_.get();
    WaitForRun("/v1/runs?state=succeeded",
               [](const auto& run) { return run["job"] == "ops/ok"; });
    WaitForRun("/v1/dead-letters", [](const auto&) { return true; });
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> owned_;
};

TEST_F(LiveRunsTest, ListsEveryJobsRunsNewestFirstWithNamesAndLinks) {
  const nlohmann::json page = GetJson("/v1/runs?limit=1000");
  const nlohmann::json& runs = page["runs"];
  ASSERT_GE(runs.size(), 2u);
  std::set<std::string> jobs;
  for (size_t i = 0; i < runs.size(); ++i) {
    const nlohmann::json& run = runs[i];
    jobs.insert(run["job"].get<std::string>());
    EXPECT_EQ(run["run"], RunPath(run["job"], run["id"])) << run.dump();
    EXPECT_THAT(run["fire_id"].get<std::string>(),
                StartsWith(run["job"].get<std::string>() + ":1:"));
    if (i == 0) continue;
    const absl::Time before = ParseUtc(runs[i - 1]["scheduled_time"]);
    const absl::Time at = ParseUtc(run["scheduled_time"]);
    EXPECT_TRUE(before > at ||
                (before == at &&
                 runs[i - 1]["id"].get<int64_t>() > run["id"].get<int64_t>()))
        << runs[i - 1].dump() << " before " << run.dump();
  }
  EXPECT_THAT(jobs, ElementsAre("bad", "ops/ok"));
  // A run's link is the run.
  const nlohmann::json& first = runs[0];
  const nlohmann::json one = GetJson(first["run"].get<std::string>());
  EXPECT_EQ(one["id"], first["id"]);
  EXPECT_EQ(one["fire_id"], first["fire_id"]);
}

TEST_F(LiveRunsTest, FiltersByStateAndNamespace) {
  const nlohmann::json succeeded =
      GetJson("/v1/runs?state=succeeded&limit=1000");
  ASSERT_FALSE(succeeded["runs"].empty());
  for (const auto& run : succeeded["runs"]) {
    EXPECT_EQ(run["state"], "succeeded");
    EXPECT_EQ(run["job"], "ops/ok");
  }
  for (const auto& [ns, job] : std::vector<std::pair<std::string, std::string>>{
           {"ops", "ops/ok"}, {"default", "bad"}}) {
    const nlohmann::json page =
        GetJson(absl::StrCat("/v1/runs?limit=1000&namespace=", ns));
    ASSERT_FALSE(page["runs"].empty()) << ns;
    for (const auto& run : page["runs"]) EXPECT_EQ(run["job"], job) << ns;
  }
  EXPECT_TRUE(GetJson("/v1/runs?namespace=nope")["runs"].empty());
}

TEST_F(LiveRunsTest, DeadLettersAreTheRunsThatExhaustedTheirRetries) {
  // Runs of ok, succeeded, never appear; bad's failed runs do, each after
  // both of its attempts failed.
  const nlohmann::json dead = GetJson("/v1/dead-letters?limit=1000");
  ASSERT_FALSE(dead["runs"].empty());
  std::set<int64_t> dead_ids;
  for (const auto& run : dead["runs"]) {
    EXPECT_EQ(run["job"], "bad");
    EXPECT_EQ(run["state"], "failed");
    EXPECT_EQ(run["attempt"], 2);
    dead_ids.insert(run["id"].get<int64_t>());
  }
  const nlohmann::json detail =
      GetJson(dead["runs"][0]["run"].get<std::string>());
  ASSERT_EQ(detail["attempts"].size(), 2u);
  for (const auto& a : detail["attempts"]) {
    EXPECT_EQ(a["exit_code"], 3);
    EXPECT_EQ(a["output"], "no\n");
  }
  const nlohmann::json ok = GetJson("/v1/runs?namespace=ops&limit=1000");
  for (const auto& run : ok["runs"])
    EXPECT_FALSE(dead_ids.contains(run["id"].get<int64_t>())) << run.dump();
  // The same runs as GET /v1/runs?state=failed, older ones aside (both
  // lists grow while the daemon runs: compare the older one's runs).
  const nlohmann::json failed = GetJson("/v1/runs?state=failed&limit=1000");
  for (const auto& run : dead["runs"]) {
    bool found = false;
    for (const auto& f : failed["runs"]) found |= f["id"] == run["id"];
    EXPECT_TRUE(found) << run.dump();
  }
  EXPECT_TRUE(GetJson("/v1/dead-letters?namespace=ops")["runs"].empty());
}

TEST_F(LiveRunsTest, BadQueriesAreProblems) {
  nlohmann::json p = GetJson("/v1/dead-letters?state=failed", 400);
  EXPECT_THAT(p["detail"].get<std::string>(),
              StartsWith("unknown query parameter \"state\""));
  p = GetJson("/v1/runs?state=done", 400);
  EXPECT_THAT(p["detail"].get<std::string>(),
              StartsWith("state: \"done\" is not one of pending"));
  p = GetJson("/v1/runs?limit=1001", 400);
  EXPECT_EQ(p["detail"], "limit: 1001 is outside 1..1000");
  p = GetJson("/v1/runs?cursor=12", 400);
  EXPECT_THAT(p["detail"].get<std::string>(), HasSubstr("cursor"));
  p = GetJson("/v1/dead-letters?to=tomorrow", 400);
  EXPECT_THAT(p["detail"].get<std::string>(), StartsWith("to: "));
  p = GetJson("/v1/runs?namespace=a&namespace=b", 400);
  EXPECT_THAT(p["detail"].get<std::string>(), HasSubstr("namespace"));
}

// 10,000 finished runs of two jobs, written into the store before the daemon
// starts: run i + 1 (i = 0..9999) is ops/alpha's for even i, beta's for odd
// i, scheduled at base + i/2 seconds (the two jobs' runs pair up at the same
// time), failed when i % 7 == 0. Newest first is then run 10000 down to 1.
class ManyRunsTest : public ApiRunsBase {
 protected:
  static constexpr int kRuns = 10'000;
  static inline TempDir* dir_ = nullptr;
  static inline DaemonProcess* shared_ = nullptr;

  // One daemon on the seeded store for every test here (they only read).
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    ASSERT_NO_FATAL_FAILURE(Seed());
    dir_->Write("jobs/jobs.yaml", R"(
jobs:
  - id: alpha
    namespace: ops
    schedule: "0 0 1 1 *"
    paused: true
    shell: { command: "true" }
  - id: beta
    schedule: "0 0 1 1 *"
    paused: true
    shell: { command: "true" }
)");
    // History kept whatever its size.
    auto d =
        DaemonProcess::Start({.data_dir = dir_->path() + "/data",
                              .jobs_dir = dir_->path() + "/jobs",
                              .env = {{"CHIME_HISTORY_KEEP_PER_JOB", "0"}}});
    ASSERT_TRUE(d.ok()) << d.status();
    shared_ = d->release();
  }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(shared_, nullptr) << "the daemon did not start";
    daemon_ = shared_;
  }

  static void Seed() {
    constexpr MonoTime kForever = MonoTime::Infinite();
    auto store = store::SqliteStore::Open({.data_dir = dir_->path() + "/data"});
    ASSERT_TRUE(store.ok()) << store.status();
    JobRecord jobs[2];
    for (int j = 0; j < 2; ++j) {
      JobSpec spec;
      spec.key = j == 0 ? JobKey{"ops", "alpha"} : JobKey{"default", "beta"};
      spec.trigger.expression = "0 0 1 1 *";
      spec.paused = true;
      absl::StatusOr<JobRecord> job =
          (*store)->PutJob(spec, kNoRevision, kForever);
      ASSERT_TRUE(job.ok()) << job.status();
      jobs[j] = *job;
    }
    absl::StatusOr<LeaseGrant> grant =
        (*store)->AcquireLease("seed", "test", absl::Minutes(5), kForever);
    ASSERT_TRUE(grant.ok()) << grant.status();
    const Fence fence{"seed", grant->token};
    const absl::Time now =
        absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
    const absl::Time base = now - absl::Hours(10);
    ClaimBatch batch;
    batch.at = now;
    std::vector<RunTransition> steps;
    for (int i = 0; i < kRuns; ++i) {
      const JobRecord& job = jobs[i % 2];
      const RunId id = static_cast<RunId>(i + 1);
      batch.claims.push_back(FireClaim{
          FireRef{job.id, job.generation, base + absl::Seconds(i / 2)}, id});
      RunTransition start;
      start.run = id;
      start.from = RunState::kPending;
      start.to = RunState::kRunning;
      start.attempt = 1;
      start.at = now;
      RunTransition end = start;
      end.from = RunState::kRunning;
      end.to = i % 7 == 0 ? RunState::kFailed : RunState::kSucceeded;
      steps.push_back(start);
      steps.push_back(end);
    }
    ASSERT_TRUE((*store)->ClaimFires(fence, batch, kForever).ok());
    ASSERT_TRUE((*store)->TransitionRuns(fence, steps, kForever).ok());
  }

  // The ids of `runs`, checking each one's job name on the way.
  static std::vector<int64_t> Ids(
      const std::vector<std::pair<int64_t, std::string>>& runs) {
    std::vector<int64_t> ids;
    for (const auto& [id, job] : runs) {
      EXPECT_EQ(job, id % 2 == 1 ? "ops/alpha" : "beta") << id;
      ids.push_back(id);
    }
    return ids;
  }
  // Ids kRuns down to 1 for which `keep` is true.
  template <typename Keep>
  static std::vector<int64_t> Expected(Keep keep) {
    std::vector<int64_t> ids;
    for (int64_t id = kRuns; id >= 1; --id)
      if (keep(id)) ids.push_back(id);
    return ids;
  }
};

TEST_F(ManyRunsTest, PagingSeesEveryRunOnceInOrder) {
  int pages = 0;
  const std::vector<int64_t> all = Expected([](int64_t) { return true; });
  EXPECT_EQ(Ids(All("/v1/runs?limit=1000", &pages)), all);
  EXPECT_EQ(pages, 10);  // the tenth page is full and the last
  EXPECT_EQ(Ids(All("/v1/runs?", &pages)), all);  // limit 100
  EXPECT_EQ(pages, 100);
}

TEST_F(ManyRunsTest, FilteredPagesNeitherSkipNorRepeat) {
  int pages = 0;
  EXPECT_EQ(Ids(All("/v1/runs?limit=1000&namespace=ops", &pages)),
            Expected([](int64_t id) { return id % 2 == 1; }));
  EXPECT_LE(pages, 6);
  const std::vector<int64_t> dead =
      Ids(All("/v1/dead-letters?limit=1000", &pages));
  EXPECT_EQ(dead, Expected([](int64_t id) { return (id - 1) % 7 == 0; }));
  EXPECT_EQ(dead.size(), 1429u);
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(
      Ids(All("/v1/dead-letters?limit=7&namespace=default", &pages)),
      Expected([](int64_t id) { return (id - 1) % 7 == 0 && id % 2 == 0; }));
  // By scheduled time: [base + 100 s, base + 102 s) holds runs 201 to 204.
  const nlohmann::json first = GetJson("/v1/runs?limit=1");
  const absl::Time newest = ParseUtc(first["runs"][0]["scheduled_time"]);
  const absl::Time base = newest - absl::Seconds(kRuns / 2 - 1);
  const nlohmann::json window = GetJson(
      absl::StrCat("/v1/runs?from=", FormatUtc(base + absl::Seconds(100)),
                   "&to=", FormatUtc(base + absl::Seconds(102))));
  std::vector<int64_t> ids;
  for (const auto& run : window["runs"]) ids.push_back(run["id"]);
  EXPECT_THAT(ids, ElementsAre(204, 203, 202, 201));
}

}  // namespace
}  // namespace chime::daemon_test
