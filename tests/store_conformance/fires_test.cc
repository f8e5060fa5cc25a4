// Conformance: claiming fires -- create-if-absent, idempotent re-sends,
// fencing, batch atomicity and missed records. Watermarks are in
// watermarks_test.cc.
#include <atomic>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"
#include "tests/store_conformance/store_conformance.h"

namespace chime::conformance {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::SizeIs;

MissedRecord Missed(const JobRecord& job, int first, int last, int64_t count,
                    MissReason reason = MissReason::kMisfireSkip) {
  return MissedRecord{job.id,
                      job.generation,
                      StoreConformance::At(first),
                      StoreConformance::At(last),
                      count,
                      false,
                      reason};
}

TEST_P(StoreConformance, ClaimCreatesAPendingRunOwnedByTheToken) {
  const JobRecord job = MustPut("a");
  const Fence fence = MustAcquire();
  MustClaim(fence, job, 5, 41);
  absl::StatusOr<RunDetail> run = store().GetRun(41, kForever);
  ASSERT_THAT(run, IsOk());
  EXPECT_EQ(run->run.id, 41u);
  EXPECT_EQ(run->run.fire, (FireRef{job.id, 1, At(5)}));
  EXPECT_EQ(run->run.state, RunState::kPending);
  EXPECT_EQ(run->run.token, fence.token);
  EXPECT_EQ(run->run.created_at, At(5));
  EXPECT_TRUE(run->attempts.empty());
  absl::StatusOr<std::vector<ClaimInfo>> claims = store().LookupClaims(
      {FireRef{job.id, 1, At(5)}, FireRef{job.id, 1, At(10)}}, kForever);
  ASSERT_THAT(claims, IsOk());
  ASSERT_THAT(*claims, SizeIs(2));
  EXPECT_EQ((*claims)[0].run, 41u);
  EXPECT_EQ((*claims)[0].token, fence.token);
  EXPECT_EQ((*claims)[1].run, 0u);
  absl::StatusOr<StoreInfo> info = store().GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->max_run_id, 41u);
  EXPECT_EQ(info->runs, 1);
}

TEST_P(StoreConformance, SecondClaimOfAFireIsRefusedWhoeverAsks) {
  const JobRecord job = MustPut("a");
  const Fence a = MustAcquire("scheduler", "node-a");
  MustClaim(a, job, 5, 1);
  ClaimBatch again;
  again.claims = {Claim(job, 5, 2)};
  EXPECT_THAT(store().ClaimFires(a, again, kForever),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       HasSubstr("already claimed by run 1")));
  // A new owner of the lease, after a failover, is refused too.
  clock_.AdvanceBy(absl::Minutes(2));
  const Fence b = MustAcquire("scheduler", "node-b");
  again.claims = {Claim(job, 5, 3)};
  EXPECT_THAT(store().ClaimFires(b, again, kForever),
              StatusIs(absl::StatusCode::kAlreadyExists));
  // A manual fire at the same instant is a different fire.
  again.claims[0].fire.manual = true;
  EXPECT_THAT(store().ClaimFires(b, again, kForever), IsOk());
}

TEST_P(StoreConformance, ResendingTheSameBatchIsOkAndWritesNothingNew) {
  const JobRecord job = MustPut("a");
  const Fence fence = MustAcquire();
  ClaimBatch batch;
  batch.claims = {Claim(job, 5, 1), Claim(job, 10, 2)};
  batch.missed = {Missed(job, 0, 0, 1)};
  batch.watermarks = {{job.id, job.generation, At(10)}};
  batch.at = At(10);
  ASSERT_THAT(store().ClaimFires(fence, batch, kForever), IsOk());
  ASSERT_THAT(store().ClaimFires(fence, batch, kForever), IsOk());
  absl::StatusOr<StoreInfo> info = store().GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->runs, 2);
  absl::StatusOr<MissedPage> missed =
      store().ListMissed(job.id, std::nullopt, 10, kForever);
  ASSERT_THAT(missed, IsOk());
  EXPECT_THAT(missed->records, SizeIs(1));
}

TEST_P(StoreConformance, StaleTokenIsFencedAndWritesNothing) {
  const JobRecord job = MustPut("a");
  const Fence a = MustAcquire("scheduler", "node-a");
  clock_.AdvanceBy(absl::Minutes(2));
  const Fence b = MustAcquire("scheduler", "node-b");
  ClaimBatch batch;
  batch.claims = {Claim(job, 5, 1)};
  batch.missed = {Missed(job, 0, 0, 1)};
  batch.watermarks = {{job.id, job.generation, At(5)}};
  EXPECT_THAT(
      store().ClaimFires(a, batch, kForever),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("fenced")));
  EXPECT_THAT(
      store().ClaimFires(Fence{"other-lease", b.token}, batch, kForever),
      StatusIs(absl::StatusCode::kFailedPrecondition));
  absl::StatusOr<std::vector<ClaimInfo>> claims =
      store().LookupClaims({FireRef{job.id, 1, At(5)}}, kForever);
  ASSERT_THAT(claims, IsOk());
  EXPECT_EQ((*claims)[0].run, 0u);
  absl::StatusOr<JobRecord> got = store().GetJob(job.spec.key, kForever);
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->watermark, absl::InfinitePast());
  absl::StatusOr<MissedPage> missed =
      store().ListMissed(job.id, std::nullopt, 10, kForever);
  ASSERT_THAT(missed, IsOk());
  EXPECT_TRUE(missed->records.empty());
  // The current holder's batch goes through.
  EXPECT_THAT(store().ClaimFires(b, batch, kForever), IsOk());
}

TEST_P(StoreConformance, BatchWithOneConflictingClaimWritesNothing) {
  const JobRecord job = MustPut("a");
  const Fence fence = MustAcquire();
  MustClaim(fence, job, 15, 7);
  ClaimBatch batch;
  batch.claims = {Claim(job, 5, 1), Claim(job, 10, 2), Claim(job, 15, 3)};
  batch.missed = {Missed(job, 0, 0, 1)};
  batch.watermarks = {{job.id, job.generation, At(15)}};
  EXPECT_THAT(store().ClaimFires(fence, batch, kForever),
              StatusIs(absl::StatusCode::kAlreadyExists));
  absl::StatusOr<std::vector<ClaimInfo>> claims = store().LookupClaims(
      {FireRef{job.id, 1, At(5)}, FireRef{job.id, 1, At(10)}}, kForever);
  ASSERT_THAT(claims, IsOk());
  EXPECT_EQ((*claims)[0].run, 0u);
  EXPECT_EQ((*claims)[1].run, 0u);
  EXPECT_THAT(store().GetRun(1, kForever),
              StatusIs(absl::StatusCode::kNotFound));
  absl::StatusOr<JobRecord> got = store().GetJob(job.spec.key, kForever);
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->watermark, absl::InfinitePast());
  absl::StatusOr<MissedPage> missed =
      store().ListMissed(job.id, std::nullopt, 10, kForever);
  ASSERT_THAT(missed, IsOk());
  EXPECT_TRUE(missed->records.empty());
}

TEST_P(StoreConformance, ClaimsConflictWithinOneBatchAndOnRunIds) {
  const JobRecord job = MustPut("a");
  const Fence fence = MustAcquire();
  ClaimBatch two_runs;
  two_runs.claims = {Claim(job, 5, 1), Claim(job, 5, 2)};
  EXPECT_THAT(store().ClaimFires(fence, two_runs, kForever),
              StatusIs(absl::StatusCode::kAlreadyExists));
  ClaimBatch one_run_two_fires;
  one_run_two_fires.claims = {Claim(job, 5, 1), Claim(job, 10, 1)};
  EXPECT_THAT(
      store().ClaimFires(fence, one_run_two_fires, kForever),
      StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("run id 1")));
  MustClaim(fence, job, 5, 1);
  ClaimBatch reuse;
  reuse.claims = {Claim(job, 20, 1)};
  EXPECT_THAT(
      store().ClaimFires(fence, reuse, kForever),
      StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("run id 1")));
  absl::StatusOr<StoreInfo> info = store().GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->runs, 1);
}

// Racing claimers (as two nodes that both believe they own a job): every fire
// is claimed exactly once.
TEST_P(StoreConformance, ConcurrentClaimersClaimEachFireExactlyOnce) {
  const JobRecord job = MustPut("a");
  const Fence fence = MustAcquire();
  constexpr int kClaimers = 4;
  constexpr int kFires = 40;
  std::atomic<int> won{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> claimers;
  for (int c = 0; c < kClaimers; ++c) {
    claimers.emplace_back([&, c] {
      for (int f = 0; f < kFires; ++f) {
        ClaimBatch batch;
        batch.claims = {Claim(job, f, static_cast<RunId>(c * kFires + f + 1))};
        absl::Status s = store().ClaimFires(fence, batch, kForever);
        if (s.ok()) {
          ++won;
        } else if (s.code() == absl::StatusCode::kAlreadyExists) {
          ++refused;
        }
      }
    });
  }
  for (std::thread& t : claimers) t.join();
  EXPECT_EQ(won.load(), kFires);
  EXPECT_EQ(refused.load(), kFires * (kClaimers - 1));
  absl::StatusOr<StoreInfo> info = store().GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->runs, kFires);
}

TEST_P(StoreConformance, ClaimsForUnknownJobsOrMalformedAreRefused) {
  const Fence fence = MustAcquire();
  ClaimBatch batch;
  batch.claims = {FireClaim{FireRef{999, 1, At(5)}, 1}};
  EXPECT_THAT(store().ClaimFires(fence, batch, kForever),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("999")));
  const JobRecord job = MustPut("a");
  batch.claims = {Claim(job, 5, 0)};
  EXPECT_THAT(
      store().ClaimFires(fence, batch, kForever),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("claims[0].run")));
  batch.claims.clear();
  batch.watermarks = {{999, 1, At(5)}};
  EXPECT_THAT(store().ClaimFires(fence, batch, kForever),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(StoreConformance, MissedRecordsAreKeptOnceAndListedInOrder) {
  const JobRecord job = MustPut("a");
  const JobRecord other = MustPut("b");
  const Fence fence = MustAcquire();
  ASSERT_THAT(
      store().RecordMissed(fence,
                           {Missed(job, 30, 40, 3, MissReason::kOverlap),
                            Missed(job, 0, 20, 5, MissReason::kMisfireRunOnce),
                            Missed(other, 0, 0, 1)},
                           kForever),
      IsOk());
  MissedRecord capped =
      Missed(job, 50, 5000, 100000, MissReason::kCatchupWindow);
  capped.count_capped = true;
  ASSERT_THAT(
      store().RecordMissed(
          fence, {capped, Missed(job, 0, 20, 5, MissReason::kMisfireRunOnce)},
          kForever),
      IsOk());
  absl::StatusOr<MissedPage> first =
      store().ListMissed(job.id, std::nullopt, 2, kForever);
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(first->records, SizeIs(2));
  ASSERT_TRUE(first->next.has_value());
  EXPECT_EQ(first->records[0],
            Missed(job, 0, 20, 5, MissReason::kMisfireRunOnce));
  EXPECT_EQ(first->records[1], Missed(job, 30, 40, 3, MissReason::kOverlap));
  absl::StatusOr<MissedPage> rest =
      store().ListMissed(job.id, first->next, 2, kForever);
  ASSERT_THAT(rest, IsOk());
  ASSERT_THAT(rest->records, SizeIs(1));
  EXPECT_FALSE(rest->next.has_value());
  EXPECT_EQ(rest->records[0], capped);
}

}  // namespace
}  // namespace chime::conformance
