#include "src/core/plan.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/core/plan_harness.h"
#include "src/time/rfc3339.h"
#include "testing/job_specs.h"
#include "testing/status_matchers.h"

namespace chime::core {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Plan, FiresEachScheduledTimeOnceAfterItsClaimIsDurable) {
  Harness h;
  ASSERT_THAT(h.Add(Cron("a", "*/5 * * * *")), IsOk());
  // A new job's watermark is stored at once (a restart resumes from it).
  EXPECT_THAT(h.TakeLog(), ElementsAre("00:00:00 persist"));
  h.AdvanceBy(absl::Minutes(6));
  h.Finish(h.starts().at(0).run, 1, AttemptOutcome::kSucceeded);
  h.AdvanceBy(absl::Minutes(5));
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:05:00 persist claim=a:1:2026-03-01T00:05:00Z",
                          "00:05:00 start a:1:2026-03-01T00:05:00Z #1",
                          "00:06:00 a:1:2026-03-01T00:05:00Z succeeded",
                          "00:10:00 persist claim=a:1:2026-03-01T00:10:00Z",
                          "00:10:00 start a:1:2026-03-01T00:10:00Z #1"));
}

TEST(Plan, WithoutRecordedTransitionsRunsGoTheSameWayUnrecorded) {
  // A driver with no store and no observer asks for no TransitionActions:
  // the runs start, retry and end as before, and are counted.
  PlanOptions quiet;
  quiet.record_transitions = false;
  Harness loud, h(quiet);
  for (Harness* x : {&loud, &h}) {
    JobSpec spec = Cron("a", "*/5 * * * *");
    spec.retry.max_attempts = 2;
    spec.retry.initial_backoff = absl::Seconds(10);
    ASSERT_THAT(x->Add(spec), IsOk());
    x->AdvanceBy(absl::Minutes(5));
    x->Finish(x->starts().at(0).run, 1, AttemptOutcome::kFailed, "boom");
    x->AdvanceBy(absl::Seconds(30));
    ASSERT_EQ(x->starts().size(), 2u);
    x->Finish(x->starts().at(1).run, 2, AttemptOutcome::kSucceeded);
    x->AdvanceBy(absl::Minutes(5));
  }
  std::vector<std::string> without_transitions;
  for (const std::string& line : loud.TakeLog()) {
    if (absl::StrContains(line, "persist") ||
        absl::StrContains(line, " start ") || absl::StrContains(line, "cancel"))
      without_transitions.push_back(line);
  }
  EXPECT_EQ(h.TakeLog(), without_transitions);
  EXPECT_EQ(h.plan().counters().runs_succeeded, 1);
  EXPECT_EQ(h.plan().counters().retries, loud.plan().counters().retries);
  EXPECT_EQ(h.starts().size(), 3u);  // the 00:10 fire too
}

TEST(Plan, WithoutRecordedWatermarksFiresAndMissesGoTheSameWay) {
  // A driver with no store asks for no watermarks: the same fires are
  // claimed, run and recorded missed; only the persists that carried
  // nothing but a watermark are gone.
  PlanOptions quiet;
  quiet.record_watermarks = false;
  Harness loud, h(quiet);
  for (Harness* x : {&loud, &h}) {
    ASSERT_THAT(x->Add(Cron("a", "*/5 * * * *")), IsOk());
    JobSpec once = Cron("once", "* * * * *");
    once.trigger.kind = Trigger::Kind::kAt;
    once.trigger.at = x->now().wall + absl::Minutes(3);
    ASSERT_THAT(x->Add(once), IsOk());
    ASSERT_THAT(x->Add(Cron("p", "*/2 * * * *")), IsOk());
    ASSERT_THAT(x->Pause(JobKey{"default", "p"}), IsOk());
    x->AdvanceBy(absl::Minutes(6));
    ASSERT_THAT(x->Resume(JobKey{"default", "p"}), IsOk());
    for (const StartAttemptAction& s : x->starts())
      x->Finish(s.run, 1, AttemptOutcome::kSucceeded);
    x->AdvanceBy(absl::Minutes(5));
  }
  std::vector<std::string> expected;
  for (const std::string& line : loud.TakeLog()) {
    if (absl::StrContains(line, "persist") &&
        !absl::StrContains(line, "claim=") &&
        !absl::StrContains(line, "missed="))
      continue;
    expected.push_back(line);
  }
  const std::vector<std::string> log = h.TakeLog();
  EXPECT_EQ(log, expected);
  EXPECT_THAT(log, ::testing::Contains(HasSubstr("missed=paused:3")));
  EXPECT_GT(loud.watermarks(), 0);
  EXPECT_EQ(h.watermarks(), 0);
  EXPECT_EQ(h.starts().size(), loud.starts().size());
}

// A scheduler shutting down stops starting attempts before it removes its
// jobs: removing (or finishing) one must not start another job's waiting run.
TEST(Plan, NothingStartsAfterStopStarting) {
  PlanOptions options;
  options.max_concurrent_runs = 1;
  Harness h(options);
  ASSERT_THAT(h.Add(Cron("a", "*/5 * * * *")), IsOk());
  ASSERT_THAT(h.Add(Cron("b", "*/5 * * * *")), IsOk());
  h.AdvanceBy(absl::Minutes(5));
  ASSERT_EQ(h.starts().size(), 1u);  // one slot: the other run waits
  h.plan().StopStarting();
  h.Finish(h.starts().at(0).run, 1, AttemptOutcome::kSucceeded);
  h.AdvanceBy(absl::Minutes(1));
  EXPECT_EQ(h.starts().size(), 1u) << "a waiting run started after "
                                      "StopStarting";
}

TEST(Plan, AJobQueuedAcrossItsFireTimeRunsThatFire) {
  // Requested at 00:04:59.9, applied at 00:05:00.2: the 00:05 fire is the
  // job's first, due at once -- not skipped to 00:10.
  Harness h;
  h.AdvanceBy(absl::Minutes(5) + absl::Milliseconds(200));
  ASSERT_THAT(
      h.AddRequestedAt(Cron("a", "*/5 * * * *"), T("2026-03-01T00:04:59.9Z")),
      IsOk());
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:05:00 persist",
                          "00:05:00 persist claim=a:1:2026-03-01T00:05:00Z",
                          "00:05:00 start a:1:2026-03-01T00:05:00Z #1"));
}

TEST(Plan, AResumedJobDecidesTheFiresAfterItsWatermarkAtOnce) {
  // The store says: generation 4, decided up to 23:57 the day before; it is
  // 00:00:30 now. 23:58 and 23:59 are misfires (skip); 00:00 is 30s late and
  // runs. No watermark is persisted for the add itself: the store has one.
  Harness h;
  h.AdvanceBy(absl::Seconds(30));
  JobSpec spec = Cron("a", "* * * * *");
  spec.misfire.action = MisfireAction::kSkip;
  ASSERT_THAT(h.AddResumed(spec, Resume{4, T("2026-02-28T23:57:00Z")}), IsOk());
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:00:30 persist claim=a:4:2026-03-01T00:00:00Z "
                          "missed=misfire_skip:2",
                          "00:00:30 start a:4:2026-03-01T00:00:00Z #1"));
  EXPECT_EQ(h.plan().Generation(JobKey{"default", "a"}), 4);
}

TEST(Plan, AJobChangedOnAnotherNodeTakesTheStoresGeneration) {
  Harness h;
  const JobKey a{"default", "a"};
  ASSERT_THAT(h.Add(Cron("a", "*/5 * * * *")), IsOk());
  ASSERT_EQ(h.plan().Generation(a), 1);
  h.AdvanceBy(absl::Minutes(1));
  h.TakeLog();
  // Changed twice elsewhere and back to the same schedule: the store's
  // generation 3, a schedule change here too (its fires are 3's).
  ASSERT_THAT(h.AddStored(Cron("a", "*/5 * * * *"), 3), IsOk());
  EXPECT_EQ(h.plan().Generation(a), 3);
  h.AdvanceBy(absl::Minutes(4));
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:01:00 persist",
                          "00:05:00 persist claim=a:3:2026-03-01T00:05:00Z",
                          "00:05:00 start a:3:2026-03-01T00:05:00Z #1"));
  // A new schedule takes the store's generation, not the next one.
  ASSERT_THAT(h.AddStored(Cron("a", "*/10 * * * *"), 6), IsOk());
  EXPECT_EQ(h.plan().Generation(a), 6);
  // The same generation and schedule: no change.
  ASSERT_THAT(h.AddStored(Cron("a", "*/10 * * * *"), 6), IsOk());
  EXPECT_EQ(h.plan().Generation(a), 6);
  // A new job starts at the store's generation.
  ASSERT_THAT(h.AddStored(Cron("b", "*/5 * * * *"), 7), IsOk());
  EXPECT_EQ(h.plan().Generation(JobKey{"default", "b"}), 7);
}

TEST(Plan, AResumedJobWithoutAWatermarkStartsFromTheRequest) {
  Harness h;
  ASSERT_THAT(h.AddResumed(Cron("a", "*/5 * * * *"), Resume{3}), IsOk());
  EXPECT_THAT(h.TakeLog(), ElementsAre("00:00:00 persist"));
  EXPECT_EQ(h.plan().Watermark(JobKey{"default", "a"}),
            T("2026-03-01T00:00:00Z"));
  EXPECT_EQ(h.plan().Generation(JobKey{"default", "a"}), 3);
}

// A job an earlier scheduler left with `lost` runs, resumed with no fire due.
Resume WithLost(std::vector<LostRun> lost) {
  Resume resume{1, T("2026-03-01T00:00:00Z")};
  resume.lost = std::move(lost);
  return resume;
}

TEST(Plan, ALostRunResumedRunsItsNextAttemptThenTheRetryPolicyDecides) {
  Harness h;
  JobSpec spec = Cron("a", "0 0 1 1 *");
  spec.retry.max_attempts = 1;
  const FireKey fire{JobKey{"default", "a"}, 1, T("2026-02-28T23:00:00Z")};
  // Attempt 2 runs although max_attempts is 1: the lost attempt may not have
  // happened, and at-least-once means it must.
  ASSERT_THAT(h.AddResumed(spec, WithLost({LostRun{42, fire, 1}})), IsOk());
  ASSERT_EQ(h.starts().size(), 1u);
  EXPECT_EQ(h.starts()[0].run, 42u);
  EXPECT_EQ(h.starts()[0].attempt, 2);
  EXPECT_EQ(h.plan().GetRunState(42), RunState::kRunning);
  h.Finish(42, 2, AttemptOutcome::kFailed, "boom");
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:00:00 start a:1:2026-02-28T23:00:00Z #2",
                          "00:00:00 a:1:2026-02-28T23:00:00Z failed (boom "
                          "(exhausted 2 attempts))"));
}

// A run lost max_losses times (3 by default) is not started again: its
// attempt may be what stops the scheduler, which would then stop at every
// restart. It ends failed, saying why; one lost fewer times starts again.
TEST(Plan, ARunLostMaxLossesTimesEndsFailedInsteadOfStartingAgain) {
  Harness h;
  const FireKey a{JobKey{"default", "a"}, 1, T("2026-02-28T23:00:00Z")};
  ASSERT_THAT(h.AddResumed(Cron("a", "0 0 1 1 *"),
                           WithLost({LostRun{42, a, 3, /*losses=*/3}})),
              IsOk());
  EXPECT_TRUE(h.starts().empty());
  EXPECT_EQ(h.plan().GetRunState(42), std::nullopt);  // finished
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:00:00 a:1:2026-02-28T23:00:00Z failed (lost 3 "
                          "times (its scheduler stopped while it ran); not "
                          "started again, in case the attempt is what stops "
                          "it (max_losses 3))"));
  EXPECT_EQ(h.plan().counters().runs_failed, 1);

  const FireKey b{JobKey{"default", "b"}, 1, T("2026-02-28T23:00:00Z")};
  ASSERT_THAT(h.AddResumed(Cron("b", "0 0 1 1 *"),
                           WithLost({LostRun{43, b, 2, /*losses=*/2}})),
              IsOk());
  ASSERT_EQ(h.starts().size(), 1u);
  EXPECT_EQ(h.starts()[0].run, 43u);
  EXPECT_EQ(h.starts()[0].attempt, 3);
}

TEST(Plan, WithoutALimitOnLossesALostRunAlwaysStartsAgain) {
  PlanOptions options;
  options.max_losses = 0;
  Harness h(options);
  const FireKey a{JobKey{"default", "a"}, 1, T("2026-02-28T23:00:00Z")};
  ASSERT_THAT(h.AddResumed(Cron("a", "0 0 1 1 *"),
                           WithLost({LostRun{42, a, 30, /*losses=*/30}})),
              IsOk());
  ASSERT_EQ(h.starts().size(), 1u);
  EXPECT_EQ(h.starts()[0].attempt, 31);
  EXPECT_EQ(h.plan().GetRunState(42), RunState::kRunning);
}

TEST(Plan, ANegativeLimitOnLossesIsRefused) {
  PlanOptions options;
  options.max_losses = -1;
  EXPECT_THAT(Plan::ValidateOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("max_losses: -1 is below 0")));
}

TEST(Plan, ARunTakenOverWhoseRunIdIsInUseIsRefusedAndChangesNothing) {
  Harness h;
  const FireKey a{JobKey{"default", "a"}, 1, T("2026-02-28T23:00:00Z")};
  ASSERT_THAT(h.AddResumed(Cron("a", "0 0 1 1 *"), WithLost({{42, a, 1}})),
              IsOk());
  const FireKey b{JobKey{"default", "b"}, 1, T("2026-02-28T23:00:00Z")};
  EXPECT_THAT(h.AddResumed(Cron("b", "0 0 1 1 *"), WithLost({{42, b, 1}})),
              StatusIs(absl::StatusCode::kAlreadyExists));
  const FireKey c{JobKey{"default", "c"}, 1, T("2026-02-28T23:00:00Z")};
  EXPECT_THAT(
      h.AddResumed(Cron("c", "0 0 1 1 *"), WithLost({{43, c, 1}, {43, c, 1}})),
      StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(h.plan().num_jobs(), 1u);
  EXPECT_EQ(h.plan().GetRunState(43), std::nullopt);
}

TEST(Plan, ALostRunWaitingForASlotIsCancelledWhenItsJobIsRemoved) {
  PlanOptions options;
  options.max_concurrent_runs = 1;
  Harness h(options);
  ASSERT_THAT(h.Add(Cron("busy", "* * * * *")), IsOk());
  h.AdvanceBy(absl::Minutes(1));  // `busy` takes the only slot
  h.TakeLog();
  const FireKey fire{JobKey{"default", "a"}, 1, T("2026-02-28T23:00:00Z")};
  ASSERT_THAT(h.AddResumed(Cron("a", "0 0 1 1 *"), WithLost({{42, fire, 1}})),
              IsOk());
  EXPECT_EQ(h.plan().GetRunState(42), RunState::kLost);
  Output out;
  ASSERT_THAT(h.plan().RemoveJob(fire.job, h.now(), &out), IsOk());
  EXPECT_EQ(h.plan().GetRunState(42), std::nullopt);
  bool cancelled = false;
  for (const Action& a : out.actions) {
    if (const auto* t = std::get_if<TransitionAction>(&a)) {
      cancelled |= t->run == 42 && t->from == RunState::kLost &&
                   t->to == RunState::kCancelled;
    }
  }
  EXPECT_TRUE(cancelled);
}

// Recovery of a job that forbids overlap: the runs an earlier scheduler left
// lost run one at a time, oldest first, and the fires due meanwhile -- the
// one the misfire policy runs at once, and the next -- find the job busy (the
// chaos test, tests/chaos, found them side by side). A job that allows
// overlap starts them all at once.
TEST(Plan, RunsTakenOverRunOneAtATimeWhenTheJobForbidsOverlap) {
  Harness h;
  h.AdvanceBy(absl::Seconds(30));
  JobSpec spec = Cron("a", "* * * * *");
  spec.overlap.action = OverlapAction::kSkip;
  const JobKey key{"default", "a"};
  Resume resume{1, T("2026-02-28T23:59:00Z")};  // 00:00 is due
  resume.lost = {LostRun{43, {key, 1, T("2026-02-28T23:59:00Z")}, 1},
                 LostRun{42, {key, 1, T("2026-02-28T23:58:00Z")}, 1}};
  ASSERT_THAT(h.AddResumed(spec, resume), IsOk());
  ASSERT_EQ(h.starts().size(), 1u);
  EXPECT_EQ(h.plan().GetRunState(43), RunState::kLost);
  h.AdvanceBy(absl::Seconds(10));
  h.Finish(42, 2, AttemptOutcome::kSucceeded);
  h.AdvanceBy(absl::Seconds(25));  // 00:01 comes due while 43 runs
  h.Finish(43, 2, AttemptOutcome::kSucceeded);
  h.AdvanceBy(absl::Seconds(60));  // 00:02 runs
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:00:30 persist missed=overlap:1",
                          "00:00:30 start a:1:2026-02-28T23:58:00Z #2",
                          "00:00:40 a:1:2026-02-28T23:58:00Z succeeded",
                          "00:00:40 start a:1:2026-02-28T23:59:00Z #2",
                          "00:01:00 persist missed=overlap:1",
                          "00:01:05 a:1:2026-02-28T23:59:00Z succeeded",
                          "00:02:00 persist claim=a:1:2026-03-01T00:02:00Z",
                          "00:02:00 start a:1:2026-03-01T00:02:00Z #1"));

  Harness allow;
  spec.key.id = "b";
  spec.overlap.action = OverlapAction::kAllow;
  for (LostRun& run : resume.lost) run.fire.job = spec.key;
  ASSERT_THAT(allow.AddResumed(spec, resume), IsOk());
  EXPECT_EQ(allow.starts().size(), 3u);  // and 00:00
}

// A job that buffers: the runs taken over wait whatever the buffer's limit
// (they are owed), and a fire that comes due finds the buffer full.
TEST(Plan, RunsTakenOverWaitWhateverTheBufferLimit) {
  Harness h;
  JobSpec spec = Cron("a", "* * * * *");
  spec.overlap.action = OverlapAction::kBufferOne;
  const JobKey key{"default", "a"};
  Resume resume{1, T("2026-03-01T00:00:00Z")};
  for (RunId id : {41, 42, 43}) {
    resume.lost.push_back(LostRun{
        id, {key, 1, T("2026-02-28T23:57:00Z") + absl::Minutes(id - 41)}, 1});
  }
  ASSERT_THAT(h.AddResumed(spec, resume), IsOk());
  h.AdvanceBy(absl::Seconds(60));  // 00:01: 41 still runs
  h.Finish(41, 2, AttemptOutcome::kSucceeded);
  h.Finish(42, 2, AttemptOutcome::kSucceeded);
  h.Finish(43, 2, AttemptOutcome::kSucceeded);
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:00:00 start a:1:2026-02-28T23:57:00Z #2",
                          "00:01:00 persist missed=buffer_full:1",
                          "00:01:00 a:1:2026-02-28T23:57:00Z succeeded",
                          "00:01:00 start a:1:2026-02-28T23:58:00Z #2",
                          "00:01:00 a:1:2026-02-28T23:58:00Z succeeded",
                          "00:01:00 start a:1:2026-02-28T23:59:00Z #2",
                          "00:01:00 a:1:2026-02-28T23:59:00Z succeeded"));
}

// A lost run that waited behind the job's run going counts its retry budget
// (max_retry_duration) from its own start, not from when it was taken over.
TEST(Plan, ARunTakenOverThatWaitedCountsItsRetryBudgetFromItsStart) {
  Harness h;
  JobSpec spec = Cron("a", "0 0 1 1 *");
  spec.overlap.action = OverlapAction::kSkip;
  spec.retry.max_attempts = 5;
  spec.retry.initial_backoff = absl::Seconds(1);
  spec.retry.max_retry_duration = absl::Seconds(30);
  const JobKey key{"default", "a"};
  ASSERT_THAT(
      h.AddResumed(spec,
                   WithLost({{41, {key, 1, T("2026-02-28T23:58:00Z")}, 1},
                             {42, {key, 1, T("2026-02-28T23:59:00Z")}, 1}})),
      IsOk());
  h.AdvanceBy(absl::Seconds(60));
  h.Finish(41, 2, AttemptOutcome::kSucceeded);  // 42 starts, 60 s after
  h.AdvanceBy(absl::Seconds(1));
  h.Finish(42, 2, AttemptOutcome::kFailed, "boom");
  EXPECT_EQ(h.plan().GetRunState(42), RunState::kRetrying);
}

// A run claimed ahead by an earlier scheduler runs at its time; one claimed
// under the old schedule is cancelled.
TEST(Plan, RunsClaimedAheadAreTakenOverOrCancelledIfTheScheduleChanged) {
  Harness h;
  const JobKey key{"default", "a"};
  Resume resume{2, T("2026-03-01T00:01:00Z")};  // (the claim moved it)
  resume.claimed = {LostRun{42, {key, 2, T("2026-03-01T00:01:00Z")}, 0},
                    LostRun{41, {key, 1, T("2026-03-01T00:00:30Z")}, 0}};
  ASSERT_THAT(h.AddResumed(Cron("a", "* * * * *"), resume), IsOk());
  EXPECT_EQ(h.plan().GetRunState(41), std::nullopt);
  EXPECT_EQ(h.plan().GetRunState(42), RunState::kPending);
  h.AdvanceBy(absl::Seconds(60));
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:00:00 a:1:2026-03-01T00:00:30Z cancelled "
                          "(schedule changed)",
                          "00:01:00 start a:2:2026-03-01T00:01:00Z #1"));
}

TEST(Plan, RemovingAJobForShutdownReleasesItsUnstartedRunsWithoutARecord) {
  PlanOptions options;
  options.lookahead = absl::Seconds(1);
  Harness h(options);
  JobSpec spec = Cron("a", "* * * * *");
  spec.overlap.action = OverlapAction::kAllow;
  ASSERT_THAT(h.Add(spec), IsOk());
  h.AdvanceBy(absl::Seconds(59) + absl::Milliseconds(500));  // 00:01 staged
  ASSERT_EQ(h.starts().size(), 1u);
  const RunId run = h.starts()[0].run;
  EXPECT_EQ(h.plan().GetRunState(run), RunState::kPending);
  h.TakeLog();
  Output out;
  ASSERT_THAT(h.plan().RemoveJob(JobKey{"default", "a"}, h.now(), &out,
                                 Plan::Unstarted::kRelease),
              IsOk());
  ASSERT_EQ(out.actions.size(), 1u);  // take the staged attempt back...
  ASSERT_TRUE(std::holds_alternative<UnstageAction>(out.actions[0]));
  Output back;
  AttemptFinishedEvent unstaged{run, 1, AttemptOutcome::kCancelled, ""};
  unstaged.started = false;
  h.plan().OnEvent(unstaged, h.now(), &back);
  for (const Action& a : back.actions)  // ...and record nothing
    EXPECT_FALSE(std::holds_alternative<TransitionAction>(a));
  EXPECT_EQ(h.plan().GetRunState(run), std::nullopt);
  EXPECT_EQ(h.plan().num_jobs(), 0u);
}

TEST(Plan, WithoutSubSecondLookaheadALoneInstantIsDecidedAtItsTime) {
  // A one-shot fire at 00:00:10.250 shares its instant with nothing: without
  // lookahead_sub_second it is claimed and started at its time (its timer's
  // millisecond), not staged a second ahead; one at a whole second still is.
  // With it (a driver on a store), both are decided ahead.
  for (const bool sub_second : {false, true}) {
    SCOPED_TRACE(sub_second ? "lookahead_sub_second" : "whole seconds only");
    PlanOptions options;
    options.lookahead = absl::Seconds(1);
    options.lookahead_sub_second = sub_second;
    Harness h(options);
    const absl::Time start = h.now().wall;
    for (auto [name, at] : {std::pair{"lone", absl::Milliseconds(10'250)},
                            std::pair{"round", absl::Seconds(20)}}) {
      JobSpec spec = Cron(name, "* * * * *");
      spec.trigger.kind = Trigger::Kind::kAt;
      spec.trigger.at = start + at;
      spec.overlap.action = OverlapAction::kAllow;
      ASSERT_THAT(h.Add(spec), IsOk());
    }
    h.AdvanceBy(absl::Milliseconds(10'000));
    ASSERT_EQ(h.starts().size(), sub_second ? 1u : 0u);
    h.AdvanceBy(absl::Milliseconds(251));
    ASSERT_EQ(h.starts().size(), 1u);
    EXPECT_EQ(h.starts()[0].fire.job.id, "lone");
    EXPECT_EQ(h.starts()[0].staged, sub_second);
    EXPECT_EQ(h.plan().GetRunState(h.starts()[0].run),
              sub_second ? RunState::kPending : RunState::kRunning);
    h.AdvanceBy(absl::Seconds(9));  // 00:00:19.251: the whole second's, ahead
    ASSERT_EQ(h.starts().size(), 2u);
    EXPECT_EQ(h.starts()[1].fire.job.id, "round");
    EXPECT_TRUE(h.starts()[1].staged);
  }
}

TEST(Plan, JobsKeepTheirPoliciesAsTheirPolicyEntriesComeAndGo) {
  // Equal policies share one interned entry, and the last one given out is
  // found by comparison: removing its last job frees it, and a job added
  // after with an equal policy must get a live entry (ASan checks), with the
  // policy it asked for.
  Harness h;
  JobSpec a = Cron("a", "* * * * *");
  a.retry.max_attempts = 2;
  a.retry.initial_backoff = absl::Seconds(5);
  ASSERT_THAT(h.Add(a), IsOk());
  ASSERT_THAT(h.Remove(JobKey{"default", "a"}), IsOk());
  JobSpec b = a;
  b.key.id = "b";
  ASSERT_THAT(h.Add(b), IsOk());
  JobSpec c = Cron("c", "* * * * *");  // another policy: no retries
  ASSERT_THAT(h.Add(c), IsOk());
  h.AdvanceBy(absl::Minutes(1));
  ASSERT_EQ(h.starts().size(), 2u);
  for (const StartAttemptAction& s : h.starts())
    h.Finish(s.run, 1, AttemptOutcome::kFailed, "exit 1");
  h.AdvanceBy(absl::Seconds(30));  // b's retry is due after 0-5 s; c has none
  ASSERT_EQ(h.starts().size(), 3u);
  EXPECT_EQ(h.starts()[2].fire.job.id, "b");
  EXPECT_EQ(h.starts()[2].attempt, 2);
  EXPECT_EQ(h.plan().counters().runs_failed, 1);  // c's
}

TEST(Plan, OverlapSkipRecordsTheSkippedFire) {
  Harness h;
  JobSpec spec = Cron("a", "* * * * *");
  spec.overlap.action = OverlapAction::kSkip;
  ASSERT_THAT(h.Add(spec), IsOk());
  h.TakeLog();
  h.AdvanceBy(absl::Minutes(2) + absl::Seconds(30));
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:01:00 persist claim=a:1:2026-03-01T00:01:00Z",
                          "00:01:00 start a:1:2026-03-01T00:01:00Z #1",
                          "00:02:00 persist missed=overlap:1"));
  h.Finish(h.starts()[0].run, 1, AttemptOutcome::kSucceeded);
  EXPECT_THAT(h.TakeLog(),
              ElementsAre("00:02:30 a:1:2026-03-01T00:01:00Z succeeded"));
}

TEST(Plan, FailedAttemptsRetryWithBackoffUntilExhausted) {
  Harness h;
  JobSpec spec = Cron("a", "0 * * * *");
  spec.retry.max_attempts = 3;
  spec.retry.initial_backoff = absl::Seconds(10);
  ASSERT_THAT(h.Add(spec), IsOk());
  h.AdvanceBy(absl::Hours(1));
  ASSERT_EQ(h.starts().size(), 1u);
  for (int attempt = 1; attempt <= 3; ++attempt) {
    h.Finish(h.starts().back().run, attempt, AttemptOutcome::kFailed, "exit 1");
    h.AdvanceBy(absl::Minutes(1));  // more than any backoff
  }
  EXPECT_EQ(h.starts().size(), 3u);
  EXPECT_EQ(h.plan().counters().retries, 2);
  EXPECT_EQ(h.plan().counters().runs_failed, 1);
}

TEST(Plan, TimeoutCancelsGracefullyThenByForce) {
  Harness h;
  JobSpec spec = Cron("a", "0 * * * *");
  spec.timeout.attempt_timeout = absl::Seconds(30);
  spec.timeout.grace = absl::Seconds(5);
  ASSERT_THAT(h.Add(spec), IsOk());
  h.AdvanceBy(absl::Hours(1));
  h.TakeLog();
  h.AdvanceBy(absl::Seconds(40));
  EXPECT_THAT(h.TakeLog(), ElementsAre("01:00:30 cancel run1",
                                       "01:00:35 cancel run1 force"));
  h.Finish(h.starts()[0].run, 1, AttemptOutcome::kCancelled);
  EXPECT_THAT(
      h.TakeLog(),
      ElementsAre(
          "01:00:40 a:1:2026-03-01T01:00:00Z failed (timed out (exhausted 1 "
          "attempt))"));
}

// Schedulers sharing a store hand out RunIds from ranges they reserved: the
// Plan asks for the next range when one is used up.
TEST(Plan, RunIdsContinueInTheNextRangeAskedFor) {
  PlanOptions options;
  options.first_run_id = 10;
  options.run_id_end = 12;
  std::vector<std::pair<RunId, RunId>> ranges = {{100, 102}, {200, 300}};
  int asked = 0;
  options.more_run_ids = [&] { return ranges.at(asked++); };
  Harness h(options);
  ASSERT_THAT(h.Add(Cron("a", "* * * * *")), IsOk());
  for (int i = 0; i < 5; ++i) {
    h.AdvanceBy(absl::Minutes(1));
    h.Finish(h.starts().back().run, 1, AttemptOutcome::kSucceeded);
  }
  std::vector<RunId> ids;
  for (const StartAttemptAction& s : h.starts()) ids.push_back(s.run);
  EXPECT_THAT(ids, ElementsAre(10, 11, 100, 101, 200));
  EXPECT_EQ(asked, 2);
  PlanOptions bad;
  bad.run_id_end = 5;  // no more_run_ids
  EXPECT_THAT(
      Plan::ValidateOptions(bad),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("run_id_end")));
}

}  // namespace
}  // namespace chime::core
