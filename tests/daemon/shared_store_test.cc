// Daemons sharing one PostgreSQL store (config `store`), on a real
// PostgreSQL 15 server the test starts: one schedules, the others wait as
// standbys; when the scheduler dies a standby takes over within a few lease
// ttls, and no fire runs twice; a scheduler that cannot renew its lease
// stops (exit status 3) rather than run beside its successor; so does one
// whose clock goes off from the database's, and a node whose clock is off
// does not take the lease (its clock faked with libfaketime).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/status_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/postgres_server.h"
#include "tests/daemon/cli_runner.h"
#include "tests/daemon/daemon_harness.h"

namespace chime::daemon_test {
namespace {

using Json = nlohmann::json;

constexpr char kFakeTime[] =
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

// Every second, the job appends "<fire id> <attempt> <fencing token> <node>"
// to the witness file, outside the store.
constexpr char kJobs[] = R"(
jobs:
  - id: tick
    schedule: "@every 1s"
    shell: { command: "echo \"$CHIME_FIRE_ID $CHIME_ATTEMPT $CHIME_FENCING_TOKEN $NODE\" >> $WITNESS" }
)";

std::vector<std::string> Concat(std::vector<std::string> a,
                                std::vector<std::string> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A port on 127.0.0.1 that was free a moment ago (the kernel's pick).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

struct Line {
  std::string fire_id;
  int attempt = 0;
  int64_t token = 0;
  std::string node;
};

class SharedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = testing::PostgresServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    pg_ = *std::move(server);
    witness_ = dir_.path() + "/witness";
    dir_.Write("jobs/jobs.yaml", kJobs);
  }

  // A daemon named `node` on the shared store, with its own data directory.
  // With `faked_clock`, its wall clock is off by what the file
  // <dir>/<node>.faketime says ("+30", "-90", "+0": seconds), read anew at
  // every reading of the clock (libfaketime, Debian package libfaketime; its
  // monotonic clock is the real one).
  std::unique_ptr<DaemonProcess> StartNode(const std::string& node,
                                           bool wait_until_serving,
                                           bool faked_clock = false,
                                           std::vector<std::string> more = {}) {
    std::map<std::string, std::string> env = {{"NODE", node},
                                              {"WITNESS", witness_}};
    if (faked_clock) {
      EXPECT_TRUE(std::filesystem::exists(kFakeTime))
          << kFakeTime << " is missing: run scripts/install-deps.sh";
      env["LD_PRELOAD"] = kFakeTime;
      env["FAKETIME_TIMESTAMP_FILE"] = ClockFile(node);
      env["FAKETIME_NO_CACHE"] = "1";
      env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1";
      // The sanitizer's runtime wants to be loaded first; here it is second.
      env["ASAN_OPTIONS"] = "verify_asan_link_order=0";
    }
    auto d = DaemonProcess::Start(
        {.data_dir = absl::StrCat(dir_.path(), "/data-", node),
         .jobs_dir = dir_.path() + "/jobs",
         .args = Concat(
             {"--store", pg_->Url(), "--lease-ttl", "2s", "--node-name", node},
             std::move(more)),
         .env = std::move(env),
         .wait_until_serving = wait_until_serving});
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? *std::move(d) : nullptr;
  }

  std::string ClockFile(const std::string& node) const {
    return absl::StrCat(dir_.path(), "/", node, ".faketime");
  }
  // Sets the offset of `node`'s faked clock (see StartNode).
  void SetClock(const std::string& node, const std::string& offset) {
    std::ofstream(ClockFile(node)) << offset << "\n";
  }

  std::vector<Line> Witness() const {
    std::vector<Line> lines;
    std::ifstream in(witness_);
    for (std::string text; std::getline(in, text);) {
      std::vector<std::string> f = absl::StrSplit(text, ' ');
      Line l;
      if (f.size() != 4 || !absl::SimpleAtoi(f[1], &l.attempt) ||
          !absl::SimpleAtoi(f[2], &l.token)) {
        ADD_FAILURE() << "not a witness line: " << text;
        continue;
      }
      l.fire_id = f[0];
      l.node = f[3];
      lines.push_back(std::move(l));
    }
    return lines;
  }

  // Waits (at most 20 s) until `d` logs that it stands by.
  static bool IsStandby(const DaemonProcess& d) {
    return !d.WaitForLog([](const Json& j) {
               return absl::StartsWith(j.value("msg", ""),
                                       "standby: another node");
             }).is_null();
  }

  // Waits (at most 20 s) until standby `d` serves HTTP; its port (0 if it
  // does not).
  static int StandbyPort(const DaemonProcess& d) {
    const Json serving =
        d.WaitForMsg("standby serving health, metrics, the API and the UI");
    return serving.is_object() ? serving.value("port", 0) : 0;
  }

  // Waits (at most `limit`) until `node` has run `n` attempts.
  bool WaitForRuns(const std::string& node, int n, absl::Duration limit) {
    const absl::Time deadline = absl::Now() + limit;
    while (absl::Now() < deadline) {
      int seen = 0;
      for (const Line& l : Witness()) seen += l.node == node;
      if (seen >= n) return true;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return false;
  }

  TempDir dir_;
  std::unique_ptr<testing::PostgresServer> pg_;
  std::string witness_;
};

TEST_F(SharedStoreTest,
       AStandbyTakesOverWhenTheSchedulerDiesAndNoFireRunsTwice) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitForRuns("a", 2, absl::Seconds(20))) << a->LogText();

  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();
  // The standby runs nothing while `a` holds the lease.
  absl::SleepFor(absl::Seconds(3));
  for (const Line& l : Witness()) EXPECT_EQ(l.node, "a") << l.fire_id;
  EXPECT_TRUE(
      b->WaitForMsg("chime serving", "", absl::Milliseconds(1)).is_null());

  a->Kill();
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(WaitForRuns("b", 2, absl::Seconds(30))) << b->LogText();
  // The lease (2 s) had to expire first; then `b` recovered and ran. A
  // generous bound: the failover time itself is a benchmark's business.
  EXPECT_LT(absl::Now() - killed, absl::Seconds(20));
  EXPECT_FALSE(b->WaitForMsg("standby: took over the store").is_null());

  // Every fire ran at most once per attempt number, and `b`'s fencing token
  // is newer than every one of `a`'s.
  std::map<std::pair<std::string, int>, std::string> ran;
  int64_t a_max = 0, b_min = INT64_MAX;
  for (const Line& l : Witness()) {
    auto [it, fresh] = ran.emplace(std::pair(l.fire_id, l.attempt), l.node);
    EXPECT_TRUE(fresh) << l.fire_id << " attempt " << l.attempt << " ran on "
                       << it->second << " and " << l.node;
    if (l.node == "a") a_max = std::max(a_max, l.token);
    if (l.node == "b") b_min = std::min(b_min, l.token);
  }
  EXPECT_GT(b_min, a_max);
  EXPECT_EQ(b->Terminate(), 0);
}

// A zombie: the scheduler is frozen (SIGSTOP) for longer than its lease, a
// standby takes over, then the zombie wakes up. It must start nothing -- its
// own deadline passed while it slept -- and it leaves (status 3).
TEST_F(SharedStoreTest,
       AFrozenSchedulerThatWakesUpAfterATakeoverStartsNothing) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitForRuns("a", 2, absl::Seconds(20))) << a->LogText();
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();

  ASSERT_EQ(kill(a->pid(), SIGSTOP), 0);
  const absl::Time frozen = absl::Now();
  ASSERT_TRUE(WaitForRuns("b", 2, absl::Seconds(30))) << b->LogText();
  ASSERT_EQ(kill(a->pid(), SIGCONT), 0);
  EXPECT_EQ(a->WaitForExit(absl::Seconds(20)), 3) << a->LogText();
  absl::SleepFor(absl::Seconds(1));  // b goes on meanwhile

  // Nothing `a` ran was scheduled after it froze (an attempt running then
  // may have finished its line later), and no fire ran twice.
  std::map<std::pair<std::string, int>, std::string> ran;
  for (const Line& l : Witness()) {
    auto [it, fresh] = ran.emplace(std::pair(l.fire_id, l.attempt), l.node);
    EXPECT_TRUE(fresh) << l.fire_id << " ran on " << it->second << " and "
                       << l.node;
    if (l.node != "a") continue;
    // "<job>:<generation>:<scheduled time>"
    const size_t second_colon = l.fire_id.find(':', l.fire_id.find(':') + 1);
    const std::string when = l.fire_id.substr(second_colon + 1);
    absl::Time scheduled;
    std::string error;
    ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, when, &scheduled, &error))
        << when << ": " << error;
    EXPECT_LE(scheduled, frozen) << l.fire_id << " started by the zombie";
  }
  EXPECT_EQ(b->Terminate(), 0);
}

// Every node, standbys included, is a member while it lives; GET
// /v1/cluster and `chime status` say which nodes are and which schedules.
TEST_F(SharedStoreTest, EveryLiveNodeIsAMemberAndTheClusterSaysWhoSchedules) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();
  // The live members' names, as /v1/cluster on `a` gives them, once
  // `until` holds of them (at most 15 s).
  const auto members =
      [&](const std::function<bool(const std::string&)>& until) {
        std::string names;
        for (int i = 0; i < 150; ++i) {
          const Json c = a->GetJson("/v1/cluster");
          names.clear();
          for (const Json& m : c.value("members", Json::array()))
            names += m.value("node", "?") +
                     (m.value("scheduling", false) ? "*" : "") + " ";
          if (until(names)) break;
          absl::SleepFor(absl::Milliseconds(100));
        }
        return names;
      };
  EXPECT_EQ(members([](const std::string& n) { return n == "a* b "; }),
            "a* b ");
  const Json c = a->GetJson("/v1/cluster");
  EXPECT_EQ(c["node"], "a");
  EXPECT_EQ(c["shared_store"], true);
  EXPECT_EQ(c["scheduler"]["node"], "a");
  EXPECT_GT(c["scheduler"]["epoch"].get<int64_t>(), 0);
  EXPECT_TRUE(c["clock_offset_seconds"].is_number()) << c.dump();
  EXPECT_LT(std::abs(c["clock_offset_seconds"].get<double>()), 0.5);
  EXPECT_EQ(c["max_clock_skew_seconds"], 1.0);
  const CliResult status = RunChime(
      {"status", "--server", absl::StrCat("http://127.0.0.1:", a->port())},
      {cli::AddStatusCommand});
  EXPECT_EQ(status.status, 0) << status.err;
  EXPECT_THAT(status.out, ::testing::HasSubstr("members:      2 live (a, b)"));
  EXPECT_THAT(status.out,
              ::testing::HasSubstr("lease:        scheduler held by a pid "));

  // A standby killed drops out once its member lease expires (2 s); one
  // stopped leaves at once (it releases its lease).
  b->Kill();
  EXPECT_EQ(members([](const std::string& n) { return n == "a* "; }), "a* ");
  std::unique_ptr<DaemonProcess> c2 = StartNode("c", false);
  ASSERT_NE(c2, nullptr);
  ASSERT_TRUE(IsStandby(*c2)) << c2->LogText();
  EXPECT_EQ(members([](const std::string& n) { return n == "a* c "; }),
            "a* c ");
  EXPECT_EQ(c2->Terminate(), 0);
  const Json after = a->GetJson("/v1/cluster");
  ASSERT_EQ(after["members"].size(), 1u) << after.dump();
  EXPECT_EQ(a->Terminate(), 0);
}

// Jobs changed through a standby's API -- created, changed, paused,
// deleted -- are written to the store, and the scheduling node puts each
// change in force within moments (it follows the store); a job file's job
// stays the file's.
TEST_F(SharedStoreTest, JobChangesOnAStandbyReachTheSchedulingNode) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  const int port = StandbyPort(*b);
  ASSERT_GT(port, 0) << b->LogText();
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
  std::unique_ptr<DaemonProcess> a = StartNode(
      "a", true, false, {"--listen", absl::StrCat("127.0.0.1:", port_a)});
  ASSERT_NE(a, nullptr);
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  const int port = StandbyPort(*b);
  ASSERT_GT(port, 0) << b->LogText();
  absl::StatusOr<HttpResult> cluster = HttpGet(port, "/v1/cluster");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(Json::parse(cluster->body)["scheduler"]["url"],
            absl::StrCat("http://127.0.0.1:", port_a))
      << cluster->body;

  const auto trigger = [&](std::vector<std::string> headers) {
    absl::StatusOr<HttpResult> r =
        HttpDo(port, "POST", "/v1/jobs/default/tick/trigger", headers);
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
      a->GetJson(absl::StrCat("/v1/jobs/default/tick/runs/", run));
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
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  const int port = StandbyPort(*b);
  ASSERT_GT(port, 0) << b->LogText();

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

TEST_F(SharedStoreTest, AStandbyStopsOnSigtermWhileWaiting) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();
  EXPECT_EQ(b->Terminate(absl::Seconds(10)), 0) << b->LogText();
  EXPECT_FALSE(b->WaitForMsg("signal received while waiting as a standby; "
                             "exiting",
                             "", absl::Milliseconds(1))
                   .is_null());
  EXPECT_EQ(a->Terminate(), 0);
}

// The scheduler's clock jumps 30 s ahead of the database's: it gives the
// lease up (status 3) and a standby whose clock agrees takes over; restarted
// with its clock still off, it does not take the lease even when it is free,
// until its clock agrees again.
TEST_F(SharedStoreTest, ANodeWhoseClockIsOffDoesNotSchedule) {
  SetClock("a", "+0");
  std::unique_ptr<DaemonProcess> a = StartNode("a", true, true);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitForRuns("a", 2, absl::Seconds(20))) << a->LogText();
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();

  SetClock("a", "+30");
  EXPECT_EQ(a->WaitForExit(absl::Seconds(20)), 3) << a->LogText();
  EXPECT_FALSE(a->WaitForLog([](const Json& j) {
                  return absl::StartsWith(j.value("msg", ""),
                                          "this node's clock is off from the "
                                          "store's: giving up");
                }).is_null())
      << a->LogText();
  ASSERT_TRUE(WaitForRuns("b", 2, absl::Seconds(20))) << b->LogText();

  // `b` stops (releasing the lease); `a`, restarted with its clock still
  // 30 s ahead, finds the lease free but does not keep it.
  EXPECT_EQ(b->Terminate(), 0);
  const size_t ran_before = Witness().size();
  a = StartNode("a", false, true);
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(a->WaitForLog([](const Json& j) {
                  return absl::StartsWith(j.value("msg", ""),
                                          "standby: this node's clock is off");
                }).is_null())
      << a->LogText();
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(Witness().size(), ran_before);

  // Its clock agrees again: it takes the lease and runs the job.
  int ran_on_a = 0;
  for (const Line& l : Witness()) ran_on_a += l.node == "a";
  SetClock("a", "+0");
  ASSERT_TRUE(WaitForRuns("a", ran_on_a + 2, absl::Seconds(20)))
      << a->LogText();
  std::map<std::pair<std::string, int>, std::string> ran;
  for (const Line& l : Witness()) {
    auto [it, fresh] = ran.emplace(std::pair(l.fire_id, l.attempt), l.node);
    EXPECT_TRUE(fresh) << l.fire_id << " ran on " << it->second << " and "
                       << l.node;
  }
  EXPECT_EQ(a->Terminate(), 0);
}

// The database restarts: the scheduler leaves (it cannot prove its lease),
// and a standby waits the outage out instead of exiting, then takes over.
TEST_F(SharedStoreTest, AStandbyWaitsOutADatabaseRestartAndTakesOver) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  std::unique_ptr<DaemonProcess> b = StartNode("b", false);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(IsStandby(*b)) << b->LogText();
  ASSERT_TRUE(pg_->StopImmediately().ok());
  EXPECT_EQ(a->WaitForExit(absl::Seconds(20)), 3) << a->LogText();
  EXPECT_FALSE(b->WaitForMsg("standby: the store does not answer; trying "
                             "again")
                   .is_null())
      << b->LogText();
  ASSERT_TRUE(pg_->Restart().ok());
  ASSERT_TRUE(WaitForRuns("b", 2, absl::Seconds(30))) << b->LogText();
  EXPECT_EQ(b->Terminate(), 0);
}

TEST_F(SharedStoreTest, ASchedulerThatCannotRenewItsLeaseStops) {
  std::unique_ptr<DaemonProcess> a = StartNode("a", true);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitForRuns("a", 1, absl::Seconds(20))) << a->LogText();
  // The database goes away: `a` cannot prove it still holds the lease, so
  // it must stop before another node could have taken it over.
  ASSERT_TRUE(pg_->StopImmediately().ok());
  EXPECT_EQ(a->WaitForExit(absl::Seconds(20)), 3) << a->LogText();
  EXPECT_FALSE(a->WaitForMsg("lost the store's lease: exiting", "",
                             absl::Milliseconds(1))
                   .is_null())
      << a->LogText();

  // Back again, a node (here `a` restarted) gets the lease once it expired
  // and goes on.
  ASSERT_TRUE(pg_->Restart().ok());
  const size_t before = Witness().size();
  std::unique_ptr<DaemonProcess> again = StartNode("a", true);
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(WaitForRuns("a", static_cast<int>(before) + 2, absl::Seconds(20)))
      << again->LogText();
  EXPECT_EQ(again->Terminate(), 0);
}

}  // namespace
}  // namespace chime::daemon_test
