// StoreWriter: a merged write the store refuses is split, so each persist
// batch gets its own answer and the good ones are written.
#include "src/driver/store_writer.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/memory_store.h"
#include "testing/fault_injection_store.h"
#include "testing/job_specs.h"
#include "testing/simulated_clock.h"
#include "testing/status_matchers.h"

namespace chime::driver {
namespace {

using ::chime::testing::FaultInjectionStore;
using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

constexpr MonoTime kForever = MonoTime::Infinite();

core::PersistAction OneClaim(uint64_t batch, const FireKey& fire, RunId run) {
  core::PersistAction a;
  a.batch = batch;
  a.claims.push_back({fire, run});
  return a;
}

// Puts `spec` into `base` and takes the scheduler's lease there: the job as
// stored, and the fence a writer writes under.
std::pair<JobRecord, Fence> MustPutJobAndLease(store::MemoryStore& base,
                                               const JobSpec& spec) {
  absl::StatusOr<JobRecord> job = base.PutJob(spec, kNoRevision, kForever);
  EXPECT_THAT(job, IsOk());
  absl::StatusOr<LeaseGrant> grant =
      base.AcquireLease("scheduler", "test", absl::Hours(1), kForever);
  EXPECT_THAT(grant, IsOk());
  return {job.ok() ? *job : JobRecord{},
          Fence{"scheduler", grant.ok() ? grant->token : 0}};
}

TEST(StoreWriterTest,
     ARefusedBatchInAMergedClaimIsAnsweredAloneAndTheRestWritten) {
  SimulatedClock clock;
  store::MemoryStore base(store::MemoryStore::Options{&clock});
  FaultInjectionStore store(base);
  const JobSpec spec = ::chime::testing::CronJob("a", "* * * * *");
  const auto [job, fence] = MustPutJobAndLease(base, spec);
  const FireKey taken{spec.key, 1, absl::UnixEpoch() + absl::Minutes(1)};
  const FireKey free{spec.key, 1, absl::UnixEpoch() + absl::Minutes(2)};
  // Another run claimed `taken` already.
  ClaimBatch earlier;
  earlier.claims.push_back(
      {FireRef{job.id, 1, taken.scheduled_time}, RunId{100}});
  ASSERT_THAT(base.ClaimFires(fence, earlier, kForever), IsOk());

  StoreWriter writer(
      store, clock, fence, StoreWriter::Options{}, [] {},
      [](const absl::Status& s) { FAIL() << "fatal: " << s; });
  // Hold the writer in a first write so that both batches queue behind it
  // and are merged into one ClaimFires.
  store.SetDelay(absl::Seconds(1), &clock);
  writer.PutJob(core::PackedSpec::Pack(spec), spec.paused, 1, /*job_slot=*/0);
  ASSERT_TRUE(clock.BlockUntilWaiters(1));
  writer.Persist(OneClaim(1, taken, 1));
  writer.Persist(OneClaim(2, free, 2));
  store.SetDelay(absl::ZeroDuration(), nullptr);
  clock.AdvanceBy(absl::Seconds(1));
  writer.Stop();  // writes what is queued

  std::vector<StoreWriter::Completion> done = writer.TakeCompletions();
  ASSERT_EQ(done.size(), 2u);
  const auto& first = std::get<StoreWriter::Persisted>(done[0]);
  const auto& second = std::get<StoreWriter::Persisted>(done[1]);
  EXPECT_EQ(first.batch.batch, 1u);
  EXPECT_THAT(first.status, StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(second.batch.batch, 2u);
  EXPECT_THAT(second.status, IsOk());
  absl::StatusOr<std::vector<ClaimInfo>> claims =
      base.LookupClaims({FireRef{job.id, 1, taken.scheduled_time},
                         FireRef{job.id, 1, free.scheduled_time}},
                        kForever);
  ASSERT_THAT(claims, IsOk());
  EXPECT_EQ((*claims)[0].run, 100u);  // untouched
  EXPECT_EQ((*claims)[1].run, 2u);    // written despite its neighbour
  // PutJobs, the merged ClaimFires, then one per batch: the two were merged.
  EXPECT_GE(store.counters().writes, 4);
}

// A backlog is written in calls of bounded size: short transactions, so that
// the lease's renewal is not held up behind one huge one.
TEST(StoreWriterTest, ABacklogIsWrittenInCallsOfBoundedSize) {
  SimulatedClock clock;
  store::MemoryStore base(store::MemoryStore::Options{&clock, 100000});
  FaultInjectionStore store(base);
  const JobSpec spec = ::chime::testing::CronJob("a", "* * * * *");
  absl::StatusOr<LeaseGrant> grant =
      base.AcquireLease("scheduler", "test", absl::Hours(1), kForever);
  ASSERT_THAT(grant, IsOk());
  std::vector<size_t> claim_calls;  // items of each claim_fires call
  StoreWriter::Options options;
  options.max_records_per_call = 2000;
  options.on_write = [&](const StoreWrite& w) {
    if (w.op == "claim_fires") claim_calls.push_back(w.items);
  };
  StoreWriter writer(
      store, clock, Fence{"scheduler", grant->token}, options, [] {},
      [](const absl::Status& s) { FAIL() << "fatal: " << s; });
  store.SetDelay(absl::Seconds(1), &clock);
  writer.PutJob(core::PackedSpec::Pack(spec), spec.paused, 1, /*job_slot=*/0);
  ASSERT_TRUE(clock.BlockUntilWaiters(1));
  constexpr int kFires = 5000;
  for (int k = 1; k <= kFires; ++k) {
    writer.Persist(OneClaim(
        k, FireKey{spec.key, 1, absl::UnixEpoch() + absl::Seconds(k)}, k));
  }
  store.SetDelay(absl::ZeroDuration(), nullptr);
  clock.AdvanceBy(absl::Seconds(1));
  writer.Stop();

  size_t total = 0;
  for (size_t items : claim_calls) {
    EXPECT_LE(items, 2000u);
    total += items;
  }
  EXPECT_EQ(total, static_cast<size_t>(kFires));
  EXPECT_GE(claim_calls.size(), 3u);
  EXPECT_EQ(writer.TakeCompletions().size(), static_cast<size_t>(kFires));
  absl::StatusOr<RunDetail> last = base.GetRun(kFires, kForever);
  EXPECT_THAT(last, IsOk());
}

// A node of a sharded cluster writes each job's claims and transitions under
// its shard's lease; a write for a shard it does not hold is refused before
// it reaches the store.
TEST(StoreWriterTest, WritesGoUnderTheLeaseOfTheirJobsShard) {
  SimulatedClock clock;
  store::MemoryStore store(store::MemoryStore::Options{&clock});
  auto fences = Fences::Sharded(4);
  // Three jobs in three different shards.
  std::vector<JobSpec> specs;
  std::vector<uint32_t> shards;
  for (int i = 0; specs.size() < 3 && i < 100; ++i) {
    JobSpec spec =
        ::chime::testing::CronJob(absl::StrCat("job-", i), "* * * * *");
    const uint32_t shard = fences->ShardOf(spec.key);
    if (std::find(shards.begin(), shards.end(), shard) != shards.end())
      continue;
    specs.push_back(spec);
    shards.push_back(shard);
  }
  ASSERT_EQ(specs.size(), 3u);
  std::vector<int64_t> tokens;
  for (int k = 0; k < 2; ++k) {  // the third job's shard is not held
    absl::StatusOr<LeaseGrant> grant = store.AcquireLease(
        absl::StrCat("shard/", shards[k]), "test", absl::Hours(1), kForever);
    ASSERT_THAT(grant, IsOk());
    fences->Hold(shards[k],
                 Fence{absl::StrCat("shard/", shards[k]), grant->token});
    tokens.push_back(grant->token);
  }
  EXPECT_EQ(fences->Held().size(), 2u);
  absl::Status fatal;
  auto writer = std::make_unique<StoreWriter>(
      store, clock, fences, StoreWriter::Options{}, [] {},
      [&](const absl::Status& s) { fatal = s; });
  const absl::Time at = absl::UnixEpoch() + absl::Minutes(1);
  core::PersistAction batch;
  batch.batch = 1;
  for (uint32_t k = 0; k < 3; ++k) {
    writer->PutJob(core::PackedSpec::Pack(specs[k]), false, 1, k);
    if (k < 2) batch.claims.push_back({FireKey{specs[k].key, 1, at}, k + 1, k});
  }
  writer->Persist(batch);
  for (uint32_t k = 0; k < 2; ++k) {
    writer->Transition(
        core::TransitionAction{k + 1, FireKey{specs[k].key, 1, at},
                               RunState::kPending, RunState::kRunning, 1, ""},
        at);
  }
  writer->Stop();  // writes what is queued
  for (uint32_t k = 0; k < 2; ++k) {
    absl::StatusOr<RunDetail> run = store.GetRun(k + 1, kForever);
    ASSERT_THAT(run, IsOk());
    EXPECT_EQ(run->run.token, tokens[k]) << "job " << k;
    EXPECT_EQ(run->run.state, RunState::kRunning);
  }
  EXPECT_THAT(fatal, IsOk());

  // The third job's shard is not held: nothing is written, and the writer
  // answers as it would a fenced write: the claim's batch to the Plan, a
  // transition as fatal.
  writer = std::make_unique<StoreWriter>(
      store, clock, fences, StoreWriter::Options{}, [] {},
      [&](const absl::Status& s) { fatal = s; });
  writer->PutJob(core::PackedSpec::Pack(specs[2]), false, 1, 0);
  core::PersistAction third = OneClaim(2, FireKey{specs[2].key, 1, at}, 3);
  writer->Persist(third);
  writer->Transition(
      core::TransitionAction{3, FireKey{specs[2].key, 1, at},
                             RunState::kPending, RunState::kRunning, 1, ""},
      at);
  writer->Stop();
  std::vector<StoreWriter::Completion> done = writer->TakeCompletions();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_THAT(std::get<StoreWriter::Persisted>(done[0]).status,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(absl::StrCat("shard ", shards[2]))));
  EXPECT_THAT(fatal, StatusIs(absl::StatusCode::kFailedPrecondition,
                              HasSubstr(absl::StrCat("shard ", shards[2]))));
  EXPECT_THAT(store.GetRun(3, kForever), StatusIs(absl::StatusCode::kNotFound));
}

// The id of a job the caller stored is a note that wakes nobody: the writer
// takes it with the next write, in order (a claim of the job names it), or
// when asked whether it is idle -- so a scheduler shutting down waits for it.
TEST(StoreWriterTest, AStoredJobsIdIsTakenWithTheNextWriteOrWhenIdleIsAsked) {
  SimulatedClock clock;
  store::MemoryStore base(store::MemoryStore::Options{&clock});
  FaultInjectionStore store(base);
  const JobSpec spec = ::chime::testing::CronJob("a", "* * * * *");
  const auto [job, fence] = MustPutJobAndLease(base, spec);
  std::atomic<int> wakes{0};
  StoreWriter writer(
      store, clock, fence, StoreWriter::Options{}, [&] { ++wakes; },
      [](const absl::Status& s) { FAIL() << "fatal: " << s; });

  writer.PutJob(core::PackedSpec::Pack(spec), false, job.generation,
                /*job_slot=*/3, job.id);
  // Not woken: the writer would have taken the note and told the scheduler.
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(wakes.load(), 0);
  // Asking wakes the writer for the note; it is idle once it has taken it,
  // and tells the scheduler so. The note wrote nothing.
  EXPECT_FALSE(writer.Idle());
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (!writer.Idle() && absl::Now() < give_up)
    absl::SleepFor(absl::Milliseconds(1));
  EXPECT_TRUE(writer.Idle());
  EXPECT_GE(wakes.load(), 1);
  EXPECT_EQ(store.counters().writes, 0);

  // A second note, then a claim of job slot 3: the claim is written for the
  // stored job.
  writer.PutJob(core::PackedSpec::Pack(spec), false, job.generation,
                /*job_slot=*/3, job.id);
  const FireKey fire{spec.key, job.generation,
                     absl::UnixEpoch() + absl::Minutes(1)};
  core::PersistAction claim = OneClaim(1, fire, 7);
  claim.claims[0].job_slot = 3;
  writer.Persist(claim);
  writer.Stop();
  std::vector<StoreWriter::Completion> done = writer.TakeCompletions();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_THAT(std::get<StoreWriter::Persisted>(done[0]).status, IsOk());
  absl::StatusOr<std::vector<ClaimInfo>> claims = base.LookupClaims(
      {FireRef{job.id, job.generation, fire.scheduled_time}}, kForever);
  ASSERT_THAT(claims, IsOk());
  ASSERT_EQ(claims->size(), 1u);
  EXPECT_EQ((*claims)[0].run, 7u);
}

}  // namespace
}  // namespace chime::driver
