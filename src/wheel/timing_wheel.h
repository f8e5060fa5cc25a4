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
// order is the unsigned order, and 7 levels of 10 bits cover all 64 bits, the
// top level using 4 of them).
//
// How it works. Level L has 1024 slots; a slot of level L spans 1024^L ms
// (level 0: 1 ms, level 1: 1 s, level 2: 17.5 min, level 3: 12.4 days, level
// 4: 35 years, levels 5 and 6: beyond any calendar). A pending timer with
// deadline d sits at the level of the highest bit in which d and `now` differ
// (bit b -> level b/10), in slot (d >> 10L) & 1023: so all timers of a level
// share their higher digits with `now`, and only slots after now's own digit
// are ever occupied. Each level keeps an occupancy bitmap with a summary word,
// so the earliest occupied slot of a level is two count-trailing-zeros, and
// the earliest pending timer is in the earliest occupied slot of the lowest
// non-empty level. When `now` reaches the start of a higher-level slot, that
// slot is emptied and its timers cascade to lower levels (or fire, if due
// exactly then): each timer moves at most 6 times in its life, whatever its
// horizon; one due within a second mostly not at all, within minutes mostly
// once, within days mostly twice. Wide levels keep those moves few, since each
// one reads the timer from memory; much wider ones would spread inserts over
// more slots than the caches hold.
//
// A slot holds a "leaf": an array of its timers in insertion order, kept in
// blocks of 63, with the leaf's earliest deadline and how many of its timers
// share it. The array makes walking a slot a sequential read that can fetch
// the timers ahead of use, instead of a chase through a linked list. Inserts,
// cascades and firings keep a leaf's earliest deadline exact. Cancelling the
// last timer due at it leaves only a lower bound, which is fine until that
// leaf becomes the earliest one: then (at the end of that Cancel or
// AdvanceTo) a leaf of fewer than 32 timers is rescanned, and a larger one is
// split into 16 leaves by the next 4 bits of the deadline (an "inner" node),
// whose own earliest deadlines are exact, and so on down. A split narrows
// each timer's leaf by 4 bits, so its work is bounded like a cascade's, and
// NextDeadline never scans: it follows the earliest occupied child down to a
// leaf. An inner node left with fewer than 8 timers merges back into one leaf.
// Timers reach inner nodes only through cancellations of the earliest ones (a
// scheduler removing jobs in the order it added them).
//
// Worked example, starting at now = 0:
//   Insert(A, 5)       5 ^ 0 has its top bit at 2  -> level 0, slot 5
//   Insert(B, 5000)    top bit 12                  -> level 1, slot 4
//                                                     [4096, 5120)
//   Insert(C, 5000)    same deadline               -> level 1, slot 4, after B
//   Insert(D, 20'000'000)  top bit 24              -> level 2, slot 19
//                                                     [19922944, 20971520)
//   Insert(E, 3 days = 259,200,000)  top bit 27    -> level 2, slot 247
//                                          [258998272, 260046848)
//   NextDeadline() -> 5 (level 0 is the lowest non-empty level; slot 5).
//   AdvanceTo(6000):
//     level 0, slot 5 starts at 5 <= 6000: now = 5, fire A.
//     level 1, slot 4 starts at 4096 <= 6000: now = 4096, cascade B and C:
//       5000 ^ 4096 has its top bit at 9 -> level 0, slot 904, B still
//       before C.
//     level 0, slot 904 starts at 5000 <= 6000: now = 5000, fire B then C.
//     level 2, slot 19 starts at 19922944 > 6000: stop; now = 6000.
//     Result: A@5, B@5000, C@5000.
//   NextDeadline() -> 20'000'000: the earliest deadline of level 2's slot 19.
//   AdvanceTo(20'000'000): level 2's slot 19 cascades D to level 1, slot 75
//     [19999744, 20000768); that slot cascades D to level 0, slot 256; D
//     fires at 20'000'000. Three slot visits, whatever the number of empty
//     slots between.
//   Cancel(E): the leaf of level 2's slot 247 is empty and leaves the wheel.
//   Had that slot held E and 99 more timers due 1 ms apart after it, Cancel(E)
//   would have left the leaf, now the earliest, with 99 timers and no known
//   minimum; it would have split by bits 16-19 into 16 leaves of 2^16 ms (all
//   99 in child 3, [259194880, 259260416), with the exact minimum E + 1).
//
// Deadlines at or before `now` at insertion go to a separate "overdue" leaf
// (split the same way, by the top bits first) and fire, sorted, at the next
// AdvanceTo.
//
// Memory: a timer is a 20-byte node in a slab of fixed-size chunks (the slab
// never moves nodes, so growth costs no copy and no latency spike) plus a
// 4-byte entry in its leaf's blocks: about 24 bytes per timer. Cancel only
// marks the node; it is freed when its leaf is next swept: when the leaf
// cascades, fires, splits, is rescanned, or holds 16 more cancelled entries
// than pending ones. So under heavy cancelling a leaf holds at most about 2
// nodes per pending timer (plus 16), and sweeping costs about 2 node visits
// per cancelled timer. There is no per-timer allocation and no hash map. The
// fixed part (slot references and bitmaps, allocated with the wheel) is about
// 29 KB; inner nodes are 72 bytes and exist only where cancellations made
// the earliest leaf split.
//
// Thread-safety: not thread-safe. Every call needs external synchronization;
// in chime the scheduler thread owns its wheel.
#ifndef CHIME_SRC_WHEEL_TIMING_WHEEL_H_
#define CHIME_SRC_WHEEL_TIMING_WHEEL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "src/wheel/chunked_slab.h"

namespace chime::wheel {

class TimingWheel {
 public:
  // Names one pending timer. A handle goes stale when its timer fires or is
  // cancelled; every use of a stale handle is detected (Cancel returns false),
  // even after its node has been reused by a later Insert, as long as that
  // node has not been reused 2^31 times since. A value-initialized Handle{} is
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
    // The handle Insert returned for it (stale now), so that an owner that
    // acts on expired timers later can tell whether it has since cancelled
    // or replaced that timer.
    Handle handle;
    // By id and deadline only (what the timer stood for).
    bool operator==(const Expired& o) const {
      return id == o.id && deadline_ms == o.deadline_ms;
    }
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
  // O(1); allocates only when a slab grows by a chunk, or for a new leaf.
  // REQUIRES: fewer than 2^32 - 1 timers pending (aborts otherwise).
  Handle Insert(uint64_t id, int64_t deadline_ms);

  // Removes the pending timer `h` so that it never fires. Returns true if it
  // was pending, false if `h` is stale (already fired or cancelled) or was
  // never issued by this wheel. O(1) amortized: the entry is swept later in
  // bulk, and cancelling the earliest timers may rescan the earliest leaf
  // (fewer than 32 timers), split it or merge an inner node, at O(1) per timer
  // moved; splits move a timer at most 16 times in its life.
  bool Cancel(Handle h);

  // True if `h` names a timer that has neither fired nor been cancelled.
  bool IsPending(Handle h) const;

  // Moves time forward to `now_ms` and appends every timer with deadline <=
  // now_ms to `*expired` (which is not cleared first), in deadline order, ties
  // in insertion order. Fired timers are removed and their handles go stale.
  // Cost: O(occupied slots reached + timers cascaded or fired), plus a sort of
  // the timers inserted with past deadlines. Empty slots are skipped through
  // the occupancy bitmaps, so a jump of years over an empty wheel is as cheap
  // as a jump of 1 ms, and a timer cascades at most 6 times in its life.
  // AdvanceTo(now()) fires just the timers inserted with past deadlines.
  // REQUIRES: now_ms >= now() (time never goes back: aborts otherwise, since a
  // monotonic timeline going back means the caller's clock or logic is
  // broken), expired != nullptr.
  void AdvanceTo(int64_t now_ms, std::vector<Expired>* expired);

  // The earliest pending deadline, exactly (not a slot boundary), or nullopt
  // when no timer is pending. O(1): it reads the exact earliest deadline of
  // the earliest leaf, following at most 16 inner nodes; it never scans.
  std::optional<int64_t> NextDeadline() const;

  // The time set by the constructor or the last AdvanceTo.
  int64_t now() const { return FromKey(now_); }
  // The number of pending timers.
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Bytes held by the wheel's own structures (the object, the slabs of nodes
  // and blocks, leaves and inner nodes), for benchmarks and memory budgets.
  // The slabs never shrink: this follows the high-water mark of timers
  // (pending, or cancelled and not yet swept) at about 24 bytes each, rounded
  // up to a chunk, plus about 29 KB.
  size_t MemoryBytes() const;

  // Entries visited by rescans, splits, merges and sweeps of cancelled
  // entries, since construction: the work Cancel does beyond unlinking one
  // timer. Tests bound it to catch a return of quadratic behaviour.
  uint64_t RestructureVisitsForTest() const { return restructure_visits_; }

 private:
  static constexpr int kBitsPerLevel = 10;
  static constexpr int kSlotsPerLevel = 1 << kBitsPerLevel;
  static constexpr int kLevels = (64 + kBitsPerLevel - 1) / kBitsPerLevel;
  static constexpr int kWordsPerLevel = kSlotsPerLevel / 64;
  static_assert(kWordsPerLevel <= 64);  // one summary word per level
  static constexpr int kChildBits = 4;  // an inner node splits 4 bits
  static constexpr int kChildren = 1 << kChildBits;
  static constexpr int kMaxDepth = 64 / kChildBits;  // inner nodes on a path
  // A leaf that loses its earliest deadline with this many timers splits;
  // a smaller one is rescanned.
  static constexpr uint32_t kSplitAt = 32;
  // An inner node with fewer timers merges back into a leaf.
  static constexpr uint32_t kMergeBelow = 8;
  static constexpr uint32_t kNil = 0xFFFFFFFF;
  // A reference to a slot's contents: kNil, a leaf index, or kInner | an
  // inner-node index.
  static constexpr uint32_t kInner = uint32_t{1} << 31;
  static constexpr int kNodeChunkBits = 12;  // 4096 nodes, 80 KB per chunk
  static constexpr int kBlockEntries = 63;   // a block is 256 bytes
  static constexpr int kBlockChunkBits = 8;  // 256 blocks, 64 KB per chunk

  // A timer, a cancelled timer not yet swept, or a free node. 20 bytes.
#pragma pack(push, 4)
  struct Node {
    uint64_t id;  // free: the next free node
    int64_t deadline_ms;
    // Odd: pending. Even: cancelled or free (so a stale handle never
    // matches). Insert adds one, and so do Cancel and firing.
    uint32_t generation;
  };
#pragma pack(pop)
  static_assert(sizeof(Node) == 20);

  struct Block {
    uint32_t next;  // the next block of the leaf, or of the free list
    uint32_t entries[kBlockEntries];  // node indices
  };

  // The timers of a slot, or of an inner node's child, in insertion order.
  // Every block but the last is full. If min_count > 0, `min_count` pending
  // timers are due at `min` and none earlier; if 0, every pending timer is due
  // after `min`. The earliest leaf (NextDeadline's) always has min_count > 0
  // between calls. A leaf with no pending timer is removed at once, so `live`
  // > 0 for every leaf in the wheel.
  struct Leaf {
    uint32_t first = kNil;  // first block; for a free leaf, the next free one
    uint32_t last = kNil;
    uint32_t size = 0;  // entries, pending or cancelled
    uint32_t live = 0;  // pending timers
    uint32_t min_count = 0;
    int64_t min = 0;
  };

  // A leaf split by bits [shift, shift + 4) of the deadline keys (by fewer
  // when it spanned fewer than 4 bits above shift = 0).
  struct Inner {
    std::array<uint32_t, kChildren> child;  // references; child[0] links
                                            // free inner nodes
    uint32_t live = 0;                      // pending timers below
    uint16_t occupied = 0;                  // bit c: child[c] != kNil
    uint8_t shift = 0;
  };

  // Where a leaf hangs: the reference at depth 0 is *root (a main slot or
  // the overdue root); the one at depth d > 0 is child[child[d-1]] of inner
  // node inner[d-1]. The leaf's reference is at depth `depth`.
  struct Path {
    uint32_t* root;
    int level;  // of the main slot, or -1 for the overdue root
    int slot;
    int depth = 0;
    int bits;  // the leaf spans 2^bits keys
    uint32_t leaf;
    std::array<uint32_t, kMaxDepth> inner;
    std::array<uint8_t, kMaxDepth> child;
  };

  struct Level {
    std::array<uint32_t, kSlotsPerLevel> slots;  // references
    // Bit s % 64 of words[s / 64]: slot s is occupied. Bit w of summary:
    // words[w] != 0.
    std::array<uint64_t, kWordsPerLevel> words{};
    uint64_t summary = 0;
  };

  // A position in a leaf's entries; `left` counts the entries from it to the
  // end of the leaf.
  struct Cursor {
    uint32_t block;
    uint32_t k;
    uint32_t left;
  };

  // Order-preserving map of the int64 timeline onto uint64 ("keys"), on which
  // the level/slot arithmetic works.
  static uint64_t ToKey(int64_t t) {
    return static_cast<uint64_t>(t) ^ (uint64_t{1} << 63);
  }
  static int64_t FromKey(uint64_t k) {
    return static_cast<int64_t>(k ^ (uint64_t{1} << 63));
  }

  Node& node(uint32_t i) { return nodes_[i]; }
  const Node& node(uint32_t i) const { return nodes_[i]; }
  Block& block(uint32_t b) { return blocks_[b]; }

  uint32_t AllocateNode();
  uint32_t NewNode();         // from the chunks, not the free list
  void FreeNode(uint32_t i);  // REQUIRES: generation even
  uint32_t AllocateBlock();
  void FreeBlock(uint32_t b);
  uint32_t NewLeaf();
  uint32_t NewInner(int shift);
  void SetOccupied(int level, int slot);
  void ClearOccupied(int level, int slot);
  // The earliest occupied slot of `level`. REQUIRES: the level is occupied.
  int FirstSlot(int level) const;
  // The key at which slot `slot` of `level` starts, relative to now_.
  uint64_t SlotStart(int level, int slot) const;
  // The reference at depth `d` of `p`.
  uint32_t& RefAt(const Path& p, int d);
  // The path to the leaf of a pending timer due at `key`; with `create`,
  // makes the leaf in an inner node's child if there is none. REQUIRES: the
  // slot (or the overdue root) holds a leaf or an inner node.
  Path Locate(uint64_t key, bool create);
  void Step(Cursor& c) {
    --c.left;
    if (++c.k == kBlockEntries) {
      c.block = block(c.block).next;
      c.k = 0;
    }
  }
  // Asks for the node at `ahead` (and, entering a block, for the next block)
  // to be fetched into cache, then steps; a walk keeps such a cursor some
  // entries ahead of itself, so that several memory reads are in flight.
  void PrefetchAndStep(Cursor& ahead) {
    if (ahead.left == 0) return;
    if (ahead.k == 0 && block(ahead.block).next != kNil) {
      const char* p =
          reinterpret_cast<const char*>(&block(block(ahead.block).next));
      for (size_t off = 0; off < sizeof(Block); off += 64) {
        __builtin_prefetch(p + off);
      }
    }
    __builtin_prefetch(&node(block(ahead.block).entries[ahead.k]));
    Step(ahead);
  }
  // Appends pending node `i`, due at `deadline_ms`, to leaf `l`.
  void Append(uint32_t l, uint32_t i, int64_t deadline_ms);
  void AddBlock(Leaf& leaf);  // a block at the end of `leaf`
  // Calls fn(i) for each pending node of leaf `l`, in order, frees its
  // cancelled nodes, its blocks and the leaf.
  template <typename Fn>
  void Drain(uint32_t l, Fn fn);
  // Drain for every leaf below reference `ref`, in key order; frees the
  // inner nodes.
  template <typename Fn>
  void Walk(uint32_t ref, Fn fn);
  // Places pending node `i` where it belongs and appends it.
  void Place(uint32_t i, uint64_t key, int64_t deadline_ms);
  // Place's rare case: the leaf for `key` below an inner node, made if need
  // be, with the inner nodes' counts raised for one more timer. Kept out of
  // line so that the common case needs no Path.
  [[gnu::noinline]] uint32_t LeafBelowInner(uint64_t key);
  // Sweeps the cancelled entries out of leaf `l` and recomputes its minimum.
  void Compact(uint32_t l);
  // The earliest leaf, and the path to it. REQUIRES: size_ > 0.
  uint32_t FrontLeaf() const;
  Path FrontPath();
  // Makes the earliest leaf's minimum exact: rescans or splits it.
  void RepairFront();
  // Splits p's leaf into an inner node. REQUIRES: it spans more than 1 ms.
  void Split(const Path& p);
  // Merges the inner node at `depth` back into one leaf. Rare, and kept out
  // of line so that Cancel's common path does not pay for it.
  [[gnu::noinline]] void Merge(const Path& p, int depth);
  // Removes p's leaf, which has no pending timer.
  void RemoveLeaf(const Path& p);
  // Appends the overdue timers to `*expired`, sorted, and frees them.
  void FireOverdue(std::vector<Expired>* expired);

  uint64_t now_;  // a key
  size_t size_ = 0;
  uint64_t restructure_visits_ = 0;
  ChunkedSlab<Node, kNodeChunkBits> nodes_;
  uint32_t free_node_ = kNil;  // a list through Node::id
  ChunkedSlab<Block, kBlockChunkBits> blocks_;
  uint32_t free_block_ = kNil;  // a list through Block::next
  std::vector<Leaf> leaves_;
  uint32_t free_leaf_ = kNil;
  std::vector<Inner> inners_;
  uint32_t free_inner_ = kNil;
  uint32_t overdue_ = kNil;          // reference
  std::unique_ptr<Level[]> levels_;  // kLevels of them
  uint32_t occupied_levels_ = 0;     // bit L: level L has an occupied slot
};

}  // namespace chime::wheel

#endif  // CHIME_SRC_WHEEL_TIMING_WHEEL_H_
