#include "src/core/ready_queue.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace chime::core {

void PrintTo(const ReadyRun& r, std::ostream* os) {
  *os << "{run " << r.run_id << " in " << r.name_space << ", priority "
      << r.priority << ", scheduled " << absl::FormatTime(r.scheduled_time)
      << "}";
}

void PrintTo(const ReadyQueue::Counters& c, std::ostream* os) {
  *os << "{started " << c.started << ", global " << c.delayed_global
      << ", concurrency " << c.delayed_ns_concurrency << ", rate "
      << c.delayed_ns_rate << "}";
}

namespace {

using ::chime::testing::IsOk;
using ::chime::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Counters = ReadyQueue::Counters;

MonoTime At(absl::Duration since_origin) {
  return MonoTime::FromSinceOrigin(since_origin);
}

const MonoTime kNow = At(absl::Hours(1));
const absl::Time kNoon = absl::FromCivil(absl::CivilMinute(2026, 11, 29, 12, 0),
                                         absl::UTCTimeZone());

ReadyRun Ready(uint64_t id, std::string ns = "default", int priority = 0,
               absl::Time scheduled = kNoon) {
  return ReadyRun{id, std::move(ns), priority, scheduled};
}

Counters Count(int64_t started, int64_t global = 0, int64_t concurrency = 0,
               int64_t rate = 0) {
  Counters c;
  c.started = started;
  c.delayed_global = global;
  c.delayed_ns_concurrency = concurrency;
  c.delayed_ns_rate = rate;
  return c;
}

NamespaceConfig Config(int weight, int max_concurrent = 0,
                       int max_starts_per_minute = 0) {
  NamespaceConfig c;
  c.weight = weight;
  c.max_concurrent = max_concurrent;
  c.max_starts_per_minute = max_starts_per_minute;
  return c;
}

// Pushes `count` runs into `ns`, with ids first_id, first_id + 1, ...
void PushMany(ReadyQueue& q, const std::string& ns, uint64_t first_id,
              int count, int priority = 0) {
  for (int i = 0; i < count; ++i) q.Push(Ready(first_id + i, ns, priority));
}

// Starts runs at `now`, each finishing at once, until none can start (or
// `max` have started). Returns the runs, in start order.
std::vector<ReadyRun> StartAndFinish(ReadyQueue& q, MonoTime now,
                                     size_t max = SIZE_MAX) {
  std::vector<ReadyRun> started;
  while (started.size() < max) {
    std::optional<ReadyRun> r = q.PopStartable(now);
    if (!r.has_value()) break;
    EXPECT_TRUE(q.OnRunFinished(r->run_id));
    started.push_back(*std::move(r));
  }
  return started;
}

std::vector<uint64_t> Ids(const std::vector<ReadyRun>& runs) {
  std::vector<uint64_t> ids;
  for (const ReadyRun& r : runs) ids.push_back(r.run_id);
  return ids;
}

// The namespaces of `runs` as a string, one letter each (namespace names in
// these tests are single letters).
std::string Namespaces(const std::vector<ReadyRun>& runs) {
  std::string s;
  for (const ReadyRun& r : runs) s += r.name_space;
  return s;
}

// ---------------------------------------------------------------------------
// Order within a namespace

TEST(ReadyQueue, StartsByPriorityThenScheduledTimeThenPushOrder) {
  ReadyQueue q(1);
  const absl::Time t1000 = kNoon - absl::Hours(2);
  const absl::Time t1200 = kNoon;
  const absl::Time t1205 = kNoon + absl::Minutes(5);
  q.Push(Ready(1, "default", 0, t1200));
  q.Push(Ready(2, "default", 5, t1205));
  q.Push(Ready(3, "default", 5, t1200));
  q.Push(Ready(4, "default", 0, t1200));  // same as 1, pushed later
  q.Push(Ready(5, "default", -1, t1000));
  q.Push(Ready(6, "default", 0, t1000));
  EXPECT_THAT(Ids(StartAndFinish(q, kNow)), ElementsAre(3, 2, 6, 1, 4, 5));
}

TEST(ReadyQueue, StartedRunIsTheRunThatWasPushed) {
  ReadyQueue q;
  const ReadyRun run = Ready(42, "billing", 7, kNoon + absl::Milliseconds(250));
  q.Push(run);
  EXPECT_TRUE(q.IsPending(42));
  EXPECT_EQ(q.PopStartable(kNow), run);
  EXPECT_FALSE(q.IsPending(42));
  EXPECT_TRUE(q.IsRunning(42));
}

TEST(ReadyQueue, EmptyQueueStartsNothing) {
  ReadyQueue q(3);
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);
  EXPECT_EQ(q.NextEligibleTime(kNow), std::nullopt);
  EXPECT_EQ(q.pending(), 0u);
  EXPECT_EQ(q.running(), 0);
}

// ---------------------------------------------------------------------------
// Global limit

TEST(ReadyQueue, GlobalLimitCapsRunningRunsAndAFinishFreesASlot) {
  ReadyQueue q(2);
  PushMany(q, "default", 1, 5);
  EXPECT_EQ(q.PopStartable(kNow)->run_id, 1u);
  EXPECT_EQ(q.PopStartable(kNow)->run_id, 2u);
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);
  EXPECT_EQ(q.running(), 2);
  EXPECT_EQ(q.pending(), 3u);

  EXPECT_TRUE(q.OnRunFinished(1));
  EXPECT_EQ(q.PopStartable(kNow)->run_id, 3u);
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);
}

TEST(ReadyQueue, LoweringTheGlobalLimitWaitsForRunsToFinish) {
  ReadyQueue q(3);
  PushMany(q, "default", 1, 5);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.PopStartable(kNow).has_value());

  ASSERT_THAT(q.SetGlobalLimit(1), IsOk());
  EXPECT_TRUE(q.OnRunFinished(1));
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);  // 2 running, limit 1
  EXPECT_TRUE(q.OnRunFinished(2));
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);  // 1 running, limit 1
  EXPECT_TRUE(q.OnRunFinished(3));
  EXPECT_EQ(q.PopStartable(kNow)->run_id, 4u);
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);

  ASSERT_THAT(q.SetGlobalLimit(0), IsOk());
  EXPECT_EQ(q.PopStartable(kNow)->run_id, 5u);
}

TEST(ReadyQueue, ZeroGlobalLimitMeansUnlimited) {
  ReadyQueue q(0);
  PushMany(q, "default", 1, 1000);
  int started = 0;
  while (q.PopStartable(kNow).has_value()) ++started;
  EXPECT_EQ(started, 1000);
  EXPECT_EQ(q.running(), 1000);
}

TEST(ReadyQueue, FinishingAnUnknownPendingOrFinishedRunChangesNothing) {
  ReadyQueue q(1);
  q.Push(Ready(1));
  q.Push(Ready(2));
  ASSERT_EQ(q.PopStartable(kNow)->run_id, 1u);
  EXPECT_FALSE(q.OnRunFinished(99));  // unknown
  EXPECT_FALSE(q.OnRunFinished(2));   // pending
  EXPECT_EQ(q.running(), 1);
  EXPECT_TRUE(q.OnRunFinished(1));
  EXPECT_FALSE(q.OnRunFinished(1));  // already reported
  EXPECT_EQ(q.running(), 0);
  EXPECT_TRUE(q.IsPending(2));
}

// ---------------------------------------------------------------------------
// Deficit round-robin across namespaces

TEST(ReadyQueue, WorkedExampleFromTheClassComment) {
  ReadyQueue q(1);
  ASSERT_THAT(q.ConfigureNamespace("A", Config(3)), IsOk());
  PushMany(q, "A", 100, 8);
  PushMany(q, "B", 200, 8);
  EXPECT_EQ(Namespaces(StartAndFinish(q, kNow)), "AAABAAABAABBBBBB");
}

TEST(ReadyQueue, ATurnInProgressResumesAfterTheGlobalLimitFrees) {
  ReadyQueue q(1);
  ASSERT_THAT(q.ConfigureNamespace("A", Config(3)), IsOk());
  PushMany(q, "A", 100, 8);
  PushMany(q, "B", 200, 8);
  std::string order;
  for (int i = 0; i < 8; ++i) {
    std::optional<ReadyRun> r = q.PopStartable(kNow);
    ASSERT_TRUE(r.has_value());
    order += r->name_space;
    EXPECT_EQ(q.PopStartable(kNow), std::nullopt);  // limit 1 reached
    ASSERT_TRUE(q.OnRunFinished(r->run_id));
  }
  EXPECT_EQ(order, "AAABAAAB");
}

// Over every window of consecutive starts while both namespaces are
// backlogged, `a` gets 3/4 of the starts, give or take one.
TEST(ReadyQueue, WeightsThreeToOneShareStartsThreeToOneInEveryWindow) {
  for (int limit : {1, 3, 8}) {
    SCOPED_TRACE(absl::StrCat("global limit ", limit));
    ReadyQueue q(limit);
    ASSERT_THAT(q.ConfigureNamespace("a", Config(3)), IsOk());
    ASSERT_THAT(q.ConfigureNamespace("b", Config(1)), IsOk());
    PushMany(q, "a", 100'000, 3000);
    PushMany(q, "b", 200'000, 3000);

    // Runs finish in random order: which slot frees up must not matter.
    std::mt19937_64 rng(limit);
    std::vector<uint64_t> running;
    std::string order;
    while (q.pending("a") > 0 && q.pending("b") > 0) {
      if (std::optional<ReadyRun> r = q.PopStartable(kNow)) {
        order += r->name_space;
        running.push_back(r->run_id);
        continue;
      }
      ASSERT_FALSE(running.empty());
      std::swap(running[rng() % running.size()], running.back());
      ASSERT_TRUE(q.OnRunFinished(running.back()));
      running.pop_back();
    }
    ASSERT_GE(order.size(), 3000u);

    // a_before[i]: starts of `a` among the first i.
    std::vector<int64_t> a_before(order.size() + 1, 0);
    for (size_t i = 0; i < order.size(); ++i) {
      a_before[i + 1] = a_before[i] + (order[i] == 'a');
    }
    for (size_t n = 1; n <= 200; ++n) {
      for (size_t begin = 0; begin + n <= order.size(); ++begin) {
        const int64_t a = a_before[begin + n] - a_before[begin];
        ASSERT_LE(std::abs(4 * a - 3 * static_cast<int64_t>(n)), 4)
            << a << " of " << n << " starts from start " << begin << ": "
            << order.substr(begin, n);
      }
    }
  }
}

TEST(ReadyQueue, ThreeNamespacesShareStartsByWeight) {
  ReadyQueue q(1);
  ASSERT_THAT(q.ConfigureNamespace("x", Config(1)), IsOk());
  ASSERT_THAT(q.ConfigureNamespace("y", Config(2)), IsOk());
  ASSERT_THAT(q.ConfigureNamespace("z", Config(5)), IsOk());
  PushMany(q, "x", 10'000, 1000);
  PushMany(q, "y", 20'000, 1000);
  PushMany(q, "z", 30'000, 1000);
  const std::string order = Namespaces(StartAndFinish(q, kNow, 800));
  EXPECT_EQ(std::count(order.begin(), order.end(), 'x'), 100);
  EXPECT_EQ(std::count(order.begin(), order.end(), 'y'), 200);
  EXPECT_EQ(std::count(order.begin(), order.end(), 'z'), 500);
}

TEST(ReadyQueue, NamespaceWithASmallWeightStillStartsEveryRound) {
  ReadyQueue q(1);
  ASSERT_THAT(q.ConfigureNamespace("b", Config(1000)), IsOk());
  PushMany(q, "b", 100'000, 5000);
  PushMany(q, "s", 1, 3);
  const std::string order = Namespaces(StartAndFinish(q, kNow, 3100));
  std::vector<size_t> small_starts;
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == 's') small_starts.push_back(i);
  }
  // One round = 1000 starts of b, then 1 of s.
  EXPECT_THAT(small_starts, ElementsAre(1000, 2001, 3002));
}

TEST(ReadyQueue, HighPriorityFloodInOneNamespaceDoesNotStarveAnother) {
  ReadyQueue q(1);
  PushMany(q, "f", 1000, 1000, /*priority=*/100);
  PushMany(q, "q", 1, 5, /*priority=*/0);
  EXPECT_EQ(Namespaces(StartAndFinish(q, kNow, 12)), "fqfqfqfqfqff");
}

TEST(ReadyQueue, PriorityOrdersRunsWithinEachNamespaceUnderDrr) {
  ReadyQueue q(1);
  q.Push(Ready(1, "a", 0));
  q.Push(Ready(2, "a", 9));
  q.Push(Ready(3, "b", 0));
  q.Push(Ready(4, "b", 9));
  EXPECT_THAT(Ids(StartAndFinish(q, kNow)), ElementsAre(2, 4, 1, 3));
}

// A namespace found at a quota in its turn forfeits the rest of the turn, as
// DRR treats a flow that cannot send: its next turn starts with a full credit.
TEST(ReadyQueue, NamespaceAtItsQuotaForfeitsTheRestOfItsTurn) {
  ReadyQueue q(3);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(3, /*max_concurrent=*/2)),
              IsOk());
  PushMany(q, "a", 100, 10);
  PushMany(q, "b", 200, 10);
  std::vector<ReadyRun> first;
  while (std::optional<ReadyRun> r = q.PopStartable(kNow)) first.push_back(*r);
  // a: 2 of its 3 starts, then its quota; b: its turn.
  EXPECT_EQ(Namespaces(first), "aab");

  ASSERT_TRUE(q.OnRunFinished(100));
  ASSERT_TRUE(q.OnRunFinished(101));
  std::vector<ReadyRun> second;
  while (std::optional<ReadyRun> r = q.PopStartable(kNow)) second.push_back(*r);
  EXPECT_EQ(Namespaces(second), "aa");  // a new turn for a
}

TEST(ReadyQueue, LoweringAWeightShortensTheTurnInProgress) {
  ReadyQueue q(1);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(5)), IsOk());
  PushMany(q, "a", 100, 10);
  PushMany(q, "b", 200, 10);
  EXPECT_EQ(Namespaces(StartAndFinish(q, kNow, 1)), "a");
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1)), IsOk());
  EXPECT_EQ(Namespaces(StartAndFinish(q, kNow, 5)), "ababa");
}

TEST(ReadyQueue, NamespaceThatEmptiesAndRefillsJoinsTheBackOfTheRing) {
  ReadyQueue q(1);
  q.Push(Ready(1, "a"));
  PushMany(q, "b", 10, 3);
  EXPECT_EQ(Namespaces(StartAndFinish(q, kNow, 2)), "ab");  // a is empty
  q.Push(Ready(2, "a"));
  q.Push(Ready(3, "a"));
  EXPECT_EQ(Namespaces(StartAndFinish(q, kNow)), "baba");
}

// ---------------------------------------------------------------------------
// Per-namespace quotas

TEST(ReadyQueue, ConcurrencyQuotaLetsOtherNamespacesUseTheFreeSlots) {
  ReadyQueue q(0);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, /*max_concurrent=*/2)),
              IsOk());
  PushMany(q, "a", 100, 5);
  PushMany(q, "b", 200, 5);
  std::vector<ReadyRun> started;
  while (std::optional<ReadyRun> r = q.PopStartable(kNow)) {
    started.push_back(*r);
  }
  EXPECT_EQ(Namespaces(started), "ababbbb");
  EXPECT_EQ(q.running("a"), 2);
  EXPECT_EQ(q.running("b"), 5);
  EXPECT_EQ(q.pending("a"), 3u);
  EXPECT_EQ(q.NextEligibleTime(kNow), std::nullopt);  // only a finish helps

  ASSERT_TRUE(q.OnRunFinished(100));
  EXPECT_EQ(q.NextEligibleTime(kNow), kNow);
  EXPECT_EQ(q.PopStartable(kNow)->run_id, 102u);
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);
}

TEST(ReadyQueue, ConcurrencyQuotaUnderAGlobalLimitGivesTheSlotToOthers) {
  ReadyQueue q(4);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, /*max_concurrent=*/1)),
              IsOk());
  PushMany(q, "a", 100, 5);
  PushMany(q, "b", 200, 5);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(q.PopStartable(kNow).has_value());
  EXPECT_EQ(q.running("a"), 1);
  EXPECT_EQ(q.running("b"), 3);
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);

  ASSERT_TRUE(q.OnRunFinished(100));
  EXPECT_EQ(q.PopStartable(kNow)->name_space, "a");
}

TEST(ReadyQueue, RateQuotaDelaysStartsAndNextEligibleTimeIsExact) {
  ReadyQueue q(0);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, 0, /*per_minute=*/2)),
              IsOk());
  PushMany(q, "a", 1, 6);

  EXPECT_EQ(q.NextEligibleTime(kNow), kNow);
  EXPECT_EQ(StartAndFinish(q, kNow).size(), 2u);
  EXPECT_EQ(q.NextEligibleTime(kNow), kNow + absl::Seconds(60));

  // 2 starts at kNow: the window [kNow, kNow + 60 s) is full, to the
  // nanosecond.
  const MonoTime just_before = kNow + absl::Seconds(60) - absl::Nanoseconds(1);
  EXPECT_EQ(q.PopStartable(just_before), std::nullopt);
  EXPECT_EQ(q.NextEligibleTime(just_before), kNow + absl::Seconds(60));

  // Staggered starts (one at +60 s, one at +75 s): each next start waits for
  // the older of the last two plus 60 s.
  const MonoTime t60 = kNow + absl::Seconds(60);
  EXPECT_EQ(StartAndFinish(q, t60, 1).size(), 1u);
  const MonoTime t75 = kNow + absl::Seconds(75);
  EXPECT_EQ(StartAndFinish(q, t75).size(), 1u);
  EXPECT_EQ(q.NextEligibleTime(t75), kNow + absl::Seconds(120));
  EXPECT_EQ(StartAndFinish(q, kNow + absl::Seconds(120)).size(), 1u);
  EXPECT_EQ(q.NextEligibleTime(kNow + absl::Seconds(120)),
            kNow + absl::Seconds(135));
  EXPECT_EQ(StartAndFinish(q, kNow + absl::Seconds(135)).size(), 1u);
  EXPECT_EQ(q.pending(), 0u);
  EXPECT_EQ(q.NextEligibleTime(kNow + absl::Seconds(135)), std::nullopt);
}

TEST(ReadyQueue, RateLimitedNamespaceDoesNotHoldBackOthers) {
  ReadyQueue q(0);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, 0, /*per_minute=*/1)),
              IsOk());
  PushMany(q, "a", 100, 3);
  PushMany(q, "b", 200, 3);
  EXPECT_EQ(Namespaces(StartAndFinish(q, kNow)), "abbb");
  EXPECT_EQ(q.NextEligibleTime(kNow), kNow + absl::Minutes(1));
  q.Push(Ready(300, "c"));
  EXPECT_EQ(q.NextEligibleTime(kNow), kNow);
}

TEST(ReadyQueue, NextEligibleTimeIsTheEarliestOverRateLimitedNamespaces) {
  ReadyQueue q(0);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, 0, 1)), IsOk());
  ASSERT_THAT(q.ConfigureNamespace("b", Config(1, 0, 1)), IsOk());
  PushMany(q, "a", 100, 2);
  PushMany(q, "b", 200, 2);
  ASSERT_EQ(StartAndFinish(q, kNow, 1).size(), 1u);                   // a
  ASSERT_EQ(StartAndFinish(q, kNow + absl::Seconds(20)).size(), 1u);  // b
  EXPECT_EQ(q.NextEligibleTime(kNow + absl::Seconds(20)),
            kNow + absl::Seconds(60));
  EXPECT_EQ(Namespaces(StartAndFinish(q, kNow + absl::Seconds(60))), "a");
  EXPECT_EQ(q.NextEligibleTime(kNow + absl::Seconds(60)),
            kNow + absl::Seconds(80));
}

TEST(ReadyQueue, NextEligibleTimeIsNulloptWhileTheGlobalLimitIsReached) {
  ReadyQueue q(1);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, 0, 1)), IsOk());
  PushMany(q, "a", 1, 2);
  ASSERT_TRUE(q.PopStartable(kNow).has_value());
  EXPECT_EQ(q.NextEligibleTime(kNow), std::nullopt);
  ASSERT_TRUE(q.OnRunFinished(1));
  EXPECT_EQ(q.NextEligibleTime(kNow), kNow + absl::Minutes(1));
}

TEST(ReadyQueue, ConcurrencyAndRateQuotasTogether) {
  ReadyQueue q(0);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, 1, 1)), IsOk());
  PushMany(q, "a", 1, 2);
  ASSERT_TRUE(q.PopStartable(kNow).has_value());
  EXPECT_EQ(q.NextEligibleTime(kNow + absl::Minutes(5)), std::nullopt);
  ASSERT_TRUE(q.OnRunFinished(1));
  EXPECT_EQ(q.NextEligibleTime(kNow + absl::Seconds(5)),
            kNow + absl::Minutes(1));
  EXPECT_EQ(q.NextEligibleTime(kNow + absl::Minutes(5)),
            kNow + absl::Minutes(5));
}

TEST(ReadyQueue, LoweringARateQuotaCountsTheStartsAlreadyMade) {
  ReadyQueue q(0);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, 0, 3)), IsOk());
  PushMany(q, "a", 1, 5);
  for (int s = 0; s < 3; ++s) {
    ASSERT_EQ(StartAndFinish(q, kNow + absl::Seconds(s), 1).size(), 1u);
  }
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, 0, 1)), IsOk());
  // With 1 per minute, the newest start (at +2 s) holds the window.
  EXPECT_EQ(q.NextEligibleTime(kNow + absl::Seconds(3)),
            kNow + absl::Seconds(62));
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1)), IsOk());
  EXPECT_EQ(q.NextEligibleTime(kNow + absl::Seconds(3)),
            kNow + absl::Seconds(3));
}

TEST(ReadyQueue, ConfigureNamespaceRejectsOutOfRangeValuesAndKeepsTheOld) {
  ReadyQueue q;
  ASSERT_THAT(q.ConfigureNamespace("a", Config(2, 3, 4)), IsOk());
  EXPECT_THAT(q.ConfigureNamespace("a", Config(0)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("namespace \"a\": weight: 0 is below 1")));
  EXPECT_THAT(q.ConfigureNamespace("a", Config(1, -1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("max_concurrent: -1 is below 0")));
  EXPECT_THAT(q.ConfigureNamespace("a", Config(1, 0, -5)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("max_starts_per_minute: -5 is below 0")));
  EXPECT_EQ(q.namespace_config("a"), Config(2, 3, 4));
  EXPECT_EQ(q.namespace_config("never-seen"), NamespaceConfig{});
  EXPECT_THAT(q.SetGlobalLimit(-1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("global limit: -1 is below 0")));
  EXPECT_EQ(q.global_limit(), 0);
}

// ---------------------------------------------------------------------------
// Remove

TEST(ReadyQueue, RemovedRunNeverStarts) {
  ReadyQueue q(0);
  PushMany(q, "default", 1, 4);
  EXPECT_TRUE(q.Remove(2));
  EXPECT_FALSE(q.IsPending(2));
  EXPECT_EQ(q.pending(), 3u);
  EXPECT_FALSE(q.Remove(2));  // already removed
  EXPECT_THAT(Ids(StartAndFinish(q, kNow)), ElementsAre(1, 3, 4));
}

TEST(ReadyQueue, RemoveRefusesUnknownAndRunningRuns) {
  ReadyQueue q(0);
  q.Push(Ready(1));
  ASSERT_TRUE(q.PopStartable(kNow).has_value());
  EXPECT_FALSE(q.Remove(1));  // running: it ends through OnRunFinished
  EXPECT_TRUE(q.IsRunning(1));
  EXPECT_FALSE(q.Remove(77));
  EXPECT_EQ(q.running(), 1);
}

TEST(ReadyQueue, RemovedRunCanBePushedAgainWithNewAttributes) {
  ReadyQueue q(0);
  q.Push(Ready(1, "a", 0));
  q.Push(Ready(2, "a", 5));
  ASSERT_TRUE(q.Remove(1));
  q.Push(Ready(1, "a", 9));  // re-queued with a higher priority
  EXPECT_THAT(Ids(StartAndFinish(q, kNow)), ElementsAre(1, 2));
  EXPECT_EQ(q.pending(), 0u);

  q.Push(Ready(4, "a", 9));
  q.Push(Ready(5, "a", 5));
  ASSERT_TRUE(q.Remove(4));
  q.Push(Ready(4, "a", 0));  // re-queued with a lower priority
  EXPECT_THAT(StartAndFinish(q, kNow),
              ElementsAre(Ready(5, "a", 5), Ready(4, "a", 0)));

  q.Push(Ready(3, "a"));
  ASSERT_TRUE(q.Remove(3));
  q.Push(Ready(3, "b"));  // moved to another namespace
  EXPECT_EQ(q.pending("a"), 0u);
  EXPECT_EQ(Namespaces(StartAndFinish(q, kNow)), "b");
}

TEST(ReadyQueue, RemovingMostRunsKeepsTheOrderOfTheRest) {
  ReadyQueue q(0);
  for (uint64_t id = 0; id < 2000; ++id) {
    q.Push(Ready(id, "default", static_cast<int>(id % 7)));
  }
  for (uint64_t id = 0; id < 2000; ++id) {
    if (id % 10 != 0) {
      ASSERT_TRUE(q.Remove(id));
    }
  }
  EXPECT_EQ(q.pending(), 200u);
  std::vector<uint64_t> expected;
  for (int priority = 6; priority >= 0; --priority) {
    for (uint64_t id = 0; id < 2000; id += 10) {
      if (static_cast<int>(id % 7) == priority) expected.push_back(id);
    }
  }
  EXPECT_EQ(Ids(StartAndFinish(q, kNow)), expected);
}

TEST(ReadyQueue, NamespaceEmptiedByRemoveGivesUpItsSlot) {
  ReadyQueue q(1);
  q.Push(Ready(1, "a"));
  PushMany(q, "b", 10, 2);
  ASSERT_TRUE(q.Remove(1));
  EXPECT_EQ(q.NextEligibleTime(kNow), kNow);
  EXPECT_EQ(Namespaces(StartAndFinish(q, kNow)), "bb");
}

// ---------------------------------------------------------------------------
// Counters

TEST(ReadyQueue, GlobalLimitDelaysAreCountedOncePerRun) {
  ReadyQueue q(1);
  q.Push(Ready(1, "a"));
  ASSERT_EQ(q.PopStartable(kNow)->run_id, 1u);  // started at once
  q.Push(Ready(2, "a"));
  q.Push(Ready(3, "b"));
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);  // the limit holds 2 and 3
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);  // asking again: same wait
  ASSERT_TRUE(q.OnRunFinished(1));
  ASSERT_EQ(q.PopStartable(kNow)->run_id, 2u);
  ASSERT_TRUE(q.OnRunFinished(2));
  ASSERT_EQ(q.PopStartable(kNow)->run_id, 3u);
  ASSERT_TRUE(q.OnRunFinished(3));
  q.Push(Ready(4, "a"));
  ASSERT_EQ(q.PopStartable(kNow)->run_id, 4u);  // started at once

  EXPECT_EQ(q.counters("a"), Count(3, /*global=*/1));
  EXPECT_EQ(q.counters("b"), Count(1, /*global=*/1));
}

TEST(ReadyQueue, ConcurrencyQuotaDelaysAreCountedWithTheirReason) {
  ReadyQueue q(0);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, /*max_concurrent=*/1)),
              IsOk());
  PushMany(q, "a", 1, 3);
  ASSERT_EQ(q.PopStartable(kNow)->run_id, 1u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(q.PopStartable(kNow), std::nullopt);
  ASSERT_TRUE(q.OnRunFinished(1));
  ASSERT_EQ(q.PopStartable(kNow)->run_id, 2u);

  EXPECT_EQ(q.counters("a"), Count(2, 0, /*concurrency=*/1));
  // Run 3 waits too, but has not started: it is counted when it starts.
  ASSERT_TRUE(q.OnRunFinished(2));
  ASSERT_EQ(q.PopStartable(kNow)->run_id, 3u);
  EXPECT_EQ(q.counters("a"), Count(3, 0, /*concurrency=*/2));
}

TEST(ReadyQueue, RateQuotaDelaysAreCountedWithTheirReason) {
  ReadyQueue q(0);
  ASSERT_THAT(q.ConfigureNamespace("a", Config(1, 0, /*per_minute=*/1)),
              IsOk());
  PushMany(q, "a", 1, 2);
  q.Push(Ready(10, "b"));
  ASSERT_EQ(Namespaces(StartAndFinish(q, kNow)), "ab");
  ASSERT_EQ(Namespaces(StartAndFinish(q, kNow + absl::Minutes(1))), "a");

  EXPECT_EQ(q.counters("a"), Count(2, 0, 0, /*rate=*/1));
  EXPECT_EQ(q.counters("b"), Count(1));
  EXPECT_EQ(q.counters("never-seen"), Counters{});
}

TEST(ReadyQueue, RemovedRunsAreNotCountedAsDelayedStarts) {
  ReadyQueue q(1);
  q.Push(Ready(1, "a"));
  q.Push(Ready(2, "a"));
  ASSERT_TRUE(q.PopStartable(kNow).has_value());
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);
  ASSERT_TRUE(q.Remove(2));
  EXPECT_EQ(q.counters("a"), Count(1));
}

TEST(ReadyQueue, StatsListEveryNamespaceInTheOrderFirstSeen) {
  ReadyQueue q(1);
  ASSERT_THAT(q.ConfigureNamespace("ops", Config(2, 1)), IsOk());
  q.Push(Ready(1, "batch"));
  q.Push(Ready(2, "batch"));
  ASSERT_EQ(q.PopStartable(kNow)->run_id, 1u);
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);

  const std::vector<ReadyQueue::NamespaceStats> stats = q.Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "ops");
  EXPECT_EQ(stats[0].config, Config(2, 1));
  EXPECT_EQ(stats[0].pending, 0u);
  EXPECT_EQ(stats[1].name, "batch");
  EXPECT_EQ(stats[1].config, NamespaceConfig{});
  EXPECT_EQ(stats[1].pending, 1u);
  EXPECT_EQ(stats[1].running, 1);
  EXPECT_EQ(stats[1].counters, Count(1));
}

// ---------------------------------------------------------------------------
// Broken callers

TEST(ReadyQueueDeathTest, PushingARunThatIsAlreadyQueuedAborts) {
  ReadyQueue q;
  q.Push(Ready(7));
  EXPECT_DEATH(q.Push(Ready(7, "other")), "run 7 is already pending");
  ASSERT_TRUE(q.PopStartable(kNow).has_value());
  EXPECT_DEATH(q.Push(Ready(7)), "run 7 is already running");
}

TEST(ReadyQueueDeathTest, TimeGoingBackAborts) {
  ReadyQueue q;
  EXPECT_EQ(q.PopStartable(kNow), std::nullopt);
  EXPECT_DEATH(q.PopStartable(kNow - absl::Milliseconds(1)), "time went back");
}

// ---------------------------------------------------------------------------
// Randomized: a model of the rules, checked after every operation.

// A plain re-statement of the rules (linear scans, full start logs), against
// which the queue is checked step by step. It does not model DRR order: it
// checks that whatever starts is allowed to, that the queue starts something
// whenever something is allowed, and the counters' bounds.
class Model {
 public:
  struct Pending {
    ReadyRun run;
    uint64_t order;
    // Which reasons held this run back at some call (see Counters).
    bool global = false;
    bool concurrency_lo = false, concurrency_hi = false;
    bool rate_lo = false, rate_hi = false;
  };
  struct Ns {
    NamespaceConfig config;
    int running = 0;
    std::vector<MonoTime> starts;  // every start, in order
    Counters counters_lo, counters_hi;
  };

  int global_limit = 0;
  std::map<uint64_t, Pending> pending;
  std::map<uint64_t, std::string> running;
  std::map<std::string, Ns> ns;
  uint64_t next_order = 0;

  bool GlobalFull() const {
    return global_limit > 0 && static_cast<int>(running.size()) >= global_limit;
  }
  bool AtConcurrencyQuota(const std::string& name) const {
    const Ns& n = ns.at(name);
    return n.config.max_concurrent > 0 && n.running >= n.config.max_concurrent;
  }
  // By definition: fewer than N starts in (t - 60 s, t] for t >= every start.
  MonoTime RateEligibleAt(const std::string& name, MonoTime now) const {
    const Ns& n = ns.at(name);
    const size_t quota = n.config.max_starts_per_minute;
    if (quota == 0 || n.starts.size() < quota) return now;
    return std::max(now, n.starts[n.starts.size() - quota] + absl::Minutes(1));
  }
  bool Startable(const std::string& name, MonoTime now) const {
    return !AtConcurrencyQuota(name) && RateEligibleAt(name, now) <= now;
  }
  std::optional<MonoTime> NextEligibleTime(MonoTime now) const {
    if (pending.empty() || GlobalFull()) return std::nullopt;
    std::optional<MonoTime> best;
    for (const std::string& name : NamespacesWithPending()) {
      if (AtConcurrencyQuota(name)) continue;
      MonoTime t = RateEligibleAt(name, now);
      if (!best.has_value() || t < *best) best = t;
    }
    return best;
  }
  std::set<std::string> NamespacesWithPending() const {
    std::set<std::string> names;
    for (const auto& [id, p] : pending) names.insert(p.run.name_space);
    return names;
  }
  // The run that must start next in `name`.
  const Pending* Best(const std::string& name) const {
    const Pending* best = nullptr;
    for (const auto& [id, p] : pending) {
      if (p.run.name_space != name) continue;
      if (best == nullptr || p.run.priority > best->run.priority ||
          (p.run.priority == best->run.priority &&
           (p.run.scheduled_time < best->run.scheduled_time ||
            (p.run.scheduled_time == best->run.scheduled_time &&
             p.order < best->order)))) {
        best = &p;
      }
    }
    return best;
  }
  // Marks the reasons that hold pending runs back in a PopStartable call.
  // `exact`: the call started nothing, so it examined every namespace.
  void MarkWaits(MonoTime now, bool exact) {
    const bool full = GlobalFull();
    std::map<std::string, std::pair<bool, bool>> blocked;  // (conc., rate)
    for (const std::string& name : NamespacesWithPending()) {
      blocked[name] = {AtConcurrencyQuota(name),
                       RateEligibleAt(name, now) > now};
    }
    for (auto& [id, p] : pending) {
      if (full) {
        p.global = true;
        continue;
      }
      const auto [concurrency, rate] = blocked[p.run.name_space];
      if (concurrency) {
        p.concurrency_hi = true;
        p.concurrency_lo |= exact;
      }
      if (rate) {
        p.rate_hi = true;
        p.rate_lo |= exact;
      }
    }
  }
  void Start(uint64_t id, MonoTime now) {
    const Pending p = pending.at(id);
    pending.erase(id);
    Ns& n = ns[p.run.name_space];
    ++n.running;
    n.starts.push_back(now);
    running[id] = p.run.name_space;
    for (Counters* c : {&n.counters_lo, &n.counters_hi}) ++c->started;
    n.counters_lo.delayed_global += p.global;
    n.counters_hi.delayed_global += p.global;
    n.counters_lo.delayed_ns_concurrency += p.concurrency_lo;
    n.counters_hi.delayed_ns_concurrency += p.concurrency_hi;
    n.counters_lo.delayed_ns_rate += p.rate_lo;
    n.counters_hi.delayed_ns_rate += p.rate_hi;
  }
};

class RandomRun {
 public:
  explicit RandomRun(uint64_t seed) : rng_(seed) {}

  void Go(int steps) {
    const std::vector<std::string> names = {"a", "b", "c", "d"};
    // Fixed per-namespace configs; weights and concurrency may change later.
    for (const std::string& name : names) {
      NamespaceConfig c = Config(1 + Rand(3), Rand(3), Rand(4));
      ASSERT_THAT(q_.ConfigureNamespace(name, c), IsOk());
      model_.ns[name].config = c;
    }
    SetLimit(Rand(5));

    for (int step = 0; step < steps; ++step) {
      SCOPED_TRACE(absl::StrCat("step ", step));
      const int op = Rand(100);
      if (op < 30) {
        // Alternate phases that fill the queue and let it drain; keep the
        // backlog small enough for the model's linear scans.
        const bool filling = (step / 500) % 2 == 0;
        if (model_.pending.size() < 100 && (filling || Rand(4) == 0)) {
          Push(names[Rand(names.size())]);
        } else {
          Pop();
        }
      } else if (op < 38) {
        Remove();
      } else if (op < 65) {
        Pop();
      } else if (op < 83) {
        Finish();
      } else if (op < 95) {
        static const absl::Duration kSteps[] = {
            absl::ZeroDuration(), absl::Nanoseconds(1), absl::Milliseconds(1),
            absl::Seconds(1),     absl::Seconds(10),    absl::Seconds(59),
            absl::Seconds(60)};
        now_ += kSteps[Rand(std::size(kSteps))];
      } else if (op < 98) {
        const std::string& name = names[Rand(names.size())];
        NamespaceConfig c = model_.ns[name].config;
        c.weight = 1 + Rand(3);
        c.max_concurrent = Rand(3);
        ASSERT_THAT(q_.ConfigureNamespace(name, c), IsOk());
        model_.ns[name].config = c;
      } else {
        SetLimit(Rand(5));
      }
      CheckState();
      if (::testing::Test::HasFailure()) return;
    }
    Drain();
  }

 private:
  int Rand(size_t n) { return static_cast<int>(rng_() % n); }

  void SetLimit(int limit) {
    ASSERT_THAT(q_.SetGlobalLimit(limit), IsOk());
    model_.global_limit = limit;
  }

  void Push(const std::string& name) {
    uint64_t id = next_id_++;
    if (!removed_.empty() && Rand(3) == 0) {
      // A removed run queued again, perhaps elsewhere and with a new priority.
      id = *removed_.begin();
      removed_.erase(removed_.begin());
    }
    const ReadyRun run =
        Ready(id, name, Rand(3), kNoon + absl::Minutes(Rand(4)));
    q_.Push(run);
    model_.pending[id] = Model::Pending{run, model_.next_order++};
    must_start_.insert(id);
  }

  void Remove() {
    uint64_t id = next_id_;  // unknown
    if (const int pick = Rand(10); pick < 8 && !model_.pending.empty()) {
      auto it = model_.pending.begin();
      std::advance(it, Rand(model_.pending.size()));
      id = it->first;
    } else if (pick < 9 && !model_.running.empty()) {
      id = model_.running.begin()->first;
    }
    const bool was_pending = model_.pending.contains(id);
    EXPECT_EQ(q_.Remove(id), was_pending) << "run " << id;
    if (was_pending) {
      model_.pending.erase(id);
      removed_.insert(id);
      must_start_.erase(id);
    }
  }

  // One PopStartable call, checked against the model.
  std::optional<ReadyRun> Pop() {
    EXPECT_EQ(q_.NextEligibleTime(now_), model_.NextEligibleTime(now_));
    std::optional<ReadyRun> r = q_.PopStartable(now_);
    model_.MarkWaits(now_, /*exact=*/!r.has_value());
    if (!r.has_value()) {
      // Nothing starts only if nothing may.
      if (!model_.GlobalFull()) {
        for (const std::string& name : model_.NamespacesWithPending()) {
          EXPECT_FALSE(model_.Startable(name, now_)) << name << " could start";
        }
      }
      return r;
    }
    EXPECT_TRUE(model_.pending.contains(r->run_id))
        << "run " << r->run_id << " started but is not pending";
    EXPECT_FALSE(popped_.contains(r->run_id)) << "run " << r->run_id;
    popped_.insert(r->run_id);
    if (!model_.pending.contains(r->run_id)) return r;
    EXPECT_FALSE(model_.GlobalFull());
    EXPECT_TRUE(model_.Startable(r->name_space, now_)) << r->name_space;
    const Model::Pending* best = model_.Best(r->name_space);
    EXPECT_EQ(*r, best->run);
    model_.Start(r->run_id, now_);
    const Model::Ns& n = model_.ns[r->name_space];
    const size_t quota = n.config.max_starts_per_minute;
    if (quota > 0 && n.starts.size() > quota) {
      EXPECT_GE(n.starts.back() - n.starts[n.starts.size() - 1 - quota],
                absl::Minutes(1))
          << quota + 1 << " starts within a minute in " << r->name_space;
    }
    return r;
  }

  void Finish() {
    uint64_t id = next_id_;  // unknown
    if (const int pick = Rand(10); pick < 9 && !model_.running.empty()) {
      auto it = model_.running.begin();
      std::advance(it, Rand(model_.running.size()));
      id = it->first;
    } else if (!model_.pending.empty()) {
      id = model_.pending.begin()->first;
    }
    const bool was_running = model_.running.contains(id);
    EXPECT_EQ(q_.OnRunFinished(id), was_running) << "run " << id;
    if (was_running) {
      --model_.ns[model_.running[id]].running;
      model_.running.erase(id);
    }
  }

  void CheckState() {
    EXPECT_EQ(q_.pending(), model_.pending.size());
    EXPECT_EQ(q_.running(), static_cast<int>(model_.running.size()));
    for (const auto& [name, n] : model_.ns) {
      EXPECT_EQ(q_.running(name), n.running) << name;
      const Counters c = q_.counters(name);
      EXPECT_EQ(c.started, n.counters_lo.started) << name;
      EXPECT_EQ(c.delayed_global, n.counters_lo.delayed_global) << name;
      EXPECT_GE(c.delayed_ns_concurrency, n.counters_lo.delayed_ns_concurrency)
          << name;
      EXPECT_LE(c.delayed_ns_concurrency, n.counters_hi.delayed_ns_concurrency)
          << name;
      EXPECT_GE(c.delayed_ns_rate, n.counters_lo.delayed_ns_rate) << name;
      EXPECT_LE(c.delayed_ns_rate, n.counters_hi.delayed_ns_rate) << name;
    }
  }

  // Every run still pending starts once slots are free, at the times
  // NextEligibleTime names, and not a nanosecond earlier.
  void Drain() {
    while (!model_.running.empty()) Finish();
    for (int guard = 0; !model_.pending.empty(); ++guard) {
      ASSERT_LT(guard, 100'000);
      std::optional<MonoTime> t = q_.NextEligibleTime(now_);
      ASSERT_TRUE(t.has_value());
      ASSERT_GE(*t, now_);
      if (*t > now_) {
        now_ = *t - absl::Nanoseconds(1);
        ASSERT_EQ(Pop(), std::nullopt);
        now_ = *t;
      }
      std::optional<ReadyRun> r = Pop();
      ASSERT_TRUE(r.has_value());
      ASSERT_TRUE(q_.OnRunFinished(r->run_id));
      --model_.ns[r->name_space].running;
      model_.running.erase(r->run_id);
      CheckState();
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_EQ(popped_, must_start_);
  }

  std::mt19937_64 rng_;
  ReadyQueue q_;
  Model model_;
  MonoTime now_ = kNow;
  uint64_t next_id_ = 1;
  std::set<uint64_t> must_start_;  // pushed, not removed since
  std::set<uint64_t> removed_;     // removed, not pushed again since
  std::set<uint64_t> popped_;
};

TEST(ReadyQueue, RandomOperationsKeepEveryRule) {
  for (uint64_t seed : {1, 2, 3, 4, 5, 6, 7, 8}) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    RandomRun(seed).Go(5000);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace chime::core
