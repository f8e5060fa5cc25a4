// Conformance: jobs -- compare-and-set, generations, tombstones, loading with a
// cursor and the change feed.
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

std::vector<std::string> Ids(const std::vector<JobRecord>& jobs) {
  std::vector<std::string> out;
  for (const JobRecord& j : jobs) out.push_back(j.spec.key.id);
  return out;
}

TEST_P(StoreConformance, NewJobGetsAnIdGenerationOneAndARevision) {
  const JobRecord a = MustPut("a");
  const JobRecord b = MustPut("b");
  EXPECT_GT(a.id, 0);
  EXPECT_NE(a.id, b.id);
  EXPECT_EQ(a.generation, 1);
  EXPECT_GT(b.revision, a.revision);
  EXPECT_EQ(a.watermark, absl::InfinitePast());
  EXPECT_EQ(a.watermark_generation, 0);
  absl::StatusOr<JobRecord> got = store().GetJob(a.spec.key, kForever);
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->id, a.id);
  EXPECT_EQ(got->spec, Spec("a"));
  EXPECT_EQ(got->revision, a.revision);
}

TEST_P(StoreConformance, EveryFieldOfASpecSurvives) {
  JobSpec spec = Spec("full", "0 9 * * MON-FRI");
  spec.key.name_space = "batch";
  spec.trigger.zone = "Europe/Berlin";
  spec.end = At(600);
  spec.jitter = absl::Seconds(3);
  spec.misfire.action = MisfireAction::kRunAll;
  spec.overlap.action = OverlapAction::kBufferAll;
  spec.retry.max_attempts = 3;
  spec.retry.multiplier = 1.5;
  spec.delivery = Delivery::kAtLeastOnce;
  spec.priority = 5;
  spec.labels = {{"team", "data"}};
  spec.paused = true;
  ASSERT_THAT(store().PutJob(spec, kNoRevision, kForever), IsOk());
  absl::StatusOr<JobRecord> got = store().GetJob(spec.key, kForever);
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->spec, spec);
}

TEST_P(StoreConformance, PutWithStaleRevisionIsAbortedAndChangesNothing) {
  const JobRecord a = MustPut("a");
  JobSpec changed = Spec("a");
  changed.priority = 1;
  absl::StatusOr<JobRecord> v2 = store().PutJob(changed, a.revision, kForever);
  ASSERT_THAT(v2, IsOk());
  JobSpec other = Spec("a");
  other.priority = 2;
  EXPECT_THAT(store().PutJob(other, a.revision, kForever),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("revision")));
  EXPECT_THAT(store().PutJob(other, kNoRevision, kForever),
              StatusIs(absl::StatusCode::kAborted));
  absl::StatusOr<JobRecord> got = store().GetJob(a.spec.key, kForever);
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->spec.priority, 1);
  EXPECT_EQ(got->revision, v2->revision);
}

TEST_P(StoreConformance, OnlyAScheduleChangeBumpsTheGeneration) {
  const JobRecord a = MustPut("a", "*/5 * * * *");
  JobSpec spec = a.spec;
  spec.priority = 9;  // not the schedule
  absl::StatusOr<JobRecord> v2 = store().PutJob(spec, a.revision, kForever);
  ASSERT_THAT(v2, IsOk());
  EXPECT_EQ(v2->generation, 1);
  EXPECT_GT(v2->revision, a.revision);
  spec.trigger.expression = "*/10 * * * *";
  absl::StatusOr<JobRecord> v3 = store().PutJob(spec, v2->revision, kForever);
  ASSERT_THAT(v3, IsOk());
  EXPECT_EQ(v3->generation, 2);
  EXPECT_EQ(v3->id, a.id);
  spec.end = At(1000);
  absl::StatusOr<JobRecord> v4 = store().PutJob(spec, v3->revision, kForever);
  ASSERT_THAT(v4, IsOk());
  EXPECT_EQ(v4->generation, 3);
}

TEST_P(StoreConformance, PuttingTheStoredSpecAgainChangesNothing) {
  const JobRecord a = MustPut("a");
  // A re-sent put: its expected revision is stale, and it still succeeds.
  absl::StatusOr<JobRecord> again =
      store().PutJob(Spec("a"), a.revision - 1, kForever);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->revision, a.revision);
  EXPECT_EQ(again->generation, 1);
}

TEST_P(StoreConformance, ACreateOnlyPutOfAnExistingJobIsAbortedEvenIfEqual) {
  const JobRecord a = MustPut("a");
  JobWrite again{Spec("a"), kNoRevision};
  again.create_only = true;
  // Equal to the stored spec: a plain put would accept it as a re-send.
  EXPECT_THAT(
      store().PutJobs({&again, 1}, kForever),
      StatusIs(absl::StatusCode::kAborted, HasSubstr("already exists")));
  // With another new job in the batch: nothing of it is written.
  JobWrite fresh{Spec("fresh"), kNoRevision};
  fresh.create_only = true;
  std::vector<JobWrite> both = {fresh, again};
  EXPECT_THAT(store().PutJobs(both, kForever),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(store().GetJob(Spec("fresh").key, kForever),
              StatusIs(absl::StatusCode::kNotFound));
  // A new job, and a deleted one put back, are created.
  ASSERT_THAT(store().DeleteJob(a.spec.key, a.revision, kForever), IsOk());
  both[1].expected_revision = kAnyRevision;  // not looked at
  absl::StatusOr<std::vector<JobRecord>> done = store().PutJobs(both, kForever);
  ASSERT_THAT(done, IsOk());
  EXPECT_THAT(Ids(*done), ElementsAre("fresh", "a"));
  EXPECT_EQ((*done)[1].id, a.id);
  EXPECT_EQ((*done)[1].generation, 2);
}

// A batch's writes each take a revision of their own, in batch order (a
// creation over a deleted job's row too), and the store's counter moves past
// them: the change feed lists them in order, and a later write is newer.
TEST_P(StoreConformance, EachWriteOfABatchTakesTheNextRevision) {
  const JobRecord gone = MustPut("gone");
  ASSERT_THAT(store().DeleteJob(gone.spec.key, gone.revision, kForever),
              IsOk());
  const JobRecord b = MustPut("b");
  MustPut("c");
  absl::StatusOr<JobPage> before = store().LoadJobs(0, 10, kForever);
  ASSERT_THAT(before, IsOk());
  JobSpec b2 = Spec("b");
  b2.priority = 3;
  JobSpec c2 = Spec("c");
  c2.priority = 4;
  std::vector<JobWrite> batch = {{Spec("new"), kNoRevision},
                                 {b2, b.revision},
                                 {Spec("gone"), kNoRevision},
                                 {c2, kAnyRevision}};
  batch[0].create_only = true;
  batch[2].create_only = true;
  absl::StatusOr<std::vector<JobRecord>> done =
      store().PutJobs(batch, kForever);
  ASSERT_THAT(done, IsOk());
  ASSERT_EQ(done->size(), 4u);
  EXPECT_GT((*done)[0].revision, before->revision);
  EXPECT_GT((*done)[1].revision, (*done)[0].revision);
  EXPECT_GT((*done)[2].revision, (*done)[1].revision);
  EXPECT_GT((*done)[3].revision, (*done)[2].revision);
  EXPECT_EQ((*done)[2].id, gone.id);  // the deleted job's row, taken over
  EXPECT_EQ((*done)[2].generation, 2);
  absl::StatusOr<JobChanges> changes =
      store().JobChangesSince(before->revision, 10, kForever);
  ASSERT_THAT(changes, IsOk());
  EXPECT_THAT(Ids(changes->changes), ElementsAre("new", "b", "gone", "c"));
  EXPECT_EQ(changes->revision, (*done)[3].revision);
  const JobRecord later = MustPut("later");
  EXPECT_GT(later.revision, (*done)[3].revision);
}

TEST_P(StoreConformance, PutJobsIsAllOrNothing) {
  const JobRecord a = MustPut("a");
  JobSpec a2 = Spec("a");
  a2.priority = 3;
  std::vector<JobWrite> writes = {{Spec("new"), kNoRevision},
                                  {a2, a.revision + 100}};
  EXPECT_THAT(store().PutJobs(writes, kForever),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(store().GetJob(Spec("new").key, kForever),
              StatusIs(absl::StatusCode::kNotFound));
  writes[1].expected_revision = a.revision;
  absl::StatusOr<std::vector<JobRecord>> done =
      store().PutJobs(writes, kForever);
  ASSERT_THAT(done, IsOk());
  EXPECT_THAT(Ids(*done), ElementsAre("new", "a"));
  EXPECT_EQ((*done)[1].spec.priority, 3);
  // The same key twice in one batch is a malformed request.
  std::vector<JobWrite> twice = {{Spec("x"), kAnyRevision},
                                 {Spec("x"), kAnyRevision}};
  EXPECT_THAT(store().PutJobs(twice, kForever),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(StoreConformance, DeleteLeavesATombstoneThatARecreatedJobContinues) {
  const JobRecord a = MustPut("a");
  ASSERT_THAT(store().DeleteJob(a.spec.key, a.revision, kForever), IsOk());
  EXPECT_THAT(store().DeleteJob(a.spec.key, a.revision, kForever),
              IsOk());  // already deleted: a re-send
  EXPECT_THAT(store().GetJob(a.spec.key, kForever),
              StatusIs(absl::StatusCode::kNotFound));
  absl::StatusOr<JobRecord> again =
      store().PutJob(Spec("a"), kNoRevision, kForever);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->id, a.id);
  EXPECT_EQ(again->generation, 2);  // its fires never reuse the old FireKeys
}

TEST_P(StoreConformance, DeleteChecksExistenceAndRevision) {
  EXPECT_THAT(store().DeleteJob(Spec("ghost").key, kAnyRevision, kForever),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("ghost")));
  const JobRecord a = MustPut("a");
  EXPECT_THAT(store().DeleteJob(a.spec.key, a.revision + 1, kForever),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(store().GetJob(a.spec.key, kForever), IsOk());
}

TEST_P(StoreConformance, LoadJobsPagesThroughLiveJobsByCursor) {
  std::vector<JobRecord> jobs;
  for (int i = 0; i < 7; ++i)
    jobs.push_back(MustPut("job" + std::to_string(i)));
  ASSERT_THAT(store().DeleteJob(jobs[2].spec.key, kAnyRevision, kForever),
              IsOk());
  std::vector<std::string> seen;
  JobId after = 0;
  int pages = 0;
  for (bool done = false; !done && pages < 10; ++pages) {
    absl::StatusOr<JobPage> page = store().LoadJobs(after, 3, kForever);
    ASSERT_THAT(page, IsOk());
    EXPECT_LE(page->jobs.size(), 3u);
    for (const JobRecord& j : page->jobs) {
      EXPECT_GT(j.id, after);
      seen.push_back(j.spec.key.id);
    }
    after = page->next_after;
    done = page->done;
  }
  EXPECT_EQ(pages, 2);
  EXPECT_THAT(seen,
              ElementsAre("job0", "job1", "job3", "job4", "job5", "job6"));
  EXPECT_THAT(store().LoadJobs(0, 0, kForever),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(StoreConformance, ChangeFeedGivesEachChangedJobOnceInItsLatestState) {
  absl::StatusOr<JobPage> start = store().LoadJobs(0, 10, kForever);
  ASSERT_THAT(start, IsOk());
  const JobRecord a = MustPut("a");
  MustPut("b");
  JobSpec a2 = Spec("a");
  a2.priority = 7;
  ASSERT_THAT(store().PutJob(a2, a.revision, kForever), IsOk());
  MustPut("c");
  ASSERT_THAT(store().DeleteJob(Spec("c").key, kAnyRevision, kForever), IsOk());

  absl::StatusOr<JobChanges> all =
      store().JobChangesSince(start->revision, 100, kForever);
  ASSERT_THAT(all, IsOk());
  EXPECT_THAT(Ids(all->changes), ElementsAre("b", "a", "c"));
  EXPECT_EQ(all->changes[1].spec.priority, 7);
  EXPECT_TRUE(all->changes[2].deleted);
  // Paged: the revision returned continues where the page stopped.
  absl::StatusOr<JobChanges> first =
      store().JobChangesSince(start->revision, 2, kForever);
  ASSERT_THAT(first, IsOk());
  EXPECT_THAT(Ids(first->changes), ElementsAre("b", "a"));
  absl::StatusOr<JobChanges> rest =
      store().JobChangesSince(first->revision, 2, kForever);
  ASSERT_THAT(rest, IsOk());
  EXPECT_THAT(Ids(rest->changes), ElementsAre("c"));
  absl::StatusOr<JobChanges> none =
      store().JobChangesSince(rest->revision, 2, kForever);
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE(none->changes.empty());
  EXPECT_EQ(none->revision, rest->revision);
}

}  // namespace
}  // namespace chime::conformance
