// Test support for the scheduler driver: a fixture with a SimulatedClock, a
// recorder of RunEvents and attempts, and gates for job functions that must
// block.
//
// Waiting. Time moves only when a test moves it, but job functions run on
// worker threads and report back asynchronously, so tests wait (in real time,
// bounded by kLimit) for what they expect to see: a RunEvent, or a job function
// being called. Before moving the clock, AdvanceTo waits until the scheduler
// thread sleeps on it, so that the thread sees exactly the target time.
#ifndef CHIME_SRC_DRIVER_SCHEDULER_TEST_UTIL_H_
#define CHIME_SRC_DRIVER_SCHEDULER_TEST_UTIL_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "chime/scheduler.h"
#include "gtest/gtest.h"
#include "src/driver/driver.h"
#include "src/store/memory_store.h"
#include "testing/job_specs.h"
#include "testing/simulated_clock.h"

namespace chime::driver::testing {

// How long a test waits, in real time, for something a worker or the scheduler
// thread does.
inline constexpr absl::Duration kLimit = absl::Seconds(10);

// The wall time `d` after the SimulatedClock's start (2026-01-01T00:00:00Z).
inline absl::Time Wall(absl::Duration d) {
  return SimulatedClock::DefaultStart() + d;
}

// "job:1:" + the wall time `d` after the start, e.g. FireId("a",
// absl::Minutes(1)) is "a:1:2026-01-01T00:01:00Z".
inline FireKey FireAt(const std::string& job, absl::Duration d) {
  return FireKey{JobKey{"default", job}, 1, Wall(d)};
}
inline std::string FireId(const std::string& job, absl::Duration d) {
  return FireAt(job, d).ToString();
}

inline JobSpec Cron(std::string id, std::string expression) {
  return ::chime::testing::CronJob(std::move(id), std::move(expression));
}

inline JobKey Key(std::string id) { return JobKey{"default", std::move(id)}; }

// What a job function saw (AttemptContext without the flag pointer).
struct Seen {
  std::string fire_id;
  uint64_t run_id = 0;
  int attempt = 0;
  int64_t token = 0;
  absl::Time scheduled_time;
  absl::Time started_at;
  bool manual = false;
};

// Records RunEvents (from on_run_event) and the attempts of job functions,
// thread-safely.
class Recorder {
 public:
  std::function<void(const RunEvent&)> Callback() {
    return [this](const RunEvent& e) {
      absl::MutexLock lock(&mu_);
      events_.push_back(e);
      changed_.SignalAll();
    };
  }

  void Record(const AttemptContext& ctx) {
    absl::MutexLock lock(&mu_);
    seen_.push_back(Seen{ctx.fire_id(), ctx.run_id, ctx.attempt,
                         ctx.fencing_token, ctx.scheduled_time, ctx.started_at,
                         ctx.fire.manual});
    changed_.SignalAll();
  }

  // Waits until an event for `fire_id` went to state `to` (in attempt
  // `attempt`, if given); returns it, or fails the test and returns an empty
  // event.
  RunEvent WaitForEvent(const std::string& fire_id, const std::string& to,
                        int attempt = -1) {
    RunEvent found;
    const bool ok = WaitFor([&] {
      for (const RunEvent& e : events_) {
        if (e.fire_id == fire_id && e.to == to &&
            (attempt < 0 || e.attempt == attempt)) {
          found = e;
          return true;
        }
      }
      return false;
    });
    EXPECT_TRUE(ok) << "no event " << fire_id << " -> " << to << "; events:\n"
                    << Dump();
    return found;
  }

  // Waits until `n` attempts have been recorded.
  bool WaitForAttempts(size_t n) {
    return WaitFor([&] { return seen_.size() >= n; });
  }

  std::vector<RunEvent> events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  // Events about one fire, as "from->to" lines ("claiming->pending", ...).
  std::vector<std::string> Transitions(const std::string& fire_id) const {
    std::vector<std::string> out;
    for (const RunEvent& e : events()) {
      if (e.fire_id == fire_id) out.push_back(absl::StrCat(e.from, "->", e.to));
    }
    return out;
  }
  bool HasEventWithPrefix(const std::string& prefix) const {
    for (const RunEvent& e : events()) {
      if (absl::StartsWith(e.fire_id, prefix)) return true;
    }
    return false;
  }
  std::vector<Seen> seen() const {
    absl::MutexLock lock(&mu_);
    return seen_;
  }
  std::string Dump() const {
    std::string out;
    for (const RunEvent& e : events()) {
      absl::StrAppend(&out, "  ", e.fire_id, " ", e.from, "->", e.to, " #",
                      e.attempt, " (", e.detail, ")\n");
    }
    return out;
  }

 private:
  // Waits (at most kLimit) until `pred`, called with mu_ held, is true.
  bool WaitFor(const std::function<bool()>& pred) {
    const absl::Time deadline = absl::Now() + kLimit;
    absl::MutexLock lock(&mu_);
    while (!pred()) {
      if (changed_.WaitWithDeadline(&mu_, deadline) && !pred()) return false;
    }
    return true;
  }

  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  std::vector<RunEvent> events_;
  std::vector<Seen> seen_;
};

// A job function that blocks until the test opens the gate (or kLimit passes).
class Gate {
 public:
  void Open() { open_.Notify(); }
  // Called by the job function: marks the gate entered, then waits for Open.
  void Pass() {
    entered_.Notify();
    open_.WaitForNotificationWithTimeout(kLimit);
  }
  bool WaitEntered() { return entered_.WaitForNotificationWithTimeout(kLimit); }

 private:
  absl::Notification entered_;
  absl::Notification open_;
};

// Waits (real time, at most kLimit) until the attempt is asked to stop; true if
// it was.
inline bool WaitUntilCancelled(const AttemptContext& ctx) {
  const absl::Time deadline = absl::Now() + kLimit;
  while (!ctx.IsCancelled()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

class SchedulerTest : public ::testing::Test {
 protected:
  // Creates the scheduler (not started) with the simulated clock and the
  // recorder.
  void Create(SchedulerOptions options = {}) {
    options.clock = &clock_;
    options.seed = 42;
    options.on_run_event = recorder_.Callback();
    options.store = store_;
    auto created = CreateScheduler(std::move(options));
    ASSERT_TRUE(created.ok()) << created.status();
    scheduler_ = *std::move(created);
  }

  // A job function that records its attempt and returns `result`.
  JobFunction Returns(absl::Status result) {
    return [this, result](const AttemptContext& ctx) {
      recorder_.Record(ctx);
      return result;
    };
  }

  // Moves the clock to `d` after its start, once the scheduler thread sleeps on
  // it.
  void AdvanceTo(absl::Duration d) {
    ASSERT_TRUE(clock_.BlockUntilWaiters(1))
        << "the scheduler thread does not sleep";
    clock_.AdvanceTo(SimulatedClock::kMonoStart + d);
  }

  // What the store holds (real time deadlines: the simulated clock may be
  // stopped).
  JobId IdOf(const JobKey& key) {
    absl::StatusOr<JobRecord> job = store_->GetJob(key, kForever);
    return job.ok() ? job->id : 0;
  }
  // The run that claimed `fire`, if any.
  std::optional<ClaimInfo> GetClaim(const FireKey& fire) {
    absl::StatusOr<std::vector<ClaimInfo>> claims =
        store_->LookupClaims({FireRef{IdOf(fire.job), fire.generation,
                                      fire.scheduled_time, fire.manual}},
                             kForever);
    if (!claims.ok() || claims->at(0).run == 0) return std::nullopt;
    return claims->at(0);
  }
  // The stored watermark (of the job's newest generation that has one).
  absl::Time Watermark(const JobKey& key) {
    absl::StatusOr<JobRecord> job = store_->GetJob(key, kForever);
    return job.ok() ? job->watermark : absl::InfinitePast();
  }
  std::vector<MissedRecord> Missed(const JobKey& key) {
    absl::StatusOr<MissedPage> page =
        store_->ListMissed(IdOf(key), std::nullopt, 1000, kForever);
    return page.ok() ? page->records : std::vector<MissedRecord>{};
  }

  static constexpr MonoTime kForever = MonoTime::Infinite();

  SimulatedClock clock_;
  Recorder recorder_;
  std::shared_ptr<Store> store_ = std::make_shared<store::MemoryStore>(
      store::MemoryStore::Options{&clock_});
  std::unique_ptr<Scheduler> scheduler_;  // destroyed first
};

}  // namespace chime::driver::testing

#endif  // CHIME_SRC_DRIVER_SCHEDULER_TEST_UTIL_H_
