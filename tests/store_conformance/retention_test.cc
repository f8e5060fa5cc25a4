// Conformance: retention of run history, RunIds, and idempotency keys.
#include <set>
#include <thread>
#include <vector>

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

std::vector<RunId> AllRunIds(Store& store) {
  RunQuery query;
  query.limit = 1000;
  absl::StatusOr<RunPage> page = store.ListRuns(query, MonoTime::Infinite());
  EXPECT_THAT(page, IsOk());
  std::vector<RunId> ids;
  if (page.ok()) {
    for (const RunRecord& r : page->runs) ids.push_back(r.id);
  }
  return ids;
}

TEST_P(StoreConformance, RetentionKeepsTheNewestRunsPerJobAndNeverUnfinished) {
  const JobRecord a = MustPut("a");
  const JobRecord b = MustPut("b");
  const Fence fence = MustAcquire();
  // Job a: runs 1-4 finished at 0, 5, 10, 15 and run 5 still pending at 20.
  for (RunId run = 1; run <= 5; ++run) {
    MustClaim(fence, a, static_cast<int>(run - 1) * 5, run);
    if (run <= 4) MustFinish(fence, run, static_cast<int>(run - 1) * 5 + 1);
  }
  MustClaim(fence, b, 0, 6);
  MustFinish(fence, 6, 1);
  RetentionPolicy policy;
  policy.keep_per_job = 2;
  absl::StatusOr<RetentionResult> result =
      store().ApplyRetention(policy, At(100), kForever);
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->runs_deleted, 2);
  EXPECT_THAT(AllRunIds(store()), ElementsAre(5, 4, 3, 6));
  // A deleted run's claim is forgotten with it.
  absl::StatusOr<std::vector<ClaimInfo>> claims =
      store().LookupClaims({FireRef{a.id, 1, At(0)}}, kForever);
  ASSERT_THAT(claims, IsOk());
  EXPECT_EQ((*claims)[0].run, 0u);
  EXPECT_THAT(store().GetRun(1, kForever),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(StoreConformance, RetentionDeletesRunsAndMissedRecordsOlderThanMaxAge) {
  const JobRecord a = MustPut("a");
  const Fence fence = MustAcquire();
  MustClaim(fence, a, 0, 1);
  MustFinish(fence, 1, 1);
  MustClaim(fence, a, 50, 2);
  MustFinish(fence, 2, 51);
  MustClaim(fence, a, 55, 3);  // pending, and old enough: kept
  ASSERT_THAT(
      store().RecordMissed(fence,
                           {MissedRecord{a.id, 1, At(10), At(20), 3, false,
                                         MissReason::kMisfireSkip},
                            MissedRecord{a.id, 1, At(60), At(70), 3, false,
                                         MissReason::kMisfireSkip}},
                           kForever),
      IsOk());
  RetentionPolicy policy;
  policy.max_age = absl::Minutes(40);  // at 90: older than 50 goes
  absl::StatusOr<RetentionResult> result =
      store().ApplyRetention(policy, At(90), kForever);
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->runs_deleted, 1);
  EXPECT_EQ(result->missed_deleted, 1);
  EXPECT_THAT(AllRunIds(store()), ElementsAre(3, 2));
  absl::StatusOr<MissedPage> missed =
      store().ListMissed(a.id, std::nullopt, 10, kForever);
  ASSERT_THAT(missed, IsOk());
  ASSERT_EQ(missed->records.size(), 1u);
  EXPECT_EQ(missed->records[0].first, At(60));
}

TEST_P(StoreConformance, RetentionCapsTotalBytesDeletingTheOldestFirst) {
  const JobRecord a = MustPut("a");
  const Fence fence = MustAcquire();
  for (RunId run = 1; run <= 4; ++run) {
    MustClaim(fence, a, static_cast<int>(run) * 5, run);
    MustFinish(fence, run, static_cast<int>(run) * 5);
  }
  absl::StatusOr<StoreInfo> before = store().GetInfo(kForever);
  ASSERT_THAT(before, IsOk());
  ASSERT_GT(before->run_bytes, 0);
  const int64_t per_run = before->run_bytes / 4;  // identical runs
  RetentionPolicy policy;
  policy.max_total_bytes = per_run * 2 + per_run / 2;  // room for two
  absl::StatusOr<RetentionResult> result =
      store().ApplyRetention(policy, At(100), kForever);
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->runs_deleted, 2);
  EXPECT_THAT(AllRunIds(store()), ElementsAre(4, 3));
  absl::StatusOr<StoreInfo> after = store().GetInfo(kForever);
  ASSERT_THAT(after, IsOk());
  EXPECT_EQ(after->run_bytes, per_run * 2);
  EXPECT_LE(after->run_bytes, policy.max_total_bytes);
}

// A restarted scheduler continues its RunIds after GetInfo().max_run_id: a
// RunId stays counted after retention deleted its run.
TEST_P(StoreConformance, RetentionKeepsTheHighestRunIdCounted) {
  const JobRecord a = MustPut("a");
  const Fence fence = MustAcquire();
  MustClaim(fence, a, 0, 9);
  MustFinish(fence, 9, 1);
  MustClaim(fence, a, 50, 4);  // pending: kept
  RetentionPolicy policy;
  policy.max_age = absl::Minutes(40);
  absl::StatusOr<RetentionResult> result =
      store().ApplyRetention(policy, At(90), kForever);
  ASSERT_THAT(result, IsOk());
  ASSERT_EQ(result->runs_deleted, 1);
  EXPECT_THAT(AllRunIds(store()), ElementsAre(4));
  absl::StatusOr<StoreInfo> info = store().GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->max_run_id, 9u);
}

// Schedulers sharing a store claim under RunIds they reserved: reservations
// never overlap each other or a claimed RunId, and a scheduler starting
// later continues after them.
TEST_P(StoreConformance, ReservedRunIdsAreDisjointAndCounted) {
  const JobRecord a = MustPut("a");
  const Fence fence = MustAcquire();
  MustClaim(fence, a, 0, 7);
  absl::StatusOr<RunId> first = store().ReserveRunIds(100, kForever);
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(*first, 8u);
  absl::StatusOr<RunId> second = store().ReserveRunIds(1, kForever);
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(*second, 108u);
  absl::StatusOr<StoreInfo> info = store().GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->max_run_id, 108u);
  // A claim under a reserved RunId does not move the next reservation back.
  MustClaim(fence, a, 10, 50);
  absl::StatusOr<RunId> third = store().ReserveRunIds(5, kForever);
  ASSERT_THAT(third, IsOk());
  EXPECT_EQ(*third, 109u);
  EXPECT_THAT(store().ReserveRunIds(0, kForever),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("count")));
}

// Concurrent reservations (several schedulers starting at once) get
// disjoint ranges.
TEST_P(StoreConformance, ConcurrentReservationsAreDisjoint) {
  constexpr int kThreads = 4;
  constexpr int kEach = 20;
  std::vector<std::vector<RunId>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        absl::StatusOr<RunId> first = store().ReserveRunIds(10, kForever);
        if (first.ok()) got[t].push_back(*first);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<RunId> firsts;
  for (const std::vector<RunId>& g : got) {
    EXPECT_EQ(g.size(), static_cast<size_t>(kEach));
    firsts.insert(g.begin(), g.end());
  }
  ASSERT_EQ(firsts.size(), static_cast<size_t>(kThreads * kEach));
  RunId expected = *firsts.begin();
  for (RunId first : firsts) {
    EXPECT_EQ(first, expected);  // ranges of 10, back to back
    expected = first + 10;
  }
}

IdempotencyRecord Key(const std::string& key, const std::string& response,
                      absl::Time at) {
  return IdempotencyRecord{key, "sha256:abc", response, at,
                           at + absl::Hours(24)};
}

TEST_P(StoreConformance, IdempotencyKeyDedupesWithinItsWindow) {
  absl::StatusOr<IdempotencyOutcome> first =
      store().CheckIdempotencyKey(Key("req-1", "201 run 7", At(0)), kForever);
  ASSERT_THAT(first, IsOk());
  EXPECT_TRUE(first->created);
  absl::StatusOr<IdempotencyOutcome> repeat =
      store().CheckIdempotencyKey(Key("req-1", "201 run 8", At(60)), kForever);
  ASSERT_THAT(repeat, IsOk());
  EXPECT_FALSE(repeat->created);
  EXPECT_EQ(repeat->stored.response, "201 run 7");
  EXPECT_EQ(repeat->stored.created_at, At(0));
  EXPECT_EQ(repeat->stored.fingerprint, "sha256:abc");
  // After the window the key is new again.
  absl::StatusOr<IdempotencyOutcome> later = store().CheckIdempotencyKey(
      Key("req-1", "201 run 9", At(24 * 60)), kForever);
  ASSERT_THAT(later, IsOk());
  EXPECT_TRUE(later->created);
  EXPECT_EQ(later->stored.response, "201 run 9");
  EXPECT_THAT(store().CheckIdempotencyKey(
                  IdempotencyRecord{"req-2", "", "", At(0), At(0)}, kForever),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(StoreConformance, RetentionDropsExpiredIdempotencyKeys) {
  ASSERT_THAT(store().CheckIdempotencyKey(Key("old", "x", At(0)), kForever),
              IsOk());
  ASSERT_THAT(store().CheckIdempotencyKey(Key("new", "y", At(600)), kForever),
              IsOk());
  absl::StatusOr<RetentionResult> result =
      store().ApplyRetention(RetentionPolicy{}, At(24 * 60), kForever);
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->idempotency_keys_deleted, 1);
  EXPECT_EQ(result->runs_deleted, 0);
  absl::StatusOr<IdempotencyOutcome> still =
      store().CheckIdempotencyKey(Key("new", "z", At(24 * 60)), kForever);
  ASSERT_THAT(still, IsOk());
  EXPECT_FALSE(still->created);
}

}  // namespace
}  // namespace chime::conformance
