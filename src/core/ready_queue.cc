#include "src/core/ready_queue.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"

namespace chime::core {
namespace {

// The rate quota's window: "per minute".
constexpr absl::Duration kRateWindow = absl::Minutes(1);

// A broken caller (a run queued twice, time going back): say so and stop.
[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "ReadyQueue: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

ReadyQueue::ReadyQueue(int global_limit) : global_limit_(global_limit) {
  if (global_limit < 0) {
    Die(absl::StrCat("global limit ", global_limit, " is below 0"));
  }
}

absl::Status ReadyQueue::SetGlobalLimit(int limit) {
  if (limit < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "global limit: ", limit, " is below 0 (0 means unlimited)"));
  }
  global_limit_ = limit;
  return absl::OkStatus();
}

absl::Status ReadyQueue::Validate(const NamespaceConfig& config) {
  if (config.weight < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("weight: ", config.weight, " is below 1"));
  }
  if (config.max_concurrent < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_concurrent: ", config.max_concurrent,
                     " is below 0 (0 means unlimited)"));
  }
  if (config.max_starts_per_minute < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_starts_per_minute: ", config.max_starts_per_minute,
                     " is below 0 (0 means unlimited)"));
  }
  return absl::OkStatus();
}

absl::Status ReadyQueue::ConfigureNamespace(absl::string_view ns,
                                            const NamespaceConfig& config) {
  if (absl::Status s = Validate(config); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("namespace \"", ns, "\": ", s.message()));
  }
  Namespace& n = namespaces_[Intern(ns)];
  const auto has_quota = [](const NamespaceConfig& c) {
    return c.max_concurrent > 0 || c.max_starts_per_minute > 0;
  };
  quota_namespaces_ += int{has_quota(config)} - int{has_quota(n.config)};
  n.config = config;
  // A turn in progress keeps going, but never beyond one turn of the new
  // weight.
  n.credit = std::min(n.credit, config.weight);
  const size_t window = static_cast<size_t>(config.max_starts_per_minute);
  if (window == 0) {
    n.recent_starts.clear();
  } else {
    while (n.recent_starts.size() > window) n.recent_starts.pop_front();
  }
  return absl::OkStatus();
}

NamespaceConfig ReadyQueue::namespace_config(absl::string_view ns) const {
  const Namespace* n = Find(ns);
  return n == nullptr ? NamespaceConfig{} : n->config;
}

uint32_t ReadyQueue::Intern(absl::string_view ns) {
  auto it = namespace_index_.find(ns);
  if (it != namespace_index_.end()) return it->second;
  const uint32_t index = static_cast<uint32_t>(namespaces_.size());
  namespaces_.emplace_back().name = std::string(ns);
  namespace_index_.emplace(std::string(ns), index);
  return index;
}

const ReadyQueue::Namespace* ReadyQueue::Find(absl::string_view ns) const {
  auto it = namespace_index_.find(ns);
  return it == namespace_index_.end() ? nullptr : &namespaces_[it->second];
}

// The heap order: `a` starts after `b` if it has a lower priority, then a
// later scheduled time, then a later push.
bool ReadyQueue::Later(const Entry& a, const Entry& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.scheduled_time != b.scheduled_time) {
    return a.scheduled_time > b.scheduled_time;
  }
  return a.seq > b.seq;
}

void ReadyQueue::Push(ReadyRun run) {
  auto [it, inserted] = runs_.try_emplace(run.run_id);
  if (!inserted) {
    Die(absl::StrCat("Push: run ", run.run_id, " is already ",
                     it->second.running ? "running" : "pending"));
  }
  const uint32_t index = Intern(run.name_space);
  const uint64_t seq = next_seq_++;
  it->second = RunInfo{seq, index, /*running=*/false};

  Namespace& ns = namespaces_[index];
  const Entry e{run.scheduled_time, seq, run.run_id, run.priority};
  if (ns.fifo_head == ns.fifo.size() || Later(e, ns.fifo.back())) {
    ns.fifo.push_back(e);
  } else {
    ns.heap.push_back(e);
    std::push_heap(ns.heap.begin(), ns.heap.end(), Later);
  }
  ++ns.pending;
  ++pending_;
  if (!ns.in_ring) {
    ns.in_ring = true;
    ring_.push_back(index);
  }
}

bool ReadyQueue::Remove(uint64_t run_id) {
  auto it = runs_.find(run_id);
  if (it == runs_.end() || it->second.running) return false;
  Namespace& ns = namespaces_[it->second.ns];
  runs_.erase(it);
  --pending_;
  --ns.pending;
  ++ns.tombstones;
  // The namespace stays in the ring, if it empties, until its turn comes:
  // finding it there costs O(ring) and buys nothing.
  if (ns.pending == 0 || ns.tombstones > ns.pending) DropTombstones(ns);
  return true;
}

void ReadyQueue::DropTombstones(Namespace& ns) {
  if (ns.pending == 0) {
    // Also gives back the memory of a burst.
    ns.heap = {};
    ns.fifo = {};
    ns.fifo_head = 0;
  } else {
    const auto dead = [this](const Entry& e) {
      auto it = runs_.find(e.run_id);
      return it == runs_.end() || it->second.seq != e.seq;
    };
    std::erase_if(ns.heap, dead);
    std::make_heap(ns.heap.begin(), ns.heap.end(), Later);
    ns.fifo.erase(ns.fifo.begin(),
                  ns.fifo.begin() + static_cast<ptrdiff_t>(ns.fifo_head));
    ns.fifo_head = 0;
    std::erase_if(ns.fifo, dead);  // keeps the order
  }
  ns.tombstones = 0;
}

ReadyQueue::Entry ReadyQueue::PopBest(Namespace& ns) {
  while (true) {
    const bool fifo = ns.fifo_head < ns.fifo.size();
    if (!fifo && ns.heap.empty())
      Die("internal: pending count and entries disagree");
    Entry e;
    if (fifo &&
        (ns.heap.empty() || !Later(ns.fifo[ns.fifo_head], ns.heap.front()))) {
      e = ns.fifo[ns.fifo_head++];
      if (ns.fifo_head == ns.fifo.size()) {
        ns.fifo.clear();  // keeps the capacity for the next burst
        ns.fifo_head = 0;
      } else if (ns.fifo_head > 1024 && 2 * ns.fifo_head > ns.fifo.size()) {
        ns.fifo.erase(ns.fifo.begin(),
                      ns.fifo.begin() + static_cast<ptrdiff_t>(ns.fifo_head));
        ns.fifo_head = 0;
      }
    } else {
      std::pop_heap(ns.heap.begin(), ns.heap.end(), Later);
      e = ns.heap.back();
      ns.heap.pop_back();
    }
    auto it = runs_.find(e.run_id);
    // A run removed and pushed again has a new seq: its old entry is a
    // tombstone too.
    if (it != runs_.end() && it->second.seq == e.seq) return e;
    if (ns.tombstones == 0) Die("internal: a tombstone nobody counted");
    --ns.tombstones;
  }
}

bool ReadyQueue::GlobalLimitReached() const {
  return global_limit_ > 0 && running_ >= global_limit_;
}

std::string ReadyQueue::WhyWaiting(absl::string_view name, MonoTime now) const {
  if (GlobalLimitReached()) {
    return global_limit_ == 1
               ? std::string(
                     "the only execution slot was taken (the global limit)")
               : absl::StrCat("all ", global_limit_,
                              " execution slots were taken (the global limit)");
  }
  const Namespace* ns = Find(name);
  if (ns != nullptr && AtConcurrencyQuota(*ns)) {
    return absl::StrCat("namespace \"", name, "\" was at its quota of ",
                        ns->config.max_concurrent, " concurrent runs");
  }
  if (ns != nullptr && RateEligibleAt(*ns, now) > now) {
    return absl::StrCat("namespace \"", name, "\" was at its quota of ",
                        ns->config.max_starts_per_minute, " starts per minute");
  }
  return "other runs came first";
}

bool ReadyQueue::AtConcurrencyQuota(const Namespace& ns) {
  return ns.config.max_concurrent > 0 && ns.running >= ns.config.max_concurrent;
}

MonoTime ReadyQueue::RateEligibleAt(const Namespace& ns, MonoTime now) {
  const size_t quota = static_cast<size_t>(ns.config.max_starts_per_minute);
  // recent_starts holds at most `quota` starts, so when it is full its front
  // is the quota-th most recent start, and the window [t, t + 60 s) that
  // begins just after it holds quota - 1 starts.
  if (quota == 0 || ns.recent_starts.size() < quota) return now;
  return std::max(now, ns.recent_starts.front() + kRateWindow);
}

void ReadyQueue::EndTurn() {
  const uint32_t index = ring_.front();
  namespaces_[index].credit = 0;
  ring_.pop_front();
  ring_.push_back(index);
}

std::optional<ReadyRun> ReadyQueue::PopStartable(MonoTime now) {
  if (now < last_now_) {
    Die(absl::StrCat("PopStartable: time went back from ",
                     absl::FormatDuration(last_now_.SinceOrigin()), " to ",
                     absl::FormatDuration(now.SinceOrigin())));
  }
  last_now_ = now;
  if (pending_ == 0) return std::nullopt;
  if (GlobalLimitReached()) {
    global_blocked_before_ = next_seq_;
    return std::nullopt;
  }

  // Each namespace in the ring is visited at most once: it either starts a
  // run (and we return), or is found empty or at a quota and leaves the front.
  for (size_t visits = ring_.size(); visits > 0; --visits) {
    const uint32_t index = ring_.front();
    Namespace& ns = namespaces_[index];
    if (ns.pending == 0) {
      ns.in_ring = false;
      ns.credit = 0;
      ring_.pop_front();
      continue;
    }
    bool blocked = false;
    if (AtConcurrencyQuota(ns)) {
      ns.concurrency_blocked_before = next_seq_;
      blocked = true;
    }
    while (!ns.recent_starts.empty() &&
           ns.recent_starts.front() + kRateWindow <= now) {
      ns.recent_starts.pop_front();  // out of every future window
    }
    if (RateEligibleAt(ns, now) > now) {
      ns.rate_blocked_before = next_seq_;
      blocked = true;
    }
    if (blocked) {
      EndTurn();
      continue;
    }

    if (ns.credit == 0) ns.credit = ns.config.weight;  // a new turn
    const Entry e = PopBest(ns);
    RunInfo& info = runs_.find(e.run_id)->second;
    info.running = true;
    --ns.pending;
    --pending_;
    ++ns.running;
    ++running_;
    if (ns.config.max_starts_per_minute > 0) {
      ns.recent_starts.push_back(now);
      if (ns.recent_starts.size() >
          static_cast<size_t>(ns.config.max_starts_per_minute)) {
        ns.recent_starts.pop_front();
      }
    }
    ++ns.counters.started;
    if (e.seq < global_blocked_before_) ++ns.counters.delayed_global;
    if (e.seq < ns.concurrency_blocked_before) {
      ++ns.counters.delayed_ns_concurrency;
    }
    if (e.seq < ns.rate_blocked_before) ++ns.counters.delayed_ns_rate;

    if (ns.pending == 0) {
      DropTombstones(ns);
      ns.in_ring = false;
      ns.credit = 0;
      ring_.pop_front();
    } else if (--ns.credit == 0) {
      EndTurn();
    }
    return ReadyRun{e.run_id, ns.name, e.priority, e.scheduled_time};
  }
  return std::nullopt;
}

bool ReadyQueue::OnRunFinished(uint64_t run_id) {
  auto it = runs_.find(run_id);
  if (it == runs_.end() || !it->second.running) return false;
  Namespace& ns = namespaces_[it->second.ns];
  --ns.running;
  --running_;
  runs_.erase(it);
  return true;
}

std::optional<MonoTime> ReadyQueue::NextEligibleTime(MonoTime now) const {
  if (pending_ == 0 || GlobalLimitReached()) return std::nullopt;
  std::optional<MonoTime> earliest;
  for (uint32_t index : ring_) {
    const Namespace& ns = namespaces_[index];
    if (ns.pending == 0 || AtConcurrencyQuota(ns)) continue;
    const MonoTime t = RateEligibleAt(ns, now);
    if (!earliest.has_value() || t < *earliest) earliest = t;
  }
  return earliest;
}

size_t ReadyQueue::pending(absl::string_view ns) const {
  const Namespace* n = Find(ns);
  return n == nullptr ? 0 : n->pending;
}

int ReadyQueue::running(absl::string_view ns) const {
  const Namespace* n = Find(ns);
  return n == nullptr ? 0 : n->running;
}

bool ReadyQueue::IsPending(uint64_t run_id) const {
  auto it = runs_.find(run_id);
  return it != runs_.end() && !it->second.running;
}

bool ReadyQueue::IsRunning(uint64_t run_id) const {
  auto it = runs_.find(run_id);
  return it != runs_.end() && it->second.running;
}

ReadyQueue::Counters ReadyQueue::counters(absl::string_view ns) const {
  const Namespace* n = Find(ns);
  return n == nullptr ? Counters{} : n->counters;
}

std::vector<ReadyQueue::NamespaceStats> ReadyQueue::Stats() const {
  std::vector<NamespaceStats> stats;
  stats.reserve(namespaces_.size());
  for (const Namespace& ns : namespaces_) {
    stats.push_back(NamespaceStats{ns.name, ns.config, ns.pending, ns.running,
                                   ns.counters});
  }
  return stats;
}

}  // namespace chime::core
