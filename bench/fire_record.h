// What the chime-bench workloads record of their fires, kept small enough not
// to weigh on the memory they measure: which fires ran, as one bit each, and
// how late, as a histogram per recording thread (no shared cache line between
// the workers, no lock or locked instruction on the way). A million fires
// take 125 KB of bits per recording thread; a thread's histogram takes 20 KB,
// whatever the number of fires.
#ifndef CHIME_BENCH_FIRE_RECORD_H_
#define CHIME_BENCH_FIRE_RECORD_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
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

// Which of `cells` fires ran, a bit each: Mark sets a cell's bit and tells
// whether it was already set (the fire ran twice). Not thread-safe: each
// recording thread marks its own (FireStats::Local), with no locked
// instruction per fire, and FireStats::Merged() ORs them together.
class FireBits {
 public:
  explicit FireBits(int64_t cells = 0) : words_((cells + 63) / 64) {}

  // REQUIRES: 0 <= cell < cells.
  bool Mark(int64_t cell) {
    const uint64_t bit = uint64_t{1} << (cell % 64);
    uint64_t& word = words_[cell / 64];
    const bool was = (word & bit) != 0;
    word |= bit;
    return was;
  }
  bool Test(int64_t cell) const {
    return (words_[cell / 64] >> (cell % 64)) & 1;
  }
  int64_t Count() const {
    int64_t n = 0;
    for (uint64_t w : words_) n += std::popcount(w);
    return n;
  }
  // Sets the bits set in `other` (of as many cells); returns how many of
  // them were set here already.
  int64_t Merge(const FireBits& other) {
    int64_t both = 0;
    for (size_t i = 0; i < words_.size() && i < other.words_.size(); ++i) {
      both += std::popcount(words_[i] & other.words_[i]);
      words_[i] |= other.words_[i];
    }
    return both;
  }

 private:
  std::vector<uint64_t> words_;
};

// Per-thread records of which fires ran (of `cells`), how late and when:
// Mine() is the calling thread's own (made on its first call: a thread that
// records should call it before the fires it measures, as the bits are
// allocated then). Read Merged() once the recording threads are done (joined,
// as by Scheduler::Shutdown).
class FireStats {
 public:
  explicit FireStats(int64_t cells = 0) : cells_(cells) {}

  struct Local {
    explicit Local(int64_t cells = 0) : ran(cells) {}

    FireBits ran;
    int64_t extra = 0;  // marks of a cell already marked (fires run twice)
    LatencyHistogram late;
    int64_t first_ns = std::numeric_limits<int64_t>::max();
    int64_t last_ns = 0;
    // The largest lateness of each slot's fires (a slot: a second of the
    // cron workload's window, say), for the slots Add was given.
    std::vector<int64_t> slot_max_us;

    // Marks `cell` ran; true, and counted in `extra`, if it had already
    // (on this thread: Merged() finds the cells two threads marked).
    // REQUIRES: 0 <= cell < cells.
    bool Mark(int64_t cell) {
      if (!ran.Mark(cell)) return false;
      ++extra;
      return true;
    }
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
      locals_.push_back(std::make_unique<Local>(cells_));
      local = locals_.back().get();
      owner = id_;
    }
    return *local;
  }

  // All threads' records as one: a cell marked by two threads counts in
  // `extra` as well.
  Local Merged() const {
    std::lock_guard<std::mutex> lock(mu_);
    Local all(cells_);
    for (const auto& l : locals_) {
      all.extra += l->extra + all.ran.Merge(l->ran);
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

  const int64_t cells_;
  const uint64_t id_ = NextId();
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Local>> locals_;
};

}  // namespace chime::bench

#endif  // CHIME_BENCH_FIRE_RECORD_H_
