// The timing wheel's algorithm (timing_wheel.h explains the design with a
// worked example): the level and slot a timer belongs in, Insert and Cancel,
// AdvanceTo's cascade, and keeping the earliest leaf's minimum exact (by
// rescans, splits and merges) so that NextDeadline never scans. This file
// decides where timers go and when they fire; what a slot holds (nodes,
// blocks, leaves, inner nodes) and the Append, Drain, Walk and Compact over
// it are in timing_wheel_slots.{h,cc}.
#include "src/wheel/timing_wheel.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "src/wheel/timing_wheel_slots.h"

namespace chime::wheel {
namespace {

using internal::Die;

// Cancelled entries are swept out of a leaf once there are this many more
// than its pending timers.
constexpr uint32_t kSweepSlack = 16;

}  // namespace

TimingWheel::TimingWheel(int64_t now_ms)
    : now_(ToKey(now_ms)), levels_(std::make_unique<Level[]>(kLevels)) {
  for (int l = 0; l < kLevels; ++l) levels_[l].slots.fill(kNil);
}

void TimingWheel::SetOccupied(int level, int slot) {
  Level& l = levels_[level];
  l.words[slot / 64] |= uint64_t{1} << (slot % 64);
  l.summary |= uint64_t{1} << (slot / 64);
  occupied_levels_ |= 1u << level;
}

void TimingWheel::ClearOccupied(int level, int slot) {
  Level& l = levels_[level];
  if ((l.words[slot / 64] &= ~(uint64_t{1} << (slot % 64))) != 0) return;
  if ((l.summary &= ~(uint64_t{1} << (slot / 64))) != 0) return;
  occupied_levels_ &= ~(1u << level);
}

int TimingWheel::FirstSlot(int level) const {
  const Level& l = levels_[level];
  const int word = std::countr_zero(l.summary);
  return word * 64 + std::countr_zero(l.words[word]);
}

uint64_t TimingWheel::SlotStart(int level, int slot) const {
  const int shift = level * kBitsPerLevel;
  const int above = shift + kBitsPerLevel;  // now's digits from here up stay
  const uint64_t high = above >= 64 ? 0 : (now_ >> above) << above;
  return high | (static_cast<uint64_t>(slot) << shift);
}

uint32_t& TimingWheel::RefAt(const Path& p, int d) {
  return d == 0 ? *p.root : inners_[p.inner[d - 1]].child[p.child[d - 1]];
}

TimingWheel::Path TimingWheel::Locate(uint64_t key, bool create) {
  Path p;
  if (key <= now_) {
    p.root = &overdue_;
    p.level = -1;
    p.slot = 0;
    p.bits = 64;
  } else {
    // key > now_, so they differ somewhere; the highest differing bit picks
    // the level, and key's digit at that level (which exceeds now's) the
    // slot.
    p.level = (63 - std::countl_zero(key ^ now_)) / kBitsPerLevel;
    p.bits = p.level * kBitsPerLevel;
    p.slot = static_cast<int>(key >> p.bits) & (kSlotsPerLevel - 1);
    p.root = &levels_[p.level].slots[p.slot];
  }
  uint32_t ref = *p.root;
  while (ref & kInner) {
    const uint32_t n = ref & ~kInner;
    const int c = static_cast<int>(key >> inners_[n].shift) & (kChildren - 1);
    p.inner[p.depth] = n;
    p.child[p.depth] = static_cast<uint8_t>(c);
    ++p.depth;
    p.bits = inners_[n].shift;
    ref = inners_[n].child[c];
    if (ref == kNil && create) {
      ref = NewLeaf();
      inners_[n].child[c] = ref;
      inners_[n].occupied |= static_cast<uint16_t>(1u << c);
    }
  }
  if (ref == kNil) Die("no leaf for a pending timer");
  p.leaf = ref;
  return p;
}

void TimingWheel::Place(uint32_t i, uint64_t key, int64_t deadline_ms) {
  // The common case, a slot with a leaf or none, without building a Path.
  uint32_t* root = &overdue_;
  int level = -1;
  int slot = 0;
  if (key > now_) {
    level = (63 - std::countl_zero(key ^ now_)) / kBitsPerLevel;
    slot =
        static_cast<int>(key >> (level * kBitsPerLevel)) & (kSlotsPerLevel - 1);
    root = &levels_[level].slots[slot];
  }
  uint32_t l = *root;
  if (l == kNil) {
    l = NewLeaf();
    *root = l;
    if (level >= 0) SetOccupied(level, slot);
  } else if (l & kInner) {
    l = LeafBelowInner(key);
  }
  Append(l, i, deadline_ms);
}

uint32_t TimingWheel::LeafBelowInner(uint64_t key) {
  const Path p = Locate(key, /*create=*/true);
  for (int d = 0; d < p.depth; ++d) ++inners_[p.inner[d]].live;
  return p.leaf;
}

TimingWheel::Handle TimingWheel::Insert(uint64_t id, int64_t deadline_ms) {
  const uint32_t i = AllocateNode();
  Node& n = node(i);
  n.id = id;
  n.deadline_ms = deadline_ms;
  const uint32_t generation = ++n.generation;  // odd: pending
  Place(i, ToKey(deadline_ms), deadline_ms);
  ++size_;
  return Handle{i, generation};
}

bool TimingWheel::IsPending(Handle h) const {
  if (h.index >= nodes_.size()) return false;
  const uint32_t g = node(h.index).generation;
  return (g & 1) != 0 && g == h.generation;
}

void TimingWheel::Split(const Path& p) {
  // Leaves of 10L bits split 4 bits at a time, the last time fewer.
  const int shift = std::max(0, p.bits - kChildBits);
  const uint32_t n = NewInner(shift);
  inners_[n].live = leaves_[p.leaf].live;
  restructure_visits_ += leaves_[p.leaf].size;
  Drain(p.leaf, [&](uint32_t i) {
    const int64_t d = node(i).deadline_ms;
    const int c = static_cast<int>(ToKey(d) >> shift) & (kChildren - 1);
    if (inners_[n].child[c] == kNil) {
      const uint32_t child = NewLeaf();
      inners_[n].child[c] = child;
      inners_[n].occupied |= static_cast<uint16_t>(1u << c);
    }
    Append(inners_[n].child[c], i, d);
  });
  RefAt(p, p.depth) = n | kInner;
}

void TimingWheel::Merge(const Path& p, int depth) {
  const uint32_t l = NewLeaf();
  Walk(RefAt(p, depth), [&](uint32_t i) {
    ++restructure_visits_;
    Append(l, i, node(i).deadline_ms);
  });
  RefAt(p, depth) = l;
}

void TimingWheel::RemoveLeaf(const Path& p) {
  // Every entry is a cancelled node, and there are few: cancelled entries
  // are swept once they outnumber the pending ones.
  restructure_visits_ += leaves_[p.leaf].size;
  Drain(p.leaf, [](uint32_t) {});
  RefAt(p, p.depth) = kNil;
  if (p.depth > 0) {
    Inner& parent = inners_[p.inner[p.depth - 1]];
    parent.occupied &= static_cast<uint16_t>(~(1u << p.child[p.depth - 1]));
  } else if (p.level >= 0) {
    ClearOccupied(p.level, p.slot);
  }
}

bool TimingWheel::Cancel(Handle h) {
  if (!IsPending(h)) return false;
  Node& n = node(h.index);
  ++n.generation;  // even: cancelled; its entry is swept later
  --size_;
  const int64_t deadline_ms = n.deadline_ms;
  const Path p = Locate(ToKey(deadline_ms), /*create=*/false);
  // Inner nodes' counts only fall here, one at a time, so the highest one
  // that falls below kMergeBelow has just reached kMergeBelow - 1 > 0. The
  // merged leaf's minimum is exact.
  int merge = -1;
  for (int d = 0; d < p.depth; ++d) {
    if (--inners_[p.inner[d]].live < kMergeBelow && merge < 0) merge = d;
  }
  if (merge >= 0) {
    Merge(p, merge);
    return true;
  }
  Leaf& leaf = leaves_[p.leaf];
  --leaf.live;
  if (leaf.min_count != 0 && deadline_ms == leaf.min) --leaf.min_count;
  if (leaf.live == 0) {
    RemoveLeaf(p);  // the next leaf may be the earliest now
    RepairFront();
  } else if (leaf.size - leaf.live >= leaf.live + kSweepSlack) {
    Compact(p.leaf);
  } else if (leaf.min_count == 0) {
    RepairFront();
  }
  return true;
}

TimingWheel::Path TimingWheel::FrontPath() {
  Path p;
  if (overdue_ != kNil) {
    p.root = &overdue_;
    p.level = -1;
    p.slot = 0;
    p.bits = 64;
  } else {
    p.level = std::countr_zero(occupied_levels_);
    p.slot = FirstSlot(p.level);
    p.root = &levels_[p.level].slots[p.slot];
    p.bits = p.level * kBitsPerLevel;
  }
  uint32_t ref = *p.root;
  while (ref & kInner) {
    const Inner& n = inners_[ref & ~kInner];
    const int c = std::countr_zero(n.occupied);
    p.inner[p.depth] = ref & ~kInner;
    p.child[p.depth] = static_cast<uint8_t>(c);
    ++p.depth;
    p.bits = n.shift;
    ref = n.child[c];
  }
  p.leaf = ref;
  return p;
}

void TimingWheel::RepairFront() {
  while (size_ != 0 && leaves_[FrontLeaf()].min_count == 0) {
    const Path p = FrontPath();
    // A 1 ms leaf has one deadline, so its min_count is its live count: a
    // leaf whose minimum is unknown spans more, and can split.
    if (leaves_[p.leaf].live < kSplitAt) {
      Compact(p.leaf);
      return;
    }
    Split(p);
  }
}

void TimingWheel::FireOverdue(std::vector<Expired>* expired) {
  if (overdue_ == kNil) return;
  const size_t first = expired->size();
  const uint32_t ref = overdue_;
  overdue_ = kNil;
  Walk(ref, [&](uint32_t i) {
    Node& n = node(i);
    expired->push_back({n.id, n.deadline_ms, Handle{i, n.generation}});
    ++n.generation;
    FreeNode(i);
    --size_;
  });
  // Leaves come in key order and hold ties in insertion order; a stable sort
  // keeps that order for ties.
  std::stable_sort(expired->begin() + static_cast<ptrdiff_t>(first),
                   expired->end(), [](const Expired& a, const Expired& b) {
                     return a.deadline_ms < b.deadline_ms;
                   });
}

void TimingWheel::AdvanceTo(int64_t now_ms, std::vector<Expired>* expired) {
  const uint64_t target = ToKey(now_ms);
  if (target < now_) Die("AdvanceTo: time went back");
  // Overdue deadlines are <= now_ < every deadline in the levels: they go
  // first.
  FireOverdue(expired);
  // Visit the earliest occupied slot while it starts by `target`. Every
  // pending timer is due at or after that slot's start, so moving now_ there
  // keeps each timer at its right level; the slot's timers then fire (level 0,
  // or due exactly now) or cascade to a lower level. All lower levels are
  // empty at that point, so cascading appends to empty or later-filled slots
  // and keeps insertion order among equal deadlines.
  while (occupied_levels_ != 0) {
    const int level = std::countr_zero(occupied_levels_);
    const int slot = FirstSlot(level);
    const uint64_t start = SlotStart(level, slot);
    if (start > target) break;
    now_ = start;
    const uint32_t ref = levels_[level].slots[slot];
    levels_[level].slots[slot] = kNil;
    ClearOccupied(level, slot);
    Walk(ref, [&](uint32_t i) {
      Node& n = node(i);
      const int64_t d = n.deadline_ms;
      const uint64_t key = ToKey(d);
      if (key == now_) {
        expired->push_back({n.id, d, Handle{i, n.generation}});
        ++n.generation;
        FreeNode(i);
        --size_;
      } else {
        Place(i, key, d);
      }
    });
  }
  // No occupied slot starts by `target`, so every timer stays where it is.
  now_ = target;
  RepairFront();
}

uint32_t TimingWheel::FrontLeaf() const {
  // Every overdue timer is due before every timer in the levels, and every
  // timer in the earliest occupied slot of the lowest non-empty level before
  // every other one in the levels; inside a slot, an inner node's children
  // split its keys in order.
  uint32_t ref = overdue_;
  if (ref == kNil) {
    const int level = std::countr_zero(occupied_levels_);
    ref = levels_[level].slots[FirstSlot(level)];
  }
  while (ref & kInner) {
    const Inner& n = inners_[ref & ~kInner];
    ref = n.child[std::countr_zero(n.occupied)];
  }
  return ref;
}

std::optional<int64_t> TimingWheel::NextDeadline() const {
  if (size_ == 0) return std::nullopt;
  return leaves_[FrontLeaf()].min;  // exact: see RepairFront
}

size_t TimingWheel::MemoryBytes() const {
  return sizeof(*this) + kLevels * sizeof(Level) + nodes_.MemoryBytes() +
         blocks_.MemoryBytes() + leaves_.capacity() * sizeof(Leaf) +
         inners_.capacity() * sizeof(Inner);
}

}  // namespace chime::wheel
