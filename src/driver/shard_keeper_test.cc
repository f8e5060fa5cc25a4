// ShardKeeper: nodes on one store take the shards rendezvous hashing gives
// them, hand off cleanly to a member that joins, take over a dead member's
// shards once its leases expire, and report a lease taken from them.
#include "src/driver/shard_keeper.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cluster/shards.h"
#include "src/store/memory_store.h"
#include "testing/status_matchers.h"

namespace chime::driver {
namespace {

using ::chime::testing::IsOk;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

constexpr uint32_t kShards = 16;
// Long enough that a loaded machine (sanitizers, tests in parallel) renews in
// time.
constexpr absl::Duration kTtl = absl::Milliseconds(1500);
constexpr MonoTime kForever = MonoTime::Infinite();

// Polls `done` every 10 ms for up to 15 s.
bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 1500; ++i) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return done();
}

// One node: its member lease and its keeper, recording what it is told.
class Node {
 public:
  // A member from now on; its keeper starts now unless `start` is false.
  Node(Store& store, std::string name, bool hand_off_at_once = true,
       bool start = true, absl::Duration ttl = kTtl)
      : store_(store), name_(std::move(name)) {
    const std::string holder = absl::StrCat(name_, " pid 1 shards ", kShards);
    absl::StatusOr<LeaseGrant> member =
        store_.AcquireLease(absl::StrCat(kMemberLeasePrefix, name_), holder,
                            absl::Hours(1), kForever);
    EXPECT_THAT(member, IsOk());
    member_ = Fence{absl::StrCat(kMemberLeasePrefix, name_), member->token};
    ShardKeeper::Callbacks callbacks;
    callbacks.on_gained = [this](const std::vector<GainedShard>& gained) {
      std::lock_guard<std::mutex> lock(mu_);
      for (const GainedShard& g : gained) gained_.push_back(g);
      return absl::OkStatus();
    };
    callbacks.on_hand_off = [this,
                             hand_off_at_once](const std::vector<uint32_t>& s) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        handed_off_.insert(handed_off_.end(), s.begin(), s.end());
      }
      if (hand_off_at_once) {
        for (uint32_t shard : s) keeper_->Released(shard, true);
      }
    };
    callbacks.on_lost = [this](const absl::Status& why) {
      std::lock_guard<std::mutex> lock(mu_);
      lost_ = why;
    };
    keeper_ = std::make_unique<ShardKeeper>(
        store_, RealClock::Get(),
        ShardKeeper::Options{kShards, name_, holder, ttl}, callbacks);
    if (start) keeper_->Start();
  }

  // Leaves as a crash does: nothing released.
  void Crash() {
    keeper_->Stop();
    (void)store_.ReleaseLease(member_, kForever);
  }

  ShardKeeper& keeper() { return *keeper_; }
  const std::string& name() const { return name_; }
  std::vector<GainedShard> gained() {
    std::lock_guard<std::mutex> lock(mu_);
    return gained_;
  }
  std::vector<uint32_t> handed_off() {
    std::lock_guard<std::mutex> lock(mu_);
    return handed_off_;
  }
  absl::Status lost() {
    std::lock_guard<std::mutex> lock(mu_);
    return lost_;
  }

 private:
  Store& store_;
  const std::string name_;
  Fence member_;
  std::unique_ptr<ShardKeeper> keeper_;
  std::mutex mu_;
  std::vector<GainedShard> gained_;
  std::vector<uint32_t> handed_off_;
  absl::Status lost_;
};

// The shards each of `nodes` should hold.
std::map<std::string, std::vector<uint32_t>> Expected(
    const std::vector<std::string>& nodes) {
  std::map<std::string, std::vector<uint32_t>> want;
  for (const std::string& n : nodes) want[n];
  const std::vector<std::string> owners = cluster::Assign(kShards, nodes);
  for (uint32_t s = 0; s < kShards; ++s) want[owners[s]].push_back(s);
  return want;
}

std::map<std::string, std::vector<uint32_t>> Held(
    const std::vector<Node*>& nodes) {
  std::map<std::string, std::vector<uint32_t>> held;
  for (Node* n : nodes) held[n->name()] = n->keeper().Held();
  return held;
}

TEST(ShardKeeperTest, NodesTakeTheShardsTheyOwnOnceEach) {
  store::MemoryStore store(store::MemoryStore::Options{});
  // All three are members before any keeper starts.
  Node a(store, "node-1", true, false), b(store, "node-2", true, false),
      c(store, "node-3", true, false);
  for (Node* n : {&a, &b, &c}) n->keeper().Start();
  const auto want = Expected({"node-1", "node-2", "node-3"});
  ASSERT_TRUE(WaitFor([&] {
    return Held({&a, &b, &c}) == want;
  })) << "held by node-1: "
      << ::testing::PrintToString(a.keeper().Held());
  // Stays so across several renewals, each shard gained exactly once.
  absl::SleepFor(kTtl * 2);
  EXPECT_EQ(Held({&a, &b, &c}), want);
  std::vector<int> gains(kShards, 0);
  for (Node* n : {&a, &b, &c}) {
    for (const GainedShard& g : n->gained()) {
      ++gains[g.shard];
      EXPECT_EQ(g.fence.lease, cluster::ShardLease(g.shard));
      EXPECT_TRUE(n->keeper().Valid(g.shard, RealClock::Get().MonoNow()));
    }
    EXPECT_THAT(n->handed_off(), IsEmpty());
    EXPECT_THAT(n->lost(), IsOk());
  }
  EXPECT_THAT(gains, ElementsAreArray(std::vector<int>(kShards, 1)));
}

TEST(ShardKeeperTest, AMemberThatJoinsGetsItsShardsHandedOffCleanly) {
  store::MemoryStore store(store::MemoryStore::Options{});
  Node a(store, "node-1", true, false), b(store, "node-2", true, false);
  for (Node* n : {&a, &b}) n->keeper().Start();
  ASSERT_TRUE(WaitFor([&] {
    return Held({&a, &b}) == Expected({"node-1", "node-2"});
  }));
  Node c(store, "node-3");
  const auto want = Expected({"node-1", "node-2", "node-3"});
  ASSERT_TRUE(WaitFor([&] { return Held({&a, &b, &c}) == want; }));
  // Exactly node-3's shards moved, each released by its holder first.
  std::vector<uint32_t> moved = a.handed_off();
  for (uint32_t s : b.handed_off()) moved.push_back(s);
  std::sort(moved.begin(), moved.end());
  EXPECT_EQ(moved, want.at("node-3"));
  ASSERT_EQ(c.gained().size(), want.at("node-3").size());
  for (const GainedShard& g : c.gained()) {
    EXPECT_TRUE(g.released) << "shard " << g.shard;
  }
  for (const GainedShard& g : a.gained()) EXPECT_FALSE(g.released);
}

TEST(ShardKeeperTest, ADeadMembersShardsMoveOnceTheirLeasesExpire) {
  store::MemoryStore store(store::MemoryStore::Options{});
  Node a(store, "node-1"), b(store, "node-2");
  auto c = std::make_unique<Node>(store, "node-3");
  ASSERT_TRUE(WaitFor([&] {
    return Held({&a, &b, c.get()}) == Expected({"node-1", "node-2", "node-3"});
  }));
  const std::vector<uint32_t> dead = c->keeper().Held();
  const size_t gained_before[] = {a.gained().size(), b.gained().size()};
  const absl::Time crashed = absl::Now();
  c->Crash();
  ASSERT_TRUE(WaitFor([&] {
    return Held({&a, &b}) == Expected({"node-1", "node-2"});
  })) << ::testing::PrintToString(Held({&a, &b}))
      << " lost: " << a.lost() << " " << b.lost();
  // Not before the dead node's leases expired (a ttl after its last
  // renewal, at most a third of a ttl before the crash).
  EXPECT_GE(absl::Now() - crashed, kTtl * 2 / 3);
  std::vector<uint32_t> taken;
  for (int k = 0; k < 2; ++k) {
    const std::vector<GainedShard> gained = (k == 0 ? a : b).gained();
    for (size_t i = gained_before[k]; i < gained.size(); ++i) {
      const GainedShard& g = gained[i];
      taken.push_back(g.shard);
      EXPECT_FALSE(g.released) << "shard " << g.shard;  // a crash's
    }
  }
  std::sort(taken.begin(), taken.end());
  EXPECT_EQ(taken, dead);
}

// The survivors look again when a lease they saw expires, not a tick (a
// third of the ttl) later: a failover takes the ttl, not the ttl and a tick.
TEST(ShardKeeperTest, ADeadMembersShardsAreTakenAsSoonAsTheyExpire) {
  constexpr absl::Duration kLongTtl = absl::Seconds(6);  // a tick of 2 s
  store::MemoryStore store(store::MemoryStore::Options{});
  Node a(store, "node-1", true, true, kLongTtl);
  auto b = std::make_unique<Node>(store, "node-2", true, true, kLongTtl);
  ASSERT_TRUE(WaitFor([&] {
    return Held({&a, b.get()}) == Expected({"node-1", "node-2"});
  }));
  b->Crash();
  // When the last of its shard leases expires (by the store's clock, which
  // is the real one here).
  absl::StatusOr<std::vector<LeaseInfo>> leases = store.ListLeases(kForever);
  ASSERT_THAT(leases, IsOk());
  absl::Duration last = absl::ZeroDuration();
  for (const LeaseInfo& l : *leases) {
    if (absl::StartsWith(l.holder, "node-2"))
      last = std::max(last, l.remaining);
  }
  const absl::Time expired = absl::Now() + last;
  ASSERT_TRUE(WaitFor([&] { return Held({&a}) == Expected({"node-1"}); }))
      << ::testing::PrintToString(Held({&a}));
  EXPECT_LT(absl::Now() - expired, absl::Milliseconds(400))
      << "taken " << absl::Now() - expired << " after the leases expired";
}

// A node hands off only when the caller says its writes are done; until
// then it keeps renewing the lease.
TEST(ShardKeeperTest, AHandOffWaitsForTheCallerAndAnUncleanOneExpires) {
  store::MemoryStore store(store::MemoryStore::Options{});
  Node a(store, "node-1", /*hand_off_at_once=*/false);
  ASSERT_TRUE(WaitFor([&] { return a.keeper().Held().size() == kShards; }));
  Node b(store, "node-2");
  ASSERT_TRUE(WaitFor([&] { return !a.handed_off().empty(); }));
  absl::SleepFor(kTtl * 2);  // several renewals: a keeps them
  const std::vector<uint32_t> moving = a.handed_off();
  EXPECT_EQ(moving, Expected({"node-1", "node-2"}).at("node-2"));
  EXPECT_EQ(a.keeper().Held().size(), kShards);
  EXPECT_THAT(b.keeper().Held(), IsEmpty());
  EXPECT_THAT(a.lost(), IsOk());
  // Not clean: the lease is left to expire, and b treats it as a crash's.
  for (uint32_t s : moving) a.keeper().Released(s, false);
  ASSERT_TRUE(WaitFor([&] {
    return Held({&a, &b}) == Expected({"node-1", "node-2"});
  }));
  for (const GainedShard& g : b.gained()) EXPECT_FALSE(g.released);
}

TEST(ShardKeeperTest, ALeaseTakenByAnotherHolderLosesEveryShard) {
  store::MemoryStore store(store::MemoryStore::Options{});
  Node a(store, "node-1");
  ASSERT_TRUE(WaitFor([&] { return a.keeper().Held().size() == kShards; }));
  const GainedShard g = a.gained().front();
  // An operator (or a bug) frees the lease and someone else takes it.
  ASSERT_THAT(store.ReleaseLease(g.fence, kForever), IsOk());
  ASSERT_THAT(
      store.AcquireLease(g.fence.lease, "thief", absl::Hours(1), kForever),
      IsOk());
  ASSERT_TRUE(WaitFor([&] { return !a.lost().ok(); }));
  EXPECT_THAT(a.lost().message(), ::testing::HasSubstr(g.fence.lease));
  for (uint32_t s = 0; s < kShards; ++s)
    EXPECT_FALSE(a.keeper().Valid(s, RealClock::Get().MonoNow()));
}

TEST(ShardKeeperTest, ANodeThatMayNotAcquireTakesNothingUntilItMay) {
  store::MemoryStore store(store::MemoryStore::Options{});
  std::atomic<bool> may{false};
  std::atomic<int> gained{0};
  ASSERT_THAT(store.AcquireLease("member/node-1", "node-1 pid 1 shards 16",
                                 absl::Hours(1), MonoTime::Infinite()),
              IsOk());
  ShardKeeper::Callbacks callbacks;
  callbacks.on_gained = [&](const std::vector<GainedShard>& g) {
    gained += static_cast<int>(g.size());
    return absl::OkStatus();
  };
  callbacks.on_hand_off = [](const std::vector<uint32_t>&) {};
  callbacks.may_acquire = [&] { return may.load(); };
  ShardKeeper keeper(
      store, RealClock::Get(),
      ShardKeeper::Options{kShards, "node-1", "node-1 pid 1 shards 16", kTtl},
      callbacks);
  keeper.Start();
  absl::SleepFor(kTtl);
  EXPECT_EQ(gained.load(), 0);
  may = true;
  EXPECT_TRUE(WaitFor([&] { return gained.load() == kShards; }));
  keeper.Stop();
}

TEST(ShardKeeperTest, ShardsOfHolderReadsTheCount) {
  EXPECT_EQ(ShardsOfHolder("n1 pid 4 scheduler 1 shards 64 url http://a:1"),
            64u);
  EXPECT_EQ(ShardsOfHolder("n1 pid 4 scheduler 1 url http://a:1"),
            std::nullopt);
  EXPECT_EQ(ShardsOfHolder("n1 pid 4 shards x"), std::nullopt);
}

// A member configured with another number of shards (or none) hashes jobs
// otherwise: it is left out, and an operator hears of it; while a node
// without shards holds the scheduler lease, nothing is taken.
TEST(ShardKeeperTest, MembersWithAnotherShardCountAreLeftOut) {
  store::MemoryStore store(store::MemoryStore::Options{});
  ASSERT_THAT(store.AcquireLease("member/odd", "odd pid 2 shards 8",
                                 absl::Hours(1), kForever),
              IsOk());
  absl::StatusOr<LeaseGrant> old = store.AcquireLease(
      "scheduler", "old pid 3 scheduler 1", absl::Hours(1), kForever);
  ASSERT_THAT(old, IsOk());
  const std::string holder = absl::StrCat("node-1 pid 1 shards ", kShards);
  ASSERT_THAT(
      store.AcquireLease("member/node-1", holder, absl::Hours(1), kForever),
      IsOk());
  std::mutex mu;
  std::vector<std::string> warnings;
  std::atomic<int> gained{0};
  ShardKeeper::Callbacks callbacks;
  callbacks.on_gained = [&](const std::vector<GainedShard>& g) {
    gained += static_cast<int>(g.size());
    return absl::OkStatus();
  };
  callbacks.on_hand_off = [](const std::vector<uint32_t>&) {};
  callbacks.on_warning = [&](const std::string& w) {
    std::lock_guard<std::mutex> lock(mu);
    warnings.push_back(w);
  };
  ShardKeeper keeper(store, RealClock::Get(),
                     ShardKeeper::Options{kShards, "node-1", holder, kTtl},
                     callbacks);
  keeper.Start();
  absl::SleepFor(kTtl);
  EXPECT_EQ(gained.load(), 0);  // the scheduler lease is held
  ASSERT_THAT(store.ReleaseLease(Fence{"scheduler", old->token}, kForever),
              IsOk());
  // Every shard: "odd" is no member of this assignment.
  EXPECT_TRUE(WaitFor([&] { return gained.load() == kShards; }));
  keeper.Stop();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(warnings, ::testing::UnorderedElementsAre(
                            ::testing::HasSubstr("scheduler lease"),
                            ::testing::HasSubstr("node odd")));
}

TEST(ShardKeeperTest, ANodeThatIsNoMemberTakesNothing) {
  store::MemoryStore store(store::MemoryStore::Options{});
  bool gained = false;
  ShardKeeper::Callbacks callbacks;
  callbacks.on_gained = [&](const std::vector<GainedShard>&) {
    gained = true;
    return absl::OkStatus();
  };
  callbacks.on_hand_off = [](const std::vector<uint32_t>&) {};
  ShardKeeper keeper(
      store, RealClock::Get(),
      ShardKeeper::Options{kShards, "ghost", "ghost pid 1", kTtl}, callbacks);
  keeper.Start();
  absl::SleepFor(kTtl);
  keeper.Stop();
  EXPECT_FALSE(gained);
  EXPECT_THAT(keeper.Held(), IsEmpty());
}

}  // namespace
}  // namespace chime::driver
