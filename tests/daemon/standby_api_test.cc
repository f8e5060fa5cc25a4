// The API and the UI of a standby -- a daemon waiting for a shared store's
// lease (daemon/standby_http.h) -- on a real PostgreSQL 15 server: it serves
// the reads from the store, writes job changes there for the scheduling node
// to follow (daemon/job_follower.h), and forwards triggers to it
// (daemon/forward.h).
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/status_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/cli_runner.h"
#include "tests/daemon/shared_store_fixture.h"

namespace chime::daemon_test {
namespace {

// Jobs changed through a standby's API -- created, changed, paused,
// deleted -- are written to the store, and the scheduling node puts each
// change in force within moments (it follows the store); a job file's job
// stays the file's.
TEST_F(SharedStoreTest, JobChangesOnAStandbyReachTheSchedulingNode) {
  std::unique_ptr<DaemonProcess> a, b;
  int port = 0;
  ASSERT_NO_FATAL_FAILURE(StartSchedulerAndStandby(&a, &b, &port));
  const auto on_b = [&](const std::string& method, const std::string& path,
                        const std::string& body) {
    absl::StatusOr<HttpResult> r =
        HttpDo(port, method, path, {"Content-Type: application/json"}, body);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : HttpResult{};
  };
  // Polls (at most 10 s) until `pred` holds for a's view of `path`.
  const auto a_sees = [&](const std::string& path, long status,
                          const std::function<bool(const Json&)>& pred) {
    for (int i = 0; i < 100; ++i) {
      absl::StatusOr<HttpResult> r = a->Get(path);
      if (r.ok() && r->status == status &&
          pred(status == 200 ? Json::parse(r->body) : Json()))
        return true;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return false;
  };
  const auto runs_of = [&](absl::string_view job) {
    int n = 0;
    for (const Line& l : Witness())
      n += absl::StartsWith(l.fire_id, absl::StrCat(job, ":")) && l.node == "a";
    return n;
  };

  const HttpResult created = on_b(
      "POST", "/v1/jobs",
      R"({"id": "made-on-b", "schedule": "@every 1s", "shell": {"command": )"
      R"("echo $CHIME_FIRE_ID $CHIME_ATTEMPT $CHIME_FENCING_TOKEN $NODE )"
      R"(>> $WITNESS"}})");
  ASSERT_EQ(created.status, 201) << created.body;
  // Run by a (its witness line), within a few seconds.
  bool ran = false;
  for (int i = 0; i < 100 && !ran; ++i) {
    ran = runs_of("made-on-b") >= 2;
    if (!ran) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(ran) << a->LogText();
  EXPECT_FALSE(a->WaitForMsg("job changed on another node").is_null());

  // A schedule changed on b: a's next fire moves hours out (daily, six
  // hours after this one).
  const int hour =
      (absl::ToCivilHour(absl::Now(), absl::UTCTimeZone()).hour() + 6) % 24;
  const HttpResult patched =
      on_b("PATCH", "/v1/jobs/default/made-on-b",
           absl::StrCat(R"({"schedule": "0 )", hour, R"( * * *"})"));
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_TRUE(a_sees("/v1/jobs/default/made-on-b", 200, [](const Json& j) {
    absl::Time next;
    std::string err;
    return j["status"].contains("next_fire_time") &&
           absl::ParseTime(absl::RFC3339_full,
                           j["status"]["next_fire_time"].get<std::string>(),
                           &next, &err) &&
           next > absl::Now() + absl::Hours(4);
  })) << a->LogText();
  EXPECT_EQ(Json::parse(patched.body)["status"]["generation"], 2);

  // Paused on b: paused in a's scheduler.
  const HttpResult paused =
      on_b("POST", "/v1/jobs/default/made-on-b/pause", "");
  ASSERT_EQ(paused.status, 200) << paused.body;
  EXPECT_EQ(Json::parse(paused.body)["status"]["paused"], true);
  EXPECT_TRUE(a_sees("/v1/status", 200, [](const Json& j) {
    return j["scheduler"]["jobs_paused"] == 1;
  })) << a->LogText();

  // Deleted on b: a's scheduler drops it (1 job left: the file's).
  const HttpResult deleted = on_b("DELETE", "/v1/jobs/default/made-on-b", "");
  EXPECT_EQ(deleted.status, 204) << deleted.body;
  EXPECT_TRUE(a_sees("/v1/status", 200, [](const Json& j) {
    return j["scheduler"]["jobs"] == 1;
  })) << a->LogText();

  // Refused on b as on a: a job file's job (409, naming its file); and a
  // trigger is the scheduling node's.
  const HttpResult file_job =
      on_b("PATCH", "/v1/jobs/default/tick", R"({"schedule": "@every 1h"})");
  EXPECT_EQ(file_job.status, 409) << file_job.body;
  EXPECT_THAT(file_job.body, ::testing::HasSubstr("job file"));
  const HttpResult trigger = on_b("POST", "/v1/jobs/default/tick/trigger", "");
  EXPECT_EQ(trigger.status, 503) << trigger.body;
  EXPECT_THAT(trigger.body, ::testing::HasSubstr("scheduling node (a)"));

  // a's own change is in force at once, and not applied again.
  absl::StatusOr<HttpResult> on_a =
      HttpDo(a->port(), "POST", "/v1/jobs", {"Content-Type: application/json"},
             R"({"id": "made-on-a", "schedule": "@every 1h", "http": )"
             R"({"url": "http://127.0.0.1:1/"}})");
  ASSERT_TRUE(on_a.ok()) << on_a.status();
  EXPECT_EQ(on_a->status, 201) << on_a->body;
  absl::SleepFor(absl::Seconds(2.5));  // two passes of the follower
  for (const Json& j : a->Logs()) {
    EXPECT_FALSE(j.value("msg", "") == "job changed on another node" &&
                 j.value("job", "") == "made-on-a")
        << j.dump();
  }
  EXPECT_EQ(a->Terminate(), 0);
  EXPECT_EQ(b->Terminate(), 0);
}

// A standby carries a trigger to the scheduling node, at the URL its lease
// advertises, and answers with its answer; the Idempotency-Key holds across
// the hop; a request already forwarded once is not forwarded again.
TEST_F(SharedStoreTest, AStandbyForwardsTriggersToTheSchedulingNode) {
  const int port_a = FreePort();
  ASSERT_GT(port_a, 0);
  std::unique_ptr<DaemonProcess> a, b;
  int port = 0;
  ASSERT_NO_FATAL_FAILURE(StartSchedulerAndStandby(
      &a, &b, &port, {"--listen", absl::StrCat("127.0.0.1:", port_a)}));
  absl::StatusOr<HttpResult> cluster = HttpGet(port, "/v1/cluster");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(Json::parse(cluster->body)["scheduler"]["url"],
            absl::StrCat("http://127.0.0.1:", port_a))
      << cluster->body;

  // A job that never runs by itself (the file's `tick` runs every second,
  // and its overlap policy would refuse a trigger while it does).
  absl::StatusOr<HttpResult> once = HttpDo(
      port_a, "POST", "/v1/jobs", {"Content-Type: application/json"},
      R"({"id": "once", "schedule": "0 0 1 1 *", "shell": {"command": "true"}})");
  ASSERT_TRUE(once.ok()) << once.status();
  ASSERT_EQ(once->status, 201) << once->body;
  const auto trigger = [&](std::vector<std::string> headers) {
    absl::StatusOr<HttpResult> r =
        HttpDo(port, "POST", "/v1/jobs/default/once/trigger", headers);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : HttpResult{};
  };
  const HttpResult made = trigger({"Idempotency-Key: fwd-1"});
  ASSERT_EQ(made.status, 201) << made.body;
  const int64_t run = Json::parse(made.body)["run_id"].get<int64_t>();
  EXPECT_THAT(made.Header("Location"),
              ::testing::EndsWith(absl::StrCat("/runs/", run)));
  // a made the run: its own API knows it, and it runs there.
  const Json on_a =
      a->GetJson(absl::StrCat("/v1/jobs/default/once/runs/", run));
  EXPECT_EQ(on_a["id"], run) << on_a.dump();
  EXPECT_FALSE(a->WaitForLog([&](const Json& j) {
                  return j.value("msg", "") == "job triggered" &&
                         j.value("detail", "") == absl::StrCat("run ", run);
                }).is_null());
  // The same key again: the same run, not another.
  const HttpResult again = trigger({"Idempotency-Key: fwd-1"});
  EXPECT_EQ(again.status, 201) << again.body;
  EXPECT_EQ(Json::parse(again.body)["run_id"], run) << again.body;
  // Forwarded already (two standbys each thinking the other schedules):
  // refused, not sent on.
  const HttpResult hop = trigger({"Chime-Forwarded-By: c"});
  EXPECT_EQ(hop.status, 503) << hop.body;
  EXPECT_EQ(a->Terminate(), 0);
  EXPECT_EQ(b->Terminate(), 0);
}

// A standby is never a closed port: it answers health checks (live, not
// ready), scrapes and the API's reads from the store -- jobs with their next
// fire, runs, its status, the cluster -- and names the scheduling node for
// changes and actions. Once it takes over, its full listener is on the same
// port.
TEST_F(SharedStoreTest, AStandbyServesHealthMetricsAndTheReads) {
  std::unique_ptr<DaemonProcess> a, b;
  int port = 0;
  ASSERT_NO_FATAL_FAILURE(StartSchedulerAndStandby(&a, &b, &port));

  absl::StatusOr<HttpResult> health = HttpGet(port, "/healthz");
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->status, 200);
  absl::StatusOr<HttpResult> ready = HttpGet(port, "/readyz");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 503);
  const Json readiness = Json::parse(ready->body, nullptr, false);
  EXPECT_EQ(readiness["role"], "standby") << ready->body;
  EXPECT_EQ(readiness["scheduler"], "a") << ready->body;

  // Its clock offset is measured by its own member lease.
  std::string metrics;
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<HttpResult> m = HttpGet(port, "/metrics");
    ASSERT_TRUE(m.ok()) << m.status();
    metrics = m->body;
    if (metrics.find("\nchime_clock_offset_seconds ") != std::string::npos)
      break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_THAT(metrics, ::testing::HasSubstr("\nchime_standby 1\n"));
  EXPECT_THAT(metrics, ::testing::HasSubstr("\nchime_clock_offset_seconds "));

  absl::StatusOr<HttpResult> cluster = HttpGet(port, "/v1/cluster");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->status, 200) << cluster->body;
  const Json c = Json::parse(cluster->body, nullptr, false);
  EXPECT_EQ(c["node"], "b");
  EXPECT_EQ(c["scheduler"]["node"], "a") << cluster->body;

  // Reads, from the store, once `a` has run the job.
  ASSERT_TRUE(WaitForRuns("a", 2, absl::Seconds(20)));
  absl::StatusOr<HttpResult> jobs = HttpGet(port, "/v1/jobs");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->status, 200) << jobs->body;
  EXPECT_THAT(jobs->body, ::testing::HasSubstr("\"tick\""));
  absl::StatusOr<HttpResult> job = HttpGet(port, "/v1/jobs/default/tick");
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->status, 200) << job->body;
  // The first fire after the store's watermark: within a few seconds of
  // now for a job that fires every second and runs.
  const Json next =
      Json::parse(job->body, nullptr, false)["status"]["next_fire_time"];
  ASSERT_TRUE(next.is_string()) << job->body;
  absl::Time next_fire;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, next.get<std::string>(),
                              &next_fire, nullptr))
      << next;
  EXPECT_LT(absl::AbsDuration(next_fire - absl::Now()), absl::Seconds(5))
      << next;
  absl::StatusOr<HttpResult> runs = HttpGet(port, "/v1/runs?limit=5");
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(runs->status, 200) << runs->body;
  EXPECT_THAT(runs->body, ::testing::HasSubstr("\"fire_id\":\"tick:"));
  absl::StatusOr<HttpResult> status = HttpGet(port, "/v1/status");
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_EQ(status->status, 200) << status->body;
  const Json st = Json::parse(status->body, nullptr, false);
  EXPECT_EQ(st["role"], "standby") << status->body;
  EXPECT_EQ(st["node"], "b") << status->body;
  EXPECT_TRUE(st["scheduler"].is_null()) << status->body;
  const CliResult cli =
      RunChime({"status", "--server", absl::StrCat("http://127.0.0.1:", port)},
               {cli::AddStatusCommand});
  EXPECT_EQ(cli.status, 0) << cli.err;
  EXPECT_THAT(cli.out, ::testing::HasSubstr("role:         standby (node b)"));
  EXPECT_THAT(cli.out,
              ::testing::HasSubstr("lease:        scheduler held by a pid "));

  // Changes and actions go to the scheduling node.
  absl::StatusOr<HttpResult> trigger =
      HttpDo(port, "POST", "/v1/jobs/default/tick/trigger", {});
  ASSERT_TRUE(trigger.ok()) << trigger.status();
  EXPECT_EQ(trigger->status, 503);
  EXPECT_THAT(trigger->body,
              ::testing::HasSubstr("this node (b) is a standby: ask the "
                                   "scheduling node (a)"));
  EXPECT_EQ(trigger->Header("Retry-After"), "1");
  absl::StatusOr<HttpResult> events = HttpGet(port, "/v1/events");
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(events->status, 503) << events->body;
  // The web UI, which shows this read-only (tests/web/standby_e2e).
  absl::StatusOr<HttpResult> ui = HttpGet(port, "/ui/js/app.js");
  ASSERT_TRUE(ui.ok()) << ui.status();
  EXPECT_EQ(ui->status, 200);
  EXPECT_THAT(ui->body, ::testing::HasSubstr("is a standby"));

  // `b` takes over: the same port now answers as the scheduler.
  a->Kill();
  bool took_over = false;
  for (int i = 0; i < 300 && !took_over; ++i) {
    absl::StatusOr<HttpResult> r = HttpGet(port, "/readyz");
    took_over = r.ok() && r->status == 200;
    if (!took_over) absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(took_over) << b->LogText();
  absl::StatusOr<HttpResult> listed = HttpGet(port, "/v1/jobs");
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->status, 200) << listed->body;
  EXPECT_EQ(b->Terminate(), 0);
}

}  // namespace
}  // namespace chime::daemon_test
