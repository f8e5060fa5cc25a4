// ReadyQueue: the scheduler core's dispatch queue.
//
// A run that has been claimed and is ready to start waits here until an
// execution slot is free. The scheduler pushes ready runs, asks "which run may
// start now?" whenever a slot may be free or a wake-up fires, and reports each
// started run's end. The queue decides who gets scarce slots:
//
//   - a global limit on concurrent runs (0 = unlimited);
//   - within a namespace, runs start by priority (higher first), then
//     scheduled time (earlier first), then push order;
//   - across namespaces, slots are shared by weight with deficit round-robin
//     (DRR), so priority never crosses a namespace boundary: a namespace that
//     floods the queue with high-priority runs gets its weighted share, no
//     more, and a namespace of weight 1 still starts runs beside one of
//     weight 1000;
//   - per-namespace quotas: at most `max_concurrent` running runs, and at most
//     `max_starts_per_minute` starts in any 60-second window. A namespace at a
//     quota is passed over and the others use the slot.
//
// Deficit round-robin. The namespaces that have pending runs form a ring. The
// namespace at the front of the ring has a turn: it receives a credit of
// `weight` starts, each start spends 1, and the turn ends when the credit is
// spent, the namespace runs out of pending runs (it leaves the ring; its
// unspent credit is dropped), or it is found at a quota (it forfeits the rest
// of its turn). The turn then passes to the next namespace in the ring. A turn
// survives a full global limit: it resumes at the next start. Since every run
// costs 1, this is DRR with quantum = weight: over any stretch in which a set
// of namespaces stay backlogged, each gets starts in proportion to its weight,
// within one turn's worth.
//
// Worked example: namespaces A (weight 3) and B (weight 1), eight pending runs
// each (A's pushed first), global limit 1, each run finishing before the next
// PopStartable:
//   ring [A, B]  A's turn, credit 3:  A1 A2 A3       credit spent -> [B, A]
//   ring [B, A]  B's turn, credit 1:  B1             credit spent -> [A, B]
//   ring [A, B]  A's turn:            A4 A5 A6                    -> [B, A]
//   ring [B, A]  B's turn:            B2                          -> [A, B]
//   ring [A, B]  A's turn:            A7 A8          A is empty   -> [B]
//   ring [B]     B alone, turn after turn: B3 B4 B5 B6 B7 B8
// Start order: A A A B A A A B A A B B B B B B. Had a run not finished, the
// next PopStartable would have returned nothing (the limit is 1) and counted
// the wait against every pending run (see Counters); the turn in progress
// would have resumed once a slot came free.
//
// Starts-per-minute is a sliding window, not a token bucket: a namespace with
// quota N never has more than N starts in any half-open 60 s interval
// [t, t + 60 s), and its next start after N starts is allowed exactly 60 s
// after the oldest of those N. NextEligibleTime() reports that instant, so the
// scheduler can set a wake-up instead of polling.
//
// Time is monotonic (chime::MonoTime), passed in by the caller; the queue
// reads no clock. It owns no thread and does no I/O.
//
// Memory: a pending run costs one 40-byte entry in its namespace (in a
// vector, so up to twice that in capacity) plus one hash-map slot (24 bytes and
// a control byte, at a load between 7/16 and 7/8): roughly 70-140 bytes in
// all, or 7-14 MB for 100k pending runs. Namespace names are interned, so no
// run holds a string.
// A removed run's entry stays behind as a tombstone until it reaches the
// front of its FIFO lane or heap, or the namespace's entries are compacted
// (when its tombstones outnumber its pending runs). A rate-limited namespace
// keeps the times of its last N starts. Known limits: namespaces are never
// forgotten (each costs a few hundred bytes); the hash map does not shrink
// after a burst.
//
// Thread-safety: not thread-safe. The scheduler thread owns its queue.
#ifndef CHIME_SRC_CORE_READY_QUEUE_H_
#define CHIME_SRC_CORE_READY_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "chime/clock.h"

namespace chime::core {

// A run that is ready to start.
struct ReadyRun {
  uint64_t run_id = 0;  // the scheduler's id; unique among queued runs
  std::string name_space = "default";
  int priority = 0;           // higher starts first, within its namespace
  absl::Time scheduled_time;  // earlier starts first, among equal priorities

  friend bool operator==(const ReadyRun&, const ReadyRun&) = default;
};

// How a namespace shares the slots. The default: weight 1, no quotas.
struct NamespaceConfig {
  int weight = 1;                 // >= 1; the namespace's share under DRR
  int max_concurrent = 0;         // >= 0; 0 = unlimited
  int max_starts_per_minute = 0;  // >= 0; 0 = unlimited

  friend bool operator==(const NamespaceConfig&,
                         const NamespaceConfig&) = default;
};

class ReadyQueue {
 public:
  // Per-namespace counters, for metrics. They count runs, not calls: polling
  // PopStartable more often does not inflate them. When a run starts, it adds
  // 1 to `started` and 1 to each `delayed_*` counter whose reason kept it
  // waiting at least once while it was pending:
  //   - delayed_global: a PopStartable call found the global limit reached;
  //   - delayed_ns_concurrency / delayed_ns_rate: with a global slot free, a
  //     PopStartable call reached the run's namespace in DRR order and found
  //     it at its concurrency / rate quota (both count if both applied).
  // A namespace's quotas are only examined when a global slot is free. Runs
  // removed before they start count nowhere.
  struct Counters {
    int64_t started = 0;
    int64_t delayed_global = 0;
    int64_t delayed_ns_concurrency = 0;
    int64_t delayed_ns_rate = 0;

    friend bool operator==(const Counters&, const Counters&) = default;
  };

  // One namespace's state, as listed by Stats().
  struct NamespaceStats {
    std::string name;
    NamespaceConfig config;
    size_t pending = 0;
    int running = 0;
    Counters counters;
  };

  // An empty queue allowing `global_limit` concurrent runs (0 = unlimited).
  // REQUIRES: global_limit >= 0 (aborts otherwise).
  explicit ReadyQueue(int global_limit = 0);

  ReadyQueue(const ReadyQueue&) = delete;
  ReadyQueue& operator=(const ReadyQueue&) = delete;

  // Changes the global limit. Lowering it below running() stops starts until
  // enough runs finish; nothing running is touched. Returns InvalidArgument
  // (and changes nothing) if `limit` is negative.
  absl::Status SetGlobalLimit(int limit);
  int global_limit() const { return global_limit_; }
  // Whether anything can hold a pushed run back: a global limit or a
  // namespace quota is set. (Weights alone only order the starts.)
  bool MayHoldBack() const {
    return global_limit_ > 0 || quota_namespaces_ > 0;
  }
  // What holds the pending runs of `ns` back at `now`, in words, for the
  // record of a run that waited too long: "all 4 execution slots were taken
  // (the global limit)" ("the only execution slot was taken (the global
  // limit)" for 1), "namespace \"batch\" was at its quota of 2
  // concurrent runs", "... of 10 starts per minute", or, when none of these
  // holds, "other runs came first".
  std::string WhyWaiting(absl::string_view ns, MonoTime now) const;

  // Sets namespace `ns`'s weight and quotas, creating it if needed (a
  // namespace first seen in Push gets the default config). Takes effect at
  // the next PopStartable; running runs are never touched. Starts made while
  // the namespace had no rate quota do not count against a new one. Returns
  // InvalidArgument naming the namespace and the field
  // ("namespace \"ops\": weight: 0 is below 1") and changes nothing if the
  // config is out of range.
  absl::Status ConfigureNamespace(absl::string_view ns,
                                  const NamespaceConfig& config);
  // The config of `ns` (the default for a namespace never seen).
  NamespaceConfig namespace_config(absl::string_view ns) const;

  // Queues `run` as pending. O(1) when it comes after the namespace's last
  // push in start order (see Namespace::fifo), O(log n) otherwise.
  // REQUIRES: run.run_id is neither pending nor running (aborts otherwise: a
  // run queued twice would start twice).
  void Push(ReadyRun run);

  // Drops a pending run (cancelled, or replaced) so it never starts. Returns
  // true if it was pending; false, changing nothing, if it is unknown or
  // already running (a running run ends through OnRunFinished). Amortized
  // O(log n).
  bool Remove(uint64_t run_id);

  // Picks the next run allowed to start at `now`, removes it from the pending
  // runs and counts it as running (in the global limit, its namespace's
  // concurrency quota and its rate window) until OnRunFinished. Returns
  // nullopt if nothing may start now: nothing pending, the global limit
  // reached, or every namespace with pending runs at a quota. Call it in a
  // loop until nullopt after every event that may free a slot or add a run,
  // and at NextEligibleTime(). Cost: O(log n) plus O(1) per namespace found at
  // a quota.
  // REQUIRES: `now` is not earlier than in any previous call (aborts
  // otherwise: the rate windows assume time moves forward).
  std::optional<ReadyRun> PopStartable(MonoTime now);

  // Reports that a run returned by PopStartable has ended (in any way,
  // including failing to start): its slot is free again. Returns true if
  // `run_id` was running; false, changing nothing, if it is unknown, pending,
  // or already reported. Its start still counts in its namespace's rate
  // window. O(1).
  bool OnRunFinished(uint64_t run_id);

  // The earliest time t >= now at which PopStartable(t) would start a run,
  // assuming no Push, Remove, OnRunFinished or configuration change before
  // then: `now` if a run can start right away, the instant a rate window
  // opens if only rate quotas hold the pending runs back, and nullopt when
  // passing time alone changes nothing (nothing pending, the global limit
  // reached, or every namespace with pending runs at its concurrency quota;
  // the scheduler then waits for an event instead). Exact, not a poll
  // interval. O(namespaces with pending runs).
  std::optional<MonoTime> NextEligibleTime(MonoTime now) const;

  // Pending runs (pushed, neither started nor removed), in all namespaces or
  // in `ns`.
  size_t pending() const { return pending_; }
  size_t pending(absl::string_view ns) const;
  // Started runs not yet reported finished, in all namespaces or in `ns`.
  int running() const { return running_; }
  int running(absl::string_view ns) const;
  bool IsPending(uint64_t run_id) const;
  bool IsRunning(uint64_t run_id) const;

  // The counters of `ns` (all zero for a namespace never seen).
  Counters counters(absl::string_view ns) const;

  // Every namespace seen so far (pushed to or configured), in the order it
  // was first seen.
  std::vector<NamespaceStats> Stats() const;

 private:
  // One pending run in its namespace's heap, or a tombstone left by Remove.
  struct Entry {
    absl::Time scheduled_time;
    uint64_t seq;  // push order, global; identifies this push of the run
    uint64_t run_id;
    int priority;
  };
  static_assert(sizeof(Entry) <= 40);

  // Where a queued run is. The entry lives while the run is pending or
  // running.
  struct RunInfo {
    uint64_t seq;
    uint32_t ns;
    bool running;
  };

  struct Namespace {
    std::string name;
    NamespaceConfig config;
    // The pending runs and the tombstones of removed ones, in two parts: a
    // run pushed after (in Later's order) the last one of `fifo` is
    // appended to it, in order, from fifo_head on -- the usual case: a
    // second's fires share a priority and a time, and each push comes after
    // the one before; any other goes to `heap`, a binary heap, best run
    // first. The best run is the better of the two fronts. O(1) per push
    // and pop while pushes come in order, O(log n) otherwise.
    std::vector<Entry> fifo;
    size_t fifo_head = 0;
    std::vector<Entry> heap;
    size_t pending = 0;
    size_t tombstones = 0;
    int running = 0;
    bool in_ring = false;
    int credit = 0;  // starts left in its DRR turn; non-zero only at the front
    // With a rate quota N: the times of its last (at most N) starts, oldest
    // first.
    std::deque<MonoTime> recent_starts;
    // Runs pushed before these sequence numbers were held back by the quota.
    uint64_t concurrency_blocked_before = 0;
    uint64_t rate_blocked_before = 0;
    Counters counters;
  };

  static bool Later(const Entry& a, const Entry& b);
  static absl::Status Validate(const NamespaceConfig& config);

  uint32_t Intern(absl::string_view ns);
  const Namespace* Find(absl::string_view ns) const;
  bool GlobalLimitReached() const;
  static bool AtConcurrencyQuota(const Namespace& ns);
  // When `ns`'s rate quota next allows a start: `now` if it does already.
  static MonoTime RateEligibleAt(const Namespace& ns, MonoTime now);
  // Ends the front namespace's turn and moves it to the back of the ring.
  void EndTurn();
  // Pops the best pending run of `ns`, discarding tombstones on the way.
  // REQUIRES: ns.pending > 0.
  Entry PopBest(Namespace& ns);
  void DropTombstones(Namespace& ns);

  int global_limit_;
  int quota_namespaces_ = 0;  // namespaces with a concurrency or rate quota
  size_t pending_ = 0;
  int running_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t global_blocked_before_ = 0;
  MonoTime last_now_ = MonoTime::FromSinceOrigin(-absl::InfiniteDuration());

  absl::flat_hash_map<uint64_t, RunInfo> runs_;
  // A deque: namespaces never move, and adding one never copies the others.
  std::deque<Namespace> namespaces_;
  absl::flat_hash_map<std::string, uint32_t> namespace_index_;
  // Indices of the namespaces with pending runs (and, lazily, of some whose
  // last pending run was removed), front = the one whose turn it is.
  std::deque<uint32_t> ring_;
};

}  // namespace chime::core

#endif  // CHIME_SRC_CORE_READY_QUEUE_H_
