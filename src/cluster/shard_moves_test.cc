#include "src/cluster/shard_moves.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cluster/shards.h"

namespace chime::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Nodes sharing a table of shard leases, each deciding from its own view of
// the members. A lease is taken only if free when the node gets to it (as the
// store grants it), and released by a hand-off.
class Cluster {
 public:
  explicit Cluster(uint32_t shards) : holders_(shards) {}

  void SetView(const std::string& node, std::vector<std::string> members) {
    views_[node] = std::move(members);
  }
  void Forget(const std::string& node) { views_.erase(node); }
  // `node` died: its leases expire.
  void Expire(const std::string& node) {
    for (std::string& h : holders_)
      if (h == node) h.clear();
  }

  // Every node once, in name order; returns how many leases changed.
  int Round() {
    int changed = 0;
    for (const auto& [node, members] : views_) {
      const ShardMoves moves = PlanShardMoves({node, members, holders_});
      for (uint32_t s : moves.hand_off) {
        holders_[s].clear();
        ++handed_off_[s];
        ++changed;
      }
      for (uint32_t s : moves.acquire) {
        if (!holders_[s].empty()) continue;  // another took it this round
        holders_[s] = node;
        ++acquired_[s];
        ++changed;
      }
    }
    return changed;
  }
  // Rounds until nothing changes (at most 10); returns how many it took.
  int Settle() {
    for (int round = 1; round <= 10; ++round)
      if (Round() == 0) return round;
    return -1;
  }
  void ResetCounts() {
    acquired_.clear();
    handed_off_.clear();
  }

  const std::vector<std::string>& holders() const { return holders_; }
  int acquired(uint32_t s) const {
    auto it = acquired_.find(s);
    return it == acquired_.end() ? 0 : it->second;
  }
  int handed_off(uint32_t s) const {
    auto it = handed_off_.find(s);
    return it == handed_off_.end() ? 0 : it->second;
  }

 private:
  std::vector<std::string> holders_;
  std::map<std::string, std::vector<std::string>> views_;
  std::map<uint32_t, int> acquired_, handed_off_;
};

std::vector<std::string> Nodes(int n) {
  std::vector<std::string> m;
  for (int i = 1; i <= n; ++i) m.push_back(absl::StrCat("node-", i));
  return m;
}

Cluster Converged(int n) {
  Cluster c(kDefaultShards);
  for (const std::string& node : Nodes(n)) c.SetView(node, Nodes(n));
  EXPECT_GT(c.Settle(), 0);
  c.ResetCounts();
  return c;
}

TEST(ShardMoves, NodesStartingTogetherEachTakeTheShardsTheyOwnOnce) {
  Cluster c(kDefaultShards);
  for (const std::string& node : Nodes(3)) c.SetView(node, Nodes(3));
  EXPECT_EQ(c.Settle(), 2);  // one round takes them all, one sees nothing to do
  EXPECT_EQ(c.holders(), Assign(kDefaultShards, Nodes(3)));
  for (uint32_t s = 0; s < kDefaultShards; ++s) {
    EXPECT_EQ(c.acquired(s), 1) << "shard " << s;
    EXPECT_EQ(c.handed_off(s), 0) << "shard " << s;
  }
}

TEST(ShardMoves, AJoiningNodeGetsEachOfItsShardsInOneHandOff) {
  Cluster c = Converged(3);
  const std::vector<std::string> before = c.holders();
  for (const std::string& node : Nodes(4)) c.SetView(node, Nodes(4));
  EXPECT_GT(c.Settle(), 0);
  EXPECT_EQ(c.holders(), Assign(kDefaultShards, Nodes(4)));
  int moved = 0;
  for (uint32_t s = 0; s < kDefaultShards; ++s) {
    const bool moves = before[s] != c.holders()[s];
    moved += moves;
    EXPECT_EQ(c.handed_off(s), moves ? 1 : 0) << "shard " << s;
    EXPECT_EQ(c.acquired(s), moves ? 1 : 0) << "shard " << s;
  }
  EXPECT_GT(moved, 0);
}

TEST(ShardMoves, ADeadNodesShardsWaitForItsLeasesThenGoToTheirNewOwners) {
  Cluster c = Converged(4);
  const std::vector<std::string> before = c.holders();
  const std::vector<std::string> rest = {"node-1", "node-3", "node-4"};
  c.Forget("node-2");  // killed: no more ticks of its own
  for (const std::string& node : rest) c.SetView(node, rest);
  // Its leases have not expired: nobody takes its shards yet.
  c.Settle();
  EXPECT_EQ(c.holders(), before);
  c.Expire("node-2");
  c.Settle();
  EXPECT_EQ(c.holders(), Assign(kDefaultShards, rest));
  for (uint32_t s = 0; s < kDefaultShards; ++s) {
    EXPECT_EQ(c.handed_off(s), 0) << "shard " << s;
    EXPECT_EQ(c.acquired(s), before[s] == "node-2" ? 1 : 0) << "shard " << s;
  }
}

TEST(ShardMoves, NodesThatSeeTheNewMemberLateMoveOnlyItsShards) {
  Cluster c = Converged(3);
  const std::vector<std::string> before = c.holders();
  const std::vector<std::string> after = Assign(kDefaultShards, Nodes(4));
  // node-4 and node-1 see the new membership first.
  c.SetView("node-4", Nodes(4));
  c.SetView("node-1", Nodes(4));
  c.Settle();
  for (uint32_t s = 0; s < kDefaultShards; ++s) {
    const std::string expected =
        before[s] == "node-1" ? after[s] : before[s];  // only node-1 gave
    EXPECT_EQ(c.holders()[s], expected) << "shard " << s;
  }
  c.SetView("node-2", Nodes(4));
  c.SetView("node-3", Nodes(4));
  c.Settle();
  EXPECT_EQ(c.holders(), after);
  for (uint32_t s = 0; s < kDefaultShards; ++s) {
    const bool moves = before[s] != after[s];
    EXPECT_EQ(c.acquired(s), moves ? 1 : 0) << "shard " << s;
  }
}

TEST(ShardMoves, ANodeThatDoesNotSeeItselfAmongTheMembersChangesNothing) {
  ShardView view{"node-1", {"node-2"}, {"node-1", "", "node-2", ""}};
  EXPECT_EQ(PlanShardMoves(view), ShardMoves{});
  // Seen: of shards 0-3, node-1 owns 1 only (OwnerOf; pinned in shards_test's
  // terms by the same independent computation).
  view.members = {"node-1", "node-2"};
  const ShardMoves moves = PlanShardMoves(view);
  EXPECT_THAT(moves.acquire, ElementsAre(1u));   // free, its own
  EXPECT_THAT(moves.hand_off, ElementsAre(0u));  // held, node-2's
}

TEST(ShardMoves, ALoneNodeTakesEveryFreeShardAndHandsNothingOff) {
  ShardView view{"solo", {"solo"}, {"", "", "solo", "gone"}};
  const ShardMoves moves = PlanShardMoves(view);
  EXPECT_THAT(moves.acquire,
              ElementsAre(0u, 1u));  // "gone" holds 3 until expiry
  EXPECT_THAT(moves.hand_off, IsEmpty());
}

}  // namespace
}  // namespace chime::cluster
