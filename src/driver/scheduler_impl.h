// SchedulerImpl: chime::Scheduler over a core::Plan. The design is in
// src/driver/driver.h; scheduler.cc has the public methods (the callers' side),
// scheduler_loop.cc the scheduler thread's side, scheduler_attempts.cc the
// attempts (made, staged, handed to the workers, run, given back).
//
// Who owns what. The Plan and everything listed under "the plan context" below
// belong to one thread at a time: before Start, to a caller holding mu_ (there
// is no scheduler thread yet, so commands run inline and their actions wait in
// todo_); from Start on, to the scheduler thread, which is the only one to run
// commands, events and actions. Every other thread talks to it through queue_
// and wakeup_.
//
// Thread-safety: as chime::Scheduler.
#ifndef CHIME_SRC_DRIVER_SCHEDULER_IMPL_H_
#define CHIME_SRC_DRIVER_SCHEDULER_IMPL_H_

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "chime/clock.h"
#include "chime/job.h"
#include "chime/scheduler.h"
#include "chime/store.h"
#include "src/core/packed_spec.h"
#include "src/core/plan.h"
#include "src/driver/fences.h"
#include "src/driver/interceptors.h"
#include "src/driver/lease_keeper.h"
#include "src/driver/recovery.h"
#include "src/driver/shard_keeper.h"
#include "src/driver/store_writer.h"
#include "src/driver/worker_pool.h"

namespace chime::driver {

class SchedulerImpl final : public Scheduler, private LeaseCheck {
 public:
  // `recovered`: what Recover() found in `store` (plan_options carries its
  // token and first RunId).
  SchedulerImpl(SchedulerOptions options, Clock& clock,
                const core::PlanOptions& plan_options,
                std::shared_ptr<Store> store, Recovered recovered);

  ~SchedulerImpl() override {
    Shutdown(absl::ZeroDuration());
    FreeUnowned();
  }

  absl::Status Start() override;
  using Scheduler::AddJob;
  using Scheduler::AddStoredJob;
  absl::Status AddJob(const JobSpec& spec,
                      std::shared_ptr<const JobFunction> fn) override;
  absl::Status AddStoredJob(const JobRecord& record,
                            std::shared_ptr<const JobFunction> fn) override;
  absl::Status RemoveJob(const JobKey& key) override;
  absl::Status PauseJob(const JobKey& key) override;
  absl::Status ResumeJob(const JobKey& key) override;
  absl::StatusOr<uint64_t> TriggerJob(const JobKey& key) override;
  void TriggerJobAsync(const JobKey& key, TriggerDone done) override;
  absl::StatusOr<absl::Time> NextFireTime(const JobKey& key) override;
  absl::StatusOr<JobSpec> GetJob(const JobKey& key) override;
  absl::Status CancelRun(uint64_t run, const std::string& detail) override;
  absl::StatusOr<SchedulerStats> Stats() override;
  void Shutdown(absl::Duration grace) override;

 private:
  enum class State { kNew, kRunning, kStopping, kStopped };

  // Broken invariants (a misuse that would deadlock, a history the Plan
  // contradicts) crash loudly.
  [[noreturn]] static void Die(absl::string_view what);

  // One attempt: everything a worker needs to run it, built in the plan
  // context, and what the worker leaves of its end.
  //
  // Lifetime. Made by StartAttempt and owned by attempts_ while its run may
  // still hear of it. Every attempt handed to the workers comes back through
  // results_ exactly once -- run (its outcome set), or unrun because Unstage
  // took it back first (phase kDropped; Unstage already gave up ownership) --
  // and is freed by the scheduler thread only then, after the pass's
  // ReleaseStaged has told past it (OnAttemptsFinished). A batch of pointers
  // (AttemptBatch) thus never points to freed memory while the plan context
  // reads it; the workers' prefetch may, harmlessly.
  struct Attempt {
    // The worker sets ctx.started_at when it begins; ctx's pointers point
    // into this attempt.
    AttemptContext ctx;
    std::shared_ptr<const JobFunction> fn;
    // Not started before (a staged attempt's time; the origin otherwise).
    MonoTime not_before;
    std::atomic<bool> cancelled{false};
    std::atomic<bool> killed{false};       // a forced cancel
    std::atomic<bool> by_shutdown{false};  // the cancel came from Shutdown
    // Plan context only: held until its time (staged_, then released_), or
    // taken back before it (then it never runs).
    bool staged = false;
    // Who had the attempt last: the worker that starts it moves kWaiting to
    // kStarted, Unstage (taking it back before its time) to kDropped; the
    // one that fails leaves it alone. An attempt handed over early
    // (release_early) is in a worker's hands while it can still be taken
    // back.
    enum Phase : uint8_t { kWaiting, kStarted, kDropped };
    std::atomic<uint8_t> phase{kWaiting};
    core::AttemptOutcome outcome = core::AttemptOutcome::kSucceeded;
    int32_t exit_code = 0;  // AttemptContext::exit_code
    // Set by the worker only if the attempt left output or failed (most do
    // neither: ~60 B less an attempt, a second's 100,000 in flight).
    struct Ended {
      std::string output;  // AttemptContext::output
      std::string detail;  // of a failed outcome
    };
    std::unique_ptr<Ended> ended;
    core::PackedSpec spec;  // AttemptContext::packed_spec
    // Written by the worker when it is done with the attempt, which it then
    // pushes on results_.
    Attempt* next_result = nullptr;
  };
  // Attempts handed to the workers together, in not_before order.
  using AttemptBatch = std::vector<Attempt*>;

  // Runs `f` in the plan context and returns its result: inline before Start
  // (its actions are carried out once started), otherwise on the scheduler
  // thread, which carries out its actions before the caller, waiting meanwhile,
  // gets the result. FailedPrecondition once Shutdown has begun, and when
  // called from the scheduler thread (an on_run_event callback), which would
  // deadlock. The caller hears back once what the command wrote is durable
  // (kDurable), or once its actions are carried out (kApplied: writes still
  // queued behind the writer's backlog).
  enum class Wait { kDurable, kApplied };
  // TriggerJob's work, on the scheduler thread.
  absl::StatusOr<uint64_t> Trigger(const JobKey& key);
  // Runs `f` on the scheduler thread after every earlier command, carries
  // out its actions, and calls `done` with its result (once what it wrote is
  // durable, unless `wait` is kApplied) -- on the scheduler thread; or at
  // once, on this thread, before Start (f runs here), after Shutdown or from
  // the scheduler thread itself (an error). R is constructible from a Status.
  template <typename R>
  void CallAsync(std::function<R()> f, std::function<void(R)> done,
                 Wait wait = Wait::kDurable);
  // CallAsync, waiting for the result.
  template <typename R>
  R Call(absl::FunctionRef<R()> f, Wait wait = Wait::kDurable);
  // AddJob and AddStoredJob.
  absl::Status Add(const JobSpec& spec, std::shared_ptr<const JobFunction> fn,
                   JobId stored_id, int64_t stored_generation,
                   absl::Time stored_watermark);
  // A job added by AddJob, validated and parsed on the caller's thread, waiting
  // for the scheduler thread.
  // Keeps the spec packed (and unpacks it to apply it): a burst of adds (a
  // daemon loading its job files) would otherwise hold a ~1 KB JobSpec per
  // job, interleaved on the heap with the parsed schedules that stay, and
  // the holes they leave cannot be given back.
  struct PendingAdd {
    // Packed unshared on the caller's thread; ApplyAdd shares it.
    core::PackedSpec packed;
    core::FireSource source;
    std::shared_ptr<const JobFunction> fn;
    absl::Time requested;  // wall time of the AddJob call
    // AddStoredJob: the store's id and generation of the job, already
    // written (0: the scheduler writes it).
    JobId stored_id = 0;
    int64_t stored_generation = 0;
    // The stored watermark of stored_generation, if the store has one (the
    // caller's write started it: JobWrite::watermark); InfinitePast if not.
    absl::Time stored_watermark = absl::InfinitePast();
  };
  // Plan context: applies `add` to the Plan.
  void ApplyAdd(PendingAdd& add, core::Now now);
  // Plan context: applies `adds` in order, their store records as one batch
  // (Plan::BeginBatch), and empties it.
  void ApplyAdds(std::vector<PendingAdd>& adds, core::Now now);
  void ApplyAdds(absl::Span<PendingAdd> adds, core::Now now);
  // At most this many adds are applied between two looks at the Plan's
  // timers (~1 ms of the scheduler thread): a caller adding a million jobs
  // queues them faster than they are applied, and a fire due meanwhile --
  // decided at its time, not ahead -- must not wait for the whole backlog.
  static constexpr size_t kAddsPerPass = 1024;
  // Gives the attempt back to the scheduler thread (its outcome set, or
  // unrun when dropped): one lock-free push; only a push onto an empty queue
  // wakes the thread.
  void PostResult(Attempt& attempt);
  // Takes every attempt given back, oldest first.
  std::vector<Attempt*> TakeResults();

  // --- The plan context (see the file comment). ---
  // The time the Plan goes by. With a lease and a max_clock_skew, never
  // later than the store's clock (as its last answer and the monotonic clock
  // bound it) plus max_clock_skew: a wall clock that jumps ahead cannot make
  // fires due early in the moments before the next renewal notices it.
  core::Now Now() const {
    const MonoTime mono = clock_.MonoNow();
    absl::Time wall = clock_.Now();
    if (lease_ != nullptr &&
        options_.max_clock_skew != absl::InfiniteDuration())
      wall = std::min(wall,
                      lease_->StoreTimeBound(mono) + options_.max_clock_skew);
    return core::Now{wall, mono};
  }
  // A cleared Output for one Plan call, reusing its buffer; pass it to
  // Absorb before the next call.
  core::Output& Scratch();
  // Queues the Output's actions in todo_; `from_step` outputs (Advance,
  // OnEvent) also carry the Plan's next wake-up (other calls may return early
  // without one).
  void Absorb(core::Output& out, bool from_step);
  void Loop();
  void CarryOut();
  void StartAttempt(const core::StartAttemptAction& start);
  void Unstage(const core::UnstageAction& unstage);
  // Hands the staged attempts whose time has come to the workers and tells
  // the Plan of those whose time has come that they started. True if it
  // handed over a large batch (and waited for the workers to take it).
  bool ReleaseStaged();
  // Hands `batch` to the workers (one queue operation for all).
  void Dispatch(std::shared_ptr<AttemptBatch> batch);
  void CancelAttempt(const core::CancelAttemptAction& cancel);
  void RecordTransition(core::TransitionAction& t);
  // Writes the job as the Plan now has it to the store.
  // `stored_id`: the job is in the store already, under that id (the writer
  // only learns the id).
  void StoreJob(const JobKey& key, JobId stored_id = 0);
  // What the store writer finished: persisted batches go to the Plan, and
  // RunEvents are emitted for what is now recorded.
  void OnWritten(std::vector<StoreWriter::Completion> done);
  // Attempts given back (TakeResults): tells the Plan how those that ran
  // ended, and frees them all.
  void OnAttemptsFinished(const std::vector<Attempt*>& ended);
  void OnAttemptsFinished(absl::Span<Attempt* const> ended);  // one slice
  // Frees what no run owns once the threads are gone: attempts taken back
  // before they were handed over, and those given back but not yet taken.
  void FreeUnowned();
  // Without a store: a batch is acknowledged at once (moved into its
  // PersistedEvent, which joins `acks`, which CarryOut hands to the Plan).
  void Acknowledge(core::PersistAction& batch, std::vector<core::Event>& acks);
  // Writes what is queued and releases the lease (no-op without a store).
  void StopWriting();
  // The lease is lost (LeaseKeeper, or a write refused as fenced): once,
  // on_lease_lost, by default Die.
  void LeaseLost(const absl::Status& why);
  void BeginShutdown(absl::Duration grace);
  void CancelAllAttempts();
  void KillAllAttempts();
  void Emit(const RunEvent& event);

  // Runs on a worker.
  void RunAttempt(Attempt& a);
  // LeaseCheck, for attempts (AttemptContext::LeaseHeld): the scheduler's
  // lease and, with shards, the shard's lease are valid now. Any thread.
  bool LeaseHeld(uint32_t shard) const override;

  // --- Shards (SchedulerOptions::shards; scheduler_shards.cc). ---
  // The keeper's thread: recovers `gained` and schedules their jobs.
  absl::Status OnGained(const std::vector<GainedShard>& gained);
  // The keeper's thread: stops scheduling `shards`; each is released once
  // its attempts have ended and its writes are durable (CheckHandOffs).
  void OnHandOff(const std::vector<uint32_t>& shards);
  // Plan context: carries the hand-offs on (cancels attempts past the
  // grace, releases a shard whose attempts ended); returns when to look
  // again.
  MonoTime CheckHandOffs();
  // Plan context: whether the job's shard is scheduled here (always without
  // shards).
  bool Scheduled(const JobKey& key) const {
    return !fences_->sharded() ||
           shards_[fences_->ShardOf(key)].state == ShardState::kHeld;
  }
  // Plan context: keeps `spec` (its function `fn`) for when its shard comes
  // here; writes it to the store unless `stored` (the caller did).
  void Park(core::PackedSpec packed, std::shared_ptr<const JobFunction> fn,
            bool paused, bool stored);
  // FailedPrecondition for a job kept for another node's shard.
  absl::Status NotHere(const JobKey& key) const;
  // Plan::more_run_ids: a new range reserved in the store.
  std::pair<core::RunId, core::RunId> MoreRunIds();

  const SchedulerOptions options_;
  Clock& clock_;
  const InterceptorChain chain_;
  const std::shared_ptr<Store> store_;  // null: no store
  // The lease this scheduler holds: the store's one scheduler lease, or
  // with shards its member lease.
  const Fence fence_;
  // The lease fencing each job's writes: fence_, or with shards the job's
  // shard's.
  const std::shared_ptr<Fences> fences_;
  // With shards: takes and hands off shard leases.
  std::unique_ptr<ShardKeeper> shard_keeper_;
  std::unique_ptr<StoreWriter> writer_;  // null without a store
  // Renews the lease (a finite SchedulerOptions::lease_ttl); null otherwise.
  std::unique_ptr<LeaseKeeper> lease_;
  std::once_flag lease_lost_;

  // The plan context.
  core::Plan plan_;
  // The function of each job, by its slot in the Plan (Plan::JobSlot).
  std::vector<std::shared_ptr<const JobFunction>> functions_;
  // With shards: the jobs of shards not scheduled here, and each shard's
  // state.
  struct Parked {
    core::PackedSpec packed;
    std::shared_ptr<const JobFunction> fn;
    bool paused = false;
  };
  absl::flat_hash_map<JobKey, Parked> parked_;
  enum class ShardState : uint8_t { kNotHeld, kHeld, kHandingOff };
  struct ShardPlace {
    ShardState state = ShardState::kNotHeld;
    // kHandingOff: its attempts are cancelled at `deadline`, killed
    // shutdown_kill_grace later; `released` once its writes are queued
    // behind a barrier.
    MonoTime deadline;
    bool cancelled = false;
    bool killed = false;
    bool released = false;
  };
  std::vector<ShardPlace> shards_;
  int handing_off_ = 0;         // shards in kHandingOff
  core::RunId run_id_end_ = 0;  // of the last range reserved
  // Recovery: what the store had, until the job is added again.
  absl::flat_hash_map<JobKey, JobRecord> stored_jobs_;
  absl::flat_hash_map<JobKey, std::vector<core::LostRun>> lost_runs_;
  absl::flat_hash_map<JobKey, std::vector<core::LostRun>> pending_runs_;
  std::vector<RunEvent> recovery_events_;  // emitted on the first pass
  // The attempts running, by run (a run has at most one at a time).
  absl::flat_hash_map<core::RunId, std::unique_ptr<Attempt>> attempts_;
  // Actions to carry out, oldest first (a vector: deque blocks hold three
  // actions each, an allocation per three).
  std::vector<core::Action> todo_;
  core::Output scratch_;  // see Scratch()
  // Attempts to start now, gathered while carrying out actions and handed
  // over together at the end.
  std::shared_ptr<AttemptBatch> start_now_;
  // Attempts claimed before their time, by that time, until handed over.
  std::map<MonoTime, AttemptBatch> staged_;
  // Batches handed over (up to release_early_ before their time), in order,
  // until the Plan is told that their attempts started -- each once its time
  // has come: `told` of them so far (a batch is in not_before order).
  struct Released {
    std::shared_ptr<AttemptBatch> batch;
    size_t told = 0;
  };
  std::deque<Released> released_;
  // options_.release_early on the real clock, else zero.
  absl::Duration release_early_;
  MonoTime wake_at_ = MonoTime::Infinite();
  MonoTime next_invariant_check_;  // debug builds (Loop)
  bool stopping_ = false;
  bool cancelled_all_ = false;
  MonoTime shutdown_deadline_ = MonoTime::Infinite();
  bool killed_all_ = false;  // kill_grace after shutdown_deadline_
  // Outputs of attempts that ended, until the Plan's transition out of
  // running for that attempt takes them to the store.
  struct Ended {
    int attempt = 0;
    std::string output;
    int32_t exit_code = 0;
  };
  absl::flat_hash_map<core::RunId, Ended> outputs_;

  // Serializes Shutdown callers, so that a second one returns only when the
  // first is done.
  absl::Mutex shutdown_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kNew;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  // AddJob's jobs, applied before queue_'s commands of the same pass: every
  // other command waits for its result, so nothing queued with an add was
  // issued after it by the same caller.
  std::vector<PendingAdd> adds_ ABSL_GUARDED_BY(mu_);
  // Set by the scheduler thread after a pass that applied adds, for
  // kGatherAdds: AddJob then queues without waking it (a burst of adds is
  // applied in batches, not each with a wake-up of its own).
  bool gathering_adds_ ABSL_GUARDED_BY(mu_) = false;
  static constexpr absl::Duration kGatherAdds = absl::Microseconds(200);
  // Ended attempts, newest first: a lock-free stack of Attempt::next_result
  // per worker (so that workers do not contend), the last one for any other
  // thread; the scheduler thread takes them all at once.
  struct alignas(64) ResultStack {
    std::atomic<Attempt*> head{nullptr};
  };
  std::unique_ptr<ResultStack[]> results_ =
      std::make_unique<ResultStack[]>(options_.worker_threads + 1);
  std::thread::id loop_thread_id_ ABSL_GUARDED_BY(mu_);
  Wakeup wakeup_;
  // Set by Start under mu_; joined by Shutdown.
  std::unique_ptr<WorkerPool> pool_;
  std::thread thread_;
};

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_SCHEDULER_IMPL_H_
