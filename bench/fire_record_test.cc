#include "bench/fire_record.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace chime::bench {
namespace {

int64_t ExactQuantile(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  const auto rank = std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(q * static_cast<double>(v.size()))), 1,
      static_cast<int64_t>(v.size()));
  return v[rank - 1];
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int64_t v = 0; v < 64; ++v) h.Add(v);
  EXPECT_EQ(h.count(), 64);
  EXPECT_EQ(h.QuantileUs(0.5), 31);
  EXPECT_EQ(h.QuantileUs(1.0), 63);
  EXPECT_EQ(h.QuantileUs(0.0), 0);
  EXPECT_EQ(h.max_us(), 63);
}

TEST(LatencyHistogram, QuantilesAreWithinABucketAboveTheTrueValue) {
  std::mt19937_64 rng(7);
  // Spread over six decades, as lateness is (µs to seconds).
  std::lognormal_distribution<double> dist(6.0, 2.5);
  std::vector<int64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 200000; ++i) {
    const auto v = static_cast<int64_t>(dist(rng));
    values.push_back(v);
    h.Add(v);
  }
  for (double q : {0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    const int64_t exact = ExactQuantile(values, q);
    const int64_t got = h.QuantileUs(q);
    EXPECT_GE(got, exact) << "q=" << q;
    EXPECT_LE(got, exact + exact / 64 + 1) << "q=" << q;
  }
  EXPECT_EQ(h.max_us(), *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(h.QuantileUs(1.0), h.max_us());
}

TEST(LatencyHistogram, EveryValueFallsInTheBucketWhoseEdgesHoldIt) {
  for (int64_t v : {int64_t{0}, int64_t{63}, int64_t{64}, int64_t{65},
                    int64_t{127}, int64_t{128}, int64_t{129}, int64_t{5000},
                    int64_t{1} << 40, (int64_t{1} << 48) - 1}) {
    const int b = LatencyHistogram::Bucket(v);
    EXPECT_LE(v, LatencyHistogram::UpperEdge(b)) << v;
    if (b > 0) EXPECT_GT(v, LatencyHistogram::UpperEdge(b - 1)) << v;
  }
  // Beyond the range: the last bucket, no overflow.
  EXPECT_EQ(LatencyHistogram::Bucket(int64_t{1} << 60),
            LatencyHistogram::kBuckets - 1);
}

TEST(LatencyHistogram, MergeCountsAsOne) {
  LatencyHistogram a, b, both;
  for (int64_t v = 0; v < 5000; v += 7) {
    (v % 2 == 0 ? a : b).Add(v);
    both.Add(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), both.count());
  EXPECT_EQ(a.Buckets(), both.Buckets());
  EXPECT_EQ(a.QuantileUs(0.99), both.QuantileUs(0.99));
  EXPECT_EQ(a.max_us(), both.max_us());
}

TEST(FireBits, MarkTellsASecondRun) {
  FireBits bits(130);
  EXPECT_FALSE(bits.Mark(0));
  EXPECT_FALSE(bits.Mark(129));
  EXPECT_TRUE(bits.Mark(129));
  EXPECT_TRUE(bits.Test(0));
  EXPECT_FALSE(bits.Test(1));
  EXPECT_EQ(bits.Count(), 2);
}

TEST(FireBits, MergeCountsTheCellsSetInBoth) {
  FireBits a(130), b(130);
  a.Mark(1);
  a.Mark(70);
  b.Mark(70);
  b.Mark(129);
  EXPECT_EQ(a.Merge(b), 1);
  EXPECT_EQ(a.Count(), 3);
  EXPECT_TRUE(a.Test(129));
}

TEST(FireStats, AFireMarkedTwiceOnOneThreadOrOnTwoCountsAsExtra) {
  FireStats stats(100);
  std::thread first([&stats] {
    EXPECT_FALSE(stats.Mine().Mark(3));
    EXPECT_TRUE(stats.Mine().Mark(3));  // again on the same thread
    EXPECT_FALSE(stats.Mine().Mark(5));
  });
  first.join();
  std::thread second([&stats] {
    EXPECT_FALSE(stats.Mine().Mark(5));  // the first thread's: seen at merge
    EXPECT_FALSE(stats.Mine().Mark(99));
  });
  second.join();
  const FireStats::Local all = stats.Merged();
  EXPECT_EQ(all.ran.Count(), 3);
  EXPECT_EQ(all.extra, 2);
}

TEST(FireStats, EachThreadRecordsApartAndMergedSumsThem) {
  FireStats stats;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&stats, t] {
      for (int i = 0; i < 1000; ++i) stats.Mine().Add(t * 10, 100 + t, t % 2);
    });
  }
  for (std::thread& th : threads) th.join();
  const FireStats::Local all = stats.Merged();
  EXPECT_EQ(all.late.count(), 4000);
  EXPECT_EQ(all.late.max_us(), 30);
  EXPECT_EQ(all.first_ns, 100);
  EXPECT_EQ(all.last_ns, 103);
  // Threads 0 and 2 recorded slot 0, threads 1 and 3 slot 1.
  EXPECT_EQ(all.slot_max_us, (std::vector<int64_t>{20, 30}));
}

TEST(FireStats, ALaterOneStartsEmptyOnTheSameThread) {
  {
    FireStats first;
    first.Mine().Add(5, 1);
  }
  FireStats second;  // may take the first one's address
  EXPECT_EQ(second.Merged().late.count(), 0);
  second.Mine().Add(7, 2);
  EXPECT_EQ(second.Merged().late.count(), 1);
  EXPECT_EQ(second.Merged().late.max_us(), 7);
}

}  // namespace
}  // namespace chime::bench
