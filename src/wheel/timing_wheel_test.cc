#include "src/wheel/timing_wheel.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chime::wheel {

void PrintTo(const TimingWheel::Expired& e, std::ostream* os) {
  *os << e.id << "@" << e.deadline_ms;
}

namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Expired = TimingWheel::Expired;
using Handle = TimingWheel::Handle;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kDay = 86'400'000;
constexpr int64_t kYear = 365 * kDay;

std::vector<Expired> Advance(TimingWheel& w, int64_t now_ms) {
  std::vector<Expired> out;
  w.AdvanceTo(now_ms, &out);
  return out;
}

TEST(TimingWheel, NewWheelIsEmptyAtItsStartTime) {
  TimingWheel w(1234);
  EXPECT_EQ(w.now(), 1234);
  EXPECT_EQ(w.size(), 0u);
  EXPECT_EQ(w.NextDeadline(), std::nullopt);
  EXPECT_THAT(Advance(w, 5000), IsEmpty());
  EXPECT_EQ(w.now(), 5000);
}

TEST(TimingWheel, WorkedExampleFromTheClassComment) {
  TimingWheel w(0);
  w.Insert('A', 5);
  w.Insert('B', 5000);
  w.Insert('C', 5000);
  w.Insert('D', 20'000'000);
  const Handle e = w.Insert('E', 3 * kDay);
  EXPECT_EQ(w.NextDeadline(), 5);

  EXPECT_THAT(Advance(w, 6000), ElementsAre(Expired{'A', 5}, Expired{'B', 5000},
                                            Expired{'C', 5000}));
  EXPECT_EQ(w.now(), 6000);
  EXPECT_EQ(w.NextDeadline(), 20'000'000);

  EXPECT_THAT(Advance(w, 19'999'999), IsEmpty());
  EXPECT_THAT(Advance(w, 20'000'000), ElementsAre(Expired{'D', 20'000'000}));
  EXPECT_EQ(w.NextDeadline(), 3 * kDay);
  EXPECT_EQ(w.size(), 1u);
  EXPECT_TRUE(w.Cancel(e));
  EXPECT_EQ(w.NextDeadline(), std::nullopt);
}

TEST(TimingWheel, WorkedExampleOfASplitFromTheClassComment) {
  TimingWheel w(20'000'000);
  const Handle e = w.Insert('E', 3 * kDay);
  for (int i = 1; i <= 99; ++i) w.Insert(i, 3 * kDay + i);
  const uint64_t before = w.RestructureVisitsForTest();
  EXPECT_TRUE(w.Cancel(e));
  // The split visited every entry of the leaf once.
  EXPECT_EQ(w.RestructureVisitsForTest() - before, 100u);
  EXPECT_EQ(w.NextDeadline(), 3 * kDay + 1);
  EXPECT_EQ(Advance(w, 3 * kDay + 99).size(), 99u);
}

TEST(TimingWheel, LeavesSplitDownToSingleMilliseconds) {
  // 40 timers on each of 4 consecutive milliseconds in one level-1 slot (10
  // bits). Cancelling each earliest millisecond splits the earliest leaf
  // again: by bits 6-9, then 2-5, then 0-1.
  TimingWheel w(0);
  constexpr int64_t kBase = 4096 + 400;
  std::vector<Handle> h;
  for (int64_t ms = 0; ms < 4; ++ms) {
    for (int j = 0; j < 40; ++j) h.push_back(w.Insert(h.size(), kBase + ms));
  }
  for (int ms = 0; ms < 3; ++ms) {
    for (int j = 0; j < 40; ++j) ASSERT_TRUE(w.Cancel(h[ms * 40 + j]));
    EXPECT_EQ(w.NextDeadline(), kBase + ms + 1);
  }
  std::vector<Expired> want;
  for (uint64_t id = 120; id < 160; ++id) want.push_back({id, kBase + 3});
  EXPECT_EQ(Advance(w, kBase + 3), want);
}

TEST(TimingWheel, SplitLeafKeepsOrderWhenItMergesBack) {
  // 40 timers in one level-2 slot, due in pairs. Cancelling the first pair
  // makes that leaf split; cancelling from the back then leaves the inner
  // node with fewer than 8 timers, and it merges back into one leaf.
  TimingWheel w(0);
  std::vector<Handle> h;
  for (int i = 0; i < 40; ++i) h.push_back(w.Insert(i, kDay + i / 2 * 1000));
  ASSERT_TRUE(w.Cancel(h[0]));
  EXPECT_EQ(w.NextDeadline(), kDay);
  ASSERT_TRUE(w.Cancel(h[1]));
  EXPECT_EQ(w.NextDeadline(), kDay + 1000);
  for (int i = 39; i >= 9; --i) {
    ASSERT_TRUE(w.Cancel(h[i]));
    ASSERT_EQ(w.NextDeadline(), kDay + 1000);
  }
  EXPECT_THAT(Advance(w, kYear),
              ElementsAre(Expired{2, kDay + 1000}, Expired{3, kDay + 1000},
                          Expired{4, kDay + 2000}, Expired{5, kDay + 2000},
                          Expired{6, kDay + 3000}, Expired{7, kDay + 3000},
                          Expired{8, kDay + 4000}));
}

TEST(TimingWheel, PastDeadlinesFireAtNextAdvanceEvenWithoutMovingTime) {
  TimingWheel w(1000);
  w.Insert(1, 990);
  w.Insert(2, 1000);  // == now counts as due
  w.Insert(3, 500);
  w.Insert(4, kMin);
  EXPECT_EQ(w.NextDeadline(), kMin);

  EXPECT_THAT(Advance(w, 1000), ElementsAre(Expired{4, kMin}, Expired{3, 500},
                                            Expired{1, 990}, Expired{2, 1000}));
  EXPECT_EQ(w.size(), 0u);
  EXPECT_THAT(Advance(w, 1000), IsEmpty());
}

TEST(TimingWheel, OverdueTimersFireBeforeFutureOnesInTheSameAdvance) {
  TimingWheel w(1000);
  w.Insert(1, 1001);
  w.Insert(2, 999);
  EXPECT_THAT(Advance(w, 2000), ElementsAre(Expired{2, 999}, Expired{1, 1001}));
}

TEST(TimingWheel, EqualDeadlinesFireInInsertionOrder) {
  // The same deadline inserted while it is far (level 1), nearer (after the
  // first timer has cascaded) and 1 ms away; plus an earlier deadline
  // inserted last.
  TimingWheel w(0);
  w.Insert(1, 100'000);
  EXPECT_THAT(Advance(w, 99'500), IsEmpty());  // past the slot's start
  w.Insert(2, 100'000);
  EXPECT_THAT(Advance(w, 99'999), IsEmpty());
  w.Insert(3, 100'000);
  w.Insert(4, 100'000);
  w.Insert(0, 99'999);
  EXPECT_THAT(
      Advance(w, 200'000),
      ElementsAre(Expired{0, 99'999}, Expired{1, 100'000}, Expired{2, 100'000},
                  Expired{3, 100'000}, Expired{4, 100'000}));
}

TEST(TimingWheel, EqualPastDeadlinesFireInInsertionOrder) {
  TimingWheel w(50);
  w.Insert(7, 10);
  w.Insert(8, 10);
  w.Insert(9, 5);
  w.Insert(6, 10);
  EXPECT_THAT(Advance(w, 50), ElementsAre(Expired{9, 5}, Expired{7, 10},
                                          Expired{8, 10}, Expired{6, 10}));
}

TEST(TimingWheel, ManyEqualPastDeadlinesKeepInsertionOrder) {
  TimingWheel w(100);
  for (int i = 0; i < 60; ++i) w.Insert(i, 10 - i % 3);
  std::vector<Expired> want;
  for (int64_t d = 8; d <= 10; ++d) {
    for (int i = 0; i < 60; ++i) {
      if (10 - i % 3 == d) want.push_back({static_cast<uint64_t>(i), d});
    }
  }
  EXPECT_EQ(Advance(w, 100), want);
}

TEST(TimingWheel, CancelledTimerNeverFires) {
  TimingWheel w(0);
  const Handle a = w.Insert(1, 10);
  const Handle b = w.Insert(2, 10);
  const Handle c = w.Insert(3, 70'000);
  w.Insert(4, 70'000);
  EXPECT_TRUE(w.Cancel(b));
  EXPECT_TRUE(w.Cancel(c));
  EXPECT_EQ(w.size(), 2u);
  EXPECT_FALSE(w.IsPending(b));
  EXPECT_TRUE(w.IsPending(a));

  EXPECT_THAT(Advance(w, kDay),
              ElementsAre(Expired{1, 10}, Expired{4, 70'000}));
  EXPECT_EQ(w.size(), 0u);
}

TEST(TimingWheel, CancelOfPastDeadlineBeforeAdvancePreventsFiring) {
  TimingWheel w(100);
  const Handle h = w.Insert(1, 50);
  w.Insert(2, 60);
  EXPECT_TRUE(w.Cancel(h));
  EXPECT_THAT(Advance(w, 100), ElementsAre(Expired{2, 60}));
}

TEST(TimingWheel, CancelOfStaleHandleReturnsFalse) {
  TimingWheel w(0);
  EXPECT_FALSE(w.Cancel(Handle{}));  // never issued, empty wheel

  const Handle fired = w.Insert(1, 10);
  const Handle cancelled = w.Insert(2, 20);
  w.Insert(3, 30);
  EXPECT_FALSE(w.Cancel(Handle{}));  // never issued, non-empty wheel
  EXPECT_FALSE(w.Cancel(Handle{1'000'000, 1}));  // index out of range

  EXPECT_TRUE(w.Cancel(cancelled));
  EXPECT_FALSE(w.Cancel(cancelled));  // twice
  EXPECT_THAT(Advance(w, 15), ElementsAre(Expired{1, 10}));
  EXPECT_FALSE(w.IsPending(fired));
  EXPECT_FALSE(w.Cancel(fired));

  EXPECT_EQ(w.size(), 1u);
  EXPECT_THAT(Advance(w, 100), ElementsAre(Expired{3, 30}));
}

TEST(TimingWheel, ReusedNodeDoesNotReviveStaleHandles) {
  TimingWheel w(0);
  const Handle cancelled = w.Insert(1, 10);
  ASSERT_TRUE(w.Cancel(cancelled));
  const Handle second = w.Insert(2, 20);
  // The point of this test: the freed node is handed out again.
  ASSERT_EQ(second.index, cancelled.index);
  EXPECT_FALSE(w.Cancel(cancelled));
  EXPECT_TRUE(w.IsPending(second));

  EXPECT_THAT(Advance(w, 20), ElementsAre(Expired{2, 20}));
  const Handle third = w.Insert(3, 30);
  ASSERT_EQ(third.index, second.index);
  EXPECT_FALSE(w.Cancel(second));
  EXPECT_FALSE(w.Cancel(cancelled));
  EXPECT_THAT(Advance(w, 30), ElementsAre(Expired{3, 30}));
}

TEST(TimingWheel, FarFutureDeadlinesFireExactlyOnTime) {
  TimingWheel w(0);
  w.Insert(1, kYear);
  w.Insert(2, 100 * kYear);
  w.Insert(3, kMax / 2);
  w.Insert(4, kMax / 2 + 1);
  w.Insert(5, kMax);
  EXPECT_EQ(w.NextDeadline(), kYear);

  EXPECT_THAT(Advance(w, kYear - 1), IsEmpty());
  EXPECT_THAT(Advance(w, kYear), ElementsAre(Expired{1, kYear}));
  EXPECT_EQ(w.NextDeadline(), 100 * kYear);
  EXPECT_THAT(Advance(w, kMax / 2 - 1), ElementsAre(Expired{2, 100 * kYear}));
  EXPECT_EQ(w.NextDeadline(), kMax / 2);
  EXPECT_THAT(Advance(w, kMax / 2), ElementsAre(Expired{3, kMax / 2}));
  EXPECT_EQ(w.NextDeadline(), kMax / 2 + 1);
  EXPECT_THAT(Advance(w, kMax - 1), ElementsAre(Expired{4, kMax / 2 + 1}));
  EXPECT_EQ(w.NextDeadline(), kMax);
  EXPECT_THAT(Advance(w, kMax), ElementsAre(Expired{5, kMax}));
  EXPECT_EQ(w.now(), kMax);
  EXPECT_EQ(w.NextDeadline(), std::nullopt);
}

TEST(TimingWheel, NegativeTimesWork) {
  TimingWheel w(-10'000);
  w.Insert(1, 5);
  w.Insert(2, -1);
  w.Insert(3, 0);
  w.Insert(4, -5'000);
  EXPECT_EQ(w.NextDeadline(), -5'000);
  EXPECT_THAT(Advance(w, -1), ElementsAre(Expired{4, -5'000}, Expired{2, -1}));
  EXPECT_THAT(Advance(w, 5), ElementsAre(Expired{3, 0}, Expired{1, 5}));
}

TEST(TimingWheel, AdvancingAcrossAllOfTimeOverASparseWheelIsImmediate) {
  // About 4000 jumps of 2^52 ms each, from the first millisecond to the last:
  // a wheel that walked its empty slots would not finish this test.
  TimingWheel w(kMin);
  w.Insert(1, 0);
  w.Insert(2, kMax);
  std::vector<Expired> out;
  while (w.now() < kMax - (int64_t{1} << 52)) {
    w.AdvanceTo(w.now() + (int64_t{1} << 52), &out);
  }
  EXPECT_THAT(out, ElementsAre(Expired{1, 0}));
  EXPECT_THAT(Advance(w, kMax), ElementsAre(Expired{2, kMax}));
}

TEST(TimingWheel, NextDeadlineIsExactNotASlotBoundary) {
  TimingWheel w(0);
  w.Insert(1, 300'001);  // level 1: slot 292 spans [299008, 300032)
  EXPECT_EQ(w.NextDeadline(), 300'001);
  w.Insert(2, 299'999);  // same slot, earlier, inserted later
  EXPECT_EQ(w.NextDeadline(), 299'999);
  const Handle h = w.Insert(3, 4'097);  // level 1, slot 4
  EXPECT_EQ(w.NextDeadline(), 4'097);
  w.Cancel(h);
  EXPECT_EQ(w.NextDeadline(), 299'999);

  // Crossing the slot's start cascades both timers; nothing fires.
  EXPECT_THAT(Advance(w, 299'008), IsEmpty());
  EXPECT_EQ(w.NextDeadline(), 299'999);
  EXPECT_THAT(Advance(w, 299'999), ElementsAre(Expired{2, 299'999}));
  EXPECT_EQ(w.NextDeadline(), 300'001);
}

TEST(TimingWheel, NextDeadlineSurvivesCancellingOneOfSeveralEarliestTimers) {
  TimingWheel w(0);
  const Handle a = w.Insert(1, 500);
  const Handle b = w.Insert(2, 500);
  const Handle c = w.Insert(3, 500);
  w.Insert(4, 700);
  EXPECT_EQ(w.NextDeadline(), 500);
  w.Cancel(b);
  EXPECT_EQ(w.NextDeadline(), 500);
  w.Cancel(a);
  EXPECT_EQ(w.NextDeadline(), 500);
  w.Cancel(c);
  EXPECT_EQ(w.NextDeadline(), 700);
}

TEST(TimingWheel, AdvanceAppendsToWhatTheVectorHolds) {
  TimingWheel w(0);
  w.Insert(2, 10);
  std::vector<Expired> out = {{1, -1}};
  w.AdvanceTo(10, &out);
  EXPECT_THAT(out, ElementsAre(Expired{1, -1}, Expired{2, 10}));
}

TEST(TimingWheelDeathTest, AdvancingBackwardsAborts) {
  TimingWheel w(100);
  std::vector<Expired> out;
  EXPECT_DEATH(w.AdvanceTo(99, &out), "time went back");
}

// Deadlines that stress cascading: boundaries of slots and of split leaves
// (every 4 bits) and their neighbours, ties, and random ones, in [0, 2^21].
std::vector<int64_t> AwkwardDeadlines(uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> deadlines;
  for (int shift = 0; shift <= 16; shift += 4) {
    for (int64_t k = 1; k <= 3; ++k) {
      for (int64_t delta : {-1, 0, 1}) {
        deadlines.push_back((k << shift) + delta);
      }
    }
  }
  std::uniform_int_distribution<int64_t> any(0, int64_t{1} << 21);
  for (int i = 0; i < 2000; ++i) deadlines.push_back(any(rng));
  for (int i = 0; i < 200; ++i) {
    deadlines.push_back(deadlines[rng() % deadlines.size()]);
  }
  std::shuffle(deadlines.begin(), deadlines.end(), rng);
  return deadlines;
}

TEST(TimingWheel, ManySmallStepsMatchOneBigStep) {
  const std::vector<int64_t> deadlines = AwkwardDeadlines(7);
  // Expected: sorted by deadline, ties in insertion (= id) order.
  std::vector<Expired> want;
  for (size_t i = 0; i < deadlines.size(); ++i) {
    want.push_back({i, deadlines[i]});
  }
  std::stable_sort(want.begin(), want.end(),
                   [](const Expired& a, const Expired& b) {
                     return a.deadline_ms < b.deadline_ms;
                   });
  const int64_t end = (int64_t{1} << 21) + 2;

  TimingWheel big(0);
  TimingWheel small(0);
  TimingWheel odd(0);
  for (size_t i = 0; i < deadlines.size(); ++i) {
    big.Insert(i, deadlines[i]);
    small.Insert(i, deadlines[i]);
    odd.Insert(i, deadlines[i]);
  }
  std::vector<Expired> big_out;
  big.AdvanceTo(end, &big_out);
  std::vector<Expired> small_out;
  for (int64_t t = 0; t <= end; t += 1) small.AdvanceTo(t, &small_out);
  std::vector<Expired> odd_out;
  std::mt19937_64 rng(11);
  while (odd.now() < end) {
    odd.AdvanceTo(std::min(end, odd.now() + static_cast<int64_t>(rng() % 9973)),
                  &odd_out);
  }

  EXPECT_EQ(big_out, want);
  EXPECT_EQ(small_out, want);
  EXPECT_EQ(odd_out, want);
}

TEST(TimingWheel, MillionTimersTakeAtMost25BytesEach) {
  TimingWheel w(0);
  std::vector<Handle> handles;
  constexpr int kTimers = 1'000'000;
  for (int i = 0; i < kTimers; ++i) {
    handles.push_back(w.Insert(i, (i * int64_t{7919}) % kDay));
  }
  const size_t bytes = w.MemoryBytes();
  EXPECT_LE(bytes, 25u * kTimers);
  // Freed nodes and blocks are reused: the slabs do not grow when timers
  // churn (the small tables of leaves and inner nodes may, a little).
  for (const Handle& h : handles) ASSERT_TRUE(w.Cancel(h));
  for (int i = 0; i < kTimers; ++i) w.Insert(i, (i * int64_t{104729}) % kYear);
  EXPECT_LE(w.MemoryBytes(), bytes + bytes / 100);
}

// Cancelling the earliest timer again and again, with NextDeadline after each
// call as the scheduler core does: a scheduler removing jobs in the order it
// added them. Rescanning the earliest slot each time was quadratic (5 billion
// visits here); splitting it keeps the work at a few visits per timer.
TEST(TimingWheel, CancellingEarliestTimersOneByOneIsLinear) {
  constexpr int kTimers = 100'000;
  for (const bool insert_earlier : {false, true}) {
    SCOPED_TRACE(insert_earlier ? "with new earlier timers" : "cancel only");
    TimingWheel w(0);
    std::multimap<int64_t, Handle> pending;
    auto earliest = [&]() -> std::optional<int64_t> {
      if (pending.empty()) return std::nullopt;
      return pending.begin()->first;
    };
    for (int i = 0; i < kTimers; ++i) {
      const int64_t d = kDay + i * int64_t{100};
      pending.emplace(d, w.Insert(i, d));
    }
    for (int i = 0; i < kTimers; ++i) {
      ASSERT_TRUE(w.Cancel(pending.begin()->second));
      pending.erase(pending.begin());
      if (insert_earlier && i % 2 == 0 && !pending.empty()) {
        // Due just before the new earliest timer: it lands in the same leaf.
        const int64_t d = pending.begin()->first - 1;
        pending.emplace(d, w.Insert(i, d));
      }
      ASSERT_EQ(w.NextDeadline(), earliest()) << i;
    }
    EXPECT_LE(w.RestructureVisitsForTest(), 10u * kTimers);
  }
}

// The oracle test: long random sequences of inserts (at horizons from the past
// to years and beyond, on slot boundaries, with ties, in runs of close
// deadlines), cancels (of pending and of stale handles, and of the earliest
// timers, which makes leaves split and merge) and advances (by 0, small, to
// the next deadline exactly, across level boundaries, by decades), checked
// against a std::multimap after every step.
class TimingWheelOracleTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(TimingWheelOracleTest, AgreesWithMultimapOracle) {
  const uint32_t seed = GetParam();
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  constexpr int64_t kStarts[] = {0, 1'767'225'600'000, -5'000'000,
                                 (int64_t{1} << 40) - 3};
  const int64_t start = kStarts[seed % 4];
  // Advances stop here; deadlines may lie beyond it, up to kMax.
  const int64_t kLastNow = int64_t{1} << 62;

  TimingWheel w(start);
  // deadline -> (insertion sequence number, id); multimap keeps equal keys in
  // insertion order, which is the order ties must fire in.
  std::multimap<int64_t, std::pair<uint64_t, uint64_t>> oracle;
  struct Issued {
    Handle handle;
    int64_t deadline;
    uint64_t seq;
  };
  std::vector<Issued> issued;   // pending, or stale and not yet noticed
  std::vector<Handle> stale;    // known stale
  std::vector<bool> pending;    // by sequence number
  std::vector<Handle> handles;  // by sequence number
  uint64_t seq = 0;

  auto pick_deadline = [&]() -> int64_t {
    const int64_t now = w.now();
    switch (uniform(0, 10)) {
      case 0:
        return now - uniform(0, 100'000);
      case 1:
        return now;
      case 2:
        return now + uniform(1, 64);
      case 3:
        return now + uniform(1, 4096);
      case 4:
        return now + uniform(1, 300'000);
      case 5:
        return now + uniform(1, kDay);
      case 6:
        return now + uniform(1, 3 * kYear);
      case 7: {  // on or next to a slot boundary (or a split leaf's)
        const int shift = 4 * static_cast<int>(uniform(1, 15));
        const int64_t boundary = ((now >> shift) + uniform(0, 3)) << shift;
        return boundary + uniform(-1, 1);
      }
      case 8:  // a tie with a pending timer
        if (!oracle.empty()) {
          auto it = oracle.begin();
          std::advance(it,
                       uniform(0, std::min<int64_t>(20, oracle.size() - 1)));
          return it->first;
        }
        return now;
      case 9:
        return now + uniform(1, int64_t{1} << 50);
      default:
        switch (uniform(0, 3)) {
          case 0:
            return kMax;
          case 1:
            return kMax / 2;
          default:
            return now + uniform(1, int64_t{1} << 61);
        }
    }
  };

  auto pick_target = [&]() -> int64_t {
    const int64_t now = w.now();
    int64_t t = now;
    switch (uniform(0, 9)) {
      case 0:
        break;
      case 1:
        t = now + uniform(1, 10);
        break;
      case 2:
        t = now + uniform(1, 100);
        break;
      case 3:
        t = now + uniform(1, 5000);
        break;
      case 4:
        t = now + uniform(1, 1'000'000);
        break;
      case 5:  // exactly the next deadline, or just before it
      case 6:
        if (!oracle.empty()) {
          t = std::max(now, oracle.begin()->first - uniform(0, 1));
        }
        break;
      case 7: {  // a slot boundary (or a split leaf's), or next to it
        const int shift = 4 * static_cast<int>(uniform(1, 10));
        t = std::max(now, (((now >> shift) + 1) << shift) + uniform(-1, 1));
        break;
      }
      case 8:
        t = now + uniform(1, kYear);
        break;
      default:
        t = now + uniform(1, int64_t{1} << 40);
        break;
    }
    return std::min(t, std::max(now, kLastNow));
  };

  constexpr int kSteps = 150'000;
  for (int step = 0; step < kSteps; ++step) {
    int64_t op = uniform(0, 99);
    // Odd seeds mostly cancel instead of advancing, so that split leaves
    // shrink until they merge rather than being cascaded away.
    if (seed % 2 == 1 && op >= 70 && uniform(0, 49) != 0) op = uniform(42, 66);
    if (op < 42) {
      const int64_t deadline = pick_deadline();
      // Now and then a burst of timers due at once, like jobs on the hour,
      // or a run of close deadlines, ascending or descending.
      const int64_t kind = uniform(0, 99);
      const int64_t copies = kind < 6 ? uniform(2, 80) : 1;
      const int64_t step =
          kind < 3 ? 0 : (kind % 2 ? 1 : -1) * uniform(1, kind < 5 ? 9 : 4000);
      for (int64_t c = 0; c < copies; ++c) {
        const int64_t delta = c * step;  // deadline + delta, saturated
        const int64_t d = delta > 0 && deadline > kMax - delta ? kMax
                          : delta < 0 && deadline < kMin - delta
                              ? kMin
                              : deadline + delta;
        const Handle h = w.Insert(seq, d);
        oracle.emplace(d, std::make_pair(seq, seq));
        issued.push_back({h, d, seq});
        pending.push_back(true);
        handles.push_back(h);
        ++seq;
      }
    } else if (op < 53) {
      // Cancel one of the earliest timers (the first, mostly).
      if (oracle.empty()) continue;
      auto it = oracle.begin();
      if (uniform(0, 3) == 0) {
        std::advance(it, uniform(0, std::min<int64_t>(3, oracle.size() - 1)));
      }
      const uint64_t victim = it->second.first;
      ASSERT_TRUE(w.Cancel(handles[victim]))
          << "seed " << seed << " step " << step;
      pending[victim] = false;
      stale.push_back(handles[victim]);
      oracle.erase(it);
    } else if (op < 67) {
      if (issued.empty()) continue;
      const size_t k = static_cast<size_t>(
          uniform(0, static_cast<int64_t>(issued.size()) - 1));
      const Issued victim = issued[k];
      issued[k] = issued.back();
      issued.pop_back();
      ASSERT_EQ(w.IsPending(victim.handle), pending[victim.seq])
          << "seed " << seed << " step " << step;
      ASSERT_EQ(w.Cancel(victim.handle), pending[victim.seq])
          << "seed " << seed << " step " << step;
      if (pending[victim.seq]) {
        auto [lo, hi] = oracle.equal_range(victim.deadline);
        auto it = std::find_if(lo, hi, [&](const auto& e) {
          return e.second.first == victim.seq;
        });
        ASSERT_NE(it, hi);
        oracle.erase(it);
        pending[victim.seq] = false;
      }
      stale.push_back(victim.handle);
    } else if (op < 70) {
      if (stale.empty()) continue;
      const Handle h = stale[static_cast<size_t>(
          uniform(0, static_cast<int64_t>(stale.size()) - 1))];
      ASSERT_FALSE(w.Cancel(h)) << "seed " << seed << " step " << step;
    } else {
      const int64_t target = pick_target();
      std::vector<Expired> want;
      while (!oracle.empty() && oracle.begin()->first <= target) {
        want.push_back({oracle.begin()->second.second, oracle.begin()->first});
        pending[oracle.begin()->second.first] = false;
        oracle.erase(oracle.begin());
      }
      std::vector<Expired> got;
      w.AdvanceTo(target, &got);
      ASSERT_EQ(got, want) << "seed " << seed << " step " << step
                           << " advance to " << target;
      ASSERT_EQ(w.now(), target);
    }
    ASSERT_EQ(w.size(), oracle.size()) << "seed " << seed << " step " << step;
    const std::optional<int64_t> want_next =
        oracle.empty() ? std::nullopt
                       : std::optional<int64_t>(oracle.begin()->first);
    ASSERT_EQ(w.NextDeadline(), want_next)
        << "seed " << seed << " step " << step;
  }
  // Drain: every timer still pending fires, in order, at the end of time.
  std::vector<Expired> want;
  for (const auto& [deadline, entry] : oracle) {
    want.push_back({entry.second, deadline});
  }
  std::vector<Expired> got;
  w.AdvanceTo(kMax, &got);
  EXPECT_EQ(got, want);
  EXPECT_EQ(w.size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, TimingWheelOracleTest,
                         ::testing::Values(1u, 2u, 3u, 4u, 2026u));

}  // namespace
}  // namespace chime::wheel
