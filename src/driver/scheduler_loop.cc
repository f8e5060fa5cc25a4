// The scheduler thread's side of SchedulerImpl: the loop, and how each action
// of the Plan is carried out (src/driver/driver.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/driver/scheduler_impl.h"
#include "src/time/rfc3339.h"

namespace chime::driver {
namespace {

// The overlap policy decided these; every other reason is a miss.
bool IsSkip(core::MissReason r) {
  return r == core::MissReason::kOverlap ||
         r == core::MissReason::kBufferFull || r == core::MissReason::kReplaced;
}

RunEvent MissedEvent(const core::PersistAction::Missed& m, absl::Time at) {
  RunEvent e;
  e.fire = FireKey{m.job, m.generation, m.range.first};
  e.fire_id = e.fire.ToString();
  e.fires = m.range.count;
  e.to = IsSkip(m.range.reason) ? "skipped" : "missed";
  e.detail = std::string(core::MissReasonName(m.range.reason));
  if (m.range.count != 1) {
    absl::StrAppend(&e.detail, ": ", m.range.count_capped ? "at least " : "",
                    m.range.count, " fires from ",
                    time::FormatUtc(m.range.first), " to ",
                    time::FormatUtc(m.range.last));
  }
  e.at = at;
  return e;
}

// ReleaseStaged lets the workers take a batch at least this large before it
// goes on, waiting at most kYieldToWorkers.
constexpr size_t kLargeBatch = 256;
constexpr absl::Duration kYieldToWorkers = absl::Milliseconds(20);

}  // namespace

void SchedulerImpl::Die(absl::string_view what) {
  std::fprintf(stderr, "chime::Scheduler: %.*s\n",
               static_cast<int>(what.size()), what.data());
  std::abort();
}

// ---------------------------------------------------------- the loop

namespace {

// Frees the buffer of an emptied vector that a burst grew large (a bulk load
// of jobs, a second with many fires), so that an idle scheduler holds little.
template <typename T>
void ReleaseIfLarge(std::vector<T>& v) {
  if (v.empty() && v.capacity() > 1024) std::vector<T>().swap(v);
}

}  // namespace

core::Output& SchedulerImpl::Scratch() {
  scratch_.actions.clear();  // keeps its capacity
  scratch_.wake_at = MonoTime::Infinite();
  return scratch_;
}

void SchedulerImpl::Absorb(core::Output& out, bool from_step) {
  if (todo_.empty()) {
    todo_.swap(out.actions);  // no copy; `out` gets the empty buffer
  } else {
    for (core::Action& action : out.actions) todo_.push_back(std::move(action));
  }
  if (from_step) wake_at_ = out.wake_at;
}

void SchedulerImpl::Loop() {
  std::deque<std::function<void()>> items;
  std::vector<PendingAdd> adds;
  for (const RunEvent& e : recovery_events_) Emit(e);
  recovery_events_.clear();
  while (true) {
    // The buffer handed to the callers below; once a burst of adds is over
    // the callers' buffer is freed too, else it keeps the burst's capacity.
    const bool gave_large_adds = adds.capacity() > 1024;
    {
      absl::MutexLock lock(&mu_);
      items.swap(queue_);
      adds.swap(adds_);
      gathering_adds_ = false;
    }
    std::vector<Attempt*> results = TakeResults();
    std::vector<StoreWriter::Completion> written;
    if (writer_ != nullptr) written = writer_->TakeCompletions();
    // Attempts due now go first: they are what must be on time. After a
    // large batch, whose workers are nearly done by now, what they gave back
    // is taken in this pass too (and told, then freed), before the Plan's
    // step below claims the next fires: a second's attempts and runs are
    // then freed before the next second's are made, not alongside.
    if (ReleaseStaged()) {
      std::vector<Attempt*> more = TakeResults();
      results.insert(results.end(), more.begin(), more.end());
      ReleaseStaged();
    }
    // Actions left by commands that ran before Start are carried out on the
    // first pass.
    CarryOut();
    if (!written.empty()) {
      OnWritten(std::move(written));
      CarryOut();
    }
    if (!results.empty()) {
      OnAttemptsFinished(results);
      CarryOut();
    }
    const bool took_adds = !adds.empty();
    if (took_adds) {
      ApplyAdds(adds, Now());
      CarryOut();
    }
    for (std::function<void()>& item : items) {
      item();
      CarryOut();
    }
    items.clear();
    core::Output& out = Scratch();
    plan_.Advance(Now(), &out);
    Absorb(out, true);
    CarryOut();
    ReleaseStaged();
#ifndef NDEBUG
    // Debug builds (the sanitized tests and the crash tests' daemons) check
    // the Plan's bookkeeping once a second: a run that nothing would ever
    // start aborts here, saying which, rather than stay pending unnoticed.
    if (const MonoTime mono = clock_.MonoNow(); mono >= next_invariant_check_) {
      next_invariant_check_ = mono + absl::Seconds(1);
      if (absl::Status s = plan_.CheckInvariants(); !s.ok())
        Die(absl::StrCat("the Plan's invariants: ", s.message()));
    }
#endif
    // Within a burst of adds the two buffers go back and forth between the
    // callers and this thread with their capacity; the pass after it frees.
    if (!took_adds) {
      ReleaseIfLarge(adds);
      if (gave_large_adds) {
        absl::MutexLock lock(&mu_);
        ReleaseIfLarge(adds_);
      }
    }
    ReleaseIfLarge(todo_);
    ReleaseIfLarge(scratch_.actions);
    const MonoTime hand_offs = CheckHandOffs();
    if (stopping_) {
      if (!cancelled_all_ && clock_.MonoNow() >= shutdown_deadline_)
        CancelAllAttempts();
      if (!killed_all_ &&
          clock_.MonoNow() >= shutdown_deadline_ + options_.shutdown_kill_grace)
        KillAllAttempts();
      // Commands are refused once stopping, and every event comes from an
      // attempt or the store writer: with no attempt left running and
      // everything written and answered, nothing more can arrive.
      if (attempts_.empty() && todo_.empty() &&
          (writer_ == nullptr || writer_->Idle())) {
        return;
      }
    }
    if (took_adds && !stopping_) {
      // More adds are likely (a caller registering many jobs): gather them
      // for a moment, on the real clock (a simulated one would not move),
      // rather than be woken by each. Commands, results and writes still
      // wake the thread; a timer due meanwhile is late by at most this.
      {
        absl::MutexLock lock(&mu_);
        gathering_adds_ = true;
      }
      RealClock::Get().WaitUntil(RealClock::Get().MonoNow() + kGatherAdds,
                                 wakeup_);
      continue;
    }
    MonoTime deadline = std::min(wake_at_, hand_offs);
    if (!staged_.empty())
      deadline = std::min(deadline, staged_.begin()->first - release_early_);
    if (!released_.empty()) {
      const Released& r = released_.front();
      deadline = std::min(deadline, (*r.batch)[r.told]->not_before);
    }
    if (stopping_ && !cancelled_all_)
      deadline = std::min(deadline, shutdown_deadline_);
    else if (stopping_ && !killed_all_ && !attempts_.empty())
      deadline =
          std::min(deadline, shutdown_deadline_ + options_.shutdown_kill_grace);
    // A wall-clock step wakes nothing: look at least this often.
    if (options_.wall_clock_check != absl::InfiniteDuration())
      deadline =
          std::min(deadline, clock_.MonoNow() + options_.wall_clock_check);
    clock_.WaitUntil(deadline, wakeup_);
  }
}

void SchedulerImpl::CarryOut() {
  // Carrying out an action may queue more (an answer given at once): they
  // are carried out in this loop too, in order. Without a store, the
  // batches met on the way are acknowledged together when the queue runs
  // dry (one Plan step for all, e.g. a burst of added jobs).
  std::vector<core::Event> acks;
  for (size_t i = 0; i < todo_.size(); ++i) {
    core::Action action = std::move(todo_[i]);
    if (auto* p = std::get_if<core::PersistAction>(&action)) {
      if (writer_ != nullptr) {
        writer_->Persist(std::move(*p));
      } else {
        Acknowledge(*p, acks);
      }
    } else if (const auto* s = std::get_if<core::StartAttemptAction>(&action)) {
      StartAttempt(*s);
    } else if (const auto* c =
                   std::get_if<core::CancelAttemptAction>(&action)) {
      CancelAttempt(*c);
    } else if (auto* t = std::get_if<core::TransitionAction>(&action)) {
      RecordTransition(*t);
    } else if (const auto* u = std::get_if<core::UnstageAction>(&action)) {
      Unstage(*u);
    }
    if (i + 1 == todo_.size() && !acks.empty()) {
      core::Output& out = Scratch();
      plan_.OnEvents(acks, Now(), &out);
      Absorb(out, true);
      acks.clear();
    }
  }
  todo_.clear();
  if (start_now_ != nullptr) Dispatch(std::move(start_now_));
  start_now_ = nullptr;
}

void SchedulerImpl::OnWritten(std::vector<StoreWriter::Completion> done) {
  std::vector<core::Event> persisted;
  const absl::Time at = clock_.Now();
  const auto tell_plan = [&] {
    if (persisted.empty()) return;
    core::Output& out = Scratch();
    plan_.OnEvents(persisted, Now(), &out);
    Absorb(out, true);
    persisted.clear();
  };
  for (StoreWriter::Completion& c : done) {
    if (auto* r = std::get_if<StoreWriter::Reached>(&c)) {
      // A command waits for this: what it wrote is durable, and its events
      // are out (the Plan has heard of its batches, too).
      tell_plan();
      CarryOut();
      r->done();
      continue;
    }
    if (auto* t = std::get_if<StoreWriter::Transitioned>(&c)) {
      const core::TransitionAction& a = t->transition;
      Emit(RunEvent{a.run, a.fire.ToString(),
                    std::string(core::RunStateName(a.from)),
                    std::string(core::RunStateName(a.to)), a.attempt, a.detail,
                    t->at, a.fire});
      continue;
    }
    auto& p = std::get<StoreWriter::Persisted>(c);
    if (p.status.ok()) {
      if (options_.on_run_event) {
        for (const core::PersistAction::Missed& m : p.batch.missed)
          Emit(MissedEvent(m, at));
      }
    } else if (absl::IsFailedPrecondition(p.status) && fences_->sharded()) {
      // A shard's lease is gone (or was never held: a bug): another node
      // may schedule its jobs now.
      LeaseLost(p.status);
    } else if (!absl::IsFailedPrecondition(p.status) &&
               !absl::IsAlreadyExists(p.status)) {
      // The Plan sends the batch again later.
      std::fprintf(stderr, "chime::Scheduler: persist batch %llu failed: %s\n",
                   static_cast<unsigned long long>(p.batch.batch),
                   p.status.ToString().c_str());
    }
    persisted.emplace_back(core::PersistedEvent{p.batch.batch, p.status});
  }
  tell_plan();
}

void SchedulerImpl::StartAttempt(const core::StartAttemptAction& start) {
  auto [slot, inserted] =
      attempts_.try_emplace(start.run, std::make_unique<Attempt>());
  if (!inserted)
    Die(absl::StrCat("run ", start.run, " started attempt ", start.attempt,
                     " while attempt ", slot->second->ctx.attempt,
                     " was not over"));
  Attempt* a = slot->second.get();
  AttemptContext& ctx = a->ctx;
  ctx.fire = start.fire;
  ctx.run_id = start.run;
  ctx.attempt = start.attempt;
  ctx.fencing_token = start.token;
  if (fences_->sharded()) {
    // The attempt is fenced by its shard's lease.
    ctx.shard = fences_->ShardOf(start.fire.job);
    if (const std::optional<Fence> f = fences_->Get(ctx.shard))
      ctx.fencing_token = f->token;
  }
  ctx.scheduled_time = start.fire.scheduled_time;
  // Without a lease that can expire the attempt's lease is always held, and
  // LeaseHeld() reads no clock.
  ctx.lease = lease_ != nullptr || shard_keeper_ != nullptr ? this : nullptr;
  ctx.cancelled = &a->cancelled;
  ctx.killed = &a->killed;
  ctx.output = &a->output;
  ctx.exit_code = &a->exit_code;
  if (start.job_slot < functions_.size()) a->fn = functions_[start.job_slot];
  if (const core::PackedSpec* spec = plan_.PackedAt(start.job_slot)) {
    a->spec = *spec;
    ctx.packed_spec = &a->spec;
  }
  if (start.staged) {
    // Before its time: held until then (the Plan keeps the run pending).
    a->staged = true;
    a->not_before = start.not_before;
    staged_[start.not_before].push_back(a);
    return;
  }
  if (start.durable_first && writer_ != nullptr) {
    // Once its `running` transition, enqueued before, is in the store.
    auto alone = std::make_shared<AttemptBatch>(1, a);
    writer_->Barrier([this, alone]() mutable { Dispatch(std::move(alone)); });
    return;
  }
  if (start_now_ == nullptr) start_now_ = std::make_shared<AttemptBatch>();
  start_now_->push_back(a);
}

void SchedulerImpl::Unstage(const core::UnstageAction& unstage) {
  auto it = attempts_.find(unstage.run);
  // Already started (the Plan hears of it from ReleaseStaged), or unknown.
  if (it == attempts_.end() || it->second->ctx.attempt != unstage.attempt ||
      !it->second->staged) {
    return;
  }
  // Handed over early, a worker may have started it at its time: then it
  // runs, and the Plan hears so from ReleaseStaged (the unstage came too
  // late). Else no worker will (RunAttempt), and ReleaseStaged skips it;
  // its worker gives it back unrun, and OnAttemptsFinished frees it.
  uint8_t waiting = Attempt::kWaiting;
  if (!it->second->phase.compare_exchange_strong(waiting, Attempt::kDropped))
    return;
  (void)it->second.release();  // staged_ or a released batch points to it
  attempts_.erase(it);
  core::AttemptFinishedEvent e;
  e.run = unstage.run;
  e.attempt = unstage.attempt;
  e.outcome = core::AttemptOutcome::kCancelled;
  e.started = false;
  core::Output& out = Scratch();
  plan_.OnEvent(e, Now(), &out);
  Absorb(out, true);
}

bool SchedulerImpl::ReleaseStaged() {
  bool large = false;
  MonoTime now = clock_.MonoNow();
  if (!staged_.empty() && staged_.begin()->first - release_early_ <= now) {
    // Everything due (or due within release_early_) goes to the workers as
    // one batch, in the order of its times.
    const MonoTime horizon = now + release_early_;
    auto batch = std::make_shared<AttemptBatch>(
        std::move(staged_.extract(staged_.begin()).mapped()));
    while (!staged_.empty() && staged_.begin()->first <= horizon) {
      AttemptBatch more = std::move(staged_.extract(staged_.begin()).mapped());
      std::move(more.begin(), more.end(), std::back_inserter(*batch));
    }
    // Hand over first, tell the Plan after: the workers start on time while
    // this thread does the bookkeeping -- once they have taken a large batch
    // (or a few milliseconds have passed), so as not to compete with them
    // for the CPU at the instant that must be on time.
    Dispatch(batch);
    if (batch->size() >= kLargeBatch) {
      pool_->WaitLastBatchTaken(kYieldToWorkers);
      large = true;
    }
    released_.push_back(Released{std::move(batch)});
    now = clock_.MonoNow();
  }
  // The Plan hears that an attempt started once its time has come (until
  // then it may take it back: Unstage) -- before this pass takes in any of
  // their results, which a worker can post only after that time.
  core::AttemptStartedEvent started;
  while (!released_.empty()) {
    Released& r = released_.front();
    const AttemptBatch& batch = *r.batch;
    for (; r.told < batch.size() && batch[r.told]->not_before <= now;
         ++r.told) {
      Attempt& a = *batch[r.told];
      a.staged = false;
      if (a.phase.load() == Attempt::kDropped) continue;
      started.started.push_back({a.ctx.run_id, a.ctx.attempt});
    }
    if (r.told < batch.size()) break;
    released_.pop_front();
  }
  if (!started.started.empty()) {
    core::Output& out = Scratch();
    plan_.OnEvent(std::move(started), Now(), &out);
    Absorb(out, true);
  }
  return large;
}

// How far ahead of the attempt a worker starts the next ones are fetched.
constexpr size_t kPrefetchAhead = 8;

void SchedulerImpl::Dispatch(std::shared_ptr<AttemptBatch> batch) {
  const size_t n = batch->size();
  if (!pool_->SubmitBatch(n, [this, batch = std::move(batch)](size_t i) {
        // A second's attempts were prepared up to a lookahead ago and have
        // left the caches: ~400 B each, with the job's function elsewhere on
        // the heap. Ask for the attempt twice as far on, and for the
        // function of the one a few indices on (in the cache by now), while
        // this one runs (the workers take indices in order).
        if (const size_t far = i + 2 * kPrefetchAhead; far < batch->size()) {
          const char* record = reinterpret_cast<const char*>((*batch)[far]);
          for (size_t at = 0; at < sizeof(Attempt); at += 64)
            __builtin_prefetch(record + at);
        }
        if (const size_t ahead = i + kPrefetchAhead; ahead < batch->size())
          __builtin_prefetch((*batch)[ahead]->fn.get());
        RunAttempt(*(*batch)[i]);
      })) {
    Die("the worker pool refused an attempt");
  }
}

namespace {

// Returns once the real clock's monotonic time is at or past `due`: sleeps
// until shortly before (a sleep may overrun by a timer's slack), then spins. A
// worker remembers the last time it saw, so a batch's attempts due at one
// instant read the clock once per worker.
void AwaitDue(MonoTime due) {
  thread_local MonoTime seen;
  if (due <= seen) return;
  constexpr absl::Duration kSpin = absl::Microseconds(300);
  for (int spins = 0;; ++spins) {
    const MonoTime now = RealClock::Get().MonoNow();
    if (now >= due) {
      seen = now;
      return;
    }
    if (due - now > 2 * kSpin) {
      absl::SleepFor(due - now - kSpin);
    } else if (spins % 64 == 63) {
      std::this_thread::yield();
    }
  }
}

}  // namespace

void SchedulerImpl::RunAttempt(Attempt& a) {
  if (release_early_ > absl::ZeroDuration()) AwaitDue(a.not_before);
  // Taken back before its time (Unstage): given back unrun. Else now the
  // worker's.
  uint8_t waiting = Attempt::kWaiting;
  if (!a.phase.compare_exchange_strong(waiting, Attempt::kStarted)) {
    PostResult(a);
    return;
  }
  AttemptContext& ctx = a.ctx;
  ctx.started_at = clock_.Now();
  // Never before its scheduled time on the wall clock either: the monotonic
  // instant waited for comes from a mapping of wall time that may be off by
  // microseconds, and a job at 08:00:00 must not see 07:59:59.999998. (A
  // manual fire's time may lie a little ahead: it starts now; a larger lead
  // is a wall-clock step, which the Plan handles.)
  constexpr absl::Duration kMaxWallLead = absl::Milliseconds(1);
  if (release_early_ > absl::ZeroDuration() && !ctx.fire.manual) {
    while (ctx.started_at < ctx.scheduled_time &&
           ctx.scheduled_time - ctx.started_at < kMaxWallLead) {
      ctx.started_at = clock_.Now();
    }
  }
  // The Plan starts attempts only for jobs it knows, and AddJob registers the
  // function in the same step, so `fn` is never null; if it were, the attempt
  // fails rather than crash a worker. Nothing starts once this scheduler
  // cannot prove it still holds the store's lease: another may own the jobs.
  // (The function checks again before it acts: ctx.LeaseHeld().)
  const absl::Status status =
      !ctx.LeaseHeld()
          ? absl::CancelledError("not started: the store's lease was lost")
      : a.fn != nullptr ? chain_.Run(ctx, *a.fn)
                        : absl::InternalError(absl::StrCat(
                              "no function for job ", ctx.fire.job.ToString()));
  a.outcome = ClassifyAttempt(status, a.cancelled.load());
  if (!status.ok()) {
    a.detail = status.message().empty()
                   ? absl::StatusCodeToString(status.code())
                   : std::string(status.message());
  }
  if (a.outcome == core::AttemptOutcome::kCancelled && a.by_shutdown.load())
    a.detail = absl::StrCat("shutdown: ", a.detail);
  PostResult(a);
}

bool SchedulerImpl::LeaseHeld(uint32_t shard) const {
  const MonoTime now = clock_.MonoNow();
  return (lease_ == nullptr || lease_->Valid(now)) &&
         (shard_keeper_ == nullptr || shard_keeper_->Valid(shard, now));
}

void SchedulerImpl::OnAttemptsFinished(const std::vector<Attempt*>& ended) {
  std::vector<core::Event> events;
  events.reserve(ended.size());
  for (Attempt* a : ended) {
    std::unique_ptr<Attempt> owned;
    if (a->phase.load() == Attempt::kDropped) {
      owned.reset(a);  // taken back unrun: the Plan heard so from Unstage
      continue;
    }
    auto it = attempts_.find(a->ctx.run_id);
    if (it == attempts_.end() || it->second.get() != a)
      Die(absl::StrCat("run ", a->ctx.run_id, " attempt ", a->ctx.attempt,
                       " ended unknown to the driver"));
    owned = std::move(it->second);
    attempts_.erase(it);
    if (writer_ != nullptr && (!a->output.empty() || a->exit_code != 0)) {
      outputs_[a->ctx.run_id] = {a->ctx.attempt, std::move(a->output),
                                 a->exit_code};
    }
    events.emplace_back(core::AttemptFinishedEvent{
        a->ctx.run_id, a->ctx.attempt, a->outcome, std::move(a->detail)});
  }
  if (events.empty()) return;
  core::Output& out = Scratch();
  plan_.OnEvents(events, Now(), &out);
  Absorb(out, true);
}

void SchedulerImpl::CancelAttempt(const core::CancelAttemptAction& cancel) {
  auto it = attempts_.find(cancel.run);
  if (it == attempts_.end() || it->second->ctx.attempt != cancel.attempt)
    return;
  // A forced cancel sets `killed` too: an executor kills what it started; a
  // function in this process cannot be killed. Setting a flag again is
  // harmless.
  Attempt& attempt = *it->second;
  attempt.cancelled.store(true);
  attempt.cancelled.notify_all();
  if (cancel.force) {
    attempt.killed.store(true);
    attempt.killed.notify_all();
  }
}

void SchedulerImpl::RecordTransition(core::TransitionAction& t) {
  if (writer_ != nullptr) {
    // Written behind: the store writer keeps the order, and the RunEvent is
    // emitted once the transition is recorded (OnWritten).
    Ended ended;
    if (t.from == core::RunState::kRunning) {
      auto it = outputs_.find(t.run);
      if (it != outputs_.end()) {
        if (it->second.attempt == t.attempt) ended = std::move(it->second);
        outputs_.erase(it);
      }
    }
    writer_->Transition(std::move(t), clock_.Now(), std::move(ended.output),
                        ended.exit_code);
    return;
  }
  if (!options_.on_run_event) return;
  Emit(RunEvent{t.run, t.fire.ToString(),
                std::string(core::RunStateName(t.from)),
                std::string(core::RunStateName(t.to)), t.attempt, t.detail,
                clock_.Now(), t.fire});
}

void SchedulerImpl::Acknowledge(const core::PersistAction& batch,
                                std::vector<core::Event>& acks) {
  if (options_.on_run_event) {
    const absl::Time at = clock_.Now();
    for (const core::PersistAction::Missed& m : batch.missed)
      Emit(MissedEvent(m, at));
  }
  acks.emplace_back(core::PersistedEvent{batch.batch, absl::OkStatus()});
}

void SchedulerImpl::BeginShutdown(absl::Duration grace) {
  stopping_ = true;
  // Before any job goes: removing one frees a slot (or lets a retry come
  // due) that would start another job's run -- after functions_ is cleared.
  plan_.StopStarting();
  if (writer_ != nullptr) writer_->GiveUpWhenDown();
  shutdown_deadline_ = clock_.MonoNow() + std::max(grace, absl::ZeroDuration());
  // Removing every job stops new fires and cancels (without a store) or
  // releases (with one) the runs not yet started; running attempts finish
  // and are recorded, but not retried.
  for (const JobKey& key : plan_.JobKeys()) {
    core::Output& out = Scratch();
    // With a store, runs not started are left to the next scheduler.
    if (absl::Status s = plan_.RemoveJob(key, Now(), &out,
                                         writer_ != nullptr
                                             ? core::Plan::Unstarted::kRelease
                                             : core::Plan::Unstarted::kCancel);
        !s.ok()) {
      Die(s.ToString());
    }
    Absorb(out, false);
  }
  functions_.clear();
}

void SchedulerImpl::CancelAllAttempts() {
  cancelled_all_ = true;
  for (auto& [run, attempt] : attempts_) {
    attempt->by_shutdown.store(true);
    attempt->cancelled.store(true);
    attempt->cancelled.notify_all();
  }
}

void SchedulerImpl::KillAllAttempts() {
  killed_all_ = true;
  for (auto& [run, attempt] : attempts_) {
    attempt->killed.store(true);
    attempt->killed.notify_all();
  }
}

void SchedulerImpl::Emit(const RunEvent& event) {
  if (options_.on_run_event) options_.on_run_event(event);
}

}  // namespace chime::driver
