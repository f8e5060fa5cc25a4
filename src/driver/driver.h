// The scheduler driver: the thin loop that owns a core::Plan, feeds it time,
// commands and results, and carries out its actions through a store and a
// worker pool. It implements chime::Scheduler (include/chime/scheduler.h).
//
// How the driver carries out each action of the Plan (src/core/plan.h):
//   - PersistAction: handed to the store writer (store_writer.h: its own
//     thread, writes in order, merges neighbours into one store call); once
//     durable (or refused) the Plan gets the batch back in a PersistedEvent
//     with the store's answer, and the batch's missed and skipped records
//     become RunEvents.
//   - StartAttemptAction: the job's function (the one registered by the latest
//     AddJob; a removed job's running attempt keeps its own) runs on a worker
//     through the interceptor chain, with a fresh cancelled flag; started_at
//     is the clock's wall time when a worker begins it. The attempts of one
//     pass go to the pool as one batch. An attempt whose not_before is still
//     ahead is staged: held, with every other attempt due at the same
//     instant, until the clock reaches it -- on the real clock, until
//     SchedulerOptions::release_early before it, the workers then waiting
//     for the instant themselves (monotonic, then wall time: never early) --
//     then the whole group goes to the pool at once, and once the instant
//     has come the Plan gets one AttemptStarted event for it. Its
//     result becomes an AttemptFinishedEvent by ClassifyAttempt
//     (interceptors.h); workers queue results and only the first of a burst
//     wakes the scheduler thread, which hands them all to the Plan together.
//     An attempt is one heap record, everything its worker needs; a batch
//     is a vector of pointers to them, and each record is freed as its
//     result is taken in. After handing over a large batch the scheduler
//     thread waits for the workers to take it, then takes in what they have
//     already given back before the Plan's step claims the next fires: one
//     second's runs and attempts are freed before the next second's are
//     made. The Plan handles at most 2048 due timers a step
//     (PlanOptions::max_timers_per_step); the driver carries out each
//     slice's actions before the next, so a burst of 100,000 fires never
//     holds all of its actions, claims and records in flight at once.
//   - UnstageAction: a staged attempt is dropped and the Plan told so at once
//     (AttemptFinished, started = false), also one a worker holds waiting for
//     its instant (the worker and the driver hand each attempt over with one
//     atomic step: whoever moves it first decides); one already started is
//     left alone, and the Plan hears that it started.
//   - CancelAttemptAction: sets the attempt's cancelled flag and wakes any
//     thread blocked in `ctx.cancelled->wait(false)`; a forced cancel sets its
//     killed flag too (an executor kills its child process). A function in
//     this process cannot be killed: one that ignores the flags runs on, and
//     its run stays running. The attempt's output (AttemptContext::output)
//     goes to the store with its transition out of running.
//   - TransitionAction: handed to the store writer; once recorded, passed to
//     on_run_event. The attempt does not wait for it: the claim, durable
//     before the run could start, is what recovery needs.
//
// Before the first action, Create runs recovery (recovery.h) and the Plan
// starts with the lease's token and the next free RunId; jobs the store had
// are resumed when added again. Commands wait until what they wrote is
// durable (a barrier in the writer's queue).
//
// RunEvents passed to on_run_event, on the scheduler thread, after the store
// has recorded them:
//   - a run transition: run_id, fire_id, from/to = core::RunStateName,
//     attempt, detail;
//   - a fire that did not run: run_id 0, fire_id of the (first) fire, from "",
//     to "skipped" (overlap, buffer_full, replaced: the overlap policy
//     decided) or "missed" (every other core::MissReason), attempt 0, detail
//     "<reason>" for one fire, or "<reason>: <n> fires from <first> to
//     <last>" for a range ("at least <n>" when the count is capped).
//
// Time: the driver reads time and waits only through the injected Clock. Each
// pass of the scheduler thread applies the queued commands and events, calls
// Plan::Advance, carries out every action, then waits on the clock until the
// Plan's wake_at or a notification.
//
// Shutdown(grace): the driver removes every job from the Plan (runs not yet
// started are recorded cancelled, "job removed" -- with a store they are
// released instead: left pending for the next scheduler to adopt; running
// ones are not retried), waits for running attempts until `grace` has passed on
// the clock, then sets the cancelled flag of the rest (their killed flag
// shutdown_kill_grace later) and waits -- without a
// time limit: a function that never returns blocks Shutdown -- for them to
// return. Their outcomes are recorded (an error after the cancel: cancelled,
// detail "shutdown: ..."). Then the scheduler thread and the workers are
// joined.
//
// AddJob validates and parses the job on the caller's thread and queues it
// without waiting: the scheduler thread applies commands in order, so every
// later call sees the job.
//
// Thread-safety: as chime::Scheduler.
#ifndef CHIME_SRC_DRIVER_DRIVER_H_
#define CHIME_SRC_DRIVER_DRIVER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "chime/scheduler.h"

namespace chime::driver {

// Scheduler::Create. Errors: InvalidArgument naming the bad option; the
// store's, from recovery (FailedPrecondition: another scheduler holds the
// store's lease).
absl::StatusOr<std::unique_ptr<Scheduler>> CreateScheduler(
    SchedulerOptions options);

}  // namespace chime::driver

#endif  // CHIME_SRC_DRIVER_DRIVER_H_
