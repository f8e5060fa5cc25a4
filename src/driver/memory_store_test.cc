#include "src/driver/memory_store.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::driver {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using core::PersistAction;
using core::RunState;
using ::testing::HasSubstr;

const absl::Time kNine =
    absl::FromUnixSeconds(1767258000);  // 2026-01-01T09:00:00Z

FireKey Fire(absl::Time t) { return FireKey{JobKey{"default", "a"}, 1, t}; }

PersistAction Batch(int64_t token, std::vector<PersistAction::Claim> claims) {
  PersistAction batch;
  batch.token = token;
  batch.claims = std::move(claims);
  return batch;
}

TEST(MemoryStore, ClaimIsCreateIfAbsentWhoeverAsks) {
  MemoryStore store;
  ASSERT_THAT(store.Persist(Batch(1, {{Fire(kNine), 1}})), IsOk());
  EXPECT_THAT(store.Persist(Batch(1, {{Fire(kNine), 1}})), IsOk())
      << "the same claim again";
  EXPECT_THAT(store.Persist(Batch(2, {{Fire(kNine), 2}})),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       HasSubstr("a:1:2026-01-01T09:00:00Z")));
  ASSERT_TRUE(store.GetClaim(Fire(kNine)).has_value());
  EXPECT_EQ(store.GetClaim(Fire(kNine))->run, 1u);
  EXPECT_EQ(store.HighestToken(), 1)
      << "a refused batch writes nothing, its token included";
}

TEST(MemoryStore, RefusedBatchWritesNothing) {
  MemoryStore store;
  ASSERT_THAT(store.Persist(Batch(1, {{Fire(kNine), 1}})), IsOk());
  PersistAction batch =
      Batch(1, {{Fire(kNine + absl::Minutes(1)), 2}, {Fire(kNine), 3}});
  batch.watermarks.push_back(
      {JobKey{"default", "a"}, 1, kNine + absl::Minutes(1)});
  EXPECT_THAT(store.Persist(batch), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_FALSE(store.GetClaim(Fire(kNine + absl::Minutes(1))).has_value());
  EXPECT_EQ(store.Watermark(JobKey{"default", "a"}), absl::InfinitePast());
}

TEST(MemoryStore, BatchWithAnOlderTokenIsFenced) {
  MemoryStore store;
  ASSERT_THAT(store.Persist(Batch(5, {})), IsOk());
  EXPECT_THAT(
      store.Persist(Batch(4, {{Fire(kNine), 1}})),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("fenced")));
  EXPECT_FALSE(store.GetClaim(Fire(kNine)).has_value());
  EXPECT_THAT(store.Persist(Batch(5, {{Fire(kNine), 1}})), IsOk());
}

TEST(MemoryStore, WatermarksOnlyMoveForwardAndMissedRecordsAreNotDoubled) {
  MemoryStore store;
  const JobKey a{"default", "a"};
  PersistAction batch = Batch(1, {});
  batch.watermarks.push_back({a, 1, kNine});
  batch.missed.push_back(
      {a, 1,
       core::MissedRange{kNine, kNine, 1, false, core::MissReason::kOverlap}});
  ASSERT_THAT(store.Persist(batch), IsOk());
  ASSERT_THAT(store.Persist(batch),
              IsOk());  // sent again after an indeterminate write
  batch.missed.clear();
  batch.watermarks[0].watermark = kNine - absl::Hours(1);
  ASSERT_THAT(store.Persist(batch), IsOk());
  EXPECT_EQ(store.Watermark(a), kNine);
  EXPECT_EQ(store.Missed().size(), 1u);
}

TEST(MemoryStore, ANewGenerationStartsItsOwnWatermark) {
  MemoryStore store;
  const JobKey a{"default", "a"};
  PersistAction batch = Batch(1, {});
  batch.watermarks.push_back({a, 1, kNine});
  ASSERT_THAT(store.Persist(batch), IsOk());
  // The schedule changed: generation 2 begins earlier than generation 1's
  // watermark (a fire decided ahead, a backward clock step).
  batch.watermarks[0] = {a, 2, kNine - absl::Minutes(5)};
  ASSERT_THAT(store.Persist(batch), IsOk());
  EXPECT_EQ(store.Watermark(a), kNine - absl::Minutes(5));
  // A late re-send of generation 1's batch changes nothing.
  batch.watermarks[0] = {a, 1, kNine + absl::Minutes(1)};
  ASSERT_THAT(store.Persist(batch), IsOk());
  EXPECT_EQ(store.Watermark(a), kNine - absl::Minutes(5));
}

core::TransitionAction Transition(core::RunId run, RunState from, RunState to) {
  core::TransitionAction t;
  t.run = run;
  t.fire = Fire(kNine);
  t.from = from;
  t.to = to;
  return t;
}

TEST(MemoryStore, TransitionIsCompareAndSetOnTheRecordedState) {
  MemoryStore store;
  ASSERT_THAT(
      store.RecordTransition(
          Transition(1, RunState::kClaiming, RunState::kPending), kNine),
      IsOk());
  EXPECT_THAT(
      store.RecordTransition(
          Transition(1, RunState::kClaiming, RunState::kPending), kNine),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("recorded state is pending")));
  ASSERT_THAT(store.RecordTransition(
                  Transition(1, RunState::kPending, RunState::kRunning), kNine),
              IsOk());
  EXPECT_EQ(store.History(1).size(), 2u);
}

TEST(MemoryStore, ForgetsTheOldestFinishedRunsBeyondItsBound) {
  MemoryStore store(MemoryStore::Options{.max_finished_runs = 1});
  for (core::RunId run = 1; run <= 2; ++run) {
    const FireKey fire = Fire(kNine + absl::Minutes(run));
    ASSERT_THAT(store.Persist(Batch(1, {{fire, run}})), IsOk());
    ASSERT_THAT(
        store.RecordTransition(
            Transition(run, RunState::kClaiming, RunState::kCancelled), kNine),
        IsOk());
  }
  EXPECT_TRUE(store.History(1).empty());
  EXPECT_FALSE(store.GetClaim(Fire(kNine + absl::Minutes(1))).has_value());
  EXPECT_EQ(store.History(2).size(), 1u);
  EXPECT_TRUE(store.GetClaim(Fire(kNine + absl::Minutes(2))).has_value());
}

}  // namespace
}  // namespace chime::driver
