// Daemons with shards (`--shards`) on one PostgreSQL store, each a real
// `chime serve` process: every node schedules the jobs of the shards
// rendezvous hashing gives it, a killed node's shards move to the others
// within a few lease ttls with no fire run twice, a trigger sent to a node
// that does not hold the job's shard is carried to the one that does, and
// /v1/cluster lists the shards' holders.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/status_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cluster/shards.h"
#include "tests/daemon/cli_runner.h"
#include "tests/daemon/shared_store_fixture.h"

namespace chime::daemon_test {
namespace {

constexpr uint32_t kShards = 8;
constexpr int kJobs = 16;

class ShardedClusterTest : public SharedStoreTest {
 protected:
  void SetUp() override {
    SharedStoreTest::SetUp();
    // kJobs jobs every second, each witnessed as the fixture's tick is.
    std::string yaml = "jobs:\n";
    for (int i = 0; i < kJobs; ++i) {
      absl::StrAppend(&yaml, "  - id: tick-", i, "\n",
                      "    schedule: \"@every 1s\"\n",
                      "    shell: { command: \"echo \\\"$CHIME_FIRE_ID "
                      "$CHIME_ATTEMPT $CHIME_FENCING_TOKEN $NODE\\\" >> "
                      "$WITNESS\" }\n");
    }
    dir_.Write("jobs/jobs.yaml", yaml);
  }

  std::unique_ptr<DaemonProcess> StartShardNode(const std::string& node,
                                                int* port) {
    *port = FreePort();
    return StartNode(node, true, false,
                     {"--shards", absl::StrCat(kShards), "--listen",
                      absl::StrCat("127.0.0.1:", *port)});
  }

  // The node each job's shard belongs to among `nodes`.
  static std::map<std::string, std::string> Owners(
      const std::vector<std::string>& nodes) {
    const std::vector<std::string> owners = cluster::Assign(kShards, nodes);
    std::map<std::string, std::string> by_job;
    for (int i = 0; i < kJobs; ++i) {
      const std::string id = absl::StrCat("tick-", i);
      by_job[id] = owners[cluster::ShardOf(JobKey{"default", id}, kShards)];
    }
    return by_job;
  }

  // The job of a witness line ("tick-3:1:2026-...").
  static std::string JobOf(const Line& l) {
    return l.fire_id.substr(0, l.fire_id.find(':'));
  }
};

TEST_F(ShardedClusterTest, EveryNodeSchedulesItsShardsAndAKilledOnesMove) {
  int port_a = 0, port_b = 0, port_c = 0;
  std::unique_ptr<DaemonProcess> a = StartShardNode("a", &port_a);
  std::unique_ptr<DaemonProcess> b = StartShardNode("b", &port_b);
  std::unique_ptr<DaemonProcess> c = StartShardNode("c", &port_c);
  ASSERT_TRUE(a != nullptr && b != nullptr && c != nullptr);
  const std::map<std::string, std::string> owners = Owners({"a", "b", "c"});
  std::set<std::string> c_jobs;
  for (const auto& [job, owner] : owners) {
    if (owner == "c") c_jobs.insert(job);
  }
  ASSERT_FALSE(c_jobs.empty()) << "pick other names: c owns no job";
  // Every node runs its shards' jobs once the three are settled.
  for (const char* node : {"a", "b", "c"}) {
    ASSERT_TRUE(WaitForRuns(node, 3, absl::Seconds(30)))
        << node << " ran nothing\n"
        << a->LogText();
  }
  absl::SleepFor(absl::Seconds(3));
  const size_t before_kill = Witness().size();
  // Settled: the last lines run where the assignment says.
  const std::vector<Line> settled = Witness();
  for (size_t i = settled.size() > 20 ? settled.size() - 20 : 0;
       i < settled.size(); ++i) {
    EXPECT_EQ(settled[i].node, owners.at(JobOf(settled[i])))
        << settled[i].fire_id;
  }
  // /v1/cluster: three members and every shard held.
  const Json cluster = a->GetJson("/v1/cluster");
  ASSERT_TRUE(cluster.is_object());
  EXPECT_EQ(cluster["members"].size(), 3u) << cluster.dump();
  ASSERT_EQ(cluster["shards"].size(), kShards) << cluster.dump();
  for (const Json& s : cluster["shards"]) EXPECT_TRUE(s["node"].is_string());
  // chime status counts each node's shards.
  std::map<std::string, int> held;
  for (const std::string& owner : cluster::Assign(kShards, {"a", "b", "c"}))
    ++held[owner];
  const CliResult status = RunChime(
      {"status", "--server", absl::StrCat("http://127.0.0.1:", port_b)},
      {cli::AddStatusCommand});
  EXPECT_EQ(status.status, 0) << status.err;
  EXPECT_THAT(status.out,
              ::testing::HasSubstr("members:      3 live (a, b, c)"));
  EXPECT_THAT(status.out, ::testing::HasSubstr(absl::StrCat(
                              "shards:       8 (a ", held["a"], ", b ",
                              held["b"], ", c ", held["c"], ")")))
      << status.out;
  // Each node's /metrics: its shards, its jobs and the others'.
  std::map<std::string, int> jobs_of;
  for (const auto& [job, owner] : owners) ++jobs_of[owner];
  for (const auto& [node, d] :
       {std::pair<std::string, DaemonProcess*>{"a", a.get()},
        {"b", b.get()},
        {"c", c.get()}}) {
    absl::StatusOr<HttpResult> metrics = d->Get("/metrics");
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    EXPECT_THAT(metrics->body, ::testing::HasSubstr(absl::StrCat(
                                   "\nchime_shards_held ", held[node], "\n")))
        << node;
    EXPECT_THAT(metrics->body,
                ::testing::HasSubstr(absl::StrCat(
                    "\nchime_jobs{state=\"active\"} ", jobs_of[node], "\n")))
        << node;
    EXPECT_THAT(metrics->body, ::testing::HasSubstr(absl::StrCat(
                                   "\nchime_jobs{state=\"elsewhere\"} ",
                                   kJobs - jobs_of[node], "\n")))
        << node;
  }

  // A trigger of one of c's jobs sent to a is carried to c.
  const std::string job = *c_jobs.begin();
  absl::StatusOr<HttpResult> triggered = HttpDo(
      port_a, "POST", absl::StrCat("/v1/jobs/default/", job, "/trigger"), {});
  ASSERT_TRUE(triggered.ok()) << triggered.status();
  EXPECT_EQ(triggered->status, 201) << triggered->body;

  c->Kill();
  const absl::Time killed = absl::Now();
  // c's jobs run again, on a or b, within a few lease ttls (2 s).
  const auto moved = [&] {
    std::set<std::string> taken;
    const std::vector<Line> lines = Witness();
    for (size_t i = before_kill; i < lines.size(); ++i) {
      if (c_jobs.contains(JobOf(lines[i])) && lines[i].node != "c")
        taken.insert(JobOf(lines[i]));
    }
    return taken == c_jobs;
  };
  for (int i = 0; i < 300 && !moved(); ++i)
    absl::SleepFor(absl::Milliseconds(100));
  ASSERT_TRUE(moved()) << a->LogText();
  EXPECT_LT(absl::Now() - killed, absl::Seconds(20));

  // No fire ran twice with one attempt number.
  std::map<std::pair<std::string, int>, std::string> ran;
  for (const Line& l : Witness()) {
    auto [it, fresh] = ran.emplace(std::pair(l.fire_id, l.attempt), l.node);
    EXPECT_TRUE(fresh) << l.fire_id << " attempt " << l.attempt << " ran on "
                       << it->second << " and " << l.node;
  }
  EXPECT_EQ(a->Terminate(), 0);
  EXPECT_EQ(b->Terminate(), 0);
}

// The store records the nodes' number of shards: a node started with another
// while they run is refused, naming both; once none runs, it may change it.
TEST_F(ShardedClusterTest, ANodeWithAnotherShardCountIsRefusedWhileOthersRun) {
  int port_a = 0;
  std::unique_ptr<DaemonProcess> a = StartShardNode("a", &port_a);
  ASSERT_NE(a, nullptr);
  std::unique_ptr<DaemonProcess> b =
      StartNode("b", false, false, {"--shards", "4"});
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->WaitForExit(absl::Seconds(30)), 1) << b->LogText();
  EXPECT_THAT(b->LogText(),
              ::testing::HasSubstr(absl::StrCat(
                  "shards: this node says 4, but the nodes running on this "
                  "store use ",
                  kShards)));
  // a goes on, alone.
  ASSERT_TRUE(WaitForRuns("a", 3, absl::Seconds(30))) << a->LogText();
  // a restarts with its own number again: the same node, not another.
  a->Kill();
  a = StartShardNode("a", &port_a);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->Terminate(), 0);
  // Nobody runs (the killed incarnation's leases expire within the fixture's
  // 2 s ttl): b changes it.
  absl::SleepFor(absl::Milliseconds(2500));
  b = StartNode("b", true, false, {"--shards", "4"});
  ASSERT_NE(b, nullptr);
  EXPECT_THAT(b->LogText(), ::testing::HasSubstr("shards changed"));
  ASSERT_TRUE(WaitForRuns("b", 3, absl::Seconds(30))) << b->LogText();
  EXPECT_EQ(b->Terminate(), 0);
}

}  // namespace
}  // namespace chime::daemon_test
