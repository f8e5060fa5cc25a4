// MemoryStore's own memory bounds (Options::max_finished_runs and
// max_missed_records): what a store nobody applies retention to keeps.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/memory_store.h"
#include "testing/status_matchers.h"

namespace chime::store {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;

constexpr MonoTime kForever = MonoTime::Infinite();

absl::Time At(int minute) {
  return absl::FromUnixSeconds(1767225600) + absl::Minutes(minute);
}

class MemoryStoreBounds : public ::testing::Test {
 protected:
  void SetUp() override {
    MemoryStore::Options options;
    options.max_finished_runs = 2;
    options.max_missed_records = 2;
    store_ = std::make_unique<MemoryStore>(options);
    absl::StatusOr<LeaseGrant> grant =
        store_->AcquireLease("scheduler", "test", absl::Hours(1), kForever);
    ASSERT_THAT(grant, IsOk());
    fence_ = Fence{"scheduler", grant->token};
    JobSpec spec;
    spec.key.id = "a";
    spec.trigger.expression = "* * * * *";
    absl::StatusOr<JobRecord> job = store_->PutJob(spec, kNoRevision, kForever);
    ASSERT_THAT(job, IsOk());
    job_ = job->id;
  }

  FireRef Fire(int minute) { return FireRef{job_, 1, At(minute)}; }

  void Claim(RunId run, int minute) {
    ClaimBatch batch;
    batch.at = At(minute);
    batch.claims.push_back({Fire(minute), run});
    ASSERT_THAT(store_->ClaimFires(fence_, batch, kForever), IsOk());
  }
  void Finish(RunId run, int minute) {
    const std::vector<RunTransition> batch = {
        {run, RunState::kPending, RunState::kRunning, 1, 0, At(minute), "", ""},
        {run, RunState::kRunning, RunState::kSucceeded, 1, 0, At(minute), "",
         ""}};
    ASSERT_THAT(store_->TransitionRuns(fence_, batch, kForever), IsOk());
  }

  std::unique_ptr<MemoryStore> store_;
  Fence fence_;
  JobId job_ = 0;
};

TEST_F(MemoryStoreBounds, KeepsTheNewestFinishedRunsAndEveryUnfinishedOne) {
  for (RunId run = 1; run <= 4; ++run) Claim(run, static_cast<int>(run));
  Claim(5, 5);  // stays pending
  Finish(3, 6);
  Finish(1, 7);
  Finish(4, 8);  // the third to finish: the first (run 3) goes
  EXPECT_THAT(store_->GetRun(3, kForever),
              StatusIs(absl::StatusCode::kNotFound));
  for (RunId kept : {1, 2, 4, 5}) {
    EXPECT_THAT(store_->GetRun(kept, kForever), IsOk()) << "run " << kept;
  }
  // Its claim went with it, as with retention.
  absl::StatusOr<std::vector<ClaimInfo>> claims =
      store_->LookupClaims({Fire(3), Fire(4)}, kForever);
  ASSERT_THAT(claims, IsOk());
  EXPECT_EQ((*claims)[0].run, 0u);
  EXPECT_EQ((*claims)[1].run, 4u);
}

TEST_F(MemoryStoreBounds, KeepsTheNewestMissedRecords) {
  for (int minute = 1; minute <= 3; ++minute) {
    ClaimBatch batch;
    batch.at = At(minute);
    batch.missed.push_back(MissedRecord{job_, 1, At(minute), At(minute), 1,
                                        false, MissReason::kOverlap});
    ASSERT_THAT(store_->ClaimFires(fence_, batch, kForever), IsOk());
    ASSERT_THAT(store_->ClaimFires(fence_, batch, kForever), IsOk());  // again
  }
  absl::StatusOr<MissedPage> page =
      store_->ListMissed(job_, std::nullopt, 10, kForever);
  ASSERT_THAT(page, IsOk());
  ASSERT_EQ(page->records.size(), 2u);
  EXPECT_EQ(page->records[0].first, At(2));
  EXPECT_EQ(page->records[1].first, At(3));
}

}  // namespace
}  // namespace chime::store
