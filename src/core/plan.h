// Plan: the whole scheduling state machine of chime, with no I/O.
//
// The Plan decides, for every job, when each fire is due and what happens to
// it. It never sleeps, spawns, reads a clock or writes to a store: the driver
// (or a test) tells it what happened -- time passed, a job changed, a store
// write or an attempt finished -- and carries out the actions it returns.
// Everything interesting (misfires, overlap, retries, timeouts, daylight
// saving, clock steps, fairness) is therefore testable in microseconds with a
// simulated clock, from scenario files (tests/scenarios/).
//
// Time. Every call passes `Now` = {wall, mono}. Schedules are in wall time;
// timers run on the monotonic clock: a job whose next fire is at wall time T
// gets a timer at mono + (T - wall). When wall - mono changes by more than
// `step_tolerance` between calls, the wall clock was stepped: every timer is
// recomputed; a backward step never re-runs a fire already decided (the
// watermark only moves forward); a forward step makes the skipped fires due at
// once, and the misfire policy decides their fate.
//
// A fire's life: due -> decided (run, skipped or missed, with a reason) -> for
// runs, persisted as a claim (Action kPersist; the driver answers with Event
// kPersisted) -> pending in the ready queue -> started (kStartAttempt) ->
// finished (Event kAttemptFinished) -> maybe retried -> succeeded | failed |
// cancelled. A run found running after a restart becomes lost (issue 4).
//
// Overlap `replace` cancels the running attempt gracefully and, if it has not
// ended after the job's timeout grace period, by force, as a timeout does; the
// new run starts once it has ended.
//
// With a lookahead (PlanOptions::lookahead), a fire of an `allow` job is
// decided up to that long before its time, and its run handed to the driver
// early (StartAttemptAction with a later not_before): it stays pending until
// the driver reports that it started (AttemptStarted), at its time.
//
// Run states and the only legal transitions (anything else is a bug and
// CHECK-fails):
//   claiming -> pending | cancelled        (claim persisted; job removed before
//   it was) pending  -> running | cancelled        (started; removed, replaced)
//   running  -> succeeded | failed | retrying | cancelled
//   retrying -> running | cancelled        (backoff elapsed -> pending again,
//   then running)
//   lost     -> running | cancelled | failed  (recovery, at-least-once:
//   started again; removed before it was; lost PlanOptions::max_losses times)
//
// Thread-safety: not thread-safe; owned by one thread (the driver's scheduler
// thread).
#ifndef CHIME_SRC_CORE_PLAN_H_
#define CHIME_SRC_CORE_PLAN_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "chime/clock.h"
#include "chime/job.h"
#include "chime/run_state.h"
#include "src/core/fire_source.h"
#include "src/core/misfire.h"
#include "src/core/packed_spec.h"
#include "src/core/ready_queue.h"
#include "src/wheel/timing_wheel.h"

namespace chime::core {

struct Now {
  absl::Time wall;
  MonoTime mono;
};

using RunId = uint64_t;

// The run states are the public ones (chime/run_state.h); the Plan never
// produces `lost` (recovery, in the driver, does).
using ::chime::RunState;
using ::chime::RunStateName;

enum class AttemptOutcome { kSucceeded, kFailed, kTimedOut, kCancelled };

// --- Actions: what the driver must carry out, in order. ---

// Persist, in one transaction: claims for the fires that run (create-if-absent
// by FireKey, fenced by `token`), the missed and skipped records, and each
// job's new watermark. Answer with a Persisted event carrying `batch`.
struct PersistAction {
  uint64_t batch = 0;
  int64_t token = 0;
  // Each record also carries its job's slot (Plan::JobSlot) as it was when
  // the record was made, for the driver to find what it keeps per job.
  struct Claim {
    FireKey fire;
    RunId run = 0;
    uint32_t job_slot = 0;
  };
  std::vector<Claim> claims;
  struct Missed {
    JobKey job;
    int64_t generation = 0;
    MissedRange range;
    uint32_t job_slot = 0;
  };
  std::vector<Missed> missed;
  // A job's watermark belongs to its generation: a new generation (a changed
  // schedule) starts its own, which may be earlier than the old one's.
  struct Watermark {
    JobKey job;
    int64_t generation = 0;
    absl::Time watermark;
    uint32_t job_slot = 0;
  };
  std::vector<Watermark> watermarks;
};

// Start attempt `attempt` of `run`; report its end with an AttemptFinished
// event.
//
// With a lookahead (PlanOptions::lookahead), a run may be handed over before
// its time (`staged`, with `not_before` later than the `now` of the call that
// emitted the action). The driver holds such an attempt and starts it at
// `not_before` on the monotonic clock -- at once if that has passed by the
// time it carries the action out -- and reports the start with an
// AttemptStarted event; the run stays pending until that event arrives. A
// staged attempt can be taken back with an UnstageAction. An attempt that is
// not staged starts at once, and the run is running from this action on (no
// AttemptStarted event is expected). `staged` is the Plan's word on it: the
// driver must not decide from `not_before` and its own clock, which may have
// moved on since.
struct StartAttemptAction {
  RunId run = 0;
  FireKey fire;
  int attempt = 1;
  int64_t token = 0;
  MonoTime not_before;
  bool staged = false;
  // The job's slot (Plan::JobSlot), for the driver to find what it keeps
  // per job without a lookup by key.
  uint32_t job_slot = 0;
  // A lost run taken over, started again: the driver starts the attempt
  // only once what was written before it (its `running` transition) is
  // durable, so that an attempt that takes the scheduler down at once is
  // counted lost again (PlanOptions::max_losses) instead of restarting
  // forever.
  bool durable_first = false;
};

// Take back a staged attempt (see StartAttemptAction). If it has not been
// started, drop it and answer AttemptFinished with started = false; if it has
// (its AttemptStarted event is on the way), do nothing.
struct UnstageAction {
  RunId run = 0;
  int attempt = 1;
};

// Cancel the running attempt: gracefully (SIGTERM / abort the request), or by
// force (SIGKILL).
struct CancelAttemptAction {
  RunId run = 0;
  int attempt = 1;
  bool force = false;
};

// Record a run state change (for history and metrics).
struct TransitionAction {
  RunId run = 0;
  FireKey fire;
  RunState from = RunState::kClaiming;
  RunState to = RunState::kClaiming;
  int attempt = 0;
  std::string
      detail;  // why: "retry in 2.5s", "timed out", "exhausted 3 attempts", ...
};

using Action =
    std::variant<PersistAction, StartAttemptAction, CancelAttemptAction,
                 TransitionAction, UnstageAction>;

struct Output {
  std::vector<Action> actions;
  // When the Plan next needs Advance() (MonoTime::Infinite() if never, until an
  // event).
  MonoTime wake_at = MonoTime::Infinite();
};

// --- Events: what happened outside. ---

struct PersistedEvent {
  // The PersistAction answered, handed back whole (its `batch` names it): the
  // Plan keeps no copy of a batch it sent, only its number, and reads the
  // claims, or re-sends the batch, from here.
  PersistAction batch;
  // OK: all claims and records are durable. FailedPrecondition: fenced --
  // another scheduler holds the lease; nothing was written. AlreadyExists: a
  // FireKey of the batch was claimed before by another run; nothing was written
  // (the Plan re-sends each claim alone, and a refused claim's run is
  // cancelled, never run twice). Anything else: nothing was written (the driver
  // resolves indeterminate writes by reading back before answering); the Plan
  // re-sends the batch later.
  absl::Status status;
};

struct AttemptFinishedEvent {
  RunId run = 0;
  int attempt = 1;
  AttemptOutcome outcome = AttemptOutcome::kSucceeded;
  std::string detail;
  // False for a staged attempt taken back by an UnstageAction before it
  // started (outcome is then ignored).
  bool started = true;
};

// Staged attempts (see StartAttemptAction) that the driver has started, in the
// order it started them.
struct AttemptStartedEvent {
  struct Started {
    RunId run = 0;
    int attempt = 1;
  };
  std::vector<Started> started;
};

using Event =
    std::variant<PersistedEvent, AttemptFinishedEvent, AttemptStartedEvent>;

struct PlanOptions {
  int max_concurrent_runs = 0;  // 0 = unlimited
  absl::Duration step_tolerance = absl::Milliseconds(500);
  absl::Duration persist_retry =
      absl::Seconds(1);  // re-send a failed persist after this
  int64_t token = 1;     // fencing token of this scheduler's lease
  // The first RunId this Plan hands out (a restarted scheduler continues after
  // the highest RunId its store has seen).
  RunId first_run_id = 1;
  // RunIds in ranges (schedulers sharing a store, each with ranges of its
  // own): not 0, the end of the first range [first_run_id, run_id_end); when
  // it is used up the Plan calls more_run_ids for the next [first, end)
  // (REQUIRED then; end > first), on the thread calling the Plan. 0: one
  // unbounded range.
  RunId run_id_end = 0;
  std::function<std::pair<RunId, RunId>()> more_run_ids;
  // How long before its time a fire may be decided, claimed and handed to the
  // driver (staged), so that many fires sharing an instant all start on time.
  // Applies to jobs whose overlap policy is `allow` (their decision does not
  // depend on what runs at the instant itself); other jobs are decided at
  // their time. A run decided ahead whose job is then removed, paused or
  // rescheduled before its time is cancelled, with that reason; a wall-clock
  // step re-times it. Zero: every fire is decided at its time.
  //
  // A fire is never decided before halfway between the job's previous fire
  // and it, so at most one fire of a job is decided ahead, and a job whose
  // fires are closer than twice the lookahead is decided half a period
  // ahead: 100,000 every-second jobs with a 1 s lookahead hold one second's
  // runs, not the next second's beside those starting now, and a job every
  // 100 ms is decided 50 ms ahead instead of holding ten fires.
  absl::Duration lookahead = absl::ZeroDuration();
  // Whether the lookahead decides ahead a fire whose instant is not a whole
  // second too. False: only fires at whole seconds are -- every cron fire,
  // and the instants many fires share -- and a fire at any other instant
  // (a one-shot job's `at` of 10:00:00.250, an interval's anchor) is decided
  // at its time, started within the millisecond of its timer. Deciding ahead
  // costs a fire a staged hand-over, a start notice and a worker's sleep
  // until the instant (~7 us of CPU in all, against ~2.5 us at its time:
  // bench/RESULTS.md), and a lone fire gains only microseconds from it when
  // its claim needs no commit. With a store, a claim must be durable before
  // its run starts, so deciding at the time would make every such fire late
  // by a commit: keep true.
  bool lookahead_sub_second = true;
  uint64_t seed = 1;  // jitter and backoff randomness
  // How namespaces share execution slots under `max_concurrent_runs`: weight
  // (deficit round-robin) and quotas, by namespace name (see ready_queue.h). A
  // namespace not listed gets the default: weight 1, no quotas.
  std::map<std::string, NamespaceConfig> namespaces;
  // A run of an at-least-once job that has been recorded lost this many
  // times (its scheduler stopped -- crashed, killed, cut off -- while it ran)
  // is not started again: it ends failed, a dead letter, saying so. An
  // attempt that brings its node down would otherwise bring it down at every
  // restart. 0: no limit.
  int max_losses = 3;
  // Whether Output carries a TransitionAction for every change of a run's
  // state. A driver with no store and no observer of run events has nothing
  // to do with them, and making them (a FireKey copy each, ~3 per fire) was
  // a good part of the cost of a fire.
  bool record_transitions = true;
  // Whether PersistActions carry a job's watermark each time it moves (an
  // add, a fire decided, misses recorded). Only a store reads them (a
  // restart resumes each job from its watermark); without one, making them
  // (a JobKey copy each, one per fire and per add) is work nobody uses.
  bool record_watermarks = true;
  // At most this many timers (a job's fire, a run's retry or timeout, ...)
  // handled by one step, oldest first; those left over come first in the
  // next, and the step's Output asks for one at once (wake_at = now). A
  // second in which 100,000 jobs fire then makes its actions, claims and
  // runs a slice at a time, and the driver carries each out before the next
  // (the buffers of one burst held ~100 MB at once), handing staged attempts
  // over in between. 0: every timer due, in one step.
  size_t max_timers_per_step = 0;
};

// Counts of every decision, for metrics and tests.
struct PlanCounters {
  int64_t fires_run = 0;
  absl::flat_hash_map<MissReason, int64_t>
      fires_missed;  // by reason, counting range sizes
  int64_t runs_succeeded = 0, runs_failed = 0, runs_cancelled = 0;
  int64_t retries = 0, timeouts = 0;
  int64_t clock_steps = 0;
};

// Recovery: what a store remembers of a job from an earlier scheduler, given
// to the UpsertJob that brings the job back.
// Recovery: a run that an earlier scheduler left unfinished: recorded lost in
// the store, or claimed ahead of its time and still pending there.
struct LostRun {
  RunId run = 0;
  FireKey fire;     // may carry an older generation than the job's
  int attempt = 0;  // the last attempt number it reached (0: none started)
  // How many times the run has been recorded lost, the last time included
  // (0: not known; such a run is started again).
  int losses = 0;
};

struct Resume {
  // The generation the job's fires carry from now on (the driver compares the
  // stored schedule with the new one, as the store does).
  int64_t generation = 1;
  // Fires of `generation` at or before this are decided. InfinitePast: none
  // is (a new generation), so the job starts from the request like a new one.
  absl::Time watermark = absl::InfinitePast();
  // Runs an earlier scheduler left unfinished, which the job takes over
  // before any of its fires is decided (see UpsertJob):
  //   claimed: claimed ahead of their time and still pending in the store;
  //   lost: recorded lost, to start again (the job is at-least-once).
  std::vector<LostRun> claimed;
  std::vector<LostRun> lost;
};

class Plan {
 public:
  // OK, or InvalidArgument naming the offending option ("namespaces: namespace
  // \"batch\": weight: 0 is below 1").
  static absl::Status ValidateOptions(const PlanOptions& options);
  // REQUIRES: ValidateOptions(options).ok() (aborts otherwise).
  explicit Plan(PlanOptions options, Now now);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // Adds a job, or replaces it. A changed trigger (or start/end) bumps the
  // generation: runs of the old schedule that are buffered are cancelled
  // ("schedule changed"); running and pending runs finish; fires of the old
  // schedule that came due while the job was paused are recorded missed
  // (kPaused) under the old generation. The new schedule's first fire is the
  // first after `now`. A new job's first fire is the first scheduled time after
  // `now`. InvalidArgument (naming the field) leaves everything unchanged.
  absl::Status UpsertJob(const JobSpec& spec, Now now, Output* out);
  // The same with the trigger already parsed (e.g. on the caller's thread),
  // for a request made at wall time `requested` (<= now.wall; a command
  // queued for a while): the job's first fire -- or, for a changed schedule,
  // the new schedule's -- is the first after `requested`, so one that came
  // due while the request waited is due at once rather than skipped.
  // REQUIRES: `source` is FireSource::Create(spec).
  //
  // With `resume` (recovery; only for a job the Plan does not know): the job
  // continues `resume->generation`; with a watermark, its fires after the
  // watermark that came due meanwhile (the scheduler was down) are decided at
  // once by the misfire policy, and every one ends recorded. Before those
  // fires, the job takes over `resume`'s runs, oldest fire first, as its own
  // (same RunId and fire, under this Plan's token):
  //   - a claimed run runs at its time (jitter drawn again), attempt
  //     claimed.attempt + 1; one of another generation than the job's (its
  //     schedule changed) is cancelled instead, "schedule changed";
  //   - a lost run starts again as soon as a slot allows (lost -> running,
  //     attempt lost.attempt + 1) whatever the retry policy's max_attempts --
  //     unless it has been lost PlanOptions::max_losses times: then it ends
  //     failed (lost -> failed) and is not started again;
  //     after that attempt the retry policy decides as usual; its retry
  //     budget counts from that start.
  // They are the job's runs for the overlap policy: a job that forbids
  // overlap runs them one at a time (the others wait in its buffer, whatever
  // the buffer's limit: they are owed, not new fires), and a fire that comes
  // due meanwhile finds the job busy. AlreadyExists (nothing changed) if a
  // run's RunId is in use or given twice.
  //
  // `packed`, when not empty, is PackedSpec::Pack(spec) made by the caller:
  // the Plan keeps it (shared, not copied) instead of packing again.
  //
  // `generation`, when not 0, is the job's generation as its store has it
  // (the store owns generations; a job changed by another node may have
  // moved on by several): a new job takes it (`resume`'s, if given, must be
  // the same), and a known job whose generation differs takes it as a
  // schedule change, whatever its trigger says.
  absl::Status UpsertJob(const JobSpec& spec, FireSource source, Now now,
                         Output* out,
                         absl::Time requested = absl::InfiniteFuture(),
                         const Resume* resume = nullptr, PackedSpec packed = {},
                         int64_t generation = 0);
  // Removes a job: pending and buffered runs are cancelled, and so are runs
  // waiting to retry; running ones run to completion (their outcome is
  // recorded) but are not retried. A paused job's fires that came due while
  // paused are recorded missed (kPaused).
  absl::Status RemoveJob(const JobKey& key, Now now, Output* out);
  // What a removal does to the job's runs that have not started.
  enum class Unstarted {
    kCancel,  // recorded cancelled, "job removed" (RemoveJob)
    // Forgotten without a transition (a staged one once the driver gives it
    // back): they stay as the store has them -- pending, retrying -- for the
    // next scheduler on the store to adopt. For a scheduler shutting down.
    kRelease,
  };
  absl::Status RemoveJob(const JobKey& key, Now now, Output* out,
                         Unstarted unstarted);
  // From now on no attempt starts: runs that come ready (a freed slot, a
  // retry's backoff over) stay pending, for RemoveJob to cancel or release.
  // For a scheduler shutting down, before it removes its jobs -- removing
  // one job frees a slot another job's run would otherwise take.
  void StopStarting() { stop_starting_ = true; }
  // Between BeginBatch and EndBatch, what the calls record for the store
  // (claims, missed fires, watermarks) is held, and EndBatch sends it as one
  // PersistAction: for many jobs added at once, one store write instead of
  // one per job. Nothing else changes: runs claimed meanwhile wait for that
  // batch to be persisted. The caller must call EndBatch before it hands the
  // Plan any event.
  void BeginBatch() { batching_ = true; }
  void EndBatch(Now now, Output* out);
  // Pausing stops new fires; resuming records the fires due while paused as
  // missed (kPaused) and continues from `now`.
  absl::Status PauseJob(const JobKey& key, Now now, Output* out);
  absl::Status ResumeJob(const JobKey& key, Now now, Output* out);
  // Runs the job now, outside its schedule: a fire with scheduled time `now`
  // (rounded down to the millisecond; if an earlier manual fire of the job
  // already has that time or a later one
  // -- two triggers within a millisecond, a backward clock step -- 1 ms after
  // that fire, so that no two manual fires share a FireKey). Returns its run
  // id. Overlap policy applies: a trigger the policy refuses returns
  // FailedPrecondition and records nothing.
  absl::StatusOr<RunId> TriggerJob(const JobKey& key, Now now, Output* out);
  // Cancels a run on request (an operator), recorded cancelled with
  // `detail`: one that has not started -- pending, buffered, waiting to
  // retry -- at once (a staged one once the driver gives it back); a running
  // attempt gracefully (CancelAttemptAction), then by force after its job's
  // timeout grace, and it is not retried. Repeating the request changes
  // nothing. NotFound if the run has finished or is unknown.
  absl::Status CancelRunOnRequest(RunId run, std::string detail, Now now,
                                  Output* out);
  // Sets a namespace's weight and quotas; pending runs that the new setting
  // lets start, start now. Running runs are not touched. InvalidArgument
  // (naming the field) changes nothing.
  absl::Status ConfigureNamespace(absl::string_view name_space,
                                  const NamespaceConfig& config, Now now,
                                  Output* out);

  // Time passed: fires due by now.wall are decided, runs started, timeouts and
  // retries handled -- with PlanOptions::max_timers_per_step, only that many
  // of the timers due, the rest in the next calls (out->wake_at is then
  // now.mono: call again at once).
  void Advance(Now now, Output* out);
  // Something happened outside; followed by the same work as Advance.
  void OnEvent(const Event& event, Now now, Output* out);
  // Several things happened, in this order; one Advance's work follows.
  void OnEvents(absl::Span<const Event> events, Now now, Output* out);

  // Inspection (tests, API).
  const PlanCounters& counters() const { return counters_; }
  size_t num_jobs() const { return jobs_.size(); }
  size_t num_paused_jobs() const;  // O(jobs)
  // The next scheduled fire of a job (InfiniteFuture if none or paused).
  absl::Time NextFireTime(const JobKey& key) const;
  int64_t Generation(const JobKey& key) const;
  // The same by the job's slot (JobSlot); 0 for a free slot.
  int64_t GenerationAt(uint32_t slot) const;
  // The job's spec as given to UpsertJob (its `paused` as given there), and
  // whether the job is paused now; null / false if unknown.
  const PackedSpec* Packed(const JobKey& key) const;
  // The same by the job's slot (JobSlot); null for a free slot.
  const PackedSpec* PackedAt(uint32_t slot) const;
  bool IsPaused(const JobKey& key) const;
  // The job's slot: a small number, unique among the jobs, kept while the
  // job exists (and while runs of a removed job are unfinished), then reused
  // -- for the driver to index what it keeps per job. nullopt if unknown.
  std::optional<uint32_t> JobSlot(const JobKey& key) const;
  // The keys of every job, in no particular order.
  std::vector<JobKey> JobKeys() const;
  // The job's watermark: fires of its current generation at or before it are
  // decided and are never decided again (InfinitePast if there is no such job).
  absl::Time Watermark(const JobKey& key) const;
  // The state of an unfinished run; nullopt once it has finished (its history
  // is in the TransitionActions).
  std::optional<RunState> GetRunState(RunId run) const;
  // OK, or Internal naming the first broken invariant of the Plan's own
  // bookkeeping: each job's count of active runs matches its runs that are
  // not buffered, and every unfinished run has something that will move it
  // on -- a pending or lost run is queued, staged, buffered, timed or being
  // taken back; a retrying one waits for its retry timer. A run that nothing
  // moves would stay unfinished forever. O(jobs + runs): for tests and debug
  // builds.
  absl::Status CheckInvariants() const;
  // Every namespace the dispatch queue has seen, with its pending and running
  // runs.
  std::vector<ReadyQueue::NamespaceStats> QueueStats() const {
    return ready_.Stats();
  }

 private:
  struct Job;
  struct Run;

  // The policies the Plan applies to a job's fires and runs, interned:
  // jobs with equal policies share one entry of policies_, so that a job's
  // record stays small (most jobs of a deployment share a few policies).
  struct Policy {
    absl::Duration jitter;
    MisfirePolicy misfire;
    OverlapPolicy overlap;
    RetryPolicy retry;
    TimeoutPolicy timeout;
    int priority = 0;

    static Policy Of(const JobSpec& spec);
    friend bool operator==(const Policy&, const Policy&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Policy& p) {
      return H::combine(
          std::move(h), p.jitter, p.misfire.action, p.misfire.threshold,
          p.misfire.max_catchup, p.misfire.catchup_window, p.overlap.action,
          p.overlap.max_buffered, p.retry.max_attempts, p.retry.initial_backoff,
          p.retry.multiplier, p.retry.max_backoff, p.retry.max_retry_duration,
          p.retry.retry_on_failure, p.retry.retry_on_timeout,
          p.timeout.attempt_timeout, p.timeout.grace, p.priority);
    }
  };
  // The interned copy of `spec`'s policy, counted; Release when dropped.
  const Policy* AcquirePolicy(const JobSpec& spec);
  void ReleasePolicy(const Policy* policy);

  // Timer ids in the wheel: kind in the top bits, index below.
  enum class TimerKind : uint64_t {
    kJob = 0,      // index = job slot: the job's next fire is due
    kDelay = 1,    // index = run: jitter elapsed, the run may start
    kRetry = 2,    // index = run: backoff elapsed
    kTimeout = 3,  // index = run: the attempt ran too long: cancel gracefully
    kKill = 4,     // index = run: the grace period ended: cancel by force
    kPersist = 5,  // re-send failed persist batches
    // index = run: a run waiting for a slot reaches its misfire threshold
    kStartDeadline = 6,
  };

  absl::StatusOr<Job*> FindJob(const JobKey& key);
  const Job* Find(const JobKey& key) const;  // null if unknown
  // Frees the slot of a removed job once its last run has ended.
  void FreeSlotIfDone(uint32_t slot);
  void Step(Now now, Output* out);
  void DetectClockStep(Now now, Output* out);
  // How far ahead of its time a fire of `job` may be decided (PlanOptions).
  absl::Duration Lookahead(const Job& job) const;
  // When `job`'s fire at `next`, whose previous fire was at `previous`
  // (InfinitePast: none known), is decided: its time less the lookahead, but
  // not before halfway from `previous` to it (PlanOptions::lookahead); at
  // its time if `next` is not a whole second and the lookahead is for whole
  // seconds only (`lookahead_sub_second` false).
  absl::Time DecideAt(const Job& job, absl::Time previous,
                      absl::Time next) const;
  // The newest fire a step at `now` decides for `job`: `now`, or the job's
  // next fire after it if that fire's DecideAt has come.
  absl::Time DecideHorizon(const Job& job, absl::Time now) const;
  void ArmJob(Job& job, Now now);
  void FireJob(Job& job, Now now, PersistAction* persist, Output* out);
  void DecideFire(Job& job, absl::Time scheduled, Now now,
                  PersistAction* persist, Output* out, bool manual = false);
  Run& NewRun(Job& job, absl::Time scheduled, bool manual, Now now,
              PersistAction* persist);
  void SetJitter(Job& job, Run& run, Now now);
  // The run's fire identity: a run keeps its generation and time, the key is
  // its job's (whose record outlives its runs: FreeSlotIfDone).
  FireKey FireOf(const Run& run) const;
  // Recovery: OK if none of `resume`'s runs has a RunId in use or given
  // twice; AlreadyExists otherwise.
  absl::Status CheckTakeOver(const Resume& resume) const;
  // Recovery (UpsertJob): `job`, just added, takes over `resume`'s runs.
  void TakeOver(Job& job, const Resume& resume, Now now, Output* out);
  // not_before from start_wall and the current wall-mono offset.
  void SetNotBefore(Run& run, Now now);
  // Cancels a run that has not started: at once, or, if staged, once the
  // driver gives it back.
  void CancelRun(Run& run, std::string detail, Now now, Output* out);
  // Why a staged attempt is taken back; a later reason replaces an earlier
  // one only if it ranks higher (a cancel outranks a release, which outranks
  // a re-timing).
  enum class UnstageWhy : uint8_t { kNone, kRetime, kRelease, kCancel };
  void Unstage(Run& run, UnstageWhy why, std::string detail, Output* out);
  // Cancels the job's runs decided ahead of their (future) time.
  void CancelDecidedAhead(Job& job, absl::string_view why, Now now,
                          Output* out);
  void BeginAttempt(Run& run, Now now);
  void OnAttemptStarted(const AttemptStartedEvent& e, Now now, Output* out);
  void OnUnstaged(Run& run, Now now, Output* out);
  void OnTimer(const wheel::TimingWheel::Expired& e, Now now,
               PersistAction* persist, Output* out);
  // A command on `job` first decides what is due, as a step would: its Step
  // handles one slice (max_timers_per_step), and this the job's own fire if
  // it came due and still waits in due_. (Its runs' timers keep their turn.)
  void DecideWaitingFire(Job& job, Now now, Output* out);
  void OnPersisted(const PersistedEvent& e, Now now, Output* out);
  void OnAttemptFinished(const AttemptFinishedEvent& e, Now now, Output* out);
  void ArmRunTimer(Run& run, TimerKind kind, MonoTime at);
  void DisarmRunTimer(Run& run);
  void EnqueueReady(Run& run, Now now);
  MonoTime DeadlineOf(const Run& run, const Job& job) const;
  // kStartDeadline: a run still waiting for a slot past its job's misfire
  // threshold is recorded missed (kQuota) and cancelled.
  void OnStartDeadline(Run& run, Now now, PersistAction* persist, Output* out);
  // Counts and records `range` as missed, under the job's generation or,
  // for a fire of an older one (a run claimed before a schedule change),
  // under `generation`.
  void AddMissed(Job& job, const MissedRange& range, PersistAction* persist,
                 std::optional<int64_t> generation = std::nullopt);
  // Records the job's fires in (watermark, now] as missed (kPaused), and its
  // end (RecordEnded), and moves the watermark.
  void RecordPausedMisses(Job& job, Now now, PersistAction* persist);
  // If the job's end date cut its schedule and the first fire past it is due
  // by now and not yet decided: records it as not run (kEnded) and moves the
  // watermark to it, so that it is recorded once.
  void RecordEnded(Job& job, Now now, PersistAction* persist);
  // Adds `job`'s watermark to `persist` (PlanOptions::record_watermarks).
  void RecordWatermark(const Job& job, PersistAction* persist) const;
  void Transition(Run& run, RunState to, int attempt, std::string detail,
                  Output* out);
  void StartReady(Now now, Output* out);
  void FinishRun(Run& run, RunState to, std::string detail, Now now,
                 Output* out);
  // Takes a run that has not started out of the Plan without a transition
  // (Unstarted::kRelease).
  void ReleaseRun(Run& run, Output* out);
  // FinishRun's bookkeeping: the run leaves the queue, its timer, its job and
  // runs_; returns its job, or null if that job was removed and is gone too.
  Job* DropRun(Run& run);
  void ReleaseBuffered(Job& job, Now now, Output* out);
  void FlushPersist(PersistAction persist, Now now, Output* out);
  int64_t MonoMs(MonoTime t) const;
  wheel::TimingWheel::Handle SetTimer(TimerKind kind, uint64_t index,
                                      MonoTime at);

  PlanOptions options_;
  std::mt19937_64 rng_;
  wheel::TimingWheel wheel_;
  // Timers the wheel gave out that the steps have not handled yet, from
  // due_next_ on (max_timers_per_step).
  std::vector<wheel::TimingWheel::Expired> due_;
  size_t due_next_ = 0;
  ReadyQueue ready_;
  absl::Duration wall_minus_mono_;  // at the last call; a change beyond
                                    // tolerance is a step
  // wall - mono at which start times are mapped to the monotonic clock:
  // follows wall_minus_mono_ when it moves by more than a millisecond.
  absl::Duration timeline_;
  // The `now` of the last Step, and its millisecond on the wheel's timeline.
  Now stepped_{absl::InfinitePast(), MonoTime::Infinite()};
  int64_t stepped_ms_ = 0;
  PlanCounters counters_;

  std::vector<std::unique_ptr<Job>>
      job_slots_;  // index = timer index; null = free
  std::vector<uint32_t> free_job_slots_;
  // The slots of the jobs (not removed), found by key: the key is kept once,
  // in the job's record. An entry carries 32 bits of its key's hash beside
  // the slot, so that growing the table rehashes no key: reading each job's
  // record for it (a cache miss each) was a tenth of an add's cost on the
  // scheduler thread at a million jobs.
  class SlotEntry {
   public:
    SlotEntry(uint32_t slot, const JobKey& key)
        : bits_(uint64_t{HashOf(key)} << 32 | slot) {}
    uint32_t slot() const { return static_cast<uint32_t>(bits_); }
    uint32_t hash() const { return static_cast<uint32_t>(bits_ >> 32); }
    static uint32_t HashOf(const JobKey& key) {
      return static_cast<uint32_t>(absl::HashOf(key));
    }

   private:
    uint64_t bits_;
  };
  struct SlotHash {
    using is_transparent = void;
    size_t operator()(SlotEntry e) const { return absl::HashOf(e.hash()); }
    size_t operator()(const JobKey& key) const {
      return absl::HashOf(SlotEntry::HashOf(key));
    }
  };
  struct SlotEq {
    using is_transparent = void;
    const std::vector<std::unique_ptr<Job>>* slots;
    bool operator()(SlotEntry a, SlotEntry b) const {
      return a.slot() == b.slot();
    }
    bool operator()(SlotEntry e, const JobKey& key) const;
    bool operator()(const JobKey& key, SlotEntry e) const {
      return (*this)(e, key);
    }
  };
  absl::flat_hash_set<SlotEntry, SlotHash, SlotEq> jobs_{0, SlotHash{},
                                                         SlotEq{&job_slots_}};
  // Interned policies and the number of jobs holding each (node map: the
  // jobs point at its keys).
  absl::node_hash_map<Policy, int64_t> policies_;
  // The entry AcquirePolicy gave last (null: none, or erased since).
  std::pair<const Policy, int64_t>* last_policy_ = nullptr;
  // The last generation of each removed job: one entry per key ever removed.
  absl::flat_hash_map<JobKey, int64_t> retired_generations_;
  absl::flat_hash_map<RunId, std::unique_ptr<Run>> runs_;
  RunId next_run_;
  RunId run_id_end_;  // PlanOptions::run_id_end, then each range's end
  uint64_t next_batch_ = 1;
  // The numbers of the persist batches sent and not yet answered (each
  // comes back whole in its PersistedEvent); failed ones wait in to_resend_
  // for a retry timer.
  absl::flat_hash_set<uint64_t> in_flight_;
  std::vector<PersistAction> to_resend_;
  bool persist_timer_armed_ = false;
  bool stop_starting_ = false;  // StopStarting
  bool batching_ = false;       // BeginBatch
  PersistAction batched_;       // held until EndBatch
};

}  // namespace chime::core

#endif  // CHIME_SRC_CORE_PLAN_H_
