// The scheduler thread's side of SchedulerImpl: the loop, and how each action
// of the Plan is carried out (src/driver/driver.h); the attempts' part is in
// scheduler_attempts.cc.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/base/timer_slack.h"
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
  // Its wake-ups are the timers' instants: a fire decided at its time is
  // late by what the sleep overruns.
  base::UseFineTimerSlack();
  std::deque<std::function<void()>> items;
  // The adds taken from the callers, applied up to `applied`, at most
  // kAddsPerPass a pass; until all are, nothing more is taken (adds nor
  // commands), and the commands taken with them wait, so that a command
  // sees every AddJob made before it. (Shutdown is such a command: every job
  // added before it is applied, and written, before the thread stops.)
  std::vector<PendingAdd> adds;
  size_t applied = 0;
  for (const RunEvent& e : recovery_events_) Emit(e);
  recovery_events_.clear();
  while (true) {
    // The buffer handed to the callers below; once a burst of adds is over
    // the callers' buffer is freed too, else it keeps the burst's capacity.
    const bool gave_large_adds = adds.capacity() > 1024;
    if (applied == adds.size()) {
      adds.clear();
      applied = 0;
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
    const bool took_adds = applied < adds.size();
    if (took_adds) {
      const size_t n = std::min(kAddsPerPass, adds.size() - applied);
      ApplyAdds(absl::MakeSpan(adds).subspan(applied, n), Now());
      applied += n;
      CarryOut();
    }
    const bool more_adds = applied < adds.size();
    if (!more_adds) {
      for (std::function<void()>& item : items) {
        item();
        CarryOut();
      }
      items.clear();
    }
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
    if (more_adds) continue;  // the next slice, once the timers had a look
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
  // dry (one Plan step for all, e.g. a burst of added jobs); what the Plan
  // says to that goes into an emptied queue, so that a chain of steps (the
  // Plan taking its next slice of due timers) does not keep every action
  // carried out before it: that was a second's 100,000 actions, ~21 MB.
  std::vector<core::Event> acks;
  while (!todo_.empty()) {
    for (size_t i = 0; i < todo_.size(); ++i) {
      core::Action action = std::move(todo_[i]);
      if (auto* p = std::get_if<core::PersistAction>(&action)) {
        if (writer_ != nullptr) {
          writer_->Persist(std::move(*p));
        } else {
          Acknowledge(*p, acks);
        }
      } else if (const auto* s =
                     std::get_if<core::StartAttemptAction>(&action)) {
        StartAttempt(*s);
      } else if (const auto* c =
                     std::get_if<core::CancelAttemptAction>(&action)) {
        CancelAttempt(*c);
      } else if (auto* t = std::get_if<core::TransitionAction>(&action)) {
        RecordTransition(*t);
      } else if (const auto* u = std::get_if<core::UnstageAction>(&action)) {
        Unstage(*u);
      }
    }
    todo_.clear();  // every action in it is carried out
    if (acks.empty()) break;
    core::Output& out = Scratch();
    plan_.OnEvents(acks, Now(), &out);
    acks.clear();
    Absorb(out, true);
  }
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
    persisted.emplace_back(core::PersistedEvent{std::move(p.batch), p.status});
  }
  tell_plan();
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

void SchedulerImpl::Acknowledge(core::PersistAction& batch,
                                std::vector<core::Event>& acks) {
  if (options_.on_run_event) {
    const absl::Time at = clock_.Now();
    for (const core::PersistAction::Missed& m : batch.missed)
      Emit(MissedEvent(m, at));
  }
  acks.emplace_back(core::PersistedEvent{std::move(batch), absl::OkStatus()});
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

void SchedulerImpl::Emit(const RunEvent& event) {
  if (options_.on_run_event) options_.on_run_event(event);
}

}  // namespace chime::driver
