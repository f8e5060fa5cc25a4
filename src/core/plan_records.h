// The Plan's private records of jobs and runs, shared by its source files:
// plan.cc (options, timers, time and clock steps, persistence, the step),
// plan_jobs.cc (job commands and inspection), plan_fires.cc (a due fire's
// fate) and plan_runs.cc (a run from pending to its outcome: staging,
// starting, finishing, retrying, recovery).
//
// Thread-safety: as Plan (owned by one thread).
#ifndef CHIME_SRC_CORE_PLAN_RECORDS_H_
#define CHIME_SRC_CORE_PLAN_RECORDS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "src/core/plan.h"

namespace chime::core {

// Broken invariants crash loudly: continuing would risk a doubled or lost run.
[[noreturn]] void PlanInvariantViolated(const std::string& what);

// A job's record. Kept small: a daemon holds one per job, and most jobs are
// idle most of the time, so what only a job with runs needs is behind one
// pointer that idle jobs leave null.
struct Plan::Job {
  // What a job with buffered runs, or with a manual fire, keeps.
  struct Going {
    // Claimed runs waiting for the active one to finish, oldest first. A
    // vector: it is short (max_buffered), and an empty std::deque costs ~600
    // bytes.
    std::vector<RunId> buffered;
    absl::Time last_manual =
        absl::InfinitePast();  // scheduled time of the newest manual fire
  };

  JobKey key;
  PackedSpec packed;               // the spec as given (see Plan::Packed)
  const Policy* policy = nullptr;  // interned (AcquirePolicy)
  FireSource source;
  uint32_t slot = 0;
  int active = 0;  // unfinished runs that are not held in the buffer
  int64_t generation = 1;
  absl::Time watermark;  // newest scheduled time whose fate is decided
                         // (its next fire: source.Next(watermark))
  wheel::TimingWheel::Handle timer;
  bool paused = false;
  bool timer_armed = false;
  bool removed = false;
  // Every unfinished run of this job; inline: most jobs have none or one,
  // and a job firing every second would otherwise allocate for each.
  using RunIds = absl::InlinedVector<RunId, 1>;
  RunIds runs;
  std::unique_ptr<Going> going;  // null: no buffered run, no manual fire

  const std::vector<RunId>& buffered() const {
    return going == nullptr ? NoRuns() : going->buffered;
  }
  absl::Time last_manual() const {
    return going == nullptr ? absl::InfinitePast() : going->last_manual;
  }
  Going& Go() {
    if (going == nullptr) going = std::make_unique<Going>();
    return *going;
  }
  // Drops `going` once it holds nothing.
  void Settle() {
    if (going != nullptr && going->buffered.empty() &&
        going->last_manual == absl::InfinitePast())
      going.reset();
  }

 private:
  static const std::vector<RunId>& NoRuns() {
    static const std::vector<RunId>* const none = new std::vector<RunId>();
    return *none;
  }
};

inline bool Plan::SlotEq::operator()(SlotEntry e, const JobKey& key) const {
  return (*slots)[e.slot()]->key == key;
}

struct Plan::Run {
  // Kept small and free of the job's key (FireOf builds the FireKey): a
  // second's fires of 100,000 jobs are 100,000 runs in memory at once.
  RunId id = 0;
  int64_t generation = 0;     // FireKey::generation
  absl::Time scheduled_time;  // FireKey::scheduled_time
  absl::Time start_wall;      // when it should start: scheduled time + jitter
  MonoTime first_start;  // when the first attempt started (max_retry_duration)
  MonoTime not_before;   // start_wall on the monotonic clock
  // The reason that goes with `unstage` or a requested cancel (the outcome's
  // detail); null when there is none (most runs: kept off the record).
  std::unique_ptr<std::string> unstage_detail;
  wheel::TimingWheel::Handle
      timer;  // the run's one pending timer (delay, retry, timeout, kill)
  uint32_t job_slot = 0;
  int attempt = 0;  // of the current or last attempt
  RunState state = RunState::kClaiming;
  // Why an UnstageAction was sent, and what to do once the driver confirms.
  UnstageWhy unstage = UnstageWhy::kNone;
  bool manual = false;     // FireKey::manual
  bool held = false;       // buffered behind the job's active run
  bool persisted = false;  // the claim is durable
  bool resumed = false;    // a lost run taken over, not started here yet
  // Handed to the driver ahead of not_before (StartAttemptAction); pending
  // until the driver reports the start.
  bool staged = false;
  bool timed_out = false;  // the current attempt was cancelled by its timeout
  bool cancel_requested = false;
  bool timer_armed = false;
  bool in_queue = false;  // waiting in the ready queue

  // unstage_detail's text ("" when null), taken out (leaving null) or set.
  std::string TakeUnstageDetail() {
    std::string detail;
    if (unstage_detail != nullptr) detail = std::move(*unstage_detail);
    unstage_detail.reset();
    return detail;
  }
  void SetUnstageDetail(std::string detail) {
    if (detail.empty()) {
      unstage_detail.reset();
    } else {
      unstage_detail = std::make_unique<std::string>(std::move(detail));
    }
  }
};

inline FireKey Plan::FireOf(const Run& run) const {
  return FireKey{job_slots_[run.job_slot]->key, run.generation,
                 run.scheduled_time, run.manual};
}

}  // namespace chime::core

#endif  // CHIME_SRC_CORE_PLAN_RECORDS_H_
