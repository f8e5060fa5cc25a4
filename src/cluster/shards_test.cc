#include "src/cluster/shards.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chime::cluster {
namespace {

JobKey Key(std::string ns, std::string id) {
  JobKey key;
  key.name_space = std::move(ns);
  key.id = std::move(id);
  return key;
}

// Nodes of different versions must agree on every job's shard and every
// shard's owner: these values are part of the cluster's contract (a change
// would move jobs between shards in a mixed-version cluster). They were
// computed by an independent implementation of the same definition (Python,
// 2026-11-30). Never update them to make a change pass.
TEST(Shards, ShardsAndOwnersNeverChangeBetweenVersions) {
  EXPECT_EQ(StableHash(""), 0xf52a15e9a9b5e89bULL);
  EXPECT_EQ(StableHash("chime"), 0x807a3ffdb0ffcfafULL);
  EXPECT_EQ(ShardOf(Key("default", "nightly"), 64), 45u);
  EXPECT_EQ(ShardOf(Key("ops", "backup"), 64), 16u);
  EXPECT_EQ(ShardOf(Key("default", "job-1"), 64), 46u);
  EXPECT_EQ(ShardOf(Key("default", "job-2"), 64), 52u);
  EXPECT_THAT(Assign(8, {"node-1", "node-2", "node-3"}),
              ::testing::ElementsAre("node-2", "node-3", "node-2", "node-2",
                                     "node-2", "node-3", "node-3", "node-1"));
}

TEST(Shards, TheNamespaceIsPartOfTheKey) {
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string id = absl::StrCat("job-", i);
    if (ShardOf(Key("a", id), 64) != ShardOf(Key("b", id), 64)) ++differ;
  }
  EXPECT_GT(differ, 80);
  // The split between namespace and id matters.
  EXPECT_NE(StableHash("1:a/bc"), StableHash("2:ab/c"));
}

TEST(Shards, JobsSpreadEvenlyOverTheShards) {
  constexpr uint32_t kShards = 64;
  constexpr int kJobs = 64'000;
  std::vector<int> count(kShards);
  for (int i = 0; i < kJobs; ++i)
    ++count[ShardOf(Key("default", absl::StrCat("job-", i)), kShards)];
  const auto [min, max] = std::minmax_element(count.begin(), count.end());
  // 1,000 a shard on average; a uniform hash stays within about 4 standard
  // deviations (~32) of it.
  EXPECT_GT(*min, 850);
  EXPECT_LT(*max, 1150);
  EXPECT_EQ(ShardOf(Key("default", "x"), 1), 0u);
}

std::vector<std::string> Members(int n) {
  std::vector<std::string> m;
  for (int i = 1; i <= n; ++i) m.push_back(absl::StrCat("node-", i));
  return m;
}

TEST(Shards, EveryMemberOwnsAFairShare) {
  for (int n : {1, 2, 3, 5, 8}) {
    const std::vector<std::string> owners = Assign(kDefaultShards, Members(n));
    std::map<std::string, int> held;
    for (const std::string& o : owners) ++held[o];
    EXPECT_EQ(held.size(), static_cast<size_t>(n)) << n << " members";
    for (const auto& [member, count] : held) {
      // 64 / n on average; rendezvous hashing is as uneven as a random
      // assignment, so allow wide bounds.
      EXPECT_GE(count, 64 / n / 3) << member << " of " << n;
      EXPECT_LE(count, 64 / n * 2 + 4) << member << " of " << n;
    }
  }
  EXPECT_THAT(Assign(4, {}), ::testing::Each(""));
}

TEST(Shards, OwnersDoNotDependOnTheOrderMembersAreListedIn) {
  std::vector<std::string> members = Members(5);
  const std::vector<std::string> owners = Assign(kDefaultShards, members);
  std::reverse(members.begin(), members.end());
  EXPECT_EQ(Assign(kDefaultShards, members), owners);
  members.push_back("node-3");  // listed twice
  EXPECT_EQ(Assign(kDefaultShards, members), owners);
}

TEST(Shards, AJoiningMemberTakesShardsOnlyFromOthersAndNoneMoveBetweenThem) {
  const std::vector<std::string> before = Assign(kDefaultShards, Members(3));
  const std::vector<std::string> after = Assign(kDefaultShards, Members(4));
  int moved = 0;
  for (uint32_t s = 0; s < kDefaultShards; ++s) {
    if (before[s] == after[s]) continue;
    ++moved;
    EXPECT_EQ(after[s], "node-4")
        << "shard " << s << " moved from " << before[s] << " to " << after[s];
  }
  // About 64 / 4 = 16.
  EXPECT_GT(moved, 4);
  EXPECT_LT(moved, 32);
}

TEST(Shards, ALeavingMembersShardsAreSpreadOverTheOthersAndNoOtherMoves) {
  const std::vector<std::string> all = Members(4);
  const std::vector<std::string> before = Assign(kDefaultShards, all);
  const std::vector<std::string> rest = {all[0], all[2],
                                         all[3]};  // node-2 left
  const std::vector<std::string> after = Assign(kDefaultShards, rest);
  std::map<std::string, int> gained;
  for (uint32_t s = 0; s < kDefaultShards; ++s) {
    if (before[s] != "node-2") {
      EXPECT_EQ(after[s], before[s]) << "shard " << s;
    } else {
      ++gained[after[s]];
    }
  }
  EXPECT_GE(gained.size(), 2u) << "node-2's shards all went to one member";
}

TEST(Shards, LeaseNames) {
  EXPECT_EQ(ShardLease(0), "shard/0");
  EXPECT_EQ(ShardLease(63), "shard/63");
}

}  // namespace
}  // namespace chime::cluster
