// Conformance: run transitions (compare-and-set, fenced, idempotent),
// attempts with bounded output, and paged history.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"
#include "tests/store_conformance/store_conformance.h"

namespace chime::conformance {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

std::vector<RunState> States(const RunDetail& d) {
  std::vector<RunState> out;
  for (const TransitionRecord& t : d.transitions) out.push_back(t.to);
  return out;
}

// The RunIds of every page of `query` (at most ten pages), page by page.
std::vector<std::vector<RunId>> Pages(Store& store, RunQuery query) {
  std::vector<std::vector<RunId>> pages;
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<RunPage> page = store.ListRuns(query, MonoTime::Infinite());
    EXPECT_THAT(page, IsOk());
    if (!page.ok()) break;
    pages.emplace_back();
    for (const RunRecord& r : page->runs) pages.back().push_back(r.id);
    if (!page->next) break;
    query.after = page->next;
  }
  return pages;
}

TEST_P(StoreConformance, TransitionsAreCompareAndSetOnTheRunState) {
  const JobRecord job = MustPut("a");
  const Fence fence = MustAcquire();
  MustClaim(fence, job, 5, 1);
  EXPECT_THAT(
      store().TransitionRun(
          fence, Step(1, RunState::kRunning, RunState::kSucceeded, 1, 6),
          kForever),
      StatusIs(absl::StatusCode::kAborted,
               HasSubstr("but the run is pending")));
  ASSERT_THAT(store().TransitionRun(
                  fence, Step(1, RunState::kPending, RunState::kRunning, 1, 6),
                  kForever),
              IsOk());
  RunTransition done =
      Step(1, RunState::kRunning, RunState::kFailed, 1, 7, "exit status 3");
  done.exit_code = 3;
  done.output = "oops\n";
  ASSERT_THAT(store().TransitionRun(fence, done, kForever), IsOk());
  EXPECT_THAT(store().TransitionRun(
                  fence, Step(1, RunState::kFailed, RunState::kRunning, 2, 8),
                  kForever),
              IsOk());  // the store checks states, not the Plan's rules
  absl::StatusOr<RunDetail> run = store().GetRun(1, kForever);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->run.state, RunState::kRunning);
  EXPECT_EQ(run->run.attempt, 2);
  EXPECT_EQ(run->run.updated_at, At(8));
  EXPECT_THAT(States(*run), ElementsAre(RunState::kRunning, RunState::kFailed,
                                        RunState::kRunning));
  ASSERT_THAT(run->attempts, SizeIs(2));
  const AttemptRecord& first = run->attempts[0];
  EXPECT_EQ(first.number, 1);
  EXPECT_EQ(first.token, fence.token);
  EXPECT_EQ(first.started_at, At(6));
  EXPECT_EQ(first.finished_at, At(7));
  EXPECT_EQ(first.outcome, RunState::kFailed);
  EXPECT_EQ(first.exit_code, 3);
  EXPECT_EQ(first.detail, "exit status 3");
  EXPECT_EQ(first.output, "oops\n");
  EXPECT_FALSE(first.output_truncated);
  EXPECT_EQ(run->attempts[1].finished_at, absl::InfiniteFuture());
  EXPECT_EQ(run->attempts[1].outcome, RunState::kRunning);
}

TEST_P(StoreConformance, ResentTransitionsAreOkAndRecordedOnce) {
  const JobRecord job = MustPut("a");
  const Fence fence = MustAcquire();
  MustClaim(fence, job, 5, 1);
  std::vector<RunTransition> batch = {
      Step(1, RunState::kPending, RunState::kRunning, 1, 6),
      Step(1, RunState::kRunning, RunState::kRetrying, 1, 7, "retry in 1m"),
      Step(1, RunState::kRetrying, RunState::kRunning, 2, 8)};
  ASSERT_THAT(store().TransitionRuns(fence, batch, kForever), IsOk());
  ASSERT_THAT(store().TransitionRuns(fence, batch, kForever), IsOk());
  // A stale re-send of attempt 1's end must not end attempt 2, although the
  // run is running again.
  ASSERT_THAT(store().TransitionRun(fence, batch[1], kForever), IsOk());
  absl::StatusOr<RunDetail> run = store().GetRun(1, kForever);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->run.state, RunState::kRunning);
  EXPECT_THAT(run->transitions, SizeIs(3));
  EXPECT_EQ(run->attempts.back().finished_at, absl::InfiniteFuture());
}

TEST_P(StoreConformance, TransitionBatchIsFencedAndAllOrNothing) {
  const JobRecord job = MustPut("a");
  const Fence fence = MustAcquire();
  MustClaim(fence, job, 5, 1);
  MustClaim(fence, job, 10, 2);
  std::vector<RunTransition> batch = {
      Step(1, RunState::kPending, RunState::kRunning, 1, 11),
      Step(2, RunState::kRunning, RunState::kSucceeded, 1, 11)};  // refused
  EXPECT_THAT(store().TransitionRuns(fence, batch, kForever),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("run 2")));
  batch.pop_back();
  batch.push_back(Step(3, RunState::kPending, RunState::kRunning, 1, 11));
  EXPECT_THAT(store().TransitionRuns(fence, batch, kForever),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("run 3")));
  batch.pop_back();
  EXPECT_THAT(store().TransitionRuns(Fence{fence.lease, fence.token + 1}, batch,
                                     kForever),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  absl::StatusOr<RunDetail> run = store().GetRun(1, kForever);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->run.state, RunState::kPending);
  EXPECT_TRUE(run->transitions.empty());
  EXPECT_TRUE(run->attempts.empty());
}

TEST_P(StoreConformance, NewOwnerRecoversARunLeftRunningAsLost) {
  const JobRecord job = MustPut("a");
  const Fence a = MustAcquire("scheduler", "node-a");
  MustClaim(a, job, 5, 1);
  ASSERT_THAT(
      store().TransitionRun(
          a, Step(1, RunState::kPending, RunState::kRunning, 1, 6), kForever),
      IsOk());
  clock_.AdvanceBy(absl::Minutes(2));
  const Fence b = MustAcquire("scheduler", "node-b");
  ASSERT_THAT(
      store().TransitionRuns(
          b,
          {Step(1, RunState::kRunning, RunState::kLost, 1, 9, "scheduler died"),
           Step(1, RunState::kLost, RunState::kRunning, 2, 9)},
          kForever),
      IsOk());
  absl::StatusOr<RunDetail> run = store().GetRun(1, kForever);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->run.token, b.token);
  ASSERT_THAT(run->attempts, SizeIs(2));
  EXPECT_EQ(run->attempts[0].outcome, RunState::kLost);
  EXPECT_EQ(run->attempts[0].token, a.token);
  EXPECT_EQ(run->attempts[1].token, b.token);
}

TEST_P(StoreConformance, AttemptOutputKeepsTheNewestBytes) {
  const JobRecord job = MustPut("a");
  const Fence fence = MustAcquire();
  MustClaim(fence, job, 5, 1);
  RunTransition done = Step(1, RunState::kRunning, RunState::kSucceeded, 1, 6);
  done.output = std::string(kMaxOutputBytes, 'a') + "the end";
  ASSERT_THAT(
      store().TransitionRuns(
          fence, {Step(1, RunState::kPending, RunState::kRunning, 1, 6), done},
          kForever),
      IsOk());
  absl::StatusOr<RunDetail> run = store().GetRun(1, kForever);
  ASSERT_THAT(run, IsOk());
  const AttemptRecord& attempt = run->attempts.at(0);
  EXPECT_EQ(attempt.output.size(), kMaxOutputBytes);
  EXPECT_TRUE(attempt.output.ends_with("aaathe end"));
  EXPECT_TRUE(attempt.output_truncated);
}

TEST_P(StoreConformance, HistoryPagesNewestFirstByJobStateAndTime) {
  const JobRecord a = MustPut("a");
  const JobRecord b = MustPut("b");
  const Fence fence = MustAcquire();
  RunId next = 1;
  for (int minute = 0; minute < 50; minute += 5) {
    MustClaim(fence, a, minute, next++);
    MustClaim(fence, b, minute, next++);
  }
  MustFinish(fence, 1, 1);                     // a at 0
  MustFinish(fence, 3, 6, RunState::kFailed);  // a at 5
  // Every run of job a, three at a time.
  RunQuery query;
  query.job = a.id;
  query.limit = 3;
  EXPECT_THAT(Pages(store(), query),
              ElementsAre(ElementsAre(19, 17, 15), ElementsAre(13, 11, 9),
                          ElementsAre(7, 5, 3), ElementsAre(1)));
  // By state.
  RunQuery failed;
  failed.state = RunState::kFailed;
  absl::StatusOr<RunPage> page = store().ListRuns(failed, kForever);
  ASSERT_THAT(page, IsOk());
  ASSERT_THAT(page->runs, SizeIs(1));
  EXPECT_EQ(page->runs[0].id, 3u);
  // By scheduled time, [10, 20) of both jobs: runs at 10 and 15.
  RunQuery window;
  window.from = At(10);
  window.to = At(20);
  page = store().ListRuns(window, kForever);
  ASSERT_THAT(page, IsOk());
  std::vector<RunId> ids;
  for (const RunRecord& r : page->runs) ids.push_back(r.id);
  EXPECT_THAT(ids, ElementsAre(8, 7, 6, 5));
  EXPECT_FALSE(page->next.has_value());
}

// Fires of one job at the same time -- of two generations, and a manual one --
// come newest RunId first, and a page boundary between them loses none.
TEST_P(StoreConformance, HistoryOfAJobOrdersRunsAtTheSameTimeByRunId) {
  const JobRecord a = MustPut("a");
  const Fence fence = MustAcquire();
  ClaimBatch batch;
  batch.claims = {FireClaim{FireRef{a.id, 1, At(10)}, 5},
                  FireClaim{FireRef{a.id, 2, At(10)}, 7},
                  FireClaim{FireRef{a.id, 1, At(10), true}, 9},
                  FireClaim{FireRef{a.id, 1, At(5)}, 8},
                  FireClaim{FireRef{a.id, 2, At(15)}, 2}};
  batch.at = At(15);
  ASSERT_THAT(store().ClaimFires(fence, batch, kForever), IsOk());
  RunQuery query;
  query.job = a.id;
  query.limit = 2;
  EXPECT_THAT(
      Pages(store(), query),
      ElementsAre(ElementsAre(2, 9), ElementsAre(7, 5), ElementsAre(8)));
}

// A run names its job by id and by key, in a listing of every job and of
// one, and alone; also after the job is deleted (its runs stay).
TEST_P(StoreConformance, RunsCarryTheirJobsKeyAlsoAfterItIsDeleted) {
  JobSpec spec = Spec("report");
  spec.key.name_space = "ops";
  absl::StatusOr<JobRecord> ops = store().PutJob(spec, kNoRevision, kForever);
  ASSERT_THAT(ops, IsOk());
  const JobRecord other = MustPut("other");
  const Fence fence = MustAcquire();
  MustClaim(fence, *ops, 5, 1);
  MustClaim(fence, other, 10, 2);
  MustFinish(fence, 1, 6, RunState::kFailed);
  const auto expect_keys = [&](absl::string_view when) {
    SCOPED_TRACE(when);
    absl::StatusOr<RunPage> all = store().ListRuns(RunQuery{}, kForever);
    ASSERT_THAT(all, IsOk());
    ASSERT_THAT(all->runs, SizeIs(2));
    EXPECT_EQ(all->runs[0].id, 2u);
    EXPECT_EQ(all->runs[0].job_key, (JobKey{"default", "other"}));
    EXPECT_EQ(all->runs[1].job_key, (JobKey{"ops", "report"}));
    EXPECT_EQ(all->runs[1].fire.job, ops->id);
    RunQuery failed;
    failed.job = ops->id;
    failed.state = RunState::kFailed;
    absl::StatusOr<RunPage> one = store().ListRuns(failed, kForever);
    ASSERT_THAT(one, IsOk());
    ASSERT_THAT(one->runs, SizeIs(1));
    EXPECT_EQ(one->runs[0].job_key, (JobKey{"ops", "report"}));
    absl::StatusOr<RunDetail> run = store().GetRun(1, kForever);
    ASSERT_THAT(run, IsOk());
    EXPECT_EQ(run->run.job_key, (JobKey{"ops", "report"}));
    EXPECT_EQ(run->run.state, RunState::kFailed);
  };
  expect_keys("live");
  ASSERT_THAT(store().DeleteJob(spec.key, kAnyRevision, kForever), IsOk());
  expect_keys("deleted");
}

// Every job's failed runs, newest first, paged (the dead letters): a run
// that fails and then runs again leaves the listing, ties in time come
// highest RunId first.
TEST_P(StoreConformance, FailedRunsOfEveryJobPageNewestFirst) {
  const JobRecord a = MustPut("a");
  const JobRecord b = MustPut("b");
  const Fence fence = MustAcquire();
  RunId next = 1;
  for (int minute = 0; minute < 30; minute += 5) {
    MustClaim(fence, a, minute, next++);
    MustClaim(fence, b, minute, next++);
  }
  // Failed: 1 (a at 0), 4 (b at 5), 5 and 6 (a, b at 10), 11 (a at 25).
  for (RunId id : {1, 4, 5, 6, 11})
    MustFinish(fence, id, 30, RunState::kFailed);
  MustFinish(fence, 2, 30);
  MustFinish(fence, 3, 30, RunState::kCancelled);
  // Failed and then started again: no longer failed.
  ASSERT_THAT(store().TransitionRun(
                  fence, Step(5, RunState::kFailed, RunState::kRunning, 2, 31),
                  kForever),
              IsOk());
  RunQuery failed;
  failed.state = RunState::kFailed;
  failed.limit = 2;
  EXPECT_THAT(Pages(store(), failed),
              ElementsAre(ElementsAre(11, 6), ElementsAre(4, 1)));
  failed.from = At(5);
  failed.to = At(25);
  failed.limit = 100;
  EXPECT_THAT(Pages(store(), failed), ElementsAre(ElementsAre(6, 4)));
}

}  // namespace
}  // namespace chime::conformance
