// What the chime-bench workloads record of their fires, kept small enough not
// to weigh on the memory they measure: which fires ran, as one bit each, and
// how late, as a histogram per recording thread (no shared cache line between
// the workers, no lock on the way). A million fires take 125 KB of bits; a
// thread's histogram takes 20 KB, whatever the number of fires.
#ifndef CHIME_BENCH_FIRE_RECORD_H_
#define CHIME_BENCH_FIRE_RECORD_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace chime::bench {

// Counts non-negative values (µs) into log-linear buckets: exact below 64,
// then 64 buckets per power of two, so that a bucket's width is at most 1/64
// of its values (1.6%). Quantiles answer a bucket's upper edge: never below
// the true value, at most 1.6% above it. Not thread-safe.
class LatencyHistogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr int64_t kSub = int64_t{1} << kSubBits;
  // Values up to 2^48 µs (8.9 years); larger ones count in the last bucket.
  static constexpr int kBuckets = kSub + (48 - kSubBits) * kSub;

  void Add(int64_t us) {
    us = std::max<int64_t>(us, 0);
    ++counts_[Bucket(us)];
    ++count_;
    max_ = std::max(max_, us);
  }
  void Merge(const LatencyHistogram& other) {
    for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    max_ = std::max(max_, other.max_);
  }
  int64_t count() const { return count_; }
  int64_t max_us() const { return max_; }  // exact; 0 if empty

  // The value at quantile q (0..1) by nearest rank, as its bucket's upper
  // edge (but never above the largest value recorded); 0 if empty.
  int64_t QuantileUs(double q) const {
    if (count_ == 0) return 0;
    const int64_t rank = std::clamp<int64_t>(
        static_cast<int64_t>(std::ceil(q * static_cast<double>(count_))), 1,
        count_);
    int64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(UpperEdge(i), max_);
    }
    return max_;
  }

  // The non-empty buckets as (upper edge, count), in increasing order: what
  // bench/cluster_bench.py merges across processes.
  std::vector<std::pair<int64_t, int64_t>> Buckets() const {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int i = 0; i < kBuckets; ++i)
      if (counts_[i] != 0) out.emplace_back(UpperEdge(i), counts_[i]);
    return out;
  }

  static int Bucket(int64_t us) {
    if (us < kSub) return static_cast<int>(us);
    const int exponent = std::bit_width(static_cast<uint64_t>(us)) - 1;
    const int shift = exponent - kSubBits;
    const int index = kSub + shift * static_cast<int>(kSub) +
                      static_cast<int>((us >> shift) - kSub);
    return std::min(index, kBuckets - 1);
  }
  // The largest value that falls in bucket `i`.
  static int64_t UpperEdge(int i) {
    if (i < kSub) return i;
    const int shift = (i - static_cast<int>(kSub)) / static_cast<int>(kSub);
    const int64_t sub = (i - kSub) % kSub;
    return ((kSub + sub + 1) << shift) - 1;
  }

 private:
  std::array<int64_t, kBuckets> counts_{};
  int64_t count_ = 0;
  int64_t max_ = 0;
};

// Which of `cells` fires ran: Mark sets a cell's bit and tells whether it was
// already set (the fire ran twice). Thread-safe.
class FireBits {
 public:
  explicit FireBits(int64_t cells)
      : cells_(cells),
        words_(std::make_unique<std::atomic<uint64_t>[]>((cells + 63) / 64)) {}

  // REQUIRES: 0 <= cell < cells.
  bool Mark(int64_t cell) {
    const uint64_t bit = uint64_t{1} << (cell % 64);
    return (words_[cell / 64].fetch_or(bit, std::memory_order_relaxed) & bit) !=
           0;
  }
  bool Test(int64_t cell) const {
    return (words_[cell / 64].load(std::memory_order_relaxed) >> (cell % 64)) &
           1;
  }
  int64_t Count() const {
    int64_t n = 0;
    for (int64_t w = 0; w < (cells_ + 63) / 64; ++w)
      n += std::popcount(words_[w].load(std::memory_order_relaxed));
    return n;
  }

 private:
  int64_t cells_;
  std::unique_ptr<std::atomic<uint64_t>[]> words_;
};

// Per-thread records of the fires' lateness and instants: Local() is the
// calling thread's own (made on its first call). Read Merged() once the
// recording threads are done (joined, as by Scheduler::Shutdown).
class FireStats {
 public:
  struct Local {
    LatencyHistogram late;
    int64_t first_ns = std::numeric_limits<int64_t>::max();
    int64_t last_ns = 0;
    // The largest lateness of each slot's fires (a slot: a second of the
    // cron workload's window, say), for the slots Add was given.
    std::vector<int64_t> slot_max_us;

    void Add(int64_t late_us, int64_t at_ns) {
      late.Add(late_us);
      first_ns = std::min(first_ns, at_ns);
      last_ns = std::max(last_ns, at_ns);
    }
    // REQUIRES: slot >= 0.
    void Add(int64_t late_us, int64_t at_ns, int64_t slot) {
      Add(late_us, at_ns);
      if (slot >= static_cast<int64_t>(slot_max_us.size()))
        slot_max_us.resize(slot + 1, 0);
      slot_max_us[slot] = std::max(slot_max_us[slot], late_us);
    }
  };

  Local& Mine() {
    // A thread keeps its record of the FireStats it last recorded into,
    // known by id (a later one may live at the same address).
    thread_local uint64_t owner = 0;
    thread_local Local* local = nullptr;
    if (owner != id_) {
      std::lock_guard<std::mutex> lock(mu_);
      locals_.push_back(std::make_unique<Local>());
      local = locals_.back().get();
      owner = id_;
    }
    return *local;
  }

  Local Merged() const {
    std::lock_guard<std::mutex> lock(mu_);
    Local all;
    for (const auto& l : locals_) {
      all.late.Merge(l->late);
      all.first_ns = std::min(all.first_ns, l->first_ns);
      all.last_ns = std::max(all.last_ns, l->last_ns);
      if (all.slot_max_us.size() < l->slot_max_us.size())
        all.slot_max_us.resize(l->slot_max_us.size(), 0);
      for (size_t i = 0; i < l->slot_max_us.size(); ++i)
        all.slot_max_us[i] = std::max(all.slot_max_us[i], l->slot_max_us[i]);
    }
    return all;
  }

 private:
  static uint64_t NextId() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1);
  }

  const uint64_t id_ = NextId();
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Local>> locals_;
};

}  // namespace chime::bench

#endif  // CHIME_BENCH_FIRE_RECORD_H_
