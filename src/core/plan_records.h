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
#include <vector>

#include "src/core/plan.h"

namespace chime::core {

// Broken invariants crash loudly: continuing would risk a doubled or lost run.
[[noreturn]] void PlanInvariantViolated(const std::string& what);

// A job's record. Kept small: a daemon holds one per job, and most jobs are
// idle most of the time, so what only a job with runs needs is behind one
// pointer that idle jobs leave null.
struct Plan::Job {
  // What a job with unfinished runs, or with a manual fire, keeps.
  struct Going {
    // Claimed runs waiting for the active one to finish, oldest first. A
    // vector: it is short (max_buffered), and an empty std::deque costs ~600
    // bytes.
    std::vector<RunId> buffered;
    std::vector<RunId> runs;  // every unfinished run of this job
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
  absl::Time next_fire = absl::InfiniteFuture();
  wheel::TimingWheel::Handle timer;
  bool paused = false;
  bool timer_armed = false;
  bool removed = false;
  std::unique_ptr<Going> going;  // null: no unfinished run, no manual fire

  const std::vector<RunId>& runs() const {
    return going == nullptr ? NoRuns() : going->runs;
  }
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
    if (going != nullptr && going->runs.empty() && going->buffered.empty() &&
        going->last_manual == absl::InfinitePast())
      going.reset();
  }

 private:
  static const std::vector<RunId>& NoRuns() {
    static const std::vector<RunId>* const none = new std::vector<RunId>();
    return *none;
  }
};

inline size_t Plan::SlotHash::operator()(uint32_t slot) const {
  return absl::HashOf((*slots)[slot]->key);
}

inline bool Plan::SlotEq::operator()(uint32_t slot, const JobKey& key) const {
  return (*slots)[slot]->key == key;
}

struct Plan::Run {
  RunId id = 0;
  FireKey fire;
  uint32_t job_slot = 0;
  RunState state = RunState::kClaiming;
  bool held = false;       // buffered behind the job's active run
  bool persisted = false;  // the claim is durable
  bool resumed = false;    // a lost run taken over, not started here yet
  int attempt = 0;         // of the current or last attempt
  MonoTime first_start;   // when the first attempt started (max_retry_duration)
  absl::Time start_wall;  // when it should start: scheduled time + jitter
  MonoTime not_before;    // start_wall on the monotonic clock
  // Handed to the driver ahead of not_before (StartAttemptAction); pending
  // until the driver reports the start.
  bool staged = false;
  // Why an UnstageAction was sent, and what to do once the driver confirms.
  UnstageWhy unstage = UnstageWhy::kNone;
  std::string unstage_detail;  // the cancel's reason
  bool timed_out = false;  // the current attempt was cancelled by its timeout
  bool cancel_requested = false;
  wheel::TimingWheel::Handle
      timer;  // the run's one pending timer (delay, retry, timeout, kill)
  bool timer_armed = false;
  bool in_queue = false;  // waiting in the ready queue
};

}  // namespace chime::core

#endif  // CHIME_SRC_CORE_PLAN_RECORDS_H_
