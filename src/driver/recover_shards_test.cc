// RecoverShards: a node taking shards over recovers their jobs' runs only,
// each under its shard's lease; a shard released cleanly keeps its pending
// runs pending whatever their time.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/driver/recovery.h"
#include "src/store/memory_store.h"
#include "testing/job_specs.h"
#include "testing/simulated_clock.h"
#include "testing/status_matchers.h"

namespace chime::driver {
namespace {

using ::chime::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr MonoTime kNoDeadline = MonoTime::Infinite();
constexpr absl::Duration kShardTtl = absl::Seconds(5);

class RecoverShardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_.SetWall(absl::FromUnixSeconds(1800000000));
    // Two jobs in two different shards.
    for (int i = 0; jobs_.size() < 2 && i < 100; ++i) {
      JobSpec spec =
          ::chime::testing::CronJob(absl::StrCat("job-", i), "* * * * *");
      const uint32_t shard = fences_->ShardOf(spec.key);
      if (!jobs_.empty() && shard == shard_[0]) continue;
      absl::StatusOr<JobRecord> put =
          store_.PutJob(spec, kNoRevision, kNoDeadline);
      ASSERT_THAT(put, IsOk());
      jobs_.push_back(*put);
      shard_.push_back(shard);
    }
    ASSERT_THAT(jobs_, SizeIs(2));
  }

  Fence Acquire(uint32_t shard, const std::string& holder) {
    absl::StatusOr<LeaseGrant> grant = store_.AcquireLease(
        absl::StrCat("shard/", shard), holder, kShardTtl, kNoDeadline);
    EXPECT_THAT(grant, IsOk());
    return Fence{absl::StrCat("shard/", shard), grant.ok() ? grant->token : 0};
  }

  // Claims job k's fire at now + `in` as run `run`.
  void Claim(const Fence& fence, int k, absl::Duration in, RunId run) {
    ClaimBatch batch;
    batch.at = clock_.Now();
    batch.claims.push_back(
        {FireRef{jobs_[k].id, jobs_[k].generation, clock_.Now() + in}, run});
    ASSERT_THAT(store_.ClaimFires(fence, batch, kNoDeadline), IsOk());
  }

  RunState StateOf(RunId run) {
    absl::StatusOr<RunDetail> d = store_.GetRun(run, kNoDeadline);
    EXPECT_THAT(d, IsOk());
    return d.ok() ? d->run.state : RunState::kClaiming;
  }

  SimulatedClock clock_;
  store::MemoryStore store_{store::MemoryStore::Options{&clock_}};
  std::shared_ptr<Fences> fences_ = Fences::Sharded(4);
  std::vector<JobRecord> jobs_;
  std::vector<uint32_t> shard_;
};

TEST_F(RecoverShardsTest, ACrashedHoldersRunsOfTheShardGainedAreLost) {
  const Fence old0 = Acquire(shard_[0], "old");
  const Fence old1 = Acquire(shard_[1], "old");
  Claim(old0, 0, absl::Seconds(-10), 1);  // pending, its time passed
  Claim(old0, 0, absl::Minutes(5), 2);    // pending, ahead
  Claim(old1, 1, absl::Seconds(-10), 3);  // another shard's
  clock_.AdvanceBy(kShardTtl +
                   absl::Seconds(1));  // the old holder's leases expire
  GainedShard g;
  g.shard = shard_[0];
  g.granted_at = clock_.MonoNow();
  g.fence = Acquire(shard_[0], "new");
  absl::StatusOr<Recovered> r =
      RecoverShards(store_, clock_, *fences_, {g}, absl::InfiniteDuration());
  ASSERT_THAT(r, IsOk());
  // Only the gained shard's job, its runs recorded lost or kept pending.
  ASSERT_THAT(r->jobs, SizeIs(1));
  EXPECT_TRUE(r->jobs.contains(jobs_[0].spec.key));
  EXPECT_EQ(StateOf(1), RunState::kLost);
  EXPECT_THAT(r->lost[jobs_[0].spec.key],
              ElementsAre(Field(&core::LostRun::run, 1)));
  EXPECT_THAT(r->pending[jobs_[0].spec.key],
              ElementsAre(Field(&core::LostRun::run, 2)));
  EXPECT_EQ(StateOf(3), RunState::kPending);  // not this node's shard
  EXPECT_FALSE(r->lost.contains(jobs_[1].spec.key));
  ASSERT_THAT(r->events, SizeIs(1));
  EXPECT_EQ(r->events[0].run_id, 1u);
}

TEST_F(RecoverShardsTest, AReleasedShardsPendingRunsStayPending) {
  const Fence old0 = Acquire(shard_[0], "old");
  Claim(old0, 0, absl::Seconds(1), 1);  // claimed ahead, handed back
  // A clean handoff: the old holder released the lease; the new one takes
  // it a few seconds later, after the run's time.
  ASSERT_THAT(store_.ReleaseLease(old0, kNoDeadline), IsOk());
  clock_.AdvanceBy(absl::Seconds(3));
  GainedShard g;
  g.shard = shard_[0];
  g.released = true;
  g.granted_at = clock_.MonoNow();
  g.fence = Acquire(shard_[0], "new");
  absl::StatusOr<Recovered> r =
      RecoverShards(store_, clock_, *fences_, {g}, absl::InfiniteDuration());
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(StateOf(1), RunState::kPending);
  EXPECT_THAT(r->pending[jobs_[0].spec.key],
              ElementsAre(Field(&core::LostRun::run, 1)));
  EXPECT_THAT(r->lost, IsEmpty());
  EXPECT_THAT(r->events, IsEmpty());
}

// A scheduler without shards does not run beside nodes with shards: it waits
// (as a standby) with the lease released.
TEST_F(RecoverShardsTest, ASchedulerWithoutShardsWaitsWhileShardsAreHeld) {
  Acquire(shard_[0], "node-1 pid 7 scheduler 1 shards 4");
  EXPECT_THAT(Recover(store_, clock_, "node-9 pid 8", kShardTtl,
                      absl::InfiniteDuration()),
              ::chime::testing::StatusIs(
                  absl::StatusCode::kFailedPrecondition,
                  ::testing::AllOf(::testing::HasSubstr(kLeaseHeldElsewhere),
                                   ::testing::HasSubstr("nodes with shards"))));
  EXPECT_THAT(
      store_.AcquireLease("scheduler", "another", kShardTtl, kNoDeadline),
      IsOk());
}

}  // namespace
}  // namespace chime::driver
