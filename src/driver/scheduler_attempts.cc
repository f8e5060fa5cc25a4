// SchedulerImpl's attempts: made from the Plan's StartAttemptActions, held
// until their time, handed to the workers in batches, run there, given back
// and freed (src/driver/driver.h; the record's lifetime is in
// scheduler_impl.h).
#include <algorithm>
#include <atomic>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/base/timer_slack.h"
#include "src/driver/scheduler_impl.h"

namespace chime::driver {
namespace {

// ReleaseStaged lets the workers take a batch at least this large before it
// goes on, waiting at most kYieldToWorkers.
constexpr size_t kLargeBatch = 256;
constexpr absl::Duration kYieldToWorkers = absl::Milliseconds(20);

}  // namespace

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
        // this one runs (a worker takes its chunk's indices in order).
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
// until then (with the fine timer slack, base/timer_slack.h: ~20-50 us late
// here), never spins.
// Spinning the last 150 us before each instant kept both workers busy
// through the gaps between sparse fires (one-shot jobs, each at its own
// instant: 10,000 a second leave gaps under 150 us) and took the CPU the
// scheduler thread needed, for no better lateness (bench/RESULTS.md). A
// worker remembers the last time it saw, so a batch's attempts due at one
// instant read the clock once per worker.
void AwaitDue(MonoTime due) {
  thread_local MonoTime seen;
  if (due <= seen) return;
  base::UseFineTimerSlack();
  for (;;) {
    const MonoTime now = RealClock::Get().MonoNow();
    if (now >= due) {
      seen = now;
      return;
    }
    absl::SleepFor(due - now);
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
  std::string output;
  ctx.output = &output;
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
  ctx.output = nullptr;
  a.outcome = ClassifyAttempt(status, a.cancelled.load());
  if (!status.ok() || !output.empty()) {
    a.ended = std::make_unique<Attempt::Ended>();
    a.ended->output = std::move(output);
    if (!status.ok()) {
      a.ended->detail = status.message().empty()
                            ? absl::StatusCodeToString(status.code())
                            : std::string(status.message());
    }
    // (A cancelled outcome is an error status.)
    if (a.outcome == core::AttemptOutcome::kCancelled && a.by_shutdown.load())
      a.ended->detail = absl::StrCat("shutdown: ", a.ended->detail);
  }
  PostResult(a);
}

bool SchedulerImpl::LeaseHeld(uint32_t shard) const {
  const MonoTime now = clock_.MonoNow();
  return (lease_ == nullptr || lease_->Valid(now)) &&
         (shard_keeper_ == nullptr || shard_keeper_->Valid(shard, now));
}

void SchedulerImpl::OnAttemptsFinished(const std::vector<Attempt*>& ended) {
  // In slices: a second's 100,000 results as one vector of events would be
  // ~10 MB more at the moment every attempt record is still in memory.
  constexpr size_t kSlice = 1024;
  for (size_t i = 0; i < ended.size(); i += kSlice) {
    OnAttemptsFinished(absl::MakeConstSpan(ended).subspan(i, kSlice));
  }
}

void SchedulerImpl::OnAttemptsFinished(absl::Span<Attempt* const> ended) {
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
    std::string output, detail;
    if (a->ended != nullptr) {
      output = std::move(a->ended->output);
      detail = std::move(a->ended->detail);
    }
    if (writer_ != nullptr && (!output.empty() || a->exit_code != 0))
      outputs_[a->ctx.run_id] = {a->ctx.attempt, std::move(output),
                                 a->exit_code};
    events.emplace_back(core::AttemptFinishedEvent{
        a->ctx.run_id, a->ctx.attempt, a->outcome, std::move(detail)});
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

void SchedulerImpl::PostResult(Attempt& attempt) {
  const int worker = WorkerPool::WorkerIndex();
  std::atomic<Attempt*>& stack =
      results_[worker >= 0 ? worker : options_.worker_threads].head;
  Attempt* head = stack.load(std::memory_order_relaxed);
  do {
    attempt.next_result = head;
  } while (!stack.compare_exchange_weak(
      head, &attempt, std::memory_order_release, std::memory_order_relaxed));
  // Later results ride along until the scheduler thread takes them.
  if (head == nullptr) wakeup_.Notify();
}

std::vector<SchedulerImpl::Attempt*> SchedulerImpl::TakeResults() {
  std::vector<Attempt*> ended;
  for (int i = 0; i <= options_.worker_threads; ++i) {
    Attempt* list =
        results_[i].head.exchange(nullptr, std::memory_order_acquire);
    const size_t first = ended.size();
    for (Attempt* a = list; a != nullptr; a = a->next_result)
      ended.push_back(a);
    std::reverse(ended.begin() + first, ended.end());  // oldest first
  }
  return ended;
}

void SchedulerImpl::FreeUnowned() {
  for (Attempt* a : TakeResults()) {
    auto it = attempts_.find(a->ctx.run_id);
    if (it == attempts_.end() || it->second.get() != a) delete a;
  }
  for (auto& [at, batch] : staged_) {
    for (Attempt* a : batch) {
      if (a->phase.load() == Attempt::kDropped) delete a;
    }
  }
  staged_.clear();
}

}  // namespace chime::driver
