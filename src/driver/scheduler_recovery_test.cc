// A scheduler created on a store an earlier one used picks up where it
// stopped: watermarks, generations, RunIds, lost runs, the lease.
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/driver/recovery.h"
#include "src/driver/scheduler_test_util.h"
#include "src/store/memory_store.h"
#include "src/store/sqlite_store.h"
#include "testing/fault_injection_store.h"
#include "testing/offset_clock.h"
#include "testing/status_matchers.h"

namespace chime::driver::testing {
namespace {

using ::chime::testing::FaultInjectionStore;
using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class RecoveryTest : public SchedulerTest {
 protected:
  // A SqliteStore in this test's directory (the same database every time),
  // on the simulated clock. The directory is removed after the test.
  std::unique_ptr<Store> OpenSqlite() {
    if (dir_.empty()) {
      char dir[] = "/tmp/chime-recovery-XXXXXX";
      EXPECT_NE(mkdtemp(dir), nullptr);
      dir_ = dir;
    }
    store::SqliteStore::Options options;
    options.data_dir = dir_;
    options.clock = &clock_;
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> opened =
        store::SqliteStore::Open(options);
    EXPECT_THAT(opened, IsOk());
    if (!opened.ok()) return nullptr;
    return *std::move(opened);
  }

  void TearDown() override {
    scheduler_.reset();
    store_.reset();  // closes the database
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string dir_;

  // Stops the scheduler as a clean shutdown does, then lets the clock run
  // while none is running.
  void StopAndWaitUntil(absl::Duration d) {
    scheduler_->Shutdown(absl::ZeroDuration());
    scheduler_.reset();
    clock_.AdvanceTo(SimulatedClock::kMonoStart + d);
  }

  // Writes what a scheduler that died leaves behind: `spec` stored, its fire
  // at `fire` claimed by run `run` and running attempt 1. Its lease expires a
  // minute after the clock's start. Returns the dead scheduler's token.
  int64_t LeaveRunRunning(const JobSpec& spec, absl::Duration fire, RunId run) {
    const int64_t token = LeaveRunPending(spec, fire, run);
    EXPECT_THAT(store_->TransitionRun(
                    Fence{"scheduler", token},
                    RunTransition{run, RunState::kPending, RunState::kRunning,
                                  1, 0, Wall(fire), "", ""},
                    kForever),
                IsOk());
    return token;
  }

  // The same, with the run claimed (ahead of its time) but not started.
  int64_t LeaveRunPending(const JobSpec& spec, absl::Duration fire, RunId run) {
    absl::StatusOr<LeaseGrant> grant =
        store_->AcquireLease("scheduler", "dead", absl::Minutes(1), kForever);
    EXPECT_THAT(grant, IsOk());
    const Fence fence{"scheduler", grant->token};
    absl::StatusOr<JobRecord> job = store_->PutJob(spec, kNoRevision, kForever);
    EXPECT_THAT(job, IsOk());
    ClaimBatch batch;
    batch.at = Wall(fire);
    batch.claims.push_back({FireRef{job->id, 1, Wall(fire)}, run});
    WatermarkAdvance& w = batch.watermarks.emplace_back();
    w.job = job->id;
    w.generation = 1;
    w.watermark = Wall(fire);
    EXPECT_THAT(store_->ClaimFires(fence, batch, kForever), IsOk());
    return grant->token;
  }
};

TEST_F(RecoveryTest, RestartResumesFromTheWatermarkThroughTheMisfirePolicy) {
  JobSpec spec = Cron("tick", "* * * * *");
  spec.misfire.action = MisfireAction::kSkip;
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("tick", absl::Minutes(1)), "succeeded");
  // Down from 00:01 to 00:10:30: 00:02 to 00:09 are more than the threshold
  // (1m) late and skipped; 00:10 is only 30s late and runs.
  StopAndWaitUntil(absl::Minutes(10) + absl::Seconds(30));
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  recorder_.WaitForEvent(FireId("tick", absl::Minutes(10)), "succeeded");

  const std::vector<Seen> seen = recorder_.seen();
  ASSERT_EQ(seen.size(), 2u) << recorder_.Dump();
  EXPECT_EQ(seen[1].fire_id, FireId("tick", absl::Minutes(10)));
  EXPECT_GT(seen[1].run_id, seen[0].run_id);  // RunIds continue
  EXPECT_GT(seen[1].token, seen[0].token);    // a new lease, a newer token
  const std::vector<MissedRecord> missed = Missed(Key("tick"));
  ASSERT_EQ(missed.size(), 1u);
  EXPECT_EQ(missed[0].first, Wall(absl::Minutes(2)));
  EXPECT_EQ(missed[0].last, Wall(absl::Minutes(9)));
  EXPECT_EQ(missed[0].count, 8);
  EXPECT_EQ(missed[0].reason, MissReason::kMisfireSkip);
  EXPECT_EQ(Watermark(Key("tick")), Wall(absl::Minutes(10)));
}

TEST_F(RecoveryTest, AJobAddedBeforeACrashKeepsTheFiresDueWhileDown) {
  // The job is added at 00:00:30 and the scheduler stops before its first
  // fire; back at 00:03:30, 00:01 and 00:02 are misfires, recorded, and 00:03
  // runs: nothing after the add is dropped unrecorded.
  JobSpec spec = Cron("a", "* * * * *");
  spec.misfire.action = MisfireAction::kSkip;
  clock_.AdvanceTo(SimulatedClock::kMonoStart + absl::Seconds(30));
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  ASSERT_THAT(scheduler_->NextFireTime(Key("a")), IsOk());  // applied
  StopAndWaitUntil(absl::Minutes(3) + absl::Seconds(30));
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  recorder_.WaitForEvent(FireId("a", absl::Minutes(3)), "succeeded");
  const std::vector<MissedRecord> missed = Missed(Key("a"));
  ASSERT_EQ(missed.size(), 1u) << recorder_.Dump();
  EXPECT_EQ(missed[0].first, Wall(absl::Minutes(1)));
  EXPECT_EQ(missed[0].last, Wall(absl::Minutes(2)));
}

TEST_F(RecoveryTest, RunLeftRunningIsLostAndAtLeastOnceRunsItAgain) {
  JobSpec spec = Cron("a", "* * * * *");
  spec.delivery = Delivery::kAtLeastOnce;
  const int64_t dead_token = LeaveRunRunning(spec, absl::Minutes(1), 7);
  clock_.AdvanceTo(SimulatedClock::kMonoStart + absl::Seconds(90));
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  const std::string fire = FireId("a", absl::Minutes(1));
  recorder_.WaitForEvent(fire, "succeeded");
  EXPECT_THAT(
      recorder_.Transitions(fire),
      ElementsAre("running->lost", "lost->running", "running->succeeded"));
  const std::vector<Seen> seen = recorder_.seen();
  ASSERT_EQ(seen.size(), 1u) << recorder_.Dump();
  EXPECT_EQ(seen[0].run_id, 7u);
  EXPECT_EQ(seen[0].attempt, 2);  // the lost one was attempt 1
  EXPECT_GT(seen[0].token, dead_token);
  absl::StatusOr<RunDetail> run = store_->GetRun(7, kForever);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->run.state, RunState::kSucceeded);
  ASSERT_EQ(run->attempts.size(), 2u);
  EXPECT_EQ(run->attempts[0].outcome, RunState::kLost);
}

// A run whose attempt kills its scheduler would be lost at every restart
// and started again, forever: lost for the third time (max_losses), it
// ends failed instead -- a dead letter, saying why.
TEST_F(RecoveryTest, ARunLostForTheThirdTimeEndsFailedInsteadOfStartingAgain) {
  JobSpec spec = Cron("a", "* * * * *");
  spec.delivery = Delivery::kAtLeastOnce;
  const int64_t token = LeaveRunRunning(spec, absl::Minutes(1), 7);
  // Two earlier schedulers were lost with it (attempts 1 and 2); the third
  // runs attempt 3 when it dies too.
  const Fence fence{"scheduler", token};
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const absl::Time at = Wall(absl::Minutes(1)) + absl::Seconds(attempt);
    ASSERT_THAT(store_->TransitionRun(
                    fence,
                    RunTransition{7, RunState::kRunning, RunState::kLost,
                                  attempt, 0, at, "died", ""},
                    kForever),
                IsOk());
    ASSERT_THAT(store_->TransitionRun(
                    fence,
                    RunTransition{7, RunState::kLost, RunState::kRunning,
                                  attempt + 1, 0, at, "", ""},
                    kForever),
                IsOk());
  }
  clock_.AdvanceTo(SimulatedClock::kMonoStart + absl::Seconds(90));
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  const std::string fire = FireId("a", absl::Minutes(1));
  recorder_.WaitForEvent(fire, "failed");
  EXPECT_THAT(recorder_.Transitions(fire),
              ElementsAre("running->lost", "lost->failed"));
  for (const Seen& s : recorder_.seen()) EXPECT_NE(s.run_id, 7u);
  absl::StatusOr<RunDetail> run = store_->GetRun(7, kForever);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->run.state, RunState::kFailed);
  EXPECT_THAT(run->run.detail, HasSubstr("lost 3 times"));
  EXPECT_EQ(run->attempts.size(), 3u);  // none started after the third
}

TEST_F(RecoveryTest, RunLeftRunningIsLostAndAtMostOnceNeverRunsItAgain) {
  JobSpec spec = Cron("a", "* * * * *");  // at-most-once by default
  LeaveRunRunning(spec, absl::Minutes(1), 7);
  clock_.AdvanceTo(SimulatedClock::kMonoStart + absl::Seconds(90));
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)), "lost");
  AdvanceTo(absl::Minutes(2));
  recorder_.WaitForEvent(FireId("a", absl::Minutes(2)), "succeeded");
  const std::vector<Seen> seen = recorder_.seen();
  ASSERT_EQ(seen.size(), 1u) << recorder_.Dump();
  EXPECT_EQ(seen[0].fire_id, FireId("a", absl::Minutes(2)));
  EXPECT_GT(seen[0].run_id, 7u);
  absl::StatusOr<RunDetail> run = store_->GetRun(7, kForever);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->run.state, RunState::kLost);
  EXPECT_THAT(run->run.detail, HasSubstr("stopped while the run was running"));
}

TEST_F(RecoveryTest, ARunClaimedAheadWhoseTimeHasNotComeRunsAtItsTime) {
  // The dead scheduler claimed the 00:02 fire ahead (lookahead) and died at
  // 00:01:59.5; the run cannot have started, so it is not lost: the new
  // scheduler runs it at 00:02 -- at-most-once, with nothing lost or doubled.
  JobSpec spec = Cron("a", "* * * * *");
  spec.overlap.action = OverlapAction::kAllow;
  LeaveRunPending(spec, absl::Minutes(2), 7);
  clock_.AdvanceTo(SimulatedClock::kMonoStart + absl::Minutes(2) -
                   absl::Milliseconds(500));
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(2));
  const std::string fire = FireId("a", absl::Minutes(2));
  recorder_.WaitForEvent(fire, "succeeded");
  EXPECT_THAT(recorder_.Transitions(fire),
              ElementsAre("pending->running", "running->succeeded"));
  const std::vector<Seen> seen = recorder_.seen();
  ASSERT_EQ(seen.size(), 1u) << recorder_.Dump();
  EXPECT_EQ(seen[0].run_id, 7u);
  EXPECT_EQ(seen[0].attempt, 1);
  EXPECT_EQ(seen[0].started_at, Wall(absl::Minutes(2)));
}

TEST_F(RecoveryTest, AGracefulRestartLeavesRunsClaimedAheadToTheNextScheduler) {
  // A deploy at 00:01:59.5 with the 00:02 fire already claimed and staged:
  // shutdown leaves its run pending instead of cancelling it, and the next
  // scheduler runs it at 00:02.
  JobSpec spec = Cron("a", "* * * * *");
  spec.overlap.action = OverlapAction::kAllow;
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(2) - absl::Milliseconds(500));
  const std::string fire = FireId("a", absl::Minutes(2));
  recorder_.WaitForEvent(fire, "pending");
  StopAndWaitUntil(absl::Minutes(2) - absl::Milliseconds(200));
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(2));
  recorder_.WaitForEvent(fire, "succeeded");
  EXPECT_THAT(recorder_.Transitions(fire),
              ElementsAre("claiming->pending", "pending->running",
                          "running->succeeded"));
  const std::vector<Seen> seen = recorder_.seen();  // 00:01, then 00:02
  ASSERT_EQ(seen.size(), 2u) << recorder_.Dump();
  EXPECT_EQ(seen[1].fire_id, fire);
  EXPECT_EQ(seen[1].started_at, Wall(absl::Minutes(2)));
  EXPECT_GT(seen[1].token, seen[0].token);  // run by the new scheduler
}

TEST_F(RecoveryTest, ARunClaimedAheadOfAChangedScheduleIsCancelled) {
  JobSpec spec = Cron("a", "* * * * *");
  LeaveRunPending(spec, absl::Minutes(2), 7);
  clock_.AdvanceTo(SimulatedClock::kMonoStart + absl::Seconds(90));
  Create();
  spec.trigger.expression = "*/5 * * * *";  // generation 2
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  const RunEvent cancelled =
      recorder_.WaitForEvent(FireId("a", absl::Minutes(2)), "cancelled");
  EXPECT_EQ(cancelled.detail, "schedule changed");
  EXPECT_TRUE(recorder_.seen().empty());
}

TEST_F(RecoveryTest, AStagedRestartCarriedOutAfterItsTimeStillStarts) {
  // The Plan stages the restarted attempt (the wall clock moved 0.5 ms from
  // the monotonic one: its start maps 0.5 ms ahead), and the driver carries
  // the action out only at Start, after that time: it must still hold it as
  // staged and report its start, or the run never leaves pending.
  JobSpec spec = Cron("a", "0 0 1 1 *");
  spec.delivery = Delivery::kAtLeastOnce;
  LeaveRunRunning(spec, absl::Minutes(1), 7);
  clock_.AdvanceTo(SimulatedClock::kMonoStart + absl::Seconds(90));
  Create();
  clock_.StepWall(absl::Microseconds(500));
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  // Adds made before Start are applied by the next call (or Start): now.
  ASSERT_THAT(scheduler_->NextFireTime(spec.key), IsOk());
  clock_.AdvanceTo(SimulatedClock::kMonoStart + absl::Seconds(91));
  ASSERT_THAT(scheduler_->Start(), IsOk());
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)), "succeeded");
  EXPECT_EQ(recorder_.seen().at(0).attempt, 2);
}

TEST_F(RecoveryTest, ASecondSchedulerOnTheSameStoreIsRefused) {
  Create();
  SchedulerOptions options;
  options.clock = &clock_;
  options.store = store_;
  EXPECT_THAT(CreateScheduler(options).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("another scheduler holds the store's lease")));
  // Once the first has shut down, the store is free.
  scheduler_->Shutdown(absl::ZeroDuration());
  EXPECT_THAT(CreateScheduler(options), IsOk());
}

TEST(RecoveryClockTest, ANodeWhoseClockIsOffDoesNotTakeTheLease) {
  // The store's clock is a minute ahead of this process's.
  chime::testing::OffsetClock store_clock(absl::Minutes(1));
  auto store = std::make_shared<store::MemoryStore>(
      store::MemoryStore::Options{&store_clock, 1024});
  SchedulerOptions options;
  options.store = store;
  options.lease_ttl = absl::Seconds(5);
  options.max_clock_skew = absl::Seconds(1);
  EXPECT_THAT(
      CreateScheduler(options).status(),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("not taking the store's lease: this node's clock is "
                         "1m")));
  // The lease was handed back at once: another node may take it now.
  absl::StatusOr<LeaseGrant> other =
      store->AcquireLease("scheduler", "node-b", absl::Seconds(5),
                          RealClock::Get().MonoNow() + absl::Seconds(5));
  ASSERT_THAT(other, IsOk());
  ASSERT_THAT(store->ReleaseLease(Fence{"scheduler", other->token},
                                  MonoTime::Infinite()),
              IsOk());

  // Not checked (the default): it schedules, and says how far off it is.
  options.max_clock_skew = absl::InfiniteDuration();
  absl::StatusOr<std::unique_ptr<Scheduler>> s = CreateScheduler(options);
  ASSERT_THAT(s, IsOk());
  absl::StatusOr<SchedulerStats> stats = (*s)->Stats();
  ASSERT_THAT(stats, IsOk());
  ASSERT_TRUE(stats->clock_offset.has_value());
  EXPECT_LT(absl::AbsDuration(*stats->clock_offset - absl::Minutes(1)),
            absl::Milliseconds(100));
  (*s)->Shutdown(absl::ZeroDuration());
}

// The scheduler's wall clock jumps 30 s ahead of the store's. Until the next
// renewal notices (and on_clock_skew is called), the fires it decides stay
// within max_clock_skew of the store's clock: none of the 30 s of fires that
// are not due yet is run, skipped or missed.
TEST(RecoveryClockTest, AClockThatJumpsAheadDecidesNoFireEarly) {
  chime::testing::OffsetClock clock;  // this node's clock
  auto store = std::make_shared<store::MemoryStore>(
      store::MemoryStore::Options{&RealClock::Get(), 1024});
  SchedulerOptions options;
  options.clock = &clock;
  options.store = store;
  options.lease_ttl = absl::Milliseconds(900);  // renewed every 300 ms
  options.max_clock_skew = absl::Seconds(1);
  absl::Notification skewed;
  options.on_clock_skew = [&](absl::Duration) { skewed.Notify(); };
  absl::StatusOr<std::unique_ptr<Scheduler>> s = CreateScheduler(options);
  ASSERT_THAT(s, IsOk());
  JobSpec spec;
  spec.key.id = "tick";
  spec.trigger.expression = "@every 1s";
  ASSERT_THAT((*s)->AddJob(
                  spec, [](const AttemptContext&) { return absl::OkStatus(); }),
              IsOk());
  ASSERT_THAT((*s)->Start(), IsOk());
  absl::SleepFor(absl::Milliseconds(1500));

  clock.Set(absl::Seconds(30));
  ASSERT_TRUE(skewed.WaitForNotificationWithTimeout(absl::Seconds(10)));
  (*s)->Shutdown(absl::ZeroDuration());
  absl::StatusOr<JobRecord> job =
      store->GetJob(spec.key, RealClock::Get().MonoNow() + absl::Seconds(5));
  ASSERT_THAT(job, IsOk());
  // The last fire decided, by the store's (the real) clock.
  EXPECT_LE(job->watermark, absl::Now() + absl::Seconds(2));
  EXPECT_GT(job->watermark, absl::Now() - absl::Seconds(5));
}

// A run claimed ahead by a scheduler whose clock may have been up to
// max_clock_skew ahead of the store's: its fire due within that bound may
// have started, so recovery records it lost; one further ahead is adopted.
TEST(RecoveryClockTest, ARunClaimedAheadWithinTheSkewBoundMayHaveStarted) {
  RealClock& clock = RealClock::Get();
  store::MemoryStore store(store::MemoryStore::Options{&clock, 1024});
  JobSpec spec;
  spec.key.id = "tick";
  spec.trigger.expression = "@every 1s";
  absl::StatusOr<JobRecord> job =
      store.PutJob(spec, kNoRevision, MonoTime::Infinite());
  ASSERT_THAT(job, IsOk());
  absl::StatusOr<LeaseGrant> old = store.AcquireLease(
      "scheduler", "old", absl::Milliseconds(1), MonoTime::Infinite());
  ASSERT_THAT(old, IsOk());
  const absl::Time now = absl::Now();
  ClaimBatch batch;
  batch.at = now;
  batch.claims.push_back({FireRef{job->id, 1, now + absl::Milliseconds(500)},
                          RunId{1}});  // within the 1 s bound
  batch.claims.push_back(
      {FireRef{job->id, 1, now + absl::Seconds(30)}, RunId{2}});
  ASSERT_THAT(store.ClaimFires(Fence{"scheduler", old->token}, batch,
                               MonoTime::Infinite()),
              IsOk());
  absl::SleepFor(absl::Milliseconds(5));  // the old lease expires

  absl::StatusOr<Recovered> r =
      Recover(store, clock, "new", absl::Seconds(5), absl::Seconds(1));
  ASSERT_THAT(r, IsOk());
  ASSERT_EQ(r->pending[spec.key].size(), 1u);
  EXPECT_EQ(r->pending[spec.key][0].run, 2u);
  absl::StatusOr<RunDetail> first = store.GetRun(1, MonoTime::Infinite());
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(first->run.state, RunState::kLost);
  EXPECT_EQ(first->run.attempt, 1);  // attempt 1 may have begun
}

// The wall clock steps 30 s forward past a one-off job's time: the
// scheduler notices within wall_clock_check (1 s), not at its next timer 30 s
// later, and runs it.
TEST(RecoveryClockTest, AWallClockStepForwardIsNoticedWithoutATimer) {
  // Whether the job ran within `limit` of the step, with `check`.
  const auto ran_after_step = [](absl::Duration check, absl::Duration limit) {
    chime::testing::OffsetClock clock;
    SchedulerOptions options;
    options.clock = &clock;
    options.wall_clock_check = check;
    absl::StatusOr<std::unique_ptr<Scheduler>> s = CreateScheduler(options);
    EXPECT_THAT(s, IsOk());
    if (!s.ok()) return false;
    JobSpec spec;
    spec.key.id = "once";
    spec.trigger.kind = Trigger::Kind::kAt;
    spec.trigger.at = clock.Now() + absl::Seconds(30);
    absl::Notification ran;
    EXPECT_THAT((*s)->AddJob(spec,
                             [&](const AttemptContext&) {
                               ran.Notify();
                               return absl::OkStatus();
                             }),
                IsOk());
    EXPECT_THAT((*s)->Start(), IsOk());
    absl::SleepFor(absl::Milliseconds(300));  // asleep until its timer
    clock.Set(absl::Seconds(31));
    const bool in_time = ran.WaitForNotificationWithTimeout(limit);
    (*s)->Shutdown(absl::ZeroDuration());
    return in_time;
  };
  EXPECT_TRUE(ran_after_step(absl::Seconds(1), absl::Seconds(5)));
  // Without the check only its timer, 30 s on, would wake it.
  EXPECT_FALSE(ran_after_step(absl::InfiniteDuration(), absl::Seconds(2)));
}

TEST_F(RecoveryTest, AClaimTheStoreNeverCommittedIsDecidedAgain) {
  // The store crashes while the 00:02 claim is on its way: the claim is not
  // in the store, the run never starts, and shutdown does not hang on the
  // dead store. The next scheduler (on the same database) decides 00:02
  // again and runs it -- once.
  std::unique_ptr<Store> base = OpenSqlite();
  ASSERT_NE(base, nullptr);
  auto faulty = std::make_shared<FaultInjectionStore>(std::move(base));
  store_ = faulty;
  JobSpec spec = Cron("a", "* * * * *");
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)), "succeeded");
  faulty->SetDelay(absl::Seconds(5), &clock_);
  AdvanceTo(absl::Minutes(2));
  // The scheduler thread sleeps, and the writer sleeps in the claim's delay.
  ASSERT_TRUE(clock_.BlockUntilWaiters(2));
  faulty->Crash();
  clock_.AdvanceBy(absl::Seconds(5));
  faulty->Reset();  // no more delays; the store stays down
  scheduler_->Shutdown(absl::ZeroDuration());
  scheduler_.reset();
  store_.reset();
  faulty.reset();  // closes the database
  EXPECT_EQ(recorder_.seen().size(), 1u) << recorder_.Dump();

  store_ = OpenSqlite();
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  recorder_.WaitForEvent(FireId("a", absl::Minutes(2)), "succeeded");
  const std::vector<Seen> seen = recorder_.seen();
  ASSERT_EQ(seen.size(), 2u) << recorder_.Dump();
  EXPECT_EQ(seen[1].fire_id, FireId("a", absl::Minutes(2)));
  const std::optional<ClaimInfo> claim =
      GetClaim(FireAt("a", absl::Minutes(2)));
  ASSERT_TRUE(claim.has_value());
  EXPECT_EQ(claim->run, seen[1].run_id);
}

TEST_F(RecoveryTest, SqliteStoreCarriesJobsAndRunIdsAcrossProcesses) {
  JobSpec spec = Cron("a", "* * * * *");
  store_ = OpenSqlite();
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)), "succeeded");
  StopAndWaitUntil(absl::Minutes(1) + absl::Seconds(30));
  store_.reset();  // closes the database: another process from here on
  store_ = OpenSqlite();
  Create();
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(2));
  recorder_.WaitForEvent(FireId("a", absl::Minutes(2)), "succeeded");
  const std::vector<Seen> seen = recorder_.seen();
  ASSERT_EQ(seen.size(), 2u) << recorder_.Dump();
  EXPECT_GT(seen[1].run_id, seen[0].run_id);
  EXPECT_GT(seen[1].token, seen[0].token);
  absl::StatusOr<RunDetail> first = store_->GetRun(seen[0].run_id, kForever);
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(first->run.state, RunState::kSucceeded);
}

}  // namespace
}  // namespace chime::driver::testing
