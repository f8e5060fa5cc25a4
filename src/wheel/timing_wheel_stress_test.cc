// The timing wheel against references, at scale: many small advances against
// one big one, long random sequences of operations against a std::multimap,
// and bounds on memory per timer and on the work cancellations cause. The
// one-case-at-a-time tests are in timing_wheel_test.cc.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "src/wheel/timing_wheel.h"
#include "src/wheel/timing_wheel_test_util.h"

namespace chime::wheel::testing {
namespace {

using Expired = TimingWheel::Expired;
using Handle = TimingWheel::Handle;

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
}  // namespace chime::wheel::testing
