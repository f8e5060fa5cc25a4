// Scheduler: chime as a library. Register C++ functions as jobs; chime runs
// them on their schedules, in this process, with every policy of the job model
// (chime/job.h).
//
//   chime::SchedulerOptions options;
//   auto scheduler = chime::Scheduler::Create(options);  // not started yet
//   chime::JobSpec spec;
//   spec.key.id = "report";
//   spec.trigger.expression = "0 9 * * MON-FRI";
//   spec.trigger.zone = "Europe/Berlin";
//   (*scheduler)->AddJob(spec, [](const chime::AttemptContext& ctx) {
//     return SendReport(ctx.fire_id());  // the dedupe key for the target
//   });
//   (*scheduler)->Start();
//   ...
//   (*scheduler)->Shutdown(absl::Seconds(30));  // drain, then cancel
//
// How it works: one scheduler thread owns the core state machine
// (src/core/plan.h) and a timing wheel; it sleeps on the monotonic clock until
// the next wake-up or an event, feeds the Plan, and carries out its actions
// through a Store (durable claims and history; none by default) and an
// executor (a fixed pool of worker threads calling the job functions). Every
// attempt passes through an ordered chain of interceptors (middleware) before
// the job function; logging, metrics and tracing are interceptors too.
//
// Restarts. Jobs are written to the store as they are added, changed and
// removed; every decision about a fire (claimed to run, skipped, missed) and
// every run transition is written by a store writer thread, the claim before
// the run may start. When a scheduler is created on a store an earlier one
// used (a restart after a crash, kill -9 included):
//   - runs the earlier one left pending, running or retrying are recorded
//     lost (the attempt may or may not have happened) and reported through
//     on_run_event once started;
//   - a job added again continues its generation and its watermark: the fires
//     that came due while no scheduler ran go through its misfire policy at
//     once, and each ends recorded (run, or missed with the reason); a job
//     added with a changed schedule starts a new generation from the AddJob;
//   - a job added again whose delivery is at-least-once starts its lost runs
//     again (attempt number + 1, the new fencing token) -- a run lost
//     max_losses times ends failed instead; at-most-once ones stay lost.
//     Jobs the store has but nobody adds again do not run.
// RunIds continue after the highest the store has seen; fencing tokens grow.
//
// Thread-safety: every method may be called from any thread, concurrently. Job
// functions run on worker threads, at most one attempt of a run at a time; they
// may call the Scheduler (e.g. TriggerJob) but must not call Shutdown (that
// aborts: it would wait for itself). The on_run_event callback must not call
// the Scheduler: such calls return FailedPrecondition.
//
// The implementation is in src/driver/ (driver.h describes how each action is
// carried out).
#ifndef CHIME_INCLUDE_CHIME_SCHEDULER_H_
#define CHIME_INCLUDE_CHIME_SCHEDULER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "chime/clock.h"
#include "chime/job.h"
#include "chime/store.h"

namespace chime {

namespace core {
class PackedSpec;
}  // namespace core

// What an attempt can ask the scheduler that started it: whether the store's
// lease its fires were claimed under is still surely held
// (AttemptContext::LeaseHeld).
class LeaseCheck {
 public:
  virtual ~LeaseCheck() = default;
  // True while the scheduler can prove it holds the lease over `shard`'s
  // jobs (shard 0 without shards). Cheap (an atomic load and a clock read);
  // safe from any thread while the attempt runs.
  virtual bool LeaseHeld(uint32_t shard) const = 0;
};

// Everything an attempt knows about itself. Targets use fire_id (and the
// fencing token) to drop duplicates: chime claims each fire once, but an
// at-least-once job may run an attempt again after a crash.
struct AttemptContext {
  FireKey fire;
  // fire.ToString(), the fire's readable identity and a target's dedupe key:
  // "report:1:2026-11-30T08:00:00Z". Formatted on each call (~100 ns): an
  // attempt that does not need it does not pay for it.
  std::string fire_id() const { return fire.ToString(); }
  uint64_t run_id = 0;
  int attempt = 1;
  int64_t fencing_token = 0;
  absl::Time scheduled_time;
  absl::Time started_at;  // wall time a worker began the attempt
  // Set when the attempt should stop (timeout, replace, shutdown). Long-running
  // functions poll it, or block in `cancelled->wait(false)` (it is notified
  // when set); chime cannot interrupt a function that does neither.
  const std::atomic<bool>* cancelled = nullptr;
  // Set after `cancelled` when the cancel turns forced: the job's timeout
  // grace has passed (timeout.grace), or a shutdown's. A function that started
  // something it can kill (a child process) kills it now. Notified like
  // `cancelled`.
  const std::atomic<bool>* killed = nullptr;
  // Where the attempt may leave its bounded output (a command's output, a
  // response body) for the run history; kept with the attempt's end. May be
  // null; written only by the attempt's own thread before it returns.
  std::string* output = nullptr;
  // Where the attempt may leave its exit code for the run history: a
  // command's exit status (128 + n when killed by signal n), an HTTP
  // response's status. May be null; written like `output`.
  int32_t* exit_code = nullptr;
  bool IsCancelled() const { return cancelled != nullptr && cancelled->load(); }
  bool IsKilled() const { return killed != nullptr && killed->load(); }
  // Whether this scheduler still surely holds the store's lease the attempt
  // was started under: always true without a lease that can expire (no
  // store, or SchedulerOptions::lease_ttl infinite). A scheduler paused past
  // its lease between the start of an attempt and its side effect (SIGSTOP,
  // a frozen VM, a long page-in) may find that another node took its jobs
  // meanwhile. So a function checks this at the last moment before it acts
  // -- the built-in executors before a command's first instruction runs,
  // before a request is handed to libcurl -- and returns an error without
  // acting when false (the run is then the new holder's). The fencing token
  // covers what is left: the moment between the check and the act.
  bool LeaseHeld() const { return lease == nullptr || lease->LeaseHeld(shard); }
  // Set by the scheduler for LeaseHeld(); null in an AttemptContext made by
  // hand (always held).
  const LeaseCheck* lease = nullptr;
  uint32_t shard = 0;
  // The job's definition as it was in force when the attempt started (a
  // change or removal of the job meanwhile does not change it), so that one
  // function can serve many jobs. Unpacked on each call (a few
  // microseconds); a default JobSpec when the scheduler did not set
  // `packed_spec` (an AttemptContext made by hand).
  JobSpec Spec() const;
  // Set by the scheduler for Spec(); valid while the attempt runs.
  const core::PackedSpec* packed_spec = nullptr;
};

// A job body. OK = the attempt succeeded (even if `cancelled` was set
// meanwhile); an error = it failed (the retry policy decides). An error
// returned after `cancelled` was set counts as cancelled -- or as a timeout,
// when the job's timeout set it; absl::DeadlineExceededError otherwise counts
// as a timeout (retry.retry_on_timeout decides). A thrown exception counts as
// an Internal error.
using JobFunction = std::function<absl::Status(const AttemptContext&)>;

// Middleware around every attempt. `next` runs the rest of the chain and then
// the job function; call it at most once. Return its status, or your own (e.g.
// to short-circuit).
class Interceptor {
 public:
  virtual ~Interceptor() = default;
  virtual absl::Status Intercept(
      const AttemptContext& ctx,
      const std::function<absl::Status(const AttemptContext&)>& next) = 0;
};

// A state change of a run, as recorded in history; passed to observers. A fire
// that did not run is an event too: run_id 0, from "", to "skipped" (the
// overlap policy refused it) or "missed" (misfire, paused, ...), detail = the
// reason, and for a range of fires "<reason>: <n> fires from <first> to
// <last>", with fire_id naming the first.
struct RunEvent {
  uint64_t run_id = 0;
  std::string fire_id;
  // Run state names: claiming, pending, running, retrying, succeeded, ...
  std::string from;
  std::string to;
  int attempt = 0;
  std::string detail;
  absl::Time at;
  // The fire (the first of a range); its job is empty when recovery found a
  // run whose fire it cannot name (fire_id says what the store has).
  FireKey fire;
  int64_t fires = 1;  // a missed/skipped record: how many fires (capped)
};

// One call the scheduler made to its store, for metrics.
struct StoreWrite {
  // "claim_fires", "transition_runs", "put_jobs" or "delete_job".
  absl::string_view op;
  size_t items = 0;        // claims + records + watermarks; transitions; jobs
  absl::Duration latency;  // on the scheduler's clock (monotonic)
  absl::Status status;
};

// What the scheduler has done since Create, and what it is doing now.
struct SchedulerStats {
  int64_t jobs = 0;
  int64_t jobs_paused = 0;
  int64_t runs_pending = 0;  // claimed, waiting for their time or a slot
  int64_t runs_running = 0;
  // The same two, by namespace (every namespace that has had a run).
  struct Load {
    int64_t pending = 0;
    int64_t running = 0;
  };
  std::map<std::string, Load> by_namespace;
  int64_t fires_run = 0;  // fires that got a run
  // Fires that did not run, by reason (chime::MissReasonName: "paused",
  // "overlap", "misfire_skip", ...), counting each fire of a range.
  std::map<std::string, int64_t> fires_not_run;
  int64_t runs_succeeded = 0;
  int64_t runs_failed = 0;
  int64_t runs_cancelled = 0;
  int64_t retries = 0;      // attempts scheduled after a failed one
  int64_t timeouts = 0;     // attempts that hit their timeout
  int64_t clock_steps = 0;  // wall-clock steps detected
  // The store's wall clock minus this process's, at the lease's last grant
  // or renewal (with a finite lease_ttl and a store that says its time).
  std::optional<absl::Duration> clock_offset;
  // With shards: the shards scheduled here, ascending, and the jobs kept
  // for shards other nodes hold.
  std::vector<uint32_t> shards;
  int64_t jobs_elsewhere = 0;
};

// The payload (absl::Status::GetPayload) of the FailedPrecondition that a
// scheduler with shards answers for a job of a shard another node holds:
// the shard's number, in decimal.
inline constexpr char kShardElsewherePayload[] = "chime.dev/shard-elsewhere";

struct SchedulerOptions {
  Clock* clock = nullptr;  // default: RealClock::Get()
  // Where jobs, claims, missed records and run history are kept. Null: no
  // store -- nothing is kept beyond the process's memory of what is running,
  // and on_run_event is the only record (decisions are acknowledged at once).
  // With a durable store the scheduler picks up where the last one on that
  // store stopped -- see "Restarts" above. One scheduler per store: Create
  // fails with FailedPrecondition while another holds the store's lease.
  std::shared_ptr<Store> store;
  int worker_threads = 4;  // attempts running at once in this process (>= 1)
  // The core's global limit (0 = worker_threads). Above worker_threads, started
  // attempts wait for a free worker, and their timeouts run meanwhile.
  int max_concurrent_runs = 0;
  uint64_t seed = 0;  // jitter/backoff randomness; 0 = from the clock
  // Fires of jobs whose overlap policy is `allow` are claimed and handed to the
  // workers up to this long before their time, then started at it: many jobs
  // due at the same instant all start on time. Such a run whose job is
  // removed, paused or rescheduled before its time is recorded cancelled
  // ("job removed", "job paused before its time", ...). Other overlap policies
  // decide at the fire's time (they depend on what is running then). A fire
  // is never decided before halfway from its job's previous fire, so a job
  // has at most one fire decided ahead (an every-second job: half a second
  // ahead). Without a store, only fires at whole seconds are decided ahead
  // (every cron fire: the instants many fires share); a fire at an instant
  // within a second -- a one-shot job's 10:00:00.250 -- is decided at its
  // time and starts within about a millisecond of it, at a third of the CPU.
  // Zero turns it off.
  absl::Duration lookahead = absl::Seconds(1);
  // On the real clock (the default Clock), attempts claimed ahead are handed
  // to the workers this long before their time, and each worker waits for
  // the instant itself: the scheduler thread's wake-up and the workers' are
  // then not between the instant and the start (0.2-3 ms on a loaded VM).
  // Until its time such an attempt can still be taken back (job removed,
  // paused, ...). Zero, or another Clock: handed over at their time.
  absl::Duration release_early = absl::Milliseconds(2);
  // Shutdown: this long after its grace cancelled the running attempts, the
  // ones still running are killed (AttemptContext::killed).
  absl::Duration shutdown_kill_grace = absl::Seconds(10);
  std::vector<std::shared_ptr<Interceptor>> interceptors;  // outermost first
  // Called on the scheduler thread for every run transition and missed/skipped
  // fire record; must be quick and must not call the Scheduler.
  std::function<void(const RunEvent&)> on_run_event;
  // Called on the store writer's thread after every store call (with a
  // store); must be quick and must not call the Scheduler.
  std::function<void(const StoreWrite&)> on_store_write;
  // The store's lease (with a store). Infinite: taken once, for as long as
  // this scheduler runs -- one process on an embedded store. Finite (a store
  // shared by several processes, such as PostgreSQL): the lease expires this
  // long after its last renewal, so that another scheduler can take over
  // from one that died; it is renewed every third of it, and from the moment
  // the scheduler cannot prove it still holds the lease (no successful
  // renewal for ttl minus a fifth of it, on its monotonic clock) it starts
  // no attempt, and on_lease_lost is called once, on a thread of its own.
  absl::Duration lease_ttl = absl::InfiniteDuration();
  // Names this process in the store's lease ("<node_name> pid <pid>
  // scheduler <n>"), for operators. Default: the host's name.
  std::string node_name;
  // Where other processes reach this one ("http://10.0.0.5:8712"): appended
  // to the lease's holder as " url <url>" when not empty (standbys forward
  // requests there). REQUIRES: no space.
  std::string advertise_url;
  // Default: abort the process (another scheduler may be running these jobs
  // by now; this one must stop). A caller may instead stop its own work and
  // exit; the scheduler itself starts nothing more either way.
  std::function<void(const absl::Status&)> on_lease_lost;
  // How far this process's wall clock may be from the store's (measured at
  // the lease's grant and every renewal; src/driver/clock_offset.h). Past it,
  // Create refuses the lease (FailedPrecondition "not taking the store's
  // lease: this node's clock is ...", the lease released again), and a
  // running scheduler calls on_clock_skew once, on the lease's thread: its
  // fires would start early or late by the offset. The scheduler itself goes
  // on; the callback decides (the daemon drains and hands the lease over).
  // Infinite: not checked.
  absl::Duration max_clock_skew = absl::InfiniteDuration();
  // Argument: the store's clock minus this process's.
  std::function<void(absl::Duration offset)> on_clock_skew;
  // Shards (docs/cluster.md): with a store shared by several processes, > 0
  // divides the jobs into this many shards by a fixed hash of their key,
  // each with a lease of its own ("shard/<n>"), so that several schedulers --
  // one per node -- run the store's jobs at once, each those of the shards it
  // holds. This scheduler then holds a member lease ("member/<node_name>")
  // instead of the one "scheduler" lease, takes the shards that rendezvous
  // hashing gives it among the live members (recovering their runs as a
  // restart would), and hands off cleanly the ones another member should
  // have: it stops deciding their fires, lets their running attempts finish
  // for handoff_grace (then cancels them), writes their outcomes and releases
  // the lease. Add every job to every node's scheduler: a job of a shard
  // another node holds is kept, not scheduled (TriggerJob and NextFireTime
  // answer FailedPrecondition naming the shard), and scheduled once its
  // shard comes here. Every node of a store must use the same number.
  // 0: one lease for all jobs, one scheduler at a time.
  // REQUIRES with shards: a store and a finite lease_ttl.
  uint32_t shards = 0;
  absl::Duration handoff_grace = absl::Seconds(30);
  // The scheduler sleeps on the monotonic clock until its next timer; it
  // also wakes at least this often to notice a wall-clock step (the fires a
  // step forward skipped over are then due at once; a step back re-times
  // the timers), which no timer would wake it for. Infinite: only timers.
  absl::Duration wall_clock_check = absl::Seconds(1);
  // With a store: a run of an at-least-once job that has been recorded lost
  // this many times (a scheduler stopped -- crashed, was killed, lost its
  // lease -- while it ran) is not started again but recorded failed, saying
  // so, and listed with the dead letters: an attempt that brings its process
  // down would otherwise do so at every restart. 0: no limit (>= 0).
  int max_losses = 3;
};

class Scheduler {
 public:
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(
      SchedulerOptions options);
  // Calls Shutdown(absl::ZeroDuration()) if still running.
  virtual ~Scheduler() = default;

  // Starts the scheduler thread and the workers. Jobs may be added before or
  // after: calls made before Start take effect at once (jobs added before
  // Start are applied together, in one store write, by the next other call or
  // by Start), and what they set going (claims, runs) is carried out once
  // started. FailedPrecondition if already started or shut down.
  //
  // Every method below returns once its effects are carried out and durable
  // in the store (a triggered run is claimed) -- except AddJob, which returns
  // once the job is validated and queued; every call made after it returns
  // sees the job -- and FailedPrecondition once Shutdown has begun.
  virtual absl::Status Start() = 0;

  // Adds or replaces a job whose attempts call `fn` (attempts already running
  // keep the function they started with). InvalidArgument names the bad field
  // (an empty `fn` too). Many jobs may share one function: it tells them
  // apart by AttemptContext::fire and Spec(), and costs them nothing each.
  virtual absl::Status AddJob(const JobSpec& spec,
                              std::shared_ptr<const JobFunction> fn) = 0;
  absl::Status AddJob(const JobSpec& spec, JobFunction fn) {
    return AddJob(spec, std::make_shared<const JobFunction>(std::move(fn)));
  }
  // AddJob of a job the caller has just put in the scheduler's store itself
  // (`record` as Store::PutJobs returned it, still the store's current):
  // the scheduler does not write it again. Without a store, AddJob.
  virtual absl::Status AddStoredJob(const JobRecord& record,
                                    std::shared_ptr<const JobFunction> fn) = 0;
  absl::Status AddStoredJob(const JobRecord& record, JobFunction fn) {
    return AddStoredJob(record,
                        std::make_shared<const JobFunction>(std::move(fn)));
  }
  virtual absl::Status RemoveJob(const JobKey& key) = 0;
  virtual absl::Status PauseJob(const JobKey& key) = 0;
  virtual absl::Status ResumeJob(const JobKey& key) = 0;
  // Runs the job now, outside its schedule; returns the run id.
  // FailedPrecondition when the job's overlap policy refuses another run while
  // one is going; NotFound for an unknown job.
  virtual absl::StatusOr<uint64_t> TriggerJob(const JobKey& key) = 0;
  // TriggerJob, answering through `done` instead of waiting: `done` gets what
  // TriggerJob would return, once, when TriggerJob would return -- on a
  // thread of the scheduler's, or on this one when the call is answered at
  // once (before Start, after Shutdown). It must be quick and must not call
  // the Scheduler.
  using TriggerDone = std::function<void(absl::StatusOr<uint64_t>)>;
  virtual void TriggerJobAsync(const JobKey& key, TriggerDone done) = 0;
  // Cancels run `run` on request, recorded cancelled with `detail`: a run
  // that has not started at once; a running attempt gracefully (its
  // `cancelled` flag), then by force (`killed`) after its job's timeout
  // grace, without retry -- it may still be ending when this returns.
  // NotFound if the run has finished or is unknown.
  virtual absl::Status CancelRun(uint64_t run, const std::string& detail) = 0;
  // The job's next scheduled fire time (InfiniteFuture if none).
  virtual absl::StatusOr<absl::Time> NextFireTime(const JobKey& key) = 0;
  // The job in force: the spec it was last added with, with `paused` set to
  // its pause state now. NotFound for an unknown job.
  virtual absl::StatusOr<JobSpec> GetJob(const JobKey& key) = 0;
  // Counts and current load (a round trip to the scheduler thread; meant for
  // a metrics scrape, not a hot loop).
  virtual absl::StatusOr<SchedulerStats> Stats() = 0;

  // Stops starting runs (runs not yet started are recorded cancelled -- with a
  // store they are left pending instead, and the next scheduler on the store
  // runs those whose time has not come, as a crash recovery would), waits up
  // to `grace` on the scheduler's clock for running attempts to finish, then
  // sets the cancelled flag of the rest, their killed flag
  // shutdown_kill_grace later, and waits for them to return -- a function
  // that ignores the flags delays Shutdown -- records their outcomes
  // (an error after the cancel: cancelled, "shutdown: ...") and stops the
  // threads. Idempotent; before Start it only refuses later calls.
  virtual void Shutdown(absl::Duration grace) = 0;
};

}  // namespace chime

#endif  // CHIME_INCLUDE_CHIME_SCHEDULER_H_
