// TimingWheel: a hierarchical timing wheel, the timer structure of chime's
// scheduler core.
//
// The core keeps one timer per job (the job's next fire) and asks three
// things of it: add or drop a timer in O(1), hand back every timer that is due
// when time moves, and say when the earliest timer is due so the scheduler
// thread knows how long to sleep. It must do this for 10 million timers in a
// few hundred megabytes. It is a plain data structure: it owns no thread, reads
// no clock and does no I/O; the owner passes the time in.
//
// Times are integer milliseconds on the owner's monotonic timeline; any int64
// value is a valid time or deadline (internally the sign bit is flipped so the
// order is the unsigned order, and 11 levels of 6 bits cover all 64 bits).
//
// How it works. Level L has 64 slots; a slot of level L spans 64^L ms (level 0:
// 1 ms, level 1: 64 ms, level 2: 4.1 s, level 3: 4.4 min, level 4: 4.7 h,
// level 5: 12.4 days, ... level 10: beyond any calendar). A pending timer with
// deadline d sits at the level of the highest bit in which d and `now` differ
// (bit b -> level b/6), in slot (d >> 6L) & 63: so all timers of a level share
// their higher digits with `now`, and only slots after now's own digit are
// ever occupied. Each level keeps a 64-bit occupancy bitmap, so the earliest
// occupied slot of a level is one count-trailing-zeros, and the earliest
// pending timer is in the earliest occupied slot of the lowest non-empty level.
// A level-0 slot holds timers of exactly one deadline. When `now` reaches the
// start of a higher-level slot, that slot is emptied and its timers cascade to
// lower levels (or fire, if due exactly then): each timer moves at most 10
// times in its life, whatever its horizon.
//
// Worked example, starting at now = 0:
//   Insert(A, 5)     5 ^ 0 has its top bit at 2  -> level 0, slot 5
//   Insert(B, 100)   top bit 6                   -> level 1, slot 1 [64,128)
//   Insert(C, 100)   same deadline               -> level 1, slot 1, after B
//   Insert(D, 5000)  top bit 12                  -> level 2, slot 1
//                                                   [4096, 8192)
//   Insert(E, 3 days = 259,200,000)  top bit 27  -> level 4, slot 15
//                                          [251658240, 268435456)
//   NextDeadline() -> 5 (level 0 is the lowest non-empty level; slot 5).
//   AdvanceTo(120):
//     level 0, slot 5 starts at 5 <= 120: now = 5, fire A.
//     level 1, slot 1 starts at 64 <= 120: now = 64, cascade B and C:
//       100 ^ 64 has its top bit at 5 -> level 0, slot 36, B still before C.
//     level 0, slot 36 starts at 100 <= 120: now = 100, fire B then C.
//     level 2, slot 1 starts at 4096 > 120: stop; now = 120.
//     Result: A@5, B@100, C@100.
//   NextDeadline() -> 5000: level 2 is the lowest non-empty level; its first
//     occupied slot (1) is scanned for the exact minimum.
//   AdvanceTo(5000): slot 1 of level 2 cascades D to level 1, slot 14
//     [4992, 5056); that slot cascades D to level 0, slot 8; D fires at 5000.
//     Three slot visits, whatever the number of empty slots in between.
//
// Deadlines at or before `now` at insertion go to a separate "overdue" list
// and fire, sorted, at the next AdvanceTo.
//
// Memory: a timer is a 32-byte node in a slab of fixed-size chunks (the slab
// never moves nodes, so growth costs no copy and no latency spike), linked
// into its slot by 32-bit indices; freed nodes are reused through a free list.
// There is no per-timer allocation and no hash map. The fixed part (slot heads
// with their memos, and the bitmaps) is about 17 KB.
//
// Thread-safety: not thread-safe. Every call, including the const ones
// (NextDeadline memoizes per-slot minimums), needs external synchronization; in
// chime the scheduler thread owns its wheel.
#ifndef CHIME_SRC_WHEEL_TIMING_WHEEL_H_
#define CHIME_SRC_WHEEL_TIMING_WHEEL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace chime::wheel {

class TimingWheel {
 public:
  // Names one pending timer. A handle goes stale when its timer fires or is
  // cancelled; every use of a stale handle is detected (Cancel returns false),
  // even after its node has been reused by a later Insert, as long as that
  // node has not been reused 2^32 times since. A value-initialized Handle{} is
  // never pending.
  struct Handle {
    uint32_t index = 0;
    uint32_t generation = 0;
    bool operator==(const Handle&) const = default;
  };

  // One fired timer, as reported by AdvanceTo.
  struct Expired {
    uint64_t id;
    int64_t deadline_ms;
    bool operator==(const Expired&) const = default;
  };

  // An empty wheel whose time is `now_ms`.
  explicit TimingWheel(int64_t now_ms);

  TimingWheel(const TimingWheel&) = delete;
  TimingWheel& operator=(const TimingWheel&) = delete;
  // A moved-from wheel may only be destroyed or assigned to.
  TimingWheel(TimingWheel&&) = default;
  TimingWheel& operator=(TimingWheel&&) = default;

  // Schedules a timer carrying the caller's `id` (any value; the wheel never
  // interprets it, and several timers may share one) to fire at `deadline_ms`.
  // A deadline <= now() fires at the next AdvanceTo, whatever its argument.
  // O(1); allocates only when the slab grows by a chunk.
  // REQUIRES: fewer than 2^32 - 1 timers pending (aborts otherwise).
  Handle Insert(uint64_t id, int64_t deadline_ms);

  // Removes the pending timer `h` so that it never fires. Returns true if it
  // was pending, false if `h` is stale (already fired or cancelled) or was
  // never issued by this wheel. O(1).
  bool Cancel(Handle h);

  // True if `h` names a timer that has neither fired nor been cancelled.
  bool IsPending(Handle h) const;

  // Moves time forward to `now_ms` and appends every timer with deadline <=
  // now_ms to `*expired` (which is not cleared first), in deadline order, ties
  // in insertion order. Fired timers are removed and their handles go stale.
  // Cost: O(occupied slots reached + timers cascaded or fired), plus a sort of
  // the timers inserted with past deadlines. Empty slots are skipped through
  // the occupancy bitmaps, so a jump of years over an empty wheel is as cheap
  // as a jump of 1 ms, and a timer cascades at most 10 times in its life.
  // AdvanceTo(now()) fires just the timers inserted with past deadlines.
  // REQUIRES: now_ms >= now() (time never goes back: aborts otherwise, since a
  // monotonic timeline going back means the caller's clock or logic is
  // broken), expired != nullptr.
  void AdvanceTo(int64_t now_ms, std::vector<Expired>* expired);

  // The earliest pending deadline, exactly (not a slot boundary), or nullopt
  // when no timer is pending. O(1): each slot remembers its earliest deadline
  // and how many of its timers share it, through inserts, cascades and
  // firings. Known limit: once every timer due at a slot's earliest deadline
  // has been cancelled, the next call scans that slot (O(timers in it)) to
  // find the new minimum; cancelling the earliest timers of one crowded slot
  // one after another, with a call in between, costs a scan each time.
  std::optional<int64_t> NextDeadline() const;

  // The time set by the constructor or the last AdvanceTo.
  int64_t now() const { return FromKey(now_); }
  // The number of pending timers.
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Bytes held by the wheel's own structures (the object, the slab chunks and
  // their index), for benchmarks and memory budgets. The slab never shrinks:
  // this is the high-water mark of pending timers times 32 bytes, rounded up
  // to a chunk, plus about 17 KB.
  size_t MemoryBytes() const;

 private:
  static constexpr int kBitsPerLevel = 6;
  static constexpr int kSlotsPerLevel = 1 << kBitsPerLevel;
  static constexpr int kLevels = (64 + kBitsPerLevel - 1) / kBitsPerLevel;
  // Lists: one per slot of every level, then the overdue list.
  static constexpr int kOverdueList = kLevels * kSlotsPerLevel;
  static constexpr int kNumLists = kOverdueList + 1;
  static constexpr uint16_t kNotInList = 0xFFFF;
  static constexpr uint32_t kNil = 0xFFFFFFFF;
  static constexpr int kChunkBits = 14;  // 16384 nodes, 512 KB per chunk
  static constexpr uint32_t kChunkSize = uint32_t{1} << kChunkBits;

  // A timer, or a free node. 32 bytes.
  struct Node {
    uint64_t id;
    int64_t deadline_ms;
    uint32_t next;  // next in its list or in the free list; kNil at the end
    uint32_t prev;  // previous in its list; kNil at the head
    uint32_t generation;
    uint16_t list;  // which list holds it; kNotInList when free
  };
  static_assert(sizeof(Node) == 32);

  // A slot's (or the overdue) list, with a memo of its earliest deadline:
  // `min_count` of its timers are due at `min`; min_count == 0 means unknown
  // (or empty). Appends keep the memo; cancelling the last timer due at `min`
  // clears it, and NextDeadline recomputes it by a scan.
  struct List {
    uint32_t head = kNil;
    uint32_t tail = kNil;
    mutable uint32_t min_count = 0;
    mutable int64_t min = 0;
  };

  // Order-preserving map of the int64 timeline onto uint64 ("keys"), on which
  // the level/slot arithmetic works.
  static uint64_t ToKey(int64_t t) {
    return static_cast<uint64_t>(t) ^ (uint64_t{1} << 63);
  }
  static int64_t FromKey(uint64_t k) {
    return static_cast<int64_t>(k ^ (uint64_t{1} << 63));
  }

  Node& node(uint32_t i) {
    return chunks_[i >> kChunkBits][i & (kChunkSize - 1)];
  }
  const Node& node(uint32_t i) const {
    return chunks_[i >> kChunkBits][i & (kChunkSize - 1)];
  }

  uint32_t AllocateNode();
  void FreeNode(uint32_t i);
  // The list a timer due at `key` (> now_) belongs to.
  int ListFor(uint64_t key) const;
  void Append(int list, uint32_t i);
  void Unlink(uint32_t i);
  // The key at which slot `slot` of `level` starts, relative to now_.
  uint64_t SlotStart(int level, int slot) const;
  // Appends the overdue timers to `*expired`, sorted, and frees them.
  void FireOverdue(std::vector<Expired>* expired);
  // The earliest deadline in non-empty list `l`, from its memo or a scan.
  int64_t ListMin(const List& l) const;

  uint64_t now_;  // a key
  size_t size_ = 0;
  std::vector<std::unique_ptr<Node[]>> chunks_;
  uint32_t allocated_ = 0;  // nodes handed out from the chunks, ever
  uint32_t free_head_ = kNil;
  std::array<List, kNumLists> lists_;
  std::array<uint64_t, kLevels> occupied_{};  // bit s: slot s is non-empty
  uint32_t occupied_levels_ = 0;              // bit L: occupied_[L] != 0
};

}  // namespace chime::wheel

#endif  // CHIME_SRC_WHEEL_TIMING_WHEEL_H_
