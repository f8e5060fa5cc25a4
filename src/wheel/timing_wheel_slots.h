// Internal to the timing wheel; included only by timing_wheel.cc and
// timing_wheel_slots.cc. Not part of the wheel's API.
//
// The storage behind a slot: TimingWheel's nodes (one per timer, in a slab
// with a free list), the blocks of node indices that make up a leaf, the
// leaves, and the inner nodes of a split slot. timing_wheel_slots.cc holds
// the rarely called parts (growing the slabs and tables, Compact); this
// header the ones on the path of every timer, inline, so that
// timing_wheel.cc compiles them into its loops.
//
// The contract with the algorithm in timing_wheel.cc:
// - Append adds a pending node at the end of a leaf and updates the leaf's
//   minimum (min, min_count) for it.
// - Drain hands every pending node of a leaf to fn, in insertion order; Walk
//   does so for every leaf below a reference, in key order. As they go they
//   free cancelled nodes, each block and leaf once read, and (Walk) the inner
//   nodes, so fn may Append, even to a new leaf; fn owns the node it is given.
// - Compact keeps a leaf in place, sweeps its cancelled nodes and makes its
//   minimum exact. REQUIRES: live > 0.
// - The caller keeps size_ and the occupancy bitmaps, and clears or replaces
//   the reference (in a slot, the overdue root or an inner node) to a leaf or
//   inner node that Drain or Walk has freed.
#ifndef CHIME_SRC_WHEEL_TIMING_WHEEL_SLOTS_H_
#define CHIME_SRC_WHEEL_TIMING_WHEEL_SLOTS_H_

#include <cstdint>

#include "src/wheel/timing_wheel.h"

namespace chime::wheel {
namespace internal {

// A broken caller (time going back, 4 billion timers): say so and stop.
[[noreturn]] void Die(const char* message);

// How many entries ahead a walk over a leaf asks for the nodes it will read:
// enough misses in flight to hide memory latency.
inline constexpr uint32_t kPrefetchAhead = 12;

}  // namespace internal

inline uint32_t TimingWheel::AllocateNode() {
  if (free_node_ == kNil) return NewNode();
  const uint32_t i = free_node_;
  free_node_ = static_cast<uint32_t>(node(i).id);
  return i;
}

inline void TimingWheel::FreeNode(uint32_t i) {
  node(i).id = free_node_;
  free_node_ = i;
}

inline void TimingWheel::FreeBlock(uint32_t b) {
  block(b).next = free_block_;
  free_block_ = b;
}

inline void TimingWheel::AddBlock(Leaf& leaf) {
  const uint32_t b = AllocateBlock();
  if (leaf.last == kNil) {
    leaf.first = b;
  } else {
    block(leaf.last).next = b;
  }
  leaf.last = b;
}

inline void TimingWheel::Append(uint32_t l, uint32_t i, int64_t deadline_ms) {
  Leaf& leaf = leaves_[l];
  const uint32_t k = leaf.size % kBlockEntries;
  if (k == 0) AddBlock(leaf);
  block(leaf.last).entries[k] = i;
  ++leaf.size;
  if (++leaf.live == 1 || deadline_ms < leaf.min) {
    leaf.min = deadline_ms;
    leaf.min_count = 1;
  } else if (deadline_ms == leaf.min) {
    ++leaf.min_count;
  }
}

template <typename Fn>
void TimingWheel::Drain(uint32_t l, Fn fn) {
  // Copied out: fn may add leaves, and the record is free for reuse now.
  const Leaf leaf = leaves_[l];
  leaves_[l].first = free_leaf_;
  free_leaf_ = l;
  Cursor c{leaf.first, 0, leaf.size};
  Cursor ahead = c;
  for (uint32_t j = 0; j < internal::kPrefetchAhead; ++j) {
    PrefetchAndStep(ahead);
  }
  while (c.left > 0) {
    PrefetchAndStep(ahead);
    const uint32_t b = c.block;
    const uint32_t i = block(b).entries[c.k];
    Step(c);
    // Done with block b: a later Append (in fn) may reuse it.
    if (c.k == 0 || c.left == 0) FreeBlock(b);
    if (node(i).generation & 1) {
      fn(i);
    } else {
      FreeNode(i);  // cancelled: swept now
    }
  }
}

template <typename Fn>
void TimingWheel::Walk(uint32_t ref, Fn fn) {
  if (!(ref & kInner)) {
    Drain(ref, fn);
    return;
  }
  const uint32_t n = ref & ~kInner;
  for (int c = 0; c < kChildren; ++c) {
    const uint32_t child = inners_[n].child[c];
    if (child != kNil) Walk(child, fn);
  }
  inners_[n].child[0] = free_inner_;
  free_inner_ = n;
}

}  // namespace chime::wheel

#endif  // CHIME_SRC_WHEEL_TIMING_WHEEL_SLOTS_H_
