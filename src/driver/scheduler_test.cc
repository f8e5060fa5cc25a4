// How the Scheduler runs jobs: on schedule, with their identity, retries,
// timeouts, overlap and the concurrency limit. Time is a SimulatedClock, except
// in the one RealClock test at the end.
#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/core/packed_spec.h"
#include "src/driver/scheduler_test_util.h"
#include "testing/status_matchers.h"

namespace chime::driver::testing {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::IsOkAndHolds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(SchedulerTest, CronJobRunsAtEachScheduledTimeWithItsIdentity) {
  Create();
  bool claimed_before_start = true;
  ASSERT_THAT(scheduler_->AddJob(Cron("report", "* * * * *"),
                                 [&](const AttemptContext& ctx) {
                                   // Promise 1: the claim is durable before the
                                   // attempt runs.
                                   auto claim = GetClaim(ctx.fire);
                                   if (!claim || claim->run != ctx.run_id) {
                                     claimed_before_start = false;
                                   }
                                   recorder_.Record(ctx);
                                   return absl::OkStatus();
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  for (int minute = 1; minute <= 3; ++minute) {
    AdvanceTo(absl::Minutes(minute));
    recorder_.WaitForEvent(FireId("report", absl::Minutes(minute)),
                           "succeeded");
  }
  const std::vector<Seen> seen = recorder_.seen();
  ASSERT_EQ(seen.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(seen[i].fire_id, FireId("report", absl::Minutes(i + 1)));
    EXPECT_EQ(seen[i].scheduled_time, Wall(absl::Minutes(i + 1)));
    EXPECT_EQ(seen[i].started_at,
              Wall(absl::Minutes(i + 1)));  // the clock stood there
    EXPECT_EQ(seen[i].attempt, 1);
    EXPECT_EQ(seen[i].token, 1);
    EXPECT_FALSE(seen[i].manual);
  }
  EXPECT_NE(seen[0].run_id, seen[1].run_id);
  EXPECT_TRUE(claimed_before_start);
  EXPECT_THAT(recorder_.Transitions(FireId("report", absl::Minutes(1))),
              ElementsAre("claiming->pending", "pending->running",
                          "running->succeeded"));
  EXPECT_EQ(Watermark(Key("report")), Wall(absl::Minutes(3)));
  EXPECT_THAT(scheduler_->NextFireTime(Key("report")),
              IsOkAndHolds(Wall(absl::Minutes(4))));
}

// A daemon's job files keep each job packed (daemon/job_sync.h); a job
// added while an equal packing is alive is kept in that one buffer, not in a
// second copy.
TEST_F(SchedulerTest, AJobAddedWhileItsPackingIsAliveSharesThatBuffer) {
  Create();
  const JobSpec spec = Cron("a", "0 0 1 1 *");
  const core::PackedSpec held = core::PackedSpec::Pack(spec);
  std::atomic<const char*> seen{nullptr};
  ASSERT_THAT(scheduler_->AddJob(spec,
                                 [&](const AttemptContext& ctx) {
                                   seen = ctx.packed_spec->bytes().data();
                                   recorder_.Record(ctx);
                                   return absl::OkStatus();
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  ASSERT_THAT(scheduler_->TriggerJob(Key("a")), IsOk());
  recorder_.WaitForEvent("a:1:2026-01-01T00:00:00Z:manual", "succeeded");
  EXPECT_EQ(seen.load(), held.bytes().data());
}

// The backoff the Plan chose, from a "retrying" event's detail: "...; retry
// in 7.25s".
absl::Duration BackoffOf(const RunEvent& e) {
  std::vector<std::string> parts = absl::StrSplit(e.detail, "retry in ");
  absl::Duration d;
  EXPECT_EQ(parts.size(), 2u) << e.detail;
  EXPECT_TRUE(parts.size() == 2 && absl::ParseDuration(parts[1], &d))
      << e.detail;
  return d;
}

TEST_F(SchedulerTest, FailingJobRetriesWithBackoffThenEndsFailed) {
  Create();
  JobSpec spec = Cron("sync", "0 * * * *");
  spec.retry.max_attempts = 3;
  spec.retry.initial_backoff = absl::Seconds(10);
  spec.retry.multiplier = 2;
  ASSERT_THAT(
      scheduler_->AddJob(spec, Returns(absl::UnavailableError("disk full"))),
      IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  const std::string fire = FireId("sync", absl::Hours(1));
  AdvanceTo(absl::Hours(1));
  std::vector<absl::Duration> backoffs;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    ASSERT_TRUE(recorder_.WaitForAttempts(attempt));
    const RunEvent retrying = recorder_.WaitForEvent(fire, "retrying", attempt);
    EXPECT_THAT(retrying.detail, HasSubstr("disk full"));
    backoffs.push_back(BackoffOf(retrying));
    // Full jitter: uniform in [0, initial * multiplier^(attempt-1)].
    EXPECT_LE(backoffs.back(), absl::Seconds(10) * (1 << (attempt - 1)));
    AdvanceTo(clock_.MonoNow() - SimulatedClock::kMonoStart + backoffs.back());
  }
  const RunEvent failed = recorder_.WaitForEvent(fire, "failed");
  EXPECT_THAT(failed.detail, HasSubstr("disk full (exhausted 3 attempts)"));
  const std::vector<Seen> seen = recorder_.seen();
  ASSERT_EQ(seen.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(seen[i].fire_id, fire);
    EXPECT_EQ(seen[i].run_id, seen[0].run_id);
    EXPECT_EQ(seen[i].attempt, i + 1);
  }
  // Each retry starts exactly its backoff after the failure (the functions take
  // no time).
  EXPECT_EQ(seen[1].started_at, seen[0].started_at + backoffs[0]);
  EXPECT_EQ(seen[2].started_at, seen[1].started_at + backoffs[1]);
}

TEST_F(SchedulerTest, TimeoutSetsCancelledAndTheRunFailsTimedOut) {
  Create();
  JobSpec spec = Cron("slow", "0 * * * *");
  spec.timeout.attempt_timeout = absl::Seconds(30);
  spec.timeout.grace = absl::Seconds(5);
  std::atomic<bool> saw_cancel{false};
  std::atomic<const std::atomic<bool>*> flag{nullptr};
  ASSERT_THAT(
      scheduler_->AddJob(spec,
                         [&](const AttemptContext& ctx) {
                           flag = ctx.cancelled;
                           recorder_.Record(ctx);
                           saw_cancel = WaitUntilCancelled(ctx);
                           return absl::CancelledError("stopped as asked");
                         }),
      IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Hours(1));
  ASSERT_TRUE(recorder_.WaitForAttempts(1));
  AdvanceTo(absl::Hours(1) + absl::Seconds(29));
  EXPECT_FALSE(flag.load()->load()) << "cancelled before the timeout";
  AdvanceTo(absl::Hours(1) + absl::Seconds(30));
  const RunEvent failed =
      recorder_.WaitForEvent(FireId("slow", absl::Hours(1)), "failed");
  EXPECT_TRUE(saw_cancel);
  EXPECT_THAT(failed.detail, HasSubstr("timed out"));
  EXPECT_EQ(failed.at, Wall(absl::Hours(1) + absl::Seconds(30)));
}

// The forced cancel comes timeout.grace after the graceful one: an executor
// sends SIGTERM on `cancelled`, SIGKILL on `killed`.
TEST_F(SchedulerTest, TimeoutKillsGraceAfterCancelling) {
  Create();
  JobSpec spec = Cron("stubborn", "0 * * * *");
  spec.timeout.attempt_timeout = absl::Seconds(30);
  spec.timeout.grace = absl::Seconds(5);
  std::atomic<const AttemptContext*> seen{nullptr};
  absl::Notification killed;
  ASSERT_THAT(scheduler_->AddJob(spec,
                                 [&](const AttemptContext& ctx) {
                                   seen = &ctx;
                                   recorder_.Record(ctx);
                                   ctx.killed->wait(false);  // ignores cancel
                                   killed.Notify();
                                   return absl::CancelledError("killed");
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Hours(1));
  ASSERT_TRUE(recorder_.WaitForAttempts(1));
  AdvanceTo(absl::Hours(1) + absl::Seconds(30));
  ASSERT_TRUE(WaitUntilCancelled(*seen.load()));
  AdvanceTo(absl::Hours(1) + absl::Seconds(34));
  EXPECT_FALSE(seen.load()->IsKilled()) << "killed before the grace passed";
  AdvanceTo(absl::Hours(1) + absl::Seconds(35));
  ASSERT_TRUE(killed.WaitForNotificationWithTimeout(kLimit));
  const RunEvent failed =
      recorder_.WaitForEvent(FireId("stubborn", absl::Hours(1)), "failed");
  EXPECT_THAT(failed.detail, HasSubstr("timed out"));
}

TEST_F(SchedulerTest, AttemptOutputAndExitCodeAreKeptInTheStore) {
  Create();
  ASSERT_THAT(scheduler_->AddJob(Cron("talky", "0 * * * *"),
                                 [&](const AttemptContext& ctx) {
                                   recorder_.Record(ctx);
                                   *ctx.output = absl::StrCat(
                                       "hello from ", ctx.fire_id(), "\n");
                                   *ctx.exit_code = 3;
                                   return absl::InternalError("exit status 3");
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Hours(1));
  const std::string fire = FireId("talky", absl::Hours(1));
  const RunEvent failed = recorder_.WaitForEvent(fire, "failed");
  absl::StatusOr<RunDetail> run = store_->GetRun(failed.run_id, kForever);
  ASSERT_THAT(run, IsOk());
  ASSERT_EQ(run->attempts.size(), 1u);
  EXPECT_EQ(run->attempts[0].output, absl::StrCat("hello from ", fire, "\n"));
  EXPECT_THAT(run->attempts[0].detail, HasSubstr("exit status 3"));
  EXPECT_EQ(run->attempts[0].exit_code, 3);
}

TEST_F(SchedulerTest, OverlapSkipRecordsTheFireDueWhileTheFunctionBlocks) {
  Create();
  JobSpec spec = Cron("tick", "* * * * *");
  spec.overlap.action = OverlapAction::kSkip;
  Gate gate;
  ASSERT_THAT(scheduler_->AddJob(spec,
                                 [&](const AttemptContext& ctx) {
                                   recorder_.Record(ctx);
                                   if (ctx.attempt == 1 &&
                                       recorder_.seen().size() == 1) {
                                     gate.Pass();
                                   }
                                   return absl::OkStatus();
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  ASSERT_TRUE(gate.WaitEntered());
  AdvanceTo(absl::Minutes(2));
  const RunEvent skipped =
      recorder_.WaitForEvent(FireId("tick", absl::Minutes(2)), "skipped");
  EXPECT_EQ(skipped.detail, "overlap");
  EXPECT_EQ(skipped.run_id, 0u);
  gate.Open();
  recorder_.WaitForEvent(FireId("tick", absl::Minutes(1)), "succeeded");
  AdvanceTo(absl::Minutes(3));
  recorder_.WaitForEvent(FireId("tick", absl::Minutes(3)), "succeeded");
  std::vector<std::string> fires;
  for (const Seen& s : recorder_.seen()) fires.push_back(s.fire_id);
  EXPECT_THAT(fires, ElementsAre(FireId("tick", absl::Minutes(1)),
                                 FireId("tick", absl::Minutes(3))));
  const std::vector<MissedRecord> missed = Missed(Key("tick"));
  ASSERT_EQ(missed.size(), 1u);
  EXPECT_EQ(missed[0].first, Wall(absl::Minutes(2)));
  EXPECT_EQ(missed[0].reason, MissReason::kOverlap);
}

TEST_F(SchedulerTest, NoMoreAttemptsRunAtOnceThanWorkerThreadsByDefault) {
  SchedulerOptions options;
  options.worker_threads = 1;
  Create(options);
  JobSpec first = Cron("first", "* * * * *");
  first.priority = 1;  // both fire at 00:01; this one takes the only slot
  Gate gate;
  ASSERT_THAT(scheduler_->AddJob(first,
                                 [&](const AttemptContext& ctx) {
                                   gate.Pass();
                                   return absl::OkStatus();
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->AddJob(Cron("second", "* * * * *"),
                                 Returns(absl::OkStatus())),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  ASSERT_TRUE(gate.WaitEntered());
  // `second` was claimed, and stays pending while `first` has the only slot.
  recorder_.WaitForEvent(FireId("second", absl::Minutes(1)), "pending");
  ASSERT_TRUE(clock_.BlockUntilWaiters(1));
  EXPECT_THAT(recorder_.Transitions(FireId("second", absl::Minutes(1))),
              ElementsAre("claiming->pending"));
  gate.Open();
  recorder_.WaitForEvent(FireId("second", absl::Minutes(1)), "succeeded");
  EXPECT_THAT(recorder_.Transitions(FireId("second", absl::Minutes(1))),
              ElementsAre("claiming->pending", "pending->running",
                          "running->succeeded"));
}

// Real time: the scheduler thread sleeps on the RealClock and wakes for every
// second.
TEST_F(SchedulerTest, WithoutAStoreEveryDecisionIsStillReported) {
  store_ = nullptr;
  Create();
  JobSpec spec = Cron("tick", "* * * * *");
  spec.misfire.action = MisfireAction::kSkip;
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("tick", absl::Minutes(1)), "succeeded");
  EXPECT_THAT(recorder_.Transitions(FireId("tick", absl::Minutes(1))),
              ElementsAre("claiming->pending", "pending->running",
                          "running->succeeded"));
  // A command returns with its records out, as with a store.
  ASSERT_THAT(scheduler_->PauseJob(Key("tick")), IsOk());
  AdvanceTo(absl::Minutes(3) + absl::Seconds(30));
  ASSERT_THAT(scheduler_->ResumeJob(Key("tick")), IsOk());
  EXPECT_EQ(recorder_.events().back().detail,
            "paused: 2 fires from 2026-01-01T00:02:00Z to "
            "2026-01-01T00:03:00Z");
  EXPECT_EQ(recorder_.seen().at(0).token, 1);
}

TEST(SchedulerRealClock, EverySecondJobRunsEachSecondOnTime) {
  Recorder recorder;
  SchedulerOptions options;  // RealClock by default
  options.on_run_event = recorder.Callback();
  auto scheduler = Scheduler::Create(options);
  ASSERT_THAT(scheduler, IsOk());
  ASSERT_THAT((*scheduler)
                  ->AddJob(Cron("beat", "* * * * * *"),
                           [&](const AttemptContext& ctx) {
                             recorder.Record(ctx);
                             return absl::OkStatus();
                           }),
              IsOk());
  ASSERT_THAT((*scheduler)->Start(), IsOk());
  ASSERT_TRUE(recorder.WaitForAttempts(2));  // about 1-2 s
  (*scheduler)->Shutdown(absl::Seconds(5));
  const std::vector<Seen> seen = recorder.seen();
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen[1].scheduled_time, seen[0].scheduled_time + absl::Seconds(1));
  for (const Seen& s : seen) {
    EXPECT_EQ(s.scheduled_time,
              absl::FromUnixSeconds(absl::ToUnixSeconds(s.scheduled_time)))
        << "fires are whole seconds";
    EXPECT_GE(s.started_at, s.scheduled_time) << s.fire_id << " started early";
    EXPECT_LT(s.started_at, s.scheduled_time + absl::Seconds(1))
        << s.fire_id << " started late";
  }
}

// With release_early, an attempt claimed ahead is in a worker's hands before
// its time, waiting for it -- and still the scheduler's to take back: the
// fire of a job removed then never runs, and the ones that ran did not start
// before their time.
TEST(SchedulerRealClock, AFireHandedOverEarlyIsTakenBackWhenItsJobIsRemoved) {
  Recorder recorder;
  SchedulerOptions options;  // RealClock by default
  options.lookahead = absl::Seconds(3);
  options.release_early = absl::Milliseconds(1500);
  options.on_run_event = recorder.Callback();
  auto scheduler = Scheduler::Create(options);
  ASSERT_THAT(scheduler, IsOk());
  // Every 4 s: a fire is decided (and claimed) halfway from the one before,
  // 2 s before its time, and handed over 1.5 s before it.
  JobSpec spec = Cron("beat", "*/4 * * * * *");
  spec.overlap.action = OverlapAction::kAllow;  // claimed ahead
  ASSERT_THAT((*scheduler)
                  ->AddJob(spec,
                           [&](const AttemptContext& ctx) {
                             recorder.Record(ctx);
                             return absl::OkStatus();
                           }),
              IsOk());
  ASSERT_THAT((*scheduler)->Start(), IsOk());
  // S: the first fire at least 5 s on (the one before it, at least 1 s on,
  // runs); the job is removed 0.75 s before S, once S is in a worker's hands.
  const int64_t soon = absl::ToUnixSeconds(absl::Now()) + 5;
  const absl::Time s = absl::FromUnixSeconds(soon + (4 - soon % 4) % 4);
  absl::SleepFor(s - absl::Milliseconds(750) - absl::Now());
  ASSERT_THAT((*scheduler)->RemoveJob(Key("beat")), IsOk());
  const std::string fire =
      FireKey{Key("beat"), 1, s}.ToString();  // generation 1
  const RunEvent cancelled = recorder.WaitForEvent(fire, "cancelled");
  EXPECT_EQ(cancelled.detail, "job removed");
  absl::SleepFor(s + absl::Milliseconds(500) - absl::Now());
  (*scheduler)->Shutdown(absl::Seconds(5));
  const std::vector<Seen> seen = recorder.seen();
  EXPECT_FALSE(seen.empty()) << "the fires before S ran";
  for (const Seen& x : seen) {
    EXPECT_LT(x.scheduled_time, s) << x.fire_id << ": its job was removed";
    EXPECT_GE(x.started_at, x.scheduled_time) << x.fire_id << " started early";
  }
  EXPECT_THAT(recorder.Transitions(fire),
              ElementsAre("claiming->pending", "pending->cancelled"));
}

}  // namespace
}  // namespace chime::driver::testing
