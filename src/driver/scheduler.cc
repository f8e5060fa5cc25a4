// The public methods of SchedulerImpl (the callers' side); its creation is
// in scheduler_create.cc.
#include "chime/scheduler.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "src/base/thread_name.h"
#include "src/driver/driver.h"
#include "src/driver/lease_keeper.h"
#include "src/driver/scheduler_impl.h"

namespace chime {
namespace driver {
namespace {

absl::Status ShutDownError() {
  return absl::FailedPreconditionError("the scheduler is shut down");
}

}  // namespace

void SchedulerImpl::LeaseLost(const absl::Status& why) {
  std::call_once(lease_lost_, [&] {
    if (lease_ != nullptr) lease_->Invalidate();
    if (options_.on_lease_lost) return options_.on_lease_lost(why);
    Die(why.ToString());
  });
}

// ------------------------------------------------------------ public methods

absl::Status SchedulerImpl::Start() {
  absl::MutexLock lock(&mu_);
  if (state_ == State::kRunning)
    return absl::FailedPreconditionError("already started");
  if (state_ != State::kNew) return ShutDownError();
  pool_ = std::make_unique<WorkerPool>(options_.worker_threads);
  if (lease_ != nullptr) lease_->Start();
  state_ = State::kRunning;
  thread_ = base::NamedThread("chime-scheduler", [this] { Loop(); });
  loop_thread_id_ = thread_.get_id();
  // Its first gains run commands: after the thread is there for them.
  if (shard_keeper_ != nullptr) shard_keeper_->Start();
  return absl::OkStatus();
}

template <typename R>
void SchedulerImpl::CallAsync(std::function<R()> f, std::function<void(R)> done,
                              Wait wait) {
  std::optional<R> now;  // the answer, when it is given at once
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kNew) {
      ApplyAdds(adds_, Now());  // every earlier AddJob is seen
      now.emplace(f());
    } else if (state_ != State::kRunning) {
      now.emplace(ShutDownError());
    } else if (std::this_thread::get_id() == loop_thread_id_) {
      now.emplace(absl::FailedPreconditionError(
          "the Scheduler must not be called from on_run_event (it runs on the "
          "scheduler thread)"));
    } else {
      // The caller hears back once the command's actions are carried out
      // and what it wrote is durable: e.g. TriggerJob answers once the claim
      // is in the store.
      queue_.push_back(
          [this, f = std::move(f), done = std::move(done), wait]() mutable {
            R result = f();
            CarryOut();
            if (writer_ == nullptr || wait == Wait::kApplied)
              return done(std::move(result));
            writer_->Barrier(
                [result = std::move(result), done = std::move(done)]() mutable {
                  done(std::move(result));
                });
          });
    }
  }
  if (now.has_value()) return done(*std::move(now));
  wakeup_.Notify();
}

template <typename R>
R SchedulerImpl::Call(absl::FunctionRef<R()> f, Wait wait) {
  std::optional<R> result;
  absl::Notification done;
  CallAsync<R>([f] { return f(); },
               [&](R r) {
                 result.emplace(std::move(r));
                 done.Notify();
               },
               wait);
  done.WaitForNotification();
  return *std::move(result);
}

// scheduler_shards.cc's commands.
template absl::Status SchedulerImpl::Call<absl::Status>(
    absl::FunctionRef<absl::Status()> f, Wait wait);

absl::Status SchedulerImpl::AddJob(const JobSpec& spec,
                                   std::shared_ptr<const JobFunction> fn) {
  return Add(spec, std::move(fn), 0, 0, absl::InfinitePast());
}

absl::Status SchedulerImpl::AddStoredJob(
    const JobRecord& record, std::shared_ptr<const JobFunction> fn) {
  return Add(record.spec, std::move(fn), record.id, record.generation,
             record.watermark_generation == record.generation
                 ? record.watermark
                 : absl::InfinitePast());
}

absl::Status SchedulerImpl::Add(const JobSpec& spec,
                                std::shared_ptr<const JobFunction> fn,
                                JobId stored_id, int64_t stored_generation,
                                absl::Time stored_watermark) {
  if (fn == nullptr || !*fn)
    return absl::InvalidArgumentError("fn: the job function is empty");
  // Everything the Plan could refuse is checked here, on the caller's thread;
  // the scheduler thread only applies the job, after every earlier command.
  absl::StatusOr<core::FireSource> source = core::FireSource::Validate(spec);
  if (!source.ok()) return source.status();
  PendingAdd add{core::PackedSpec::PackUnshared(spec),
                 *std::move(source),
                 std::move(fn),
                 clock_.Now(),
                 stored_id,
                 stored_generation,
                 stored_watermark};
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kNew) {
      // Before Start: applied, in one batch with the adds around it, by the
      // next call or by the scheduler thread's first pass.
      adds_.push_back(std::move(add));
      return absl::OkStatus();
    }
    if (state_ != State::kRunning) return ShutDownError();
    const bool first = adds_.empty() && queue_.empty() && !gathering_adds_;
    adds_.push_back(std::move(add));
    if (!first) return absl::OkStatus();  // the thread is being woken
  }
  wakeup_.Notify();
  return absl::OkStatus();
}

void SchedulerImpl::ApplyAdds(std::vector<PendingAdd>& adds, core::Now now) {
  ApplyAdds(absl::MakeSpan(adds), now);
  adds.clear();
}

void SchedulerImpl::ApplyAdds(absl::Span<PendingAdd> adds, core::Now now) {
  if (adds.empty()) return;
  plan_.BeginBatch();
  for (PendingAdd& add : adds) ApplyAdd(add, now);
  core::Output& out = Scratch();
  plan_.EndBatch(now, &out);
  Absorb(out, false);
}

void SchedulerImpl::ApplyAdd(PendingAdd& add, core::Now now) {
  add.packed.TakeShared();  // here, off the caller's thread
  const JobSpec spec = add.packed.Unpack();
  const JobKey& key = spec.key;
  if (!Scheduled(key)) {
    return Park(std::move(add.packed), std::move(add.fn), spec.paused,
                add.stored_id != 0);
  }
  // A job the store had before this scheduler started continues from there,
  // and takes over the runs an earlier scheduler left: the ones claimed ahead
  // whose time has not come, and the lost ones if the job is at-least-once
  // (at-most-once ones stay lost, reported at start).
  std::optional<core::Resume> resume;
  // (The maps are empty but after a recovery: no key hashed for them.)
  if (auto stored = stored_jobs_.empty() ? decltype(stored_jobs_)::node_type()
                                         : stored_jobs_.extract(key);
      !stored.empty()) {
    resume = ResumeFor(stored.mapped(), spec);
    if (auto pending = pending_runs_.extract(key); !pending.empty())
      resume->claimed = std::move(pending.mapped());
    if (auto lost = lost_runs_.extract(key);
        !lost.empty() && spec.delivery == Delivery::kAtLeastOnce) {
      resume->lost = std::move(lost.mapped());
    }
  } else if (add.stored_watermark != absl::InfinitePast() &&
             plan_.Generation(key) == 0) {
    // A job the caller stored with its first watermark (JobWrite::watermark):
    // its fires are decided from there, and nothing needs writing first.
    resume = core::Resume{.generation = add.stored_generation,
                          .watermark = add.stored_watermark};
  }
  // The store learns of the job (and its JobId) before any of its fires.
  core::Output& out = Scratch();
  absl::Status s =
      plan_.UpsertJob(spec, std::move(add.source), now, &out, add.requested,
                      resume.has_value() ? &*resume : nullptr,
                      std::move(add.packed), add.stored_generation);
  if (!s.ok()) Die(absl::StrCat("a validated job was refused: ", s.ToString()));
  // Before the actions: a run taken over may start in them.
  const uint32_t slot = *plan_.JobSlot(key);
  if (slot >= functions_.size()) functions_.resize(slot + 1);
  functions_[slot] = std::move(add.fn);
  // A stored job of another generation than the Plan's is written, for the
  // writer to report the disagreement.
  StoreJob(key, add.stored_generation == plan_.GenerationAt(slot)
                    ? add.stored_id
                    : 0);
  Absorb(out, false);
}

void SchedulerImpl::StoreJob(const JobKey& key, JobId stored_id) {
  if (writer_ == nullptr) return;
  const core::PackedSpec* spec = plan_.Packed(key);
  if (spec == nullptr) Die(absl::StrCat("no job ", key.ToString()));
  writer_->PutJob(*spec, plan_.IsPaused(key), plan_.Generation(key),
                  *plan_.JobSlot(key), stored_id);
}

absl::Status SchedulerImpl::RemoveJob(const JobKey& key) {
  return Call<absl::Status>([&] {
    if (parked_.erase(key) > 0) {
      writer_->DeleteJob(key);
      return absl::OkStatus();
    }
    core::Output& out = Scratch();
    const std::optional<uint32_t> slot = plan_.JobSlot(key);
    absl::Status s = plan_.RemoveJob(key, Now(), &out);
    if (s.ok() && writer_ != nullptr) writer_->DeleteJob(key);
    Absorb(out, false);
    if (s.ok()) functions_[*slot].reset();
    return s;
  });
}

absl::Status SchedulerImpl::PauseJob(const JobKey& key) {
  return Call<absl::Status>([&] {
    if (auto it = parked_.find(key); it != parked_.end()) {
      it->second.paused = true;
      writer_->PutJob(it->second.packed, true, 0, StoreWriter::kNoSlot);
      return absl::OkStatus();
    }
    core::Output& out = Scratch();
    absl::Status s = plan_.PauseJob(key, Now(), &out);
    if (s.ok()) StoreJob(key);
    Absorb(out, false);
    return s;
  });
}

absl::Status SchedulerImpl::ResumeJob(const JobKey& key) {
  return Call<absl::Status>([&] {
    if (auto it = parked_.find(key); it != parked_.end()) {
      it->second.paused = false;
      writer_->PutJob(it->second.packed, false, 0, StoreWriter::kNoSlot);
      return absl::OkStatus();
    }
    core::Output& out = Scratch();
    absl::Status s = plan_.ResumeJob(key, Now(), &out);
    if (s.ok()) StoreJob(key);
    Absorb(out, false);
    return s;
  });
}

absl::StatusOr<uint64_t> SchedulerImpl::Trigger(const JobKey& key) {
  if (parked_.contains(key)) return NotHere(key);
  core::Output& out = Scratch();
  absl::StatusOr<core::RunId> run = plan_.TriggerJob(key, Now(), &out);
  Absorb(out, false);
  return run;
}

absl::StatusOr<uint64_t> SchedulerImpl::TriggerJob(const JobKey& key) {
  return Call<absl::StatusOr<uint64_t>>([&] { return Trigger(key); });
}

void SchedulerImpl::TriggerJobAsync(const JobKey& key, TriggerDone done) {
  CallAsync<absl::StatusOr<uint64_t>>([this, key] { return Trigger(key); },
                                      std::move(done), Wait::kDurable);
}

absl::StatusOr<absl::Time> SchedulerImpl::NextFireTime(const JobKey& key) {
  return Call<absl::StatusOr<absl::Time>>([&]() -> absl::StatusOr<absl::Time> {
    if (parked_.contains(key)) return NotHere(key);
    // Generations start at 1: 0 means the Plan does not know the job.
    if (plan_.Generation(key) == 0) {
      return absl::NotFoundError(absl::StrCat("no job ", key.ToString()));
    }
    return plan_.NextFireTime(key);
  });
}

absl::Status SchedulerImpl::CancelRun(uint64_t run, const std::string& detail) {
  return Call<absl::Status>([&] {
    core::Output& out = Scratch();
    absl::Status s = plan_.CancelRunOnRequest(run, detail, Now(), &out);
    Absorb(out, false);
    return s;
  });
}

absl::StatusOr<JobSpec> SchedulerImpl::GetJob(const JobKey& key) {
  // Copied out on the scheduler thread, unpacked on the caller's.
  std::optional<core::PackedSpec> packed;
  bool paused = false;
  absl::Status s = Call<absl::Status>([&] {
    if (auto it = parked_.find(key); it != parked_.end()) {
      packed = it->second.packed;
      paused = it->second.paused;
      return absl::OkStatus();
    }
    const core::PackedSpec* p = plan_.Packed(key);
    if (p == nullptr)
      return absl::NotFoundError(absl::StrCat("no job ", key.ToString()));
    packed = *p;
    paused = plan_.IsPaused(key);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  JobSpec spec = packed->Unpack();
  spec.paused = paused;
  return spec;
}

absl::StatusOr<SchedulerStats> SchedulerImpl::Stats() {
  return Call<absl::StatusOr<SchedulerStats>>(
      [&]() -> absl::StatusOr<SchedulerStats> {
        SchedulerStats s;
        s.jobs = static_cast<int64_t>(plan_.num_jobs());
        s.jobs_paused = static_cast<int64_t>(plan_.num_paused_jobs());
        for (const core::ReadyQueue::NamespaceStats& ns : plan_.QueueStats()) {
          s.runs_pending += static_cast<int64_t>(ns.pending);
          s.runs_running += ns.running;
          s.by_namespace[ns.name] = {static_cast<int64_t>(ns.pending),
                                     ns.running};
        }
        const core::PlanCounters& c = plan_.counters();
        s.fires_run = c.fires_run;
        for (const auto& [reason, n] : c.fires_missed)
          s.fires_not_run[std::string(MissReasonName(reason))] += n;
        s.runs_succeeded = c.runs_succeeded;
        s.runs_failed = c.runs_failed;
        s.runs_cancelled = c.runs_cancelled;
        s.retries = c.retries;
        s.timeouts = c.timeouts;
        s.clock_steps = c.clock_steps;
        // Measured on a shared store (a renewed lease); an embedded store's
        // clock is this process's.
        if (lease_ != nullptr) {
          if (const std::optional<ClockOffset> offset = lease_->clock_offset())
            s.clock_offset = offset->offset;
        }
        for (uint32_t shard = 0; shard < shards_.size(); ++shard) {
          if (shards_[shard].state == ShardState::kHeld)
            s.shards.push_back(shard);
        }
        s.jobs_elsewhere = static_cast<int64_t>(parked_.size());
        return s;
      },
      // A reading: it need not wait for the writer's backlog (a scrape of
      // /metrics asks several times).
      Wait::kApplied);
}

void SchedulerImpl::Shutdown(absl::Duration grace) {
  absl::MutexLock shutdown_lock(&shutdown_mu_);
  // No shard comes or goes from now on (a move under way finishes first);
  // the leases are renewed until StopWriting, while attempts end.
  if (shard_keeper_ != nullptr) shard_keeper_->StopMoving();
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kNew) {
      state_ = State::kStopped;
      StopWriting();
    }
    if (state_ == State::kStopped) return;
    if (std::this_thread::get_id() == loop_thread_id_)
      Die("Shutdown called from on_run_event");
    if (pool_->OnWorkerThread()) Die("Shutdown called from a job function");
    state_ = State::kStopping;
    queue_.push_back([this, grace] { BeginShutdown(grace); });
  }
  wakeup_.Notify();
  thread_.join();
  pool_->Join();
  StopWriting();
  absl::MutexLock lock(&mu_);
  state_ = State::kStopped;
}

void SchedulerImpl::StopWriting() {
  if (writer_ == nullptr) return;
  writer_->Stop();
  if (lease_ != nullptr) lease_->Stop();
  if (shard_keeper_ != nullptr) {
    shard_keeper_->Stop();
    // Every write under the shard leases done: the next holders take the
    // shards over at once, as from a hand-off. Otherwise they expire.
    if (!writer_->Failed()) shard_keeper_->ReleaseAll();
  }
  // Another scheduler may take over at once. (If this fails, the lease
  // expires, or the store's next open releases it.)
  (void)store_->ReleaseLease(fence_, clock_.MonoNow() + absl::Seconds(10));
}

}  // namespace driver
}  // namespace chime
