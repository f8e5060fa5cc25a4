#include "testing/fault_injection_store.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/memory_store.h"
#include "testing/simulated_clock.h"
#include "testing/status_matchers.h"

namespace chime::testing {
namespace {

constexpr MonoTime kForever = MonoTime::Infinite();

class FaultInjectionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    JobSpec spec;
    spec.key.id = "a";
    spec.trigger.expression = "* * * * *";
    absl::StatusOr<JobRecord> job = base_.PutJob(spec, kNoRevision, kForever);
    ASSERT_THAT(job, IsOk());
    job_ = *job;
    absl::StatusOr<LeaseGrant> grant =
        base_.AcquireLease("scheduler", "node-a", absl::Hours(1), kForever);
    ASSERT_THAT(grant, IsOk());
    fence_ = Fence{"scheduler", grant->token};
  }

  ClaimBatch OneClaim(RunId run) {
    ClaimBatch batch;
    batch.claims = {FireClaim{FireRef{job_.id, 1, absl::UnixEpoch()}, run}};
    return batch;
  }
  RunId ClaimedBy(Store& store) {
    absl::StatusOr<std::vector<ClaimInfo>> claims =
        store.LookupClaims({FireRef{job_.id, 1, absl::UnixEpoch()}}, kForever);
    EXPECT_THAT(claims, IsOk());
    return claims.ok() ? (*claims)[0].run : 0;
  }

  SimulatedClock clock_;
  store::MemoryStore base_{store::MemoryStore::Options{&clock_}};
  FaultInjectionStore store_{base_};
  JobRecord job_;
  Fence fence_;
};

TEST_F(FaultInjectionStoreTest, FailedWritesChangeNothingThenWritesResume) {
  store_.FailNextWrites(2);
  EXPECT_THAT(store_.ClaimFires(fence_, OneClaim(1), kForever),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(store_.PutJob(JobSpec{{"default", "b"}}, kAnyRevision, kForever),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(ClaimedBy(base_), 0u);
  EXPECT_THAT(store_.ClaimFires(fence_, OneClaim(1), kForever), IsOk());
  EXPECT_EQ(ClaimedBy(store_), 1u);
  EXPECT_EQ(store_.counters().failed_writes, 2);
  EXPECT_EQ(store_.counters().writes, 3);
}

TEST_F(FaultInjectionStoreTest,
       IndeterminateWriteIsAppliedAndResolvedByReadBack) {
  store_.MakeNextWritesIndeterminate(1);
  EXPECT_THAT(store_.ClaimFires(fence_, OneClaim(1), kForever),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  // Read back: the claim is there, so the run may go ahead...
  EXPECT_EQ(ClaimedBy(store_), 1u);
  // ...and re-sending the identical claim is a harmless OK, while a claim
  // under a new run id (a blind retry) is refused.
  EXPECT_THAT(store_.ClaimFires(fence_, OneClaim(1), kForever), IsOk());
  EXPECT_THAT(store_.ClaimFires(fence_, OneClaim(2), kForever),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(store_.counters().indeterminate_writes, 1);
}

TEST_F(FaultInjectionStoreTest, FailedReadsReturnTheChosenStatus) {
  store_.FailNextReads(1, absl::DataLossError("bad sector"));
  EXPECT_THAT(store_.GetInfo(kForever), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(store_.GetInfo(kForever), IsOk());
  // Reads do not consume write faults, nor the reverse.
  store_.FailNextWrites(1);
  EXPECT_THAT(store_.GetJob(job_.spec.key, kForever), IsOk());
  EXPECT_THAT(store_.ClaimFires(fence_, OneClaim(1), kForever),
              StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(FaultInjectionStoreTest, DelayWaitsOnTheSimulatedClock) {
  store_.SetDelay(absl::Seconds(5), &clock_);
  absl::Status result = absl::UnknownError("not run");
  std::thread caller([&] { result = store_.GetInfo(kForever).status(); });
  ASSERT_TRUE(clock_.BlockUntilWaiters(1));
  const MonoTime start = clock_.MonoNow();
  clock_.AdvanceBy(absl::Seconds(5));
  caller.join();
  EXPECT_THAT(result, IsOk());
  EXPECT_EQ(clock_.MonoNow() - start, absl::Seconds(5));
  store_.Reset();
  EXPECT_THAT(store_.GetInfo(kForever), IsOk());  // no delay: no waiting
}

TEST_F(FaultInjectionStoreTest, ACrashDropsWhatWasNotCommittedAndKeepsTheRest) {
  ASSERT_THAT(store_.ClaimFires(fence_, OneClaim(1), kForever), IsOk());
  // A claim of another fire is on its way (sleeping its delay) when the store
  // crashes: it never reaches the base.
  store_.SetDelay(absl::Seconds(5), &clock_);
  ClaimBatch second;
  second.claims = {
      FireClaim{FireRef{job_.id, 1, absl::UnixEpoch() + absl::Minutes(1)}, 2}};
  absl::Status result = absl::UnknownError("not run");
  std::thread caller(
      [&] { result = store_.ClaimFires(fence_, second, kForever); });
  ASSERT_TRUE(clock_.BlockUntilWaiters(1));
  store_.Crash();
  clock_.AdvanceBy(absl::Seconds(5));
  caller.join();
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(result.message(), ::testing::HasSubstr("before this call"));
  store_.Reset();  // no delay; still down
  EXPECT_THAT(store_.GetInfo(kForever),
              StatusIs(absl::StatusCode::kUnavailable));
  store_.Restart();
  absl::StatusOr<StoreInfo> info = store_.GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->max_run_id, 1u);  // the committed claim, not the dropped one
  EXPECT_EQ(ClaimedBy(store_), 1u);
}

}  // namespace
}  // namespace chime::testing
