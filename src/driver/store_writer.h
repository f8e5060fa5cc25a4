// StoreWriter: the scheduler driver's one writer to the Store, on a thread of
// its own, so that the scheduler thread never waits for a disk.
//
// The scheduler thread hands it writes in the order the Plan emits them; it
// carries them out in that order (a run's claim is durable before any of its
// transitions is written), merging neighbours of one kind into one store call:
// many persist batches into one ClaimFires, many transitions into one
// TransitionRuns. The order is kept across kinds too:
// a persist batch may record a fire missed whose run a transition before it
// cancels (a quota miss), and the record must not be durable while the run
// still looks pending (the crash test caught a reordering that did that). What
// a caller must hear about comes back as Completions, which the scheduler
// thread takes (TakeCompletions) after `wake` told it there are some.
//
// Failures. A write answered unavailable / indeterminate is re-sent unchanged
// (every Store write accepts its identical re-send) after a growing pause,
// until it gets a definite answer -- never under a new key. Definite refusals:
//   - ClaimFires: AlreadyExists, FailedPrecondition (fenced), NotFound,
//     InvalidArgument go back to the Plan in the batch's PersistedEvent (a
//     merged call that fails is split, so each batch gets its own answer);
//   - TransitionRuns, PutJobs, DeleteJob: the Plan only emits legal
//     transitions for runs it claimed, so a refusal means the store and the
//     Plan disagree (or the lease was lost): the writer reports it through
//     `on_fatal` and stops writing.
// A transition claiming -> cancelled (the Plan gave up a run whose claim was
// in flight) is written as pending -> cancelled when the claim got into the
// store, and is nothing otherwise.
//
// Fences. Each write goes under the fence of its job (fences.h): one call
// per shard among the records merged, each under that shard's lease. A
// record whose shard is not held is a driver bug, reported through
// `on_fatal` as FailedPrecondition (like a fenced write).
//
// Thread-safety: every method may be called from any thread; the scheduler
// thread is the one that enqueues and takes completions.
#ifndef CHIME_SRC_DRIVER_STORE_WRITER_H_
#define CHIME_SRC_DRIVER_STORE_WRITER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "chime/job.h"
#include "chime/scheduler.h"
#include "chime/store.h"
#include "src/core/plan.h"
#include "src/driver/fences.h"

namespace chime::driver {

class StoreWriter {
 public:
  struct Options {
    absl::Duration call_timeout = absl::Seconds(30);  // per store call
    // Pauses between re-sends of a write answered unavailable: doubling from
    // the first to the last.
    absl::Duration first_retry = absl::Milliseconds(10);
    absl::Duration max_retry = absl::Seconds(1);
    // Merged writes stop growing at about this many records a call: a
    // backlog (a store that was slow, a burst of fires) is written in
    // transactions short enough that the lease's renewal, which waits for
    // the fenced writes holding its row, is not kept past its deadline. On
    // PostgreSQL on a 2-core machine a single-threaded writer records
    // ~10,000 fires/s; smaller calls (2,000) fell behind there
    // (bench/RESULTS.md).
    size_t max_records_per_call = 10000;
    // Also return transitions as completions (the driver emits RunEvents).
    bool report_transitions = false;
    // Called on the writer thread after every store call (each re-send too).
    std::function<void(const StoreWrite&)> on_write;
  };

  // A persist batch written (or refused): for the Plan, and for RunEvents of
  // its missed records.
  struct Persisted {
    core::PersistAction batch;
    absl::Status status;
  };
  // A transition recorded (only with report_transitions).
  struct Transitioned {
    core::TransitionAction transition;
    absl::Time at;
  };
  // A Barrier reached: call `done` (on the scheduler thread, after handling
  // the completions before it).
  struct Reached {
    std::function<void()> done;
  };
  using Completion = std::variant<Persisted, Transitioned, Reached>;

  // `wake` is
  // called (on the writer thread) when completions become available after
  // there were none. `on_fatal` is called once, on the writer thread, when a
  // write is refused in a way the Plan cannot handle; the writer then drops
  // every later write.
  StoreWriter(Store& store, Clock& clock, std::shared_ptr<const Fences> fences,
              Options options, std::function<void()> wake,
              std::function<void(const absl::Status&)> on_fatal);
  // Every write under `fence`.
  StoreWriter(Store& store, Clock& clock, Fence fence, Options options,
              std::function<void()> wake,
              std::function<void(const absl::Status&)> on_fatal)
      : StoreWriter(store, clock, std::make_shared<Fences>(std::move(fence)),
                    std::move(options), std::move(wake), std::move(on_fatal)) {}
  ~StoreWriter();  // Stop()
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  // Creates or replaces the job `spec` (its `paused` replaced by `paused`);
  // the store must answer with `generation` (the Plan's), or it is fatal.
  // The spec is unpacked on the writer thread. `job_slot` is the job's
  // Plan::JobSlot: persist records name their job by it, and must come after
  // the job's PutJob.
  // `stored_id` != 0: the job is in the store already under that id (the
  // caller wrote it); only the id is learnt, in order with the other writes.
  // Such a note does not wake the writer thread: it is taken with the next
  // item that does (a persist record that needs the id comes after it), or
  // when Idle is asked.
  // `job_slot` kNoSlot: a job the Plan does not schedule (a shard another
  // node holds): written with whatever generation the store gives it.
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  void PutJob(core::PackedSpec spec, bool paused, int64_t generation,
              uint32_t job_slot, JobId stored_id = 0);
  void DeleteJob(const JobKey& key);
  void Persist(core::PersistAction batch);
  // `output`, `exit_code`: the ending attempt's (t.from == running), kept
  // with it.
  void Transition(core::TransitionAction t, absl::Time at,
                  std::string output = {}, int32_t exit_code = 0);
  // Once every write enqueued before it is durable (or dropped after a fatal
  // error), completes with Reached{done}.
  void Barrier(std::function<void()> done);

  std::vector<Completion> TakeCompletions();
  // True when nothing is queued or being written, and no completion waits.
  // Wakes the writer thread for notes still queued (and is then false).
  bool Idle();

  // The scheduler is shutting down: from now on a write the store keeps
  // answering unavailable is given up after a few sends (and its batch
  // answered Unavailable), so that shutdown does not wait for a store that
  // is down. What was given up is decided again by the next scheduler (its
  // runs are found unfinished, the watermark did not move).
  void GiveUpWhenDown();
  // Writes what is queued (GiveUpWhenDown first), then stops the thread.
  // Idempotent.
  void Stop();
  // Whether some write was refused (fatal) or given up: then what the store
  // has may lag what the Plan decided.
  bool Failed() const { return failed_or_given_up_.load(); }

 private:
  struct PutJobItem {
    core::PackedSpec spec;
    bool paused = false;
    int64_t generation = 0;
    uint32_t job_slot = 0;
    JobId stored_id = 0;
  };
  struct DeleteJobItem {
    JobKey key;
  };
  struct TransitionItem {
    core::TransitionAction t;
    absl::Time at;
    std::string output;
    int32_t exit_code = 0;
  };
  struct BarrierItem {
    std::function<void()> done;
  };
  using Item = std::variant<PutJobItem, DeleteJobItem, core::PersistAction,
                            TransitionItem, BarrierItem>;

  // `wake`: wake the thread for it (else it waits for an item that does).
  void Enqueue(Item item, bool wake = true);
  void Run();
  // Each takes a run of neighbouring items of its kind from `items`, starting
  // at `i`, and returns the index after them.
  size_t WriteJobs(std::vector<Item>& items, size_t i);
  size_t WriteClaims(std::vector<Item>& items, size_t i);
  size_t WriteTransitions(std::vector<Item>& items, size_t i);
  // Calls `write` until it answers something other than unavailable /
  // indeterminate, or the writer is told to stop while the store is down.
  // `op` and `items` are what Options::on_write hears.
  absl::Status Retry(absl::string_view op, size_t items,
                     const std::function<absl::Status(MonoTime)>& write);
  // ClaimFires of `batches`: one call per shard among them.
  absl::Status Claim(const std::vector<const core::PersistAction*>& batches);
  // Retry(op, items, write) under the fence of `shard`; FailedPrecondition
  // (fatal) when it is not held.
  absl::Status Fenced(
      uint32_t shard, absl::string_view op, size_t items,
      const std::function<absl::Status(const Fence&, MonoTime)>& write);
  // A refusal the Plan cannot handle: on_fatal, then every later write is
  // dropped. (A write given up while shutting down is only logged.)
  void Fatal(const absl::Status& status);
  void Complete(std::vector<Completion> done);
  // The store's id of the job in `job_slot` (0: no PutJob for it yet).
  JobId IdOf(uint32_t job_slot) const;

  Store& store_;
  Clock& clock_;
  const std::shared_ptr<const Fences> fences_;
  const Options options_;
  const std::function<void()> wake_;
  const std::function<void(const absl::Status&)> on_fatal_;

  // Writer thread only.
  std::vector<JobId> ids_;  // by job slot, from the PutJobs written
  bool failed_ = false;
  std::atomic<bool> failed_or_given_up_{false};

  std::mutex mu_;
  std::condition_variable cv_;
  // A vector, not a deque: a burst's items sit in one buffer, freed as a
  // whole, rather than in blocks scattered between long-lived allocations.
  std::vector<Item> queue_;  // guarded by mu_
  bool signalled_ = false;   // guarded by mu_: the thread is woken for queue_
  bool busy_ = false;        // guarded by mu_: writing a batch
  bool stop_ = false;        // guarded by mu_
  bool give_up_ = false;     // guarded by mu_
  std::vector<Completion> completed_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_STORE_WRITER_H_
