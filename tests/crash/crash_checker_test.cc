// The crash checker on histories written by hand into a MemoryStore: a
// consistent one passes, and each kind of violation is found and named.
#include "tests/crash/crash_checker.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/memory_store.h"
#include "testing/status_matchers.h"
#include "tests/crash/crash_jobs.h"
#include "tests/crash/crash_log.h"

namespace chime::crash {
namespace {

using ::chime::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

MonoTime Deadline() { return RealClock::Get().MonoNow() + absl::Seconds(10); }

// Second `s` of the history.
absl::Time T(int s) { return absl::FromUnixSeconds(1'800'000'000 + s); }

class CrashCheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<LeaseGrant> lease =
        store_.AcquireLease("scheduler", "test", absl::Hours(1), Deadline());
    ASSERT_THAT(lease, IsOk());
    fence_ = Fence{"scheduler", lease->token};
    for (int index : {0, 1}) {
      absl::StatusOr<JobRecord> job =
          store_.PutJob(CrashJob(index), kAnyRevision, Deadline());
      ASSERT_THAT(job, IsOk());
      jobs_.push_back(*job);
    }
    ASSERT_EQ(jobs_[0].spec.delivery, Delivery::kAtMostOnce);
    ASSERT_EQ(jobs_[1].spec.delivery, Delivery::kAtLeastOnce);
  }

  std::string Fire(int job, int s) const {
    return FireKey{jobs_[job].spec.key, jobs_[job].generation, T(s)}.ToString();
  }
  FireRef Ref(int job, int s) const {
    return FireRef{jobs_[job].id, jobs_[job].generation, T(s)};
  }
  // Claims made at `at_s` (default: the epoch, before any fire).
  void Claim(int job, std::vector<FireClaim> claims,
             std::vector<MissedRecord> missed, int watermark,
             std::optional<int> at_s = std::nullopt) {
    ClaimBatch batch;
    if (at_s.has_value()) batch.at = T(*at_s);
    batch.claims = std::move(claims);
    batch.missed = std::move(missed);
    batch.watermarks = {{jobs_[job].id, jobs_[job].generation, T(watermark)}};
    ASSERT_THAT(store_.ClaimFires(fence_, batch, Deadline()), IsOk());
  }
  void Transition(RunId run, RunState from, RunState to, int attempt,
                  absl::Time at = absl::UnixEpoch()) {
    RunTransition t{run, from, to, attempt};
    t.at = at;
    ASSERT_THAT(store_.TransitionRun(fence_, t, Deadline()), IsOk());
  }
  void Witness(int job, int s, RunId run, int attempt, int64_t token) {
    AttemptContext ctx;
    ctx.fire = FireKey{jobs_[job].spec.key, jobs_[job].generation, T(s)};
    ctx.run_id = run;
    ctx.attempt = attempt;
    ctx.fencing_token = token;
    witness_.emplace_back(absl::StripSuffix(FormatWitness(ctx), "\n"));
  }
  void Ack(RunId run, RunState from, RunState to, int attempt, int job, int s,
           std::string detail = "") {
    Ack(RunEvent{run, Fire(job, s), std::string(RunStateName(from)),
                 std::string(RunStateName(to)), attempt, std::move(detail)});
  }
  void Ack(const RunEvent& e) {
    acks_.emplace_back(absl::StripSuffix(FormatAck(e), "\n"));
  }

  // Job 0 (at-most-once): run 1 at 0 succeeded; run 2 at 1 lost by a kill;
  // 2-3 missed; run 3 at 4 cancelled before it started; watermark 4. Job 1
  // (at-least-once): run 4 at 0 lost and run again after the kill.
  void WriteConsistentHistory() {
    Claim(0, {{Ref(0, 0), 1}, {Ref(0, 1), 2}, {Ref(0, 4), 3}},
          {{jobs_[0].id, 1, T(2), T(3), 2, false, MissReason::kMisfireSkip}},
          4);
    Claim(1, {{Ref(1, 0), 4}}, {}, 0);
    Transition(1, RunState::kPending, RunState::kRunning, 1);
    Transition(1, RunState::kRunning, RunState::kSucceeded, 1);
    Transition(2, RunState::kPending, RunState::kRunning, 1);
    Transition(2, RunState::kRunning, RunState::kLost, 1);
    Transition(3, RunState::kPending, RunState::kCancelled, 0);
    Transition(4, RunState::kPending, RunState::kRunning, 1);
    Transition(4, RunState::kRunning, RunState::kLost, 1);
    Transition(4, RunState::kLost, RunState::kRunning, 2);
    Transition(4, RunState::kRunning, RunState::kSucceeded, 2);

    Witness(0, 0, 1, 1, 10);
    Witness(0, 1, 2, 1, 10);
    Witness(1, 0, 4, 1, 10);
    Witness(1, 0, 4, 2, 20);  // started again by the next scheduler

    Ack(1, RunState::kClaiming, RunState::kPending, 0, 0, 0);
    Ack(1, RunState::kPending, RunState::kRunning, 1, 0, 0);
    Ack(1, RunState::kRunning, RunState::kSucceeded, 1, 0, 0);
    Ack(RunEvent{0, Fire(0, 2), "", "missed", 0,
                 "misfire_skip: 2 fires from 2027-01-15T08:00:02Z to "
                 "2027-01-15T08:00:03Z"});
    Ack(3, RunState::kClaiming, RunState::kCancelled, 0, 0, 4, "job removed");
    Ack(2, RunState::kRunning, RunState::kLost, 1, 0, 1,
        "the scheduler stopped while the run was running (token 10)");
    Ack(4, RunState::kLost, RunState::kRunning, 2, 1, 0);
    // A claim the store refused: nothing to find.
    Ack(99, RunState::kClaiming, RunState::kCancelled, 0, 0, 5);
  }

  // The clean stop began at `stopped_s` (seconds, as T()).
  absl::StatusOr<CrashReport> Check(int stopped_s = 100) {
    return CheckCrashHistory(store_, witness_, acks_, T(stopped_s));
  }

  store::MemoryStore store_;
  Fence fence_;
  std::vector<JobRecord> jobs_;
  std::vector<std::string> witness_;
  std::vector<std::string> acks_;
};

TEST_F(CrashCheckerTest, ConsistentHistoryPassesAndIsCounted) {
  WriteConsistentHistory();
  absl::StatusOr<CrashReport> r = Check();
  ASSERT_THAT(r, IsOk());
  for (const CrashReport::Kind& kind : r->Violations())
    EXPECT_THAT(*kind.violations, IsEmpty()) << kind.what;
  EXPECT_EQ(r->jobs, 2);
  EXPECT_EQ(r->runs, 4);
  EXPECT_EQ(r->missed_records, 1);
  EXPECT_EQ(r->missed_fires, 2);
  EXPECT_EQ(r->fires_decided, 6);
  EXPECT_EQ(r->fires_checked, 6);  // job 0: 0-4; job 1: 0
  EXPECT_THAT(r->runs_by_state,
              UnorderedElementsAre(Pair("succeeded", 2), Pair("lost", 1),
                                   Pair("cancelled", 1)));
  EXPECT_EQ(r->acks, 8);
  EXPECT_EQ(r->witness_lines, 4);
  EXPECT_EQ(r->fires_executed, 3);
  EXPECT_EQ(r->fires_retried, 0);
  EXPECT_EQ(r->fires_rerun_after_crash, 1);
}

TEST_F(CrashCheckerTest, FindsEachKindOfViolation) {
  WriteConsistentHistory();
  // Run 5 claims fire 3, which is also recorded missed; it stays pending.
  Claim(0, {{Ref(0, 3), 5}}, {}, 6);  // and 5-6 are decided by nobody
  Witness(0, 1, 2, 1, 30);            // at-most-once run 2 began again
  Witness(0, 0, 2, 1, 30);            // run 2 is fire 1's, not fire 0's
  Witness(0, 9, 77, 1, 30);           // no run 77
  Ack(1, RunState::kRunning, RunState::kFailed, 1, 0, 0, "boom");
  Ack(RunEvent{0, Fire(0, 6), "", "missed", 0, "misfire_skip"});
  Ack(55, RunState::kPending, RunState::kRunning, 1, 0, 7);
  Transition(4, RunState::kSucceeded, RunState::kLost, 2);  // unfinished

  absl::StatusOr<CrashReport> r = Check();
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(r->claimed_twice, ElementsAre(HasSubstr(Fire(0, 0))));
  EXPECT_THAT(
      r->at_most_once_repeated,
      UnorderedElementsAre(HasSubstr(Fire(0, 0)), HasSubstr(Fire(0, 1))));
  EXPECT_THAT(r->witness_unknown,
              UnorderedElementsAre(HasSubstr("the store has run 2 for"),
                                   HasSubstr("the store has no run 77")));
  EXPECT_THAT(r->acks_missing,
              UnorderedElementsAre(HasSubstr("running failed"),
                                   HasSubstr("no such missed record"),
                                   HasSubstr("no such run")));
  EXPECT_THAT(r->fires_undecided,
              ElementsAre(HasSubstr(Fire(0, 5)), HasSubstr(Fire(0, 6))));
  EXPECT_THAT(r->claimed_and_missed, ElementsAre(HasSubstr(Fire(0, 3))));
  EXPECT_THAT(r->unfinished, UnorderedElementsAre(HasSubstr("run 5 pending"),
                                                  HasSubstr("run 4 lost")));
  // Had the stop begun at 4 s, run 5 (due at 3 s) would have been released
  // by it, not stuck.
  absl::StatusOr<CrashReport> early = Check(4);
  ASSERT_THAT(early, IsOk());
  EXPECT_THAT(early->unfinished, ElementsAre(HasSubstr("run 4 lost")));
  EXPECT_EQ(early->released, 1);
}

// A clean stop leaves a retry waiting out its backoff to the next
// scheduler: a run of an old fire that went `retrying` just before the stop
// was released by it; one that has waited long before the stop was stuck.
TEST_F(CrashCheckerTest, ARetryJustBeforeTheStopIsReleasedALongOneIsStuck) {
  WriteConsistentHistory();
  Claim(1, {{Ref(1, 10), 5}, {Ref(1, 11), 6}}, {}, 11);
  Transition(5, RunState::kPending, RunState::kRunning, 1, T(10));
  Transition(5, RunState::kRunning, RunState::kRetrying, 1, T(99));
  Transition(6, RunState::kPending, RunState::kRunning, 1, T(11));
  Transition(6, RunState::kRunning, RunState::kRetrying, 1, T(50));
  absl::StatusOr<CrashReport> r = Check(100);
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(r->unfinished, ElementsAre(HasSubstr("run 6 retrying")));
  EXPECT_EQ(r->released, 1);
}

TEST_F(CrashCheckerTest, ARunClaimedLateJustBeforeTheStopIsReleased) {
  WriteConsistentHistory();
  // Due at 10, claimed only at 99 (the scheduler behind): waiting since 99.
  Claim(1, {{Ref(1, 10), 5}}, {}, 10, 99);
  // Due at 12 and claimed then: waiting since 12, stuck by 100.
  Claim(1, {{Ref(1, 12), 6}}, {}, 12, 12);
  absl::StatusOr<CrashReport> r = Check(100);
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(r->unfinished, ElementsAre(HasSubstr("run 6 pending")));
  EXPECT_EQ(r->released, 1);
}

// Job 1 buffers (buffer_one): a run waits for the earlier fire's run to
// end. One that ended during the stop's grace left the buffered run to the
// next scheduler (the CI failure of 2026-11-30: not a stranded run).
TEST_F(CrashCheckerTest, ARunBufferedBehindOneEndingInTheStopIsReleased) {
  WriteConsistentHistory();
  ASSERT_EQ(jobs_[1].spec.overlap.action, OverlapAction::kBufferOne);
  Claim(1, {{Ref(1, 10), 5}, {Ref(1, 12), 6}}, {}, 12, 12);
  Transition(5, RunState::kPending, RunState::kRunning, 1, T(10));
  Transition(5, RunState::kRunning, RunState::kSucceeded, 1, T(101));
  absl::StatusOr<CrashReport> r = Check(100);
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(r->unfinished, IsEmpty());
  EXPECT_EQ(r->released, 1);
}

// ... but a buffered run passed over by a later fire's run is stuck.
TEST_F(CrashCheckerTest, ABufferedRunALaterFireOvertookIsStuck) {
  WriteConsistentHistory();
  Claim(1, {{Ref(1, 20), 7}, {Ref(1, 30), 8}}, {}, 30, 20);
  Transition(8, RunState::kPending, RunState::kRunning, 1, T(30));
  Transition(8, RunState::kRunning, RunState::kSucceeded, 1, T(31));
  absl::StatusOr<CrashReport> r = Check(100);
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(r->unfinished, ElementsAre(HasSubstr("run 7 pending")));
}

}  // namespace
}  // namespace chime::crash
