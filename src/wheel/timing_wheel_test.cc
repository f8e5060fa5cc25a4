// The timing wheel's behaviour, one case at a time: the worked examples of the
// class comment, splits and merges of the earliest leaf, overdue timers, ties,
// cancellation and stale handles, the ends of the timeline, and NextDeadline.
// The randomized and large-scale tests are in timing_wheel_stress_test.cc.
#include "src/wheel/timing_wheel.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/wheel/timing_wheel_test_util.h"

namespace chime::wheel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Expired = TimingWheel::Expired;
using Handle = TimingWheel::Handle;

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

TEST(TimingWheel, AnExpiredTimerCarriesTheHandleItsInsertReturned) {
  TimingWheel w(100);
  const Handle overdue = w.Insert(1, 50);  // due before now: the overdue leaf
  const Handle cascaded = w.Insert(2, 5000);
  const Handle soon = w.Insert(3, 101);
  w.Cancel(w.Insert(4, 101));
  const std::vector<Expired> fired = Advance(w, 6000);
  ASSERT_EQ(fired.size(), 3u);
  EXPECT_EQ(fired[0].handle, overdue);
  EXPECT_EQ(fired[1].handle, soon);
  EXPECT_EQ(fired[2].handle, cascaded);
  // Stale now, and never equal to a handle issued later on the same node.
  for (const Expired& e : fired) EXPECT_FALSE(w.IsPending(e.handle));
  const Handle reused = w.Insert(5, 7000);
  for (const Expired& e : fired) EXPECT_NE(e.handle, reused);
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

}  // namespace
}  // namespace chime::wheel::testing
