#include "src/wheel/timing_wheel.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace chime::wheel {
namespace {

// A broken caller (time going back, 4 billion timers): say so and stop.
[[noreturn]] void Die(const char* message) {
  std::fprintf(stderr, "TimingWheel: %s\n", message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace

TimingWheel::TimingWheel(int64_t now_ms) : now_(ToKey(now_ms)) {}

uint32_t TimingWheel::AllocateNode() {
  if (free_head_ != kNil) {
    const uint32_t i = free_head_;
    free_head_ = node(i).next;
    return i;
  }
  if (allocated_ == kNil) Die("more than 2^32 - 1 timers pending");
  if ((allocated_ & (kChunkSize - 1)) == 0) {
    // Default-initialized: a node's fields are set when it is handed out.
    chunks_.push_back(std::make_unique_for_overwrite<Node[]>(kChunkSize));
  }
  const uint32_t i = allocated_++;
  // Generation 1 for a new node, so that a value-initialized Handle{} (0, 0)
  // never matches.
  node(i).generation = 1;
  return i;
}

void TimingWheel::FreeNode(uint32_t i) {
  Node& n = node(i);
  n.list = kNotInList;
  // Skips 0 on wrap-around, which stays reserved for Handle{}.
  if (++n.generation == 0) n.generation = 1;
  n.next = free_head_;
  free_head_ = i;
  --size_;
}

int TimingWheel::ListFor(uint64_t key) const {
  // key > now_, so they differ somewhere; the highest differing bit picks the
  // level, and key's digit at that level (which exceeds now's) the slot.
  const int level = (63 - std::countl_zero(key ^ now_)) / kBitsPerLevel;
  const int slot =
      static_cast<int>(key >> (level * kBitsPerLevel)) & (kSlotsPerLevel - 1);
  return level * kSlotsPerLevel + slot;
}

uint64_t TimingWheel::SlotStart(int level, int slot) const {
  const int shift = level * kBitsPerLevel;
  const int above = shift + kBitsPerLevel;  // now's digits from here up stay
  const uint64_t high = above >= 64 ? 0 : (now_ >> above) << above;
  return high | (static_cast<uint64_t>(slot) << shift);
}

void TimingWheel::Append(int list, uint32_t i) {
  Node& n = node(i);
  List& l = lists_[list];
  n.list = static_cast<uint16_t>(list);
  n.next = kNil;
  n.prev = l.tail;
  if (l.tail == kNil) {
    l.head = i;
    l.min = n.deadline_ms;
    l.min_count = 1;
    if (list != kOverdueList) {
      const int level = list / kSlotsPerLevel;
      occupied_[level] |= uint64_t{1} << (list % kSlotsPerLevel);
      occupied_levels_ |= 1u << level;
    }
  } else {
    node(l.tail).next = i;
    if (l.min_count != 0) {
      if (n.deadline_ms < l.min) {
        l.min = n.deadline_ms;
        l.min_count = 1;
      } else if (n.deadline_ms == l.min) {
        ++l.min_count;
      }
    }
  }
  l.tail = i;
}

void TimingWheel::Unlink(uint32_t i) {
  const Node& n = node(i);
  List& l = lists_[n.list];
  if (n.prev == kNil) {
    l.head = n.next;
  } else {
    node(n.prev).next = n.next;
  }
  if (n.next == kNil) {
    l.tail = n.prev;
  } else {
    node(n.next).prev = n.prev;
  }
  if (l.min_count != 0 && n.deadline_ms == l.min) --l.min_count;
  if (l.head == kNil && n.list != kOverdueList) {
    const int level = n.list / kSlotsPerLevel;
    occupied_[level] &= ~(uint64_t{1} << (n.list % kSlotsPerLevel));
    if (occupied_[level] == 0) occupied_levels_ &= ~(1u << level);
  }
}

TimingWheel::Handle TimingWheel::Insert(uint64_t id, int64_t deadline_ms) {
  const uint32_t i = AllocateNode();
  Node& n = node(i);
  n.id = id;
  n.deadline_ms = deadline_ms;
  const uint64_t key = ToKey(deadline_ms);
  Append(key <= now_ ? kOverdueList : ListFor(key), i);
  ++size_;
  return Handle{i, n.generation};
}

bool TimingWheel::IsPending(Handle h) const {
  if (h.index >= allocated_) return false;
  const Node& n = node(h.index);
  return n.list != kNotInList && n.generation == h.generation;
}

bool TimingWheel::Cancel(Handle h) {
  if (!IsPending(h)) return false;
  Unlink(h.index);
  FreeNode(h.index);
  return true;
}

void TimingWheel::FireOverdue(std::vector<Expired>* expired) {
  List& l = lists_[kOverdueList];
  if (l.head == kNil) return;
  const size_t first = expired->size();
  for (uint32_t i = l.head; i != kNil;) {
    const uint32_t next = node(i).next;
    expired->push_back({node(i).id, node(i).deadline_ms});
    FreeNode(i);
    i = next;
  }
  l = List{};
  // The list is in insertion order; a stable sort keeps it for ties.
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
    const int slot = std::countr_zero(occupied_[level]);
    const uint64_t start = SlotStart(level, slot);
    if (start > target) break;
    now_ = start;
    const int list = level * kSlotsPerLevel + slot;
    uint32_t i = lists_[list].head;
    lists_[list] = List{};
    occupied_[level] &= ~(uint64_t{1} << slot);
    if (occupied_[level] == 0) occupied_levels_ &= ~(1u << level);
    while (i != kNil) {
      Node& n = node(i);
      const uint32_t next = n.next;
      if (ToKey(n.deadline_ms) == now_) {
        expired->push_back({n.id, n.deadline_ms});
        FreeNode(i);
      } else {
        Append(ListFor(ToKey(n.deadline_ms)), i);
      }
      i = next;
    }
  }
  // No occupied slot starts by `target`, so every timer stays where it is.
  now_ = target;
}

int64_t TimingWheel::ListMin(const List& l) const {
  if (l.min_count == 0) {
    l.min = node(l.head).deadline_ms;
    for (uint32_t i = l.head; i != kNil; i = node(i).next) {
      const int64_t d = node(i).deadline_ms;
      if (d < l.min) {
        l.min = d;
        l.min_count = 1;
      } else if (d == l.min) {
        ++l.min_count;
      }
    }
  }
  return l.min;
}

std::optional<int64_t> TimingWheel::NextDeadline() const {
  if (size_ == 0) return std::nullopt;
  // Every overdue timer is due before every timer in the levels, and every
  // timer in the earliest occupied slot of the lowest non-empty level before
  // every other one in the levels.
  if (lists_[kOverdueList].head != kNil) {
    return ListMin(lists_[kOverdueList]);
  }
  const int level = std::countr_zero(occupied_levels_);
  return ListMin(
      lists_[level * kSlotsPerLevel + std::countr_zero(occupied_[level])]);
}

size_t TimingWheel::MemoryBytes() const {
  return sizeof(*this) + chunks_.capacity() * sizeof(chunks_[0]) +
         chunks_.size() * kChunkSize * sizeof(Node);
}

}  // namespace chime::wheel
