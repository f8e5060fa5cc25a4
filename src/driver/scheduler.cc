// The public methods of SchedulerImpl (the callers' side) and the factories.
#include "chime/scheduler.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "src/driver/driver.h"
#include "src/driver/scheduler_impl.h"

namespace chime {
namespace driver {
namespace {

absl::Status ShutDownError() {
  return absl::FailedPreconditionError("the scheduler is shut down");
}

}  // namespace

// ------------------------------------------------------------ public methods

absl::Status SchedulerImpl::Start() {
  absl::MutexLock lock(&mu_);
  if (state_ == State::kRunning)
    return absl::FailedPreconditionError("already started");
  if (state_ != State::kNew) return ShutDownError();
  pool_ = std::make_unique<WorkerPool>(options_.worker_threads);
  state_ = State::kRunning;
  thread_ = std::thread([this] { Loop(); });
  loop_thread_id_ = thread_.get_id();
  return absl::OkStatus();
}

template <typename R>
R SchedulerImpl::Call(absl::FunctionRef<R()> f) {
  std::optional<R> result;
  absl::Notification done;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kNew) return f();
    if (state_ != State::kRunning) return ShutDownError();
    if (std::this_thread::get_id() == loop_thread_id_) {
      return absl::FailedPreconditionError(
          "the Scheduler must not be called from on_run_event (it runs on the "
          "scheduler thread)");
    }
    // The caller hears back once the command's actions are carried out: e.g.
    // TriggerJob returns after the claim is in the store and the attempt is
    // with a worker.
    queue_.push_back([&] {
      result.emplace(f());
      CarryOut();
      done.Notify();
    });
  }
  wakeup_.Notify();
  done.WaitForNotification();
  return *std::move(result);
}

absl::Status SchedulerImpl::AddJob(const JobSpec& spec, JobFunction fn) {
  if (!fn) return absl::InvalidArgumentError("fn: the job function is empty");
  // Everything the Plan could refuse is checked here, on the caller's thread;
  // the scheduler thread only applies the job, after every earlier command.
  if (absl::Status s = ValidateJobSpec(spec); !s.ok()) return s;
  absl::StatusOr<core::FireSource> source = core::FireSource::Create(spec);
  if (!source.ok()) return source.status();
  PendingAdd add{spec, *std::move(source),
                 std::make_shared<const JobFunction>(std::move(fn)),
                 clock_.Now()};
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kNew) {
      ApplyAdd(add, Now());  // before Start: inline; its actions wait in todo_
      return absl::OkStatus();
    }
    if (state_ != State::kRunning) return ShutDownError();
    const bool first = adds_.empty() && queue_.empty();
    adds_.push_back(std::move(add));
    if (!first) return absl::OkStatus();  // the thread is being woken
  }
  wakeup_.Notify();
  return absl::OkStatus();
}

void SchedulerImpl::ApplyAdd(PendingAdd& add, core::Now now) {
  core::Output out;
  absl::Status s = plan_.UpsertJob(add.spec, std::move(add.source), now, &out,
                                   add.requested);
  if (!s.ok()) Die(absl::StrCat("a validated job was refused: ", s.ToString()));
  Absorb(out, false);
  functions_[add.spec.key] = std::move(add.fn);
}

absl::Status SchedulerImpl::RemoveJob(const JobKey& key) {
  return Call<absl::Status>([&] {
    core::Output out;
    absl::Status s = plan_.RemoveJob(key, Now(), &out);
    Absorb(out, false);
    if (s.ok()) functions_.erase(key);
    return s;
  });
}

absl::Status SchedulerImpl::PauseJob(const JobKey& key) {
  return Call<absl::Status>([&] {
    core::Output out;
    absl::Status s = plan_.PauseJob(key, Now(), &out);
    Absorb(out, false);
    return s;
  });
}

absl::Status SchedulerImpl::ResumeJob(const JobKey& key) {
  return Call<absl::Status>([&] {
    core::Output out;
    absl::Status s = plan_.ResumeJob(key, Now(), &out);
    Absorb(out, false);
    return s;
  });
}

absl::StatusOr<uint64_t> SchedulerImpl::TriggerJob(const JobKey& key) {
  return Call<absl::StatusOr<uint64_t>>([&]() -> absl::StatusOr<uint64_t> {
    core::Output out;
    absl::StatusOr<core::RunId> run = plan_.TriggerJob(key, Now(), &out);
    Absorb(out, false);
    return run;
  });
}

absl::StatusOr<absl::Time> SchedulerImpl::NextFireTime(const JobKey& key) {
  return Call<absl::StatusOr<absl::Time>>([&]() -> absl::StatusOr<absl::Time> {
    // Generations start at 1: 0 means the Plan does not know the job.
    if (plan_.Generation(key) == 0) {
      return absl::NotFoundError(absl::StrCat("no job ", key.ToString()));
    }
    return plan_.NextFireTime(key);
  });
}

void SchedulerImpl::Shutdown(absl::Duration grace) {
  absl::MutexLock shutdown_lock(&shutdown_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kNew) state_ = State::kStopped;
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
  absl::MutexLock lock(&mu_);
  state_ = State::kStopped;
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

std::vector<core::Event> SchedulerImpl::TakeResults() {
  std::vector<core::Event> events;
  for (int i = 0; i <= options_.worker_threads; ++i) {
    Attempt* list =
        results_[i].head.exchange(nullptr, std::memory_order_acquire);
    const size_t first = events.size();
    for (Attempt* a = list; a != nullptr; a = a->next_result)
      events.emplace_back(std::move(a->result));
    std::reverse(events.begin() + first, events.end());  // oldest first
  }
  return events;
}

absl::StatusOr<std::unique_ptr<Scheduler>> CreateScheduler(
    SchedulerOptions options, std::shared_ptr<MemoryStore> store) {
  if (options.worker_threads < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker_threads: ", options.worker_threads, " is below 1"));
  }
  if (options.max_concurrent_runs < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_concurrent_runs: ", options.max_concurrent_runs, " is below 0"));
  }
  for (size_t i = 0; i < options.interceptors.size(); ++i) {
    if (options.interceptors[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("interceptors[", i, "]: is null"));
    }
  }
  if (store == nullptr) return absl::InvalidArgumentError("store: is null");
  Clock& clock = options.clock != nullptr ? *options.clock : RealClock::Get();
  core::PlanOptions plan;
  plan.lookahead = options.lookahead;
  plan.max_concurrent_runs = options.max_concurrent_runs == 0
                                 ? options.worker_threads
                                 : options.max_concurrent_runs;
  plan.seed = options.seed != 0
                  ? options.seed
                  : static_cast<uint64_t>(absl::ToUnixNanos(clock.Now()));
  // One process, one in-memory store: the lease is implicit, and its token
  // never changes.
  plan.token = 1;
  if (absl::Status s = core::Plan::ValidateOptions(plan); !s.ok()) return s;
  return std::unique_ptr<Scheduler>(
      new SchedulerImpl(std::move(options), clock, plan, std::move(store)));
}

}  // namespace driver

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    SchedulerOptions options) {
  return driver::CreateScheduler(std::move(options),
                                 std::make_shared<driver::MemoryStore>());
}

}  // namespace chime
