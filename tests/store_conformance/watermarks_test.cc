// Conformance: watermarks. A job's watermark belongs to one of its generations
// (WatermarkAdvance in chime/store_types.h): a newer generation's replaces the
// stored one even when it is earlier, the same generation's moves forward
// only, an older generation's is ignored, and one above the job's generation
// is refused. Puts and deletes keep the stored pair.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"
#include "tests/store_conformance/store_conformance.h"

namespace chime::conformance {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::SizeIs;

using WatermarkPair = std::pair<int64_t, absl::Time>;  // generation, time

WatermarkPair PairOf(const JobRecord& job) {
  return {job.watermark_generation, job.watermark};
}

// The job's stored (watermark_generation, watermark), by GetJob.
WatermarkPair Stored(Store& store, const JobRecord& job) {
  absl::StatusOr<JobRecord> got =
      store.GetJob(job.spec.key, MonoTime::Infinite());
  EXPECT_THAT(got, IsOk());
  return got.ok() ? PairOf(*got) : WatermarkPair{-1, absl::InfinitePast()};
}

// Puts `job` with a new schedule: the next generation.
JobRecord Reschedule(Store& store, const JobRecord& job,
                     const std::string& expr) {
  JobSpec spec = job.spec;
  spec.trigger.expression = expr;
  absl::StatusOr<JobRecord> next =
      store.PutJob(spec, kAnyRevision, MonoTime::Infinite());
  EXPECT_THAT(next, IsOk());
  EXPECT_EQ(next.ok() ? next->generation : 0, job.generation + 1);
  return next.ok() ? *next : JobRecord{};
}

absl::Status Advance(Store& store, const Fence& fence,
                     std::vector<WatermarkAdvance> advances) {
  ClaimBatch batch;
  batch.watermarks = std::move(advances);
  return store.ClaimFires(fence, batch, MonoTime::Infinite());
}

TEST_P(StoreConformance, WatermarkMovesForwardOnlyWithinAGeneration) {
  const JobRecord job = MustPut("a");
  const Fence fence = MustAcquire();
  for (int minute : {10, 5, 20, 15, 20}) {
    ASSERT_THAT(Advance(store(), fence, {{job.id, 1, At(minute)}}), IsOk());
  }
  EXPECT_EQ(Stored(store(), job), WatermarkPair(1, At(20)));
}

// A changed schedule starts its own watermark at the change, which can be
// earlier than where the old schedule had got to.
TEST_P(StoreConformance, NewGenerationsWatermarkReplacesTheOldEvenIfEarlier) {
  const JobRecord v1 = MustPut("a", "*/5 * * * *");
  const Fence fence = MustAcquire();
  ASSERT_THAT(Advance(store(), fence, {{v1.id, 1, At(60)}}), IsOk());
  const JobRecord v2 = Reschedule(store(), v1, "0 * * * *");
  ASSERT_THAT(Advance(store(), fence, {{v2.id, 2, At(30)}}), IsOk());
  EXPECT_EQ(Stored(store(), v2), WatermarkPair(2, At(30)));
  // From now on generation 2's watermark moves forward only.
  ASSERT_THAT(Advance(store(), fence, {{v2.id, 2, At(25)}}), IsOk());
  EXPECT_EQ(Stored(store(), v2), WatermarkPair(2, At(30)));
  ASSERT_THAT(Advance(store(), fence, {{v2.id, 2, At(40)}}), IsOk());
  EXPECT_EQ(Stored(store(), v2), WatermarkPair(2, At(40)));
}

// A stale re-send from the old schedule, however late its time.
TEST_P(StoreConformance, OlderGenerationsWatermarkIsIgnored) {
  const JobRecord v1 = MustPut("a", "*/5 * * * *");
  const JobRecord v2 = Reschedule(store(), v1, "0 * * * *");
  const Fence fence = MustAcquire();
  ASSERT_THAT(Advance(store(), fence, {{v2.id, 2, At(10)}}), IsOk());
  EXPECT_THAT(Advance(store(), fence, {{v2.id, 1, At(90)}}), IsOk());
  EXPECT_EQ(Stored(store(), v2), WatermarkPair(2, At(10)));
}

TEST_P(StoreConformance, SeveralAdvancesOfOneJobInOneBatchAllApply) {
  const JobRecord v1 = MustPut("a", "*/5 * * * *");
  const JobRecord v2 = Reschedule(store(), v1, "0 * * * *");
  const JobRecord v3 = Reschedule(store(), v2, "30 * * * *");
  const JobRecord other = MustPut("b");
  const Fence fence = MustAcquire();
  ASSERT_THAT(Advance(store(), fence,
                      {{v3.id, 1, At(50)},
                       {v3.id, 2, At(40)},
                       {other.id, 1, At(7)},
                       {v3.id, 2, At(45)},
                       {v3.id, 3, At(10)},
                       {v3.id, 2, At(99)},
                       {v3.id, 3, At(5)},
                       {v3.id, 3, At(12)}}),
              IsOk());
  EXPECT_EQ(Stored(store(), v3), WatermarkPair(3, At(12)));
  EXPECT_EQ(Stored(store(), other), WatermarkPair(1, At(7)));
}

// A generation the job has not reached: a caller's bug, refused before
// anything of the batch is written.
TEST_P(StoreConformance, WatermarkOfAFutureGenerationFailsTheWholeBatch) {
  const JobRecord a = MustPut("a");
  const JobRecord b = MustPut("b");
  const Fence fence = MustAcquire();
  ClaimBatch batch;
  batch.claims = {Claim(a, 5, 1)};
  batch.missed = {
      MissedRecord{a.id, 1, At(0), At(0), 1, false, MissReason::kMisfireSkip}};
  batch.watermarks = {{a.id, 1, At(5)}, {b.id, 2, At(5)}};
  batch.at = At(5);
  EXPECT_THAT(store().ClaimFires(fence, batch, kForever),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("watermarks[1]"),
                             HasSubstr(absl::StrCat("job id ", b.id)),
                             HasSubstr("generation 2"),
                             HasSubstr("current generation 1"))));
  absl::StatusOr<std::vector<ClaimInfo>> claims =
      store().LookupClaims({Claim(a, 5, 1).fire}, kForever);
  ASSERT_THAT(claims, IsOk());
  EXPECT_EQ((*claims)[0].run, 0u);
  EXPECT_THAT(store().GetRun(1, kForever),
              StatusIs(absl::StatusCode::kNotFound));
  absl::StatusOr<MissedPage> missed =
      store().ListMissed(a.id, std::nullopt, 10, kForever);
  ASSERT_THAT(missed, IsOk());
  EXPECT_TRUE(missed->records.empty());
  EXPECT_EQ(Stored(store(), a), WatermarkPair(0, absl::InfinitePast()));
  EXPECT_EQ(Stored(store(), b), WatermarkPair(0, absl::InfinitePast()));
  // Generation 0 is no generation: a caller that forgot to say which.
  EXPECT_THAT(Advance(store(), fence, {{a.id, 0, At(5)}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("watermarks[0].generation")));
  EXPECT_EQ(Stored(store(), a), WatermarkPair(0, absl::InfinitePast()));
}

// The stored pair is the scheduler's to move: a put that bumps the generation
// and a delete keep it, and every read returns it, so that a scheduler sees
// watermark_generation < generation and starts the new generation afresh.
TEST_P(StoreConformance, WatermarkPairSurvivesAGenerationBumpAndADelete) {
  const JobRecord v1 = MustPut("a", "*/5 * * * *");
  const Fence fence = MustAcquire();
  ASSERT_THAT(Advance(store(), fence, {{v1.id, 1, At(60)}}), IsOk());
  const WatermarkPair old_pair(1, At(60));

  const JobRecord v2 = Reschedule(store(), v1, "0 * * * *");
  EXPECT_EQ(PairOf(v2), old_pair);  // as PutJobs returns it
  EXPECT_EQ(Stored(store(), v2), old_pair);
  absl::StatusOr<JobPage> page = store().LoadJobs(0, 10, kForever);
  ASSERT_THAT(page, IsOk());
  ASSERT_THAT(page->jobs, SizeIs(1));
  EXPECT_EQ(page->jobs[0].generation, 2);
  EXPECT_EQ(PairOf(page->jobs[0]), old_pair);
  absl::StatusOr<JobChanges> changes =
      store().JobChangesSince(v1.revision, 10, kForever);
  ASSERT_THAT(changes, IsOk());
  ASSERT_THAT(changes->changes, SizeIs(1));
  EXPECT_EQ(PairOf(changes->changes[0]), old_pair);

  ASSERT_THAT(store().DeleteJob(v2.spec.key, v2.revision, kForever), IsOk());
  changes = store().JobChangesSince(v2.revision, 10, kForever);
  ASSERT_THAT(changes, IsOk());
  ASSERT_THAT(changes->changes, SizeIs(1));
  EXPECT_TRUE(changes->changes[0].deleted);
  EXPECT_EQ(PairOf(changes->changes[0]), old_pair);

  // Put again after the delete: generation 3, still generation 1's pair,
  // until the scheduler advances generation 3's.
  absl::StatusOr<JobRecord> v3 = store().PutJob(v2.spec, kNoRevision, kForever);
  ASSERT_THAT(v3, IsOk());
  EXPECT_EQ(v3->generation, 3);
  EXPECT_EQ(PairOf(*v3), old_pair);
  ASSERT_THAT(Advance(store(), fence, {{v3->id, 3, At(10)}}), IsOk());
  EXPECT_EQ(Stored(store(), *v3), WatermarkPair(3, At(10)));
}

// A write that gives a watermark starts the job's there when it creates the
// job, puts a deleted one back or bumps its generation -- in the same
// transaction -- and leaves a scheduler's watermark alone otherwise.
TEST_P(StoreConformance, AWriteWithAWatermarkStartsANewGenerationThere) {
  const auto put = [&](JobSpec spec, absl::Time watermark) {
    JobWrite write{std::move(spec), kAnyRevision, watermark};
    absl::StatusOr<std::vector<JobRecord>> out =
        store().PutJobs({&write, 1}, kForever);
    EXPECT_THAT(out, IsOk());
    return out.ok() ? out->front() : JobRecord{};
  };
  JobSpec spec = MustPut("other", "* * * * *").spec;
  spec.key.id = "a";
  const JobRecord created = put(spec, At(7));
  EXPECT_EQ(created.generation, 1);
  EXPECT_EQ(PairOf(created), WatermarkPair(1, At(7)));
  EXPECT_EQ(Stored(store(), created), WatermarkPair(1, At(7)));

  // The same generation: the scheduler's advance stays.
  const Fence fence = MustAcquire();
  ASSERT_THAT(Advance(store(), fence, {{created.id, 1, At(60)}}), IsOk());
  JobSpec labelled = spec;
  labelled.labels = {{"team", "ops"}};
  const JobRecord relabelled = put(labelled, At(8));
  EXPECT_EQ(relabelled.generation, 1);
  EXPECT_EQ(Stored(store(), relabelled), WatermarkPair(1, At(60)));

  // A new schedule: generation 2 starts at the write's watermark.
  labelled.trigger.expression = "0 * * * *";
  const JobRecord rescheduled = put(labelled, At(90));
  EXPECT_EQ(rescheduled.generation, 2);
  EXPECT_EQ(Stored(store(), rescheduled), WatermarkPair(2, At(90)));
  // An older generation's advance, late, does not move it.
  ASSERT_THAT(Advance(store(), fence, {{created.id, 1, At(120)}}), IsOk());
  EXPECT_EQ(Stored(store(), rescheduled), WatermarkPair(2, At(90)));

  // Deleted and put back: generation 3, from its write.
  ASSERT_THAT(store().DeleteJob(spec.key, kAnyRevision, kForever), IsOk());
  const JobRecord again = put(labelled, At(200));
  EXPECT_EQ(again.generation, 3);
  EXPECT_EQ(Stored(store(), again), WatermarkPair(3, At(200)));
}

}  // namespace
}  // namespace chime::conformance
