// Schedulers with shards on one store: each schedules the jobs of the
// shards rendezvous hashing gives it, every fire runs once, and a node that
// joins gets its shards handed off with no fire doubled or missed.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "chime/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cluster/shards.h"
#include "src/store/memory_store.h"
#include "testing/job_specs.h"
#include "testing/status_matchers.h"

namespace chime::driver {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint32_t kShards = 8;
constexpr int kJobs = 12;
constexpr absl::Duration kAttempt = absl::Milliseconds(1500);

// What every attempt of every node did.
struct Execution {
  std::string job;
  absl::Time scheduled;
  std::string node;
  int64_t token = 0;
};

class ShardedSchedulersTest : public ::testing::Test {
 protected:
  // A node's scheduler on the shared store, with every job added (not
  // started).
  std::unique_ptr<Scheduler> Node(const std::string& name) {
    SchedulerOptions options;
    options.store = store_;
    options.shards = kShards;
    options.lease_ttl = absl::Milliseconds(1500);
    options.node_name = name;
    options.handoff_grace = absl::Seconds(5);
    options.worker_threads = 64;
    options.on_lease_lost = [this, name](const absl::Status& s) {
      absl::MutexLock lock(&mu_);
      lost_.push_back(absl::StrCat(name, ": ", s.ToString()));
    };
    absl::StatusOr<std::unique_ptr<Scheduler>> s =
        Scheduler::Create(std::move(options));
    EXPECT_THAT(s, IsOk());
    if (!s.ok()) return nullptr;
    for (int i = 0; i < kJobs; ++i) {
      JobSpec spec =
          ::chime::testing::CronJob(absl::StrCat("job-", i), "* * * * * *");
      // Late fires run late (a hand-off takes a moment), none is skipped.
      spec.misfire.action = MisfireAction::kRunAll;
      spec.misfire.threshold = absl::Hours(1);
      spec.overlap.action = OverlapAction::kAllow;  // attempts outlast a second
      EXPECT_THAT(
          (*s)->AddJob(spec,
                       [this, name](const AttemptContext& ctx) {
                         {
                           absl::MutexLock lock(&mu_);
                           runs_.push_back({ctx.fire.job.id, ctx.scheduled_time,
                                            name, ctx.fencing_token});
                         }
                         // Longer than the lookahead: a hand-off waits for
                         // it while the fires claimed ahead come due.
                         absl::SleepFor(kAttempt);
                         return absl::OkStatus();
                       }),
          IsOk());
    }
    return *std::move(s);
  }

  // Waits (up to 20 s) until `nodes` hold the shards Assign gives them.
  bool WaitForAssignment(const std::vector<Scheduler*>& nodes,
                         const std::vector<std::string>& names) {
    const std::vector<std::string> owners = cluster::Assign(kShards, names);
    for (int i = 0; i < 2000; ++i) {
      bool all = true;
      for (size_t n = 0; n < nodes.size() && all; ++n) {
        absl::StatusOr<SchedulerStats> stats = nodes[n]->Stats();
        std::vector<uint32_t> want;
        for (uint32_t s = 0; s < kShards; ++s) {
          if (owners[s] == names[n]) want.push_back(s);
        }
        all = stats.ok() && stats->shards == want;
      }
      if (all) return true;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  }

  // The next whole second at least `d` from now.
  static absl::Time SecondAfter(absl::Duration d) {
    return absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now() + d) + 1);
  }

  // Every job ran exactly once for every second in [from, to], and no fire
  // ran twice at all.
  void ExpectEachFireOnce(absl::Time from, absl::Time to) {
    absl::MutexLock lock(&mu_);
    std::map<std::pair<std::string, absl::Time>, int> count;
    for (const Execution& e : runs_) ++count[{e.job, e.scheduled}];
    for (const auto& [fire, n] : count) {
      EXPECT_EQ(n, 1) << fire.first << " at " << fire.second;
    }
    for (int i = 0; i < kJobs; ++i) {
      for (absl::Time t = from; t <= to; t += absl::Seconds(1)) {
        EXPECT_TRUE(count.contains({absl::StrCat("job-", i), t}))
            << "job-" << i << " did not run at " << t;
      }
    }
    EXPECT_THAT(lost_, IsEmpty());
  }

  absl::Mutex mu_;
  std::vector<Execution> runs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> lost_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Store> store_ =
      std::make_shared<store::MemoryStore>(store::MemoryStore::Options{});
};

TEST_F(ShardedSchedulersTest, EachNodeRunsTheJobsOfItsShards) {
  const std::vector<std::string> names = {"node-1", "node-2", "node-3"};
  std::vector<std::unique_ptr<Scheduler>> nodes;
  for (const std::string& name : names) nodes.push_back(Node(name));
  for (auto& n : nodes) ASSERT_THAT(n->Start(), IsOk());
  ASSERT_TRUE(WaitForAssignment(
      {nodes[0].get(), nodes[1].get(), nodes[2].get()}, names));
  const absl::Time from = SecondAfter(absl::ZeroDuration());
  absl::SleepFor(absl::Seconds(5));
  const absl::Time to = SecondAfter(absl::Seconds(-3));
  // A job of another node's shard is kept here, not run.
  const std::vector<std::string> owners = cluster::Assign(kShards, names);
  for (int i = 0; i < kJobs; ++i) {
    const JobKey key{"default", absl::StrCat("job-", i)};
    const std::string owner = owners[cluster::ShardOf(key, kShards)];
    for (size_t n = 0; n < names.size(); ++n) {
      if (names[n] == owner) {
        EXPECT_THAT(nodes[n]->NextFireTime(key), IsOk());
      } else {
        EXPECT_THAT(nodes[n]->TriggerJob(key),
                    StatusIs(absl::StatusCode::kFailedPrecondition,
                             HasSubstr("another node")));
        EXPECT_THAT(nodes[n]->GetJob(key), IsOk());
      }
    }
  }
  for (auto& n : nodes) n->Shutdown(absl::Seconds(1));
  ExpectEachFireOnce(from, to);
  absl::MutexLock lock(&mu_);
  for (const Execution& e : runs_) {
    const uint32_t shard = cluster::ShardOf(JobKey{"default", e.job}, kShards);
    EXPECT_EQ(e.node, owners[shard]) << e.job;
    EXPECT_GT(e.token, 0);
  }
}

TEST_F(ShardedSchedulersTest, ANodeThatJoinsTakesItsShardsWithNoFireLost) {
  std::unique_ptr<Scheduler> first = Node("node-1");
  ASSERT_THAT(first->Start(), IsOk());
  ASSERT_TRUE(WaitForAssignment({first.get()}, {"node-1"}));
  const absl::Time from = SecondAfter(absl::Seconds(1));
  absl::SleepFor(absl::Seconds(2));
  std::unique_ptr<Scheduler> second = Node("node-2");
  ASSERT_THAT(second->Start(), IsOk());
  ASSERT_TRUE(
      WaitForAssignment({first.get(), second.get()}, {"node-1", "node-2"}));
  absl::SleepFor(absl::Seconds(3));
  const absl::Time to = SecondAfter(absl::Seconds(-3));
  first->Shutdown(absl::Seconds(1));
  second->Shutdown(absl::Seconds(1));
  ExpectEachFireOnce(from, to);
  // node-2 ran its shards' jobs, and no run was lost or cancelled.
  {
    absl::MutexLock lock(&mu_);
    EXPECT_TRUE(
        std::any_of(runs_.begin(), runs_.end(),
                    [&](const Execution& e) { return e.node == "node-2"; }));
  }
  for (RunState state : {RunState::kLost, RunState::kCancelled}) {
    RunQuery query;
    query.state = state;
    absl::StatusOr<RunPage> page =
        store_->ListRuns(query, MonoTime::Infinite());
    ASSERT_THAT(page, IsOk());
    EXPECT_THAT(page->runs, IsEmpty()) << RunStateName(state);
  }
}

}  // namespace
}  // namespace chime::driver
