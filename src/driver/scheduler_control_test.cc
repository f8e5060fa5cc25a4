// The Scheduler's controls: pause and resume, trigger now, remove, calls before
// Start, calls from job functions and callbacks, and option checks.
#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/driver/scheduler_test_util.h"
#include "testing/status_matchers.h"

namespace chime::driver::testing {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::IsOkAndHolds;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A job the caller stored itself is not written again, and its fires are
// claimed under the store's id for it.
TEST_F(SchedulerTest, AddStoredJobDoesNotWriteTheJobAgain) {
  Create();
  absl::StatusOr<JobRecord> stored = store_->PutJob(
      Cron("yearly", "0 0 1 1 *"), kNoRevision, MonoTime::Infinite());
  ASSERT_THAT(stored, IsOk());
  ASSERT_THAT(scheduler_->AddStoredJob(*stored, Returns(absl::OkStatus())),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  absl::StatusOr<uint64_t> run = scheduler_->TriggerJob(Key("yearly"));
  ASSERT_THAT(run, IsOk());
  recorder_.WaitForEvent("yearly:1:2026-01-01T00:00:00Z:manual", "succeeded");
  absl::StatusOr<RunDetail> detail = store_->GetRun(*run, kForever);
  ASSERT_THAT(detail, IsOk());
  EXPECT_EQ(detail->run.fire.job, stored->id);
  absl::StatusOr<StoreInfo> info = store_->GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->revision, stored->revision);  // no second write
}

TEST_F(SchedulerTest, GetJobAnswersTheSpecInForceWithItsPauseState) {
  Create();
  JobSpec spec = Cron("a", "*/5 * * * *");
  spec.labels = {{"team", "ops"}};
  spec.source_file = "jobs/a.yaml";
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  // Before Start too: an added job is seen by every later call.
  EXPECT_THAT(scheduler_->GetJob(Key("a")), IsOkAndHolds(spec));
  ASSERT_THAT(scheduler_->Start(), IsOk());
  ASSERT_THAT(scheduler_->PauseJob(Key("a")), IsOk());
  JobSpec paused = spec;
  paused.paused = true;
  EXPECT_THAT(scheduler_->GetJob(Key("a")), IsOkAndHolds(paused));
  spec.trigger.expression = "0 * * * *";
  ASSERT_THAT(scheduler_->AddJob(spec, Returns(absl::OkStatus())), IsOk());
  EXPECT_THAT(scheduler_->GetJob(Key("a")), IsOkAndHolds(spec));
  ASSERT_THAT(scheduler_->RemoveJob(Key("a")), IsOk());
  EXPECT_THAT(scheduler_->GetJob(Key("a")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no job a")));
}

TEST_F(SchedulerTest, PausedJobDoesNotRunAndResumeRecordsTheMissedFires) {
  Create();
  ASSERT_THAT(
      scheduler_->AddJob(Cron("a", "* * * * *"), Returns(absl::OkStatus())),
      IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  ASSERT_THAT(scheduler_->PauseJob(Key("a")), IsOk());
  EXPECT_THAT(scheduler_->NextFireTime(Key("a")),
              IsOkAndHolds(absl::InfiniteFuture()));
  AdvanceTo(absl::Minutes(3) + absl::Seconds(30));
  ASSERT_THAT(scheduler_->ResumeJob(Key("a")), IsOk());
  // A command returns once its actions are carried out: the record is there
  // already.
  const std::vector<RunEvent> events = recorder_.events();
  ASSERT_EQ(events.size(), 1u) << recorder_.Dump();
  EXPECT_EQ(events[0].fire_id, FireId("a", absl::Minutes(1)));
  EXPECT_EQ(events[0].to, "missed");
  EXPECT_EQ(
      events[0].detail,
      "paused: 3 fires from 2026-01-01T00:01:00Z to 2026-01-01T00:03:00Z");
  EXPECT_THAT(scheduler_->NextFireTime(Key("a")),
              IsOkAndHolds(Wall(absl::Minutes(4))));
  AdvanceTo(absl::Minutes(4));
  recorder_.WaitForEvent(FireId("a", absl::Minutes(4)), "succeeded");
  ASSERT_EQ(recorder_.seen().size(), 1u);
  EXPECT_EQ(recorder_.seen()[0].fire_id, FireId("a", absl::Minutes(4)));
  EXPECT_THAT(scheduler_->PauseJob(Key("nope")),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(scheduler_->ResumeJob(Key("nope")),
              StatusIs(absl::StatusCode::kNotFound));
}

// An operator's cancel: a running attempt is asked to stop and the run ends
// cancelled with the request's reason, without a retry; a run waiting for
// its time ends at once; a finished run cannot be cancelled.
TEST_F(SchedulerTest, CancelRunStopsARunningAttemptAndARunNotStarted) {
  Create();
  JobSpec spec = Cron("slow", "0 0 1 1 *");
  spec.retry.max_attempts = 3;  // a cancel is not retried
  spec.overlap.action = OverlapAction::kBufferOne;
  std::atomic<int> attempts{0};
  // Once asked to stop, the attempt still holds until `stopping` opens, so
  // the second cancel meets a run that is stopping, not one that has ended.
  Gate stopping;
  ASSERT_THAT(scheduler_->AddJob(spec,
                                 [&](const AttemptContext& ctx) {
                                   ++attempts;
                                   recorder_.Record(ctx);
                                   if (!WaitUntilCancelled(ctx))
                                     return absl::OkStatus();
                                   stopping.Pass();
                                   return absl::CancelledError("stopped");
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  absl::StatusOr<uint64_t> running = scheduler_->TriggerJob(Key("slow"));
  ASSERT_THAT(running, IsOk());
  ASSERT_TRUE(recorder_.WaitForAttempts(1));
  // The second trigger waits behind the first (buffer_one).
  absl::StatusOr<uint64_t> waiting = scheduler_->TriggerJob(Key("slow"));
  ASSERT_THAT(waiting, IsOk());
  ASSERT_THAT(scheduler_->CancelRun(*waiting, "cancelled by ops"), IsOk());
  // Again: nothing more happens.
  EXPECT_THAT(scheduler_->CancelRun(*waiting, "cancelled by ops"),
              StatusIs(absl::StatusCode::kNotFound));
  ASSERT_THAT(scheduler_->CancelRun(*running, "cancelled by ops"), IsOk());
  ASSERT_TRUE(stopping.WaitEntered());
  // A run already stopping accepts another cancel; the first reason stands.
  ASSERT_THAT(scheduler_->CancelRun(*running, "twice"), IsOk());
  stopping.Open();
  const std::string first = "slow:1:2026-01-01T00:00:00Z:manual";
  const RunEvent cancelled = recorder_.WaitForEvent(first, "cancelled");
  EXPECT_EQ(cancelled.detail, "cancelled by ops: stopped");
  EXPECT_EQ(cancelled.run_id, *running);
  std::vector<RunEvent> events = recorder_.events();
  const auto waiting_event =
      std::find_if(events.begin(), events.end(), [&](const RunEvent& e) {
        return e.run_id == *waiting && e.to == "cancelled";
      });
  ASSERT_NE(waiting_event, events.end()) << recorder_.Dump();
  EXPECT_EQ(waiting_event->detail, "cancelled by ops");
  EXPECT_EQ(attempts.load(), 1);  // neither retried nor started
  EXPECT_THAT(scheduler_->CancelRun(*running, "late"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("not going")));
  EXPECT_THAT(scheduler_->CancelRun(987654, "x"),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(SchedulerTest, RemovedJobFinishesItsRunningAttemptAndFiresNoMore) {
  Create();
  Gate gate;
  ASSERT_THAT(scheduler_->AddJob(Cron("a", "* * * * *"),
                                 [&](const AttemptContext& ctx) {
                                   recorder_.Record(ctx);
                                   gate.Pass();
                                   return absl::OkStatus();
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->AddJob(Cron("probe", "*/5 * * * *"),
                                 Returns(absl::OkStatus())),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  ASSERT_TRUE(gate.WaitEntered());
  ASSERT_THAT(scheduler_->RemoveJob(Key("a")), IsOk());
  EXPECT_THAT(scheduler_->RemoveJob(Key("a")),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(scheduler_->NextFireTime(Key("a")),
              StatusIs(absl::StatusCode::kNotFound));
  gate.Open();
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)), "succeeded");
  // Had `a` still been scheduled, its 00:02-00:05 fires would have come before
  // probe's 00:05.
  AdvanceTo(absl::Minutes(5));
  recorder_.WaitForEvent(FireId("probe", absl::Minutes(5)), "succeeded");
  for (int minute = 2; minute <= 5; ++minute) {
    EXPECT_FALSE(
        recorder_.HasEventWithPrefix(FireId("a", absl::Minutes(minute))))
        << recorder_.Dump();
  }
  std::vector<std::string> fires;
  for (const Seen& s : recorder_.seen()) fires.push_back(s.fire_id);
  EXPECT_THAT(fires, ElementsAre(FireId("a", absl::Minutes(1)),
                                 FireId("probe", absl::Minutes(5))));
}

// A job removed and added again is a new job: its fires must not collide with
// the claims of the old one, or the store refuses them and they never run.
TEST_F(SchedulerTest, JobAddedAgainAfterRemovalCanBeTriggeredAtTheSameInstant) {
  Create();
  ASSERT_THAT(
      scheduler_->AddJob(Cron("a", "0 0 1 1 *"), Returns(absl::OkStatus())),
      IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  ASSERT_THAT(scheduler_->TriggerJob(Key("a")), IsOk());
  ASSERT_TRUE(recorder_.WaitForAttempts(1));
  recorder_.WaitForEvent("a:1:2026-01-01T00:00:00Z:manual", "succeeded");
  ASSERT_THAT(scheduler_->RemoveJob(Key("a")), IsOk());
  ASSERT_THAT(
      scheduler_->AddJob(Cron("a", "0 0 1 1 *"), Returns(absl::OkStatus())),
      IsOk());
  ASSERT_THAT(scheduler_->TriggerJob(Key("a")), IsOk());
  EXPECT_TRUE(recorder_.WaitForAttempts(2)) << recorder_.Dump();
}

TEST_F(SchedulerTest, ReplacingAJobKeepsItsScheduleAndUsesTheNewFunction) {
  Create();
  ASSERT_THAT(scheduler_->AddJob(Cron("a", "* * * * *"),
                                 Returns(absl::InternalError("old"))),
              IsOk());
  ASSERT_THAT(
      scheduler_->AddJob(Cron("a", "* * * * *"), Returns(absl::OkStatus())),
      IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)),
                         "succeeded");  // generation 1 still
}

// One function shared by two jobs tells them apart by the definition each
// attempt carries; an attempt keeps the definition it started with when the
// job is replaced while it runs.
TEST_F(SchedulerTest, ASharedFunctionReadsEachAttemptsJobDefinition) {
  Create();
  absl::Mutex mu;
  std::vector<std::pair<std::string, int>> seen;  // id, priority
  Gate gate;
  const auto shared =
      std::make_shared<const JobFunction>([&](const AttemptContext& ctx) {
        const JobSpec spec = ctx.Spec();
        if (spec.key.id == "slow") gate.Pass();
        absl::MutexLock lock(&mu);
        seen.emplace_back(spec.key.id, spec.priority);
        return absl::OkStatus();
      });
  JobSpec slow = Cron("slow", "0 0 1 1 *");
  slow.priority = 1;
  ASSERT_THAT(scheduler_->AddJob(slow, shared), IsOk());
  JobSpec fast = Cron("fast", "0 0 1 1 *");
  fast.priority = 7;
  ASSERT_THAT(scheduler_->AddJob(fast, shared), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  ASSERT_THAT(scheduler_->TriggerJob(Key("slow")), IsOk());
  ASSERT_TRUE(gate.WaitEntered());
  slow.priority = 2;  // replaced while its attempt runs
  ASSERT_THAT(scheduler_->AddJob(slow, shared), IsOk());
  gate.Open();
  ASSERT_THAT(scheduler_->TriggerJob(Key("fast")), IsOk());
  recorder_.WaitForEvent("fast:1:2026-01-01T00:00:00Z:manual", "succeeded");
  recorder_.WaitForEvent("slow:1:2026-01-01T00:00:00Z:manual", "succeeded");
  absl::MutexLock lock(&mu);
  EXPECT_THAT(seen, ::testing::UnorderedElementsAre(std::pair{"slow", 1},
                                                    std::pair{"fast", 7}));
  // A context made by hand carries no definition.
  EXPECT_EQ(AttemptContext().Spec(), JobSpec());
}

TEST_F(SchedulerTest, CallsBeforeStartTakeEffectOnceStarted) {
  Create();
  ASSERT_THAT(
      scheduler_->AddJob(Cron("a", "0 * * * *"), Returns(absl::OkStatus())),
      IsOk());
  EXPECT_THAT(scheduler_->NextFireTime(Key("a")),
              IsOkAndHolds(Wall(absl::Hours(1))));
  EXPECT_THAT(scheduler_->TriggerJob(Key("a")), IsOk());
  EXPECT_TRUE(recorder_.events().empty())
      << "nothing is carried out before Start";
  ASSERT_THAT(scheduler_->Start(), IsOk());
  EXPECT_THAT(scheduler_->Start(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  recorder_.WaitForEvent("a:1:2026-01-01T00:00:00Z:manual", "succeeded");
}

TEST_F(SchedulerTest, JobFunctionMayCallTheScheduler) {
  Create();
  absl::StatusOr<uint64_t> triggered = absl::UnknownError("not called");
  ASSERT_THAT(
      scheduler_->AddJob(Cron("other", "0 0 1 1 *"), Returns(absl::OkStatus())),
      IsOk());
  ASSERT_THAT(scheduler_->AddJob(Cron("a", "* * * * *"),
                                 [&](const AttemptContext&) {
                                   triggered =
                                       scheduler_->TriggerJob(Key("other"));
                                   return triggered.status();
                                 }),
              IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)), "succeeded");
  EXPECT_THAT(triggered, IsOk());
  recorder_.WaitForEvent("other:1:2026-01-01T00:01:00Z:manual", "succeeded");
}

TEST_F(SchedulerTest, RemovingAPausedJobRecordsItsMissedFiresDurably) {
  // The job is deleted from the store before the Plan's last batch for it
  // (the paused fires, recorded missed) is written: the store keeps the
  // tombstone's id, so the record is still accepted.
  Create();
  ASSERT_THAT(
      scheduler_->AddJob(Cron("a", "* * * * *"), Returns(absl::OkStatus())),
      IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  ASSERT_THAT(scheduler_->PauseJob(Key("a")), IsOk());
  AdvanceTo(absl::Minutes(2) + absl::Seconds(30));
  ASSERT_THAT(scheduler_->RemoveJob(Key("a")), IsOk());
  // RemoveJob returns once its writes are durable and their events are out.
  const std::vector<RunEvent> events = recorder_.events();
  ASSERT_EQ(events.size(), 1u) << recorder_.Dump();
  EXPECT_EQ(events[0].to, "missed");
  EXPECT_THAT(events[0].detail, HasSubstr("paused: 2 fires"));
  absl::StatusOr<MissedPage> missed =
      store_->ListMissed(1, std::nullopt, 10, kForever);  // the only job: id 1
  ASSERT_THAT(missed, IsOk());
  ASSERT_EQ(missed->records.size(), 1u);
  EXPECT_EQ(missed->records[0].reason, MissReason::kPaused);
}

TEST_F(SchedulerTest, CallbackThatCallsTheSchedulerGetsAnErrorNotADeadlock) {
  absl::Status from_callback;
  SchedulerOptions options;
  options.clock = &clock_;
  options.on_run_event = [&](const RunEvent& e) {
    recorder_.Callback()(e);
    if (e.to == "running") from_callback = scheduler_->PauseJob(Key("a"));
  };
  options.store = store_;
  auto created = CreateScheduler(options);
  ASSERT_THAT(created, IsOk());
  scheduler_ = *std::move(created);
  ASSERT_THAT(
      scheduler_->AddJob(Cron("a", "* * * * *"), Returns(absl::OkStatus())),
      IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("a", absl::Minutes(1)), "succeeded");
  EXPECT_THAT(from_callback, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(from_callback.message(), HasSubstr("on_run_event"));
}

TEST(SchedulerOptions, BadOptionsAreRejectedNamingTheField) {
  SchedulerOptions options;
  options.worker_threads = 0;
  EXPECT_THAT(Scheduler::Create(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("worker_threads")));
  options.worker_threads = 2;
  options.max_concurrent_runs = -1;
  EXPECT_THAT(Scheduler::Create(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("max_concurrent_runs")));
  options.max_concurrent_runs = 0;
  options.interceptors.push_back(nullptr);
  EXPECT_THAT(Scheduler::Create(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("interceptors[0]")));
}

TEST_F(SchedulerTest, BadJobIsRejectedAndChangesNothing) {
  Create();
  ASSERT_THAT(scheduler_->Start(), IsOk());
  EXPECT_THAT(
      scheduler_->AddJob(Cron("a", "61 * * * *"), Returns(absl::OkStatus())),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("trigger")));
  EXPECT_THAT(scheduler_->AddJob(Cron("a", "* * * * *"), JobFunction()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fn")));
  EXPECT_THAT(scheduler_->AddJob(Cron("a", "* * * * *"),
                                 std::shared_ptr<const JobFunction>()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fn")));
  EXPECT_THAT(scheduler_->NextFireTime(Key("a")),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(SchedulerTest, StatsCountJobsFiresRunsAndStoreWrites) {
  absl::Mutex mu;
  std::map<std::string, size_t> written;  // op -> items
  SchedulerOptions options;
  options.on_store_write = [&](const StoreWrite& w) {
    absl::MutexLock lock(&mu);
    EXPECT_GE(w.latency, absl::ZeroDuration());
    // The simulated clock jumps a minute at a time: a write in flight across
    // a jump passes its deadline, is reported so, and is sent again (and
    // counted when it succeeds).
    if (!w.status.ok()) {
      EXPECT_TRUE(absl::IsDeadlineExceeded(w.status)) << w.status;
      return;
    }
    written[std::string(w.op)] += w.items;
  };
  Create(std::move(options));
  JobSpec paused = Cron("quiet", "* * * * *");
  paused.paused = true;
  ASSERT_THAT(
      scheduler_->AddJob(Cron("tick", "* * * * *"), Returns(absl::OkStatus())),
      IsOk());
  ASSERT_THAT(scheduler_->AddJob(paused, Returns(absl::OkStatus())), IsOk());
  ASSERT_THAT(scheduler_->Start(), IsOk());
  AdvanceTo(absl::Minutes(1));
  recorder_.WaitForEvent(FireId("tick", absl::Minutes(1)), "succeeded");
  AdvanceTo(absl::Minutes(2));
  recorder_.WaitForEvent(FireId("tick", absl::Minutes(2)), "succeeded");
  ASSERT_THAT(scheduler_->ResumeJob(Key("quiet")), IsOk());

  absl::StatusOr<SchedulerStats> stats = scheduler_->Stats();
  ASSERT_THAT(stats, IsOk());
  EXPECT_EQ(stats->jobs, 2);
  EXPECT_EQ(stats->jobs_paused, 0);
  EXPECT_EQ(stats->fires_run, 2);
  EXPECT_EQ(stats->runs_succeeded, 2);
  EXPECT_EQ(stats->runs_running, 0);
  ASSERT_TRUE(stats->by_namespace.contains("default"));
  EXPECT_EQ(stats->by_namespace["default"].running, 0);
  // The two fires due while "quiet" was paused.
  EXPECT_EQ(stats->fires_not_run,
            (std::map<std::string, int64_t>{{"paused", 2}}));
  ASSERT_THAT(scheduler_->PauseJob(Key("tick")), IsOk());
  EXPECT_EQ(scheduler_->Stats()->jobs_paused, 1);

  absl::MutexLock lock(&mu);
  EXPECT_EQ(written["put_jobs"], 4u);     // two adds, a resume and a pause
  EXPECT_GE(written["claim_fires"], 2u);  // two claims (and watermarks, ...)
  EXPECT_GE(written["transition_runs"], 4u);  // pending->running->succeeded
}

}  // namespace
}  // namespace chime::driver::testing
