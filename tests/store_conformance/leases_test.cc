// Conformance: leases and their fencing tokens.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"
#include "tests/store_conformance/store_conformance.h"

namespace chime::conformance {
namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::HasSubstr;

TEST_P(StoreConformance, EveryGrantGetsAStrictlyHigherToken) {
  const Fence a = MustAcquire("scheduler", "node-a");
  ASSERT_THAT(store().ReleaseLease(a, kForever), IsOk());
  const Fence b = MustAcquire("scheduler", "node-b");
  const Fence c = MustAcquire("shard-7", "node-a");
  EXPECT_GT(a.token, 0);
  EXPECT_GT(b.token, a.token);
  EXPECT_GT(c.token, b.token);
}

TEST_P(StoreConformance, HeldLeaseIsRefusedToOthersUntilItExpires) {
  const Fence a = MustAcquire("scheduler", "node-a");
  EXPECT_THAT(
      store().AcquireLease("scheduler", "node-b", absl::Minutes(1), kForever),
      StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("node-a")));
  clock_.AdvanceBy(absl::Minutes(1) + absl::Seconds(1));
  absl::StatusOr<LeaseGrant> b =
      store().AcquireLease("scheduler", "node-b", absl::Minutes(1), kForever);
  ASSERT_THAT(b, IsOk());
  EXPECT_GT(b->token, a.token);
  // The old holder is fenced out of everything.
  EXPECT_THAT(store().RenewLease(a, absl::Minutes(1), kForever),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store().ReleaseLease(a, kForever),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_P(StoreConformance, GrantsAndRenewalsSayTheStoresTime) {
  // The holder measures its clock against this (src/driver/clock_offset.h).
  absl::StatusOr<LeaseGrant> a =
      store().AcquireLease("scheduler", "node-a", absl::Minutes(1), kForever);
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->store_time, clock_.Now());
  clock_.AdvanceBy(absl::Seconds(20));
  absl::StatusOr<LeaseGrant> renewed = store().RenewLease(
      Fence{"scheduler", a->token}, absl::Minutes(1), kForever);
  ASSERT_THAT(renewed, IsOk());
  EXPECT_EQ(renewed->store_time, clock_.Now());
}

TEST_P(StoreConformance, SameHolderAcquiringAgainKeepsItsToken) {
  const Fence a = MustAcquire("scheduler", "node-a");
  const Fence again = MustAcquire("scheduler", "node-a");
  EXPECT_EQ(again.token, a.token);
}

TEST_P(StoreConformance, RenewExtendsTheLease) {
  const Fence a = MustAcquire("scheduler", "node-a");
  clock_.AdvanceBy(absl::Seconds(50));
  ASSERT_THAT(store().RenewLease(a, absl::Minutes(1), kForever), IsOk());
  clock_.AdvanceBy(absl::Seconds(50));  // 100s after the grant, 50s after renew
  EXPECT_THAT(
      store().AcquireLease("scheduler", "node-b", absl::Minutes(1), kForever),
      StatusIs(absl::StatusCode::kAlreadyExists));
  absl::StatusOr<std::vector<LeaseInfo>> leases = store().ListLeases(kForever);
  ASSERT_THAT(leases, IsOk());
  ASSERT_EQ(leases->size(), 1u);
  EXPECT_EQ((*leases)[0].name, "scheduler");
  EXPECT_EQ((*leases)[0].holder, "node-a");
  EXPECT_EQ((*leases)[0].token, a.token);
  EXPECT_EQ((*leases)[0].remaining, absl::Seconds(10));
}

// A node renews its shard leases together: each answered on its own, a
// stale token refused without keeping the others from renewing.
TEST_P(StoreConformance, RenewLeasesAnswersEachFence) {
  const Fence one = MustAcquire("shard/1", "node-a");
  const Fence two = MustAcquire("shard/\"2\"", "node-a");
  const Fence gone = MustAcquire("shard/3", "node-a");
  ASSERT_THAT(store().ReleaseLease(gone, kForever), IsOk());
  clock_.AdvanceBy(absl::Seconds(50));
  absl::StatusOr<std::vector<absl::StatusOr<LeaseGrant>>> renewed =
      store().RenewLeases({one, gone, two}, absl::Minutes(1), kForever);
  ASSERT_THAT(renewed, IsOk());
  ASSERT_EQ(renewed->size(), 3u);
  EXPECT_THAT((*renewed)[0], IsOk());
  EXPECT_THAT((*renewed)[1].status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT((*renewed)[2], IsOk());
  EXPECT_EQ((*renewed)[2]->token, two.token);
  clock_.AdvanceBy(absl::Seconds(50));  // 100 s after the grants
  absl::StatusOr<std::vector<LeaseInfo>> leases = store().ListLeases(kForever);
  ASSERT_THAT(leases, IsOk());
  for (const LeaseInfo& l : *leases) {
    if (l.name == "shard/3") continue;
    EXPECT_EQ(l.remaining, absl::Seconds(10)) << l.name;
  }
}

TEST_P(StoreConformance, ReleaseIsIdempotentAndFreesTheLease) {
  const Fence a = MustAcquire("scheduler", "node-a");
  ASSERT_THAT(store().ReleaseLease(a, kForever), IsOk());
  EXPECT_THAT(store().ReleaseLease(a, kForever), IsOk());  // a re-send
  EXPECT_THAT(store().RenewLease(a, absl::Minutes(1), kForever),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  absl::StatusOr<std::vector<LeaseInfo>> leases = store().ListLeases(kForever);
  ASSERT_THAT(leases, IsOk());
  ASSERT_EQ(leases->size(), 1u);
  EXPECT_EQ((*leases)[0].holder, "");
  EXPECT_EQ((*leases)[0].remaining, absl::ZeroDuration());
  // Free at once for anyone, with a newer token.
  const Fence b = MustAcquire("scheduler", "node-b");
  EXPECT_GT(b.token, a.token);
}

TEST_P(StoreConformance, LeaseRequestsAreValidated) {
  EXPECT_THAT(store().AcquireLease("", "node-a", absl::Minutes(1), kForever),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(
      store().AcquireLease("scheduler", "node-a", absl::ZeroDuration(),
                           kForever),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lease ttl")));
  EXPECT_THAT(
      store().RenewLease(Fence{"never-granted", 1}, absl::Minutes(1), kForever),
      StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_P(StoreConformance, PassedDeadlineDoesNothing) {
  const MonoTime past = clock_.MonoNow();
  EXPECT_THAT(
      store().AcquireLease("scheduler", "node-a", absl::Minutes(1), past),
      StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_THAT(store().PutJob(Spec("a"), kAnyRevision, past),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  absl::StatusOr<StoreInfo> info = store().GetInfo(kForever);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->jobs, 0);
  absl::StatusOr<std::vector<LeaseInfo>> leases = store().ListLeases(kForever);
  ASSERT_THAT(leases, IsOk());
  EXPECT_TRUE(leases->empty());
}

}  // namespace
}  // namespace chime::conformance
