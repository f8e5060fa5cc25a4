// The rarely called half of the timing wheel's slot storage (see
// timing_wheel_slots.h for the contract): growing the slabs of nodes and
// blocks and the tables of leaves and inner nodes, and Compact, which sweeps
// the cancelled entries out of a leaf. Each allocation takes from its free
// list first; a table that cannot grow further aborts.
#include "src/wheel/timing_wheel_slots.h"

#include <cstdio>
#include <cstdlib>

namespace chime::wheel {
namespace internal {

void Die(const char* message) {
  std::fprintf(stderr, "TimingWheel: %s\n", message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace internal

using internal::Die;

uint32_t TimingWheel::NewNode() {
  if (nodes_.size() == kNil) Die("more than 2^32 - 1 timers pending");
  // Default-initialized: a node's fields are set when it is handed out.
  const uint32_t i = nodes_.Grow();
  // Even, and 1 once pending, so that a value-initialized Handle{} (0, 0)
  // never matches.
  node(i).generation = 0;
  return i;
}

uint32_t TimingWheel::AllocateBlock() {
  uint32_t b = free_block_;
  if (b != kNil) {
    free_block_ = block(b).next;
  } else {
    b = blocks_.Grow();
  }
  block(b).next = kNil;
  return b;
}

uint32_t TimingWheel::NewLeaf() {
  uint32_t l = free_leaf_;
  if (l != kNil) {
    free_leaf_ = leaves_[l].first;
    leaves_[l] = Leaf{};
  } else {
    l = static_cast<uint32_t>(leaves_.size());
    // References keep bit 31 for inner nodes. (Each leaf holds a pending
    // timer, and most hold many.)
    if (l == kInner) Die("more than 2^31 leaves");
    leaves_.emplace_back();
  }
  return l;
}

uint32_t TimingWheel::NewInner(int shift) {
  uint32_t n = free_inner_;
  if (n != kNil) {
    free_inner_ = inners_[n].child[0];
  } else {
    n = static_cast<uint32_t>(inners_.size());
    inners_.emplace_back();
  }
  inners_[n] = Inner{};
  inners_[n].child.fill(kNil);
  inners_[n].shift = static_cast<uint8_t>(shift);
  return n;
}

void TimingWheel::Compact(uint32_t l) {
  Leaf& leaf = leaves_[l];
  restructure_visits_ += leaf.size;
  // Rewrites the pending entries in place, front to back: the write position
  // never passes the read position.
  Cursor r{leaf.first, 0, leaf.size};
  Cursor ahead = r;
  for (uint32_t j = 0; j < internal::kPrefetchAhead; ++j) {
    PrefetchAndStep(ahead);
  }
  uint32_t wb = leaf.first;
  uint32_t wk = 0;
  uint32_t written = 0;
  while (r.left > 0) {
    PrefetchAndStep(ahead);
    const uint32_t i = block(r.block).entries[r.k];
    Step(r);
    const Node& n = node(i);
    if (!(n.generation & 1)) {
      FreeNode(i);
      continue;
    }
    if (wk == kBlockEntries) {
      wb = block(wb).next;
      wk = 0;
    }
    block(wb).entries[wk++] = i;
    if (written++ == 0 || n.deadline_ms < leaf.min) {
      leaf.min = n.deadline_ms;
      leaf.min_count = 1;
    } else if (n.deadline_ms == leaf.min) {
      ++leaf.min_count;
    }
  }
  // live > 0, so wb holds at least one entry; the blocks after it go.
  for (uint32_t b = block(wb).next; b != kNil;) {
    const uint32_t next = block(b).next;
    FreeBlock(b);
    b = next;
  }
  block(wb).next = kNil;
  leaf.last = wb;
  leaf.size = written;
}

}  // namespace chime::wheel
