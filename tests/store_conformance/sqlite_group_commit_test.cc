// SqliteStore's group commit: writers queued together share one transaction,
// each in its own savepoint, and see each other's effects in queue order.
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/store/sqlite_store.h"
#include "testing/status_matchers.h"
#include "tests/store_conformance/sqlite_store_fixture.h"

namespace chime::store {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;

// Writers queued while the store thread is held go into one transaction.
TEST_F(SqliteStoreTest, GroupCommitPutsConcurrentWritersInOneTransaction) {
  std::unique_ptr<SqliteStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  constexpr int kWriters = 16;
  const int64_t before = store->CommittedTransactions();
  store->PauseWritesForTest();
  std::vector<std::thread> writers;
  std::vector<absl::Status> results(kWriters);
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&, i] {
      JobSpec spec;
      spec.key.id = "job" + std::to_string(i);
      spec.trigger.expression = "* * * * *";
      results[i] = store->PutJob(spec, kNoRevision, kForever).status();
    });
  }
  ASSERT_TRUE(store->AwaitQueuedWritesForTest(kWriters, absl::Seconds(30)));
  store->ResumeWritesForTest();
  for (std::thread& t : writers) t.join();
  for (const absl::Status& s : results) EXPECT_THAT(s, IsOk());
  EXPECT_EQ(store->CommittedTransactions() - before, 1);
  absl::StatusOr<StoreInfo> info = store->GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->jobs, kWriters);
}

// A refused write in a group is rolled back alone; its neighbours commit.
TEST_F(SqliteStoreTest, GroupCommitRollsBackARefusedWriteAlone) {
  std::unique_ptr<SqliteStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  const JobRecord job = MustPut(*store, "a");
  const Fence fence = MustAcquire(*store);
  const int64_t before = store->CommittedTransactions();
  store->PauseWritesForTest();
  // Claims 1 and 2 of one fire; claim 3 of another. Whichever of 1 and 2 the
  // store takes first wins; the other is refused and writes nothing.
  std::vector<std::thread> writers;
  std::vector<absl::Status> results(3);
  const int minutes[] = {5, 5, 10};
  for (int i = 0; i < 3; ++i) {
    writers.emplace_back([&, i] {
      ClaimBatch batch;
      batch.claims = {FireClaim{FireRef{job.id, 1, At(minutes[i])},
                                static_cast<RunId>(i + 1)}};
      results[i] = store->ClaimFires(fence, batch, kForever);
    });
  }
  ASSERT_TRUE(store->AwaitQueuedWritesForTest(3, absl::Seconds(30)));
  store->ResumeWritesForTest();
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(store->CommittedTransactions() - before, 1);
  EXPECT_EQ(results[0].ok() + results[1].ok(), 1);
  EXPECT_THAT(results[0].ok() ? results[1] : results[0],
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(results[2], IsOk());
  absl::StatusOr<StoreInfo> info = store->GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->runs, 2);
}

// The fence is read once per group, yet a write queued after a lease change in
// the same group sees the change: the old token is fenced, the new one holds.
TEST_F(SqliteStoreTest, GroupCommitSeesALeaseChangedEarlierInTheGroup) {
  std::unique_ptr<SqliteStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  const JobRecord job = MustPut(*store, "a");
  const Fence old_fence = MustAcquire(*store);
  // Tokens of one open are granted one after another.
  const Fence new_fence{"scheduler", old_fence.token + 1};
  auto claim = [&](const Fence& fence, int minute, RunId run) {
    ClaimBatch batch;
    batch.claims = {FireClaim{FireRef{job.id, 1, At(minute)}, run}};
    return store->ClaimFires(fence, batch, kForever);
  };
  const int64_t before = store->CommittedTransactions();
  store->PauseWritesForTest();
  // Queued in this order, one at a time.
  std::vector<std::function<absl::Status()>> writes = {
      [&] { return claim(old_fence, 1, 1); },
      [&] { return store->ReleaseLease(old_fence, kForever); },
      [&] { return claim(old_fence, 2, 2); },
      [&] {
        return store
            ->AcquireLease("scheduler", "node-b", absl::Hours(1), kForever)
            .status();
      },
      [&] { return claim(new_fence, 3, 3); },
      [&] { return claim(old_fence, 4, 4); },
  };
  std::vector<absl::Status> results(writes.size());
  std::vector<std::thread> writers;
  for (size_t i = 0; i < writes.size(); ++i) {
    writers.emplace_back([&, i] { results[i] = writes[i](); });
    ASSERT_TRUE(store->AwaitQueuedWritesForTest(i + 1, absl::Seconds(30)));
  }
  store->ResumeWritesForTest();
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(store->CommittedTransactions() - before, 1);
  EXPECT_THAT(results[0], IsOk());
  EXPECT_THAT(results[1], IsOk());
  EXPECT_THAT(results[2], StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(results[3], IsOk());
  EXPECT_THAT(results[4], IsOk());
  EXPECT_THAT(results[5], StatusIs(absl::StatusCode::kFailedPrecondition));
  absl::StatusOr<std::vector<ClaimInfo>> claims = store->LookupClaims(
      {FireRef{job.id, 1, At(1)}, FireRef{job.id, 1, At(2)},
       FireRef{job.id, 1, At(3)}, FireRef{job.id, 1, At(4)}},
      kForever);
  ASSERT_THAT(claims, IsOk());
  EXPECT_EQ((*claims)[0].run, 1u);
  EXPECT_EQ((*claims)[1].run, 0u);
  EXPECT_EQ((*claims)[2].run, 3u);
  EXPECT_EQ((*claims)[2].token, new_fence.token);
  EXPECT_EQ((*claims)[3].run, 0u);
}

}  // namespace
}  // namespace chime::store
