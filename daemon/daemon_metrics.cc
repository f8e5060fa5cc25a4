#include "daemon/daemon_metrics.h"

#include <optional>
#include <utility>
#include <vector>

#include "src/base/status_macros.h"

namespace chime::daemon {
namespace {

using metrics::Sample;

bool IsSkip(const std::string& reason) {
  return reason == "overlap" || reason == "buffer_full" || reason == "replaced";
}

bool IsFinal(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled" ||
         state == "lost";
}

// The scheduler's counts, read once per scrape by each callback family.
std::vector<Sample> One(double value) { return {Sample{{}, value}}; }

}  // namespace

absl::StatusOr<std::unique_ptr<DaemonMetrics>> DaemonMetrics::Create(
    std::function<absl::StatusOr<SchedulerStats>()> stats,
    std::function<int()> file_errors) {
  std::unique_ptr<DaemonMetrics> m(new DaemonMetrics());
  RETURN_IF_ERROR(m->Register(std::move(stats), std::move(file_errors)));
  return m;
}

absl::Status AddClockOffsetGauge(
    metrics::Registry& r,
    std::function<std::optional<absl::Duration>()> offset) {
  return r.AddGaugeCallback(
      "chime_clock_offset_seconds",
      "The store's wall clock minus this node's, measured at the last lease "
      "renewal (absent until measured). A node off by more than "
      "max_clock_skew does not schedule.",
      {}, [offset = std::move(offset)] {
        const std::optional<absl::Duration> d = offset();
        return d.has_value() ? One(absl::ToDoubleSeconds(*d))
                             : std::vector<Sample>{};
      });
}

absl::Status DaemonMetrics::Register(
    std::function<absl::StatusOr<SchedulerStats>()> stats_fn,
    std::function<int()> file_errors) {
  // Each callback asks the scheduler again: a scrape costs a few round trips
  // to its thread (none waits for the store), which is nothing at scrape
  // rates.
  auto stats = [stats_fn = std::move(stats_fn)]() -> SchedulerStats {
    absl::StatusOr<SchedulerStats> s = stats_fn();
    return s.ok() ? *std::move(s) : SchedulerStats{};
  };
  metrics::Registry& r = registry_;
  RETURN_IF_ERROR(r.AddCounterCallback(
      "chime_fires_total",
      "Scheduled fires decided: run, or skipped by the overlap policy, or "
      "missed (misfire, paused, ...), by reason.",
      {"outcome", "reason"}, [stats] {
        const SchedulerStats s = stats();
        std::vector<Sample> out = {
            {{"run", ""}, static_cast<double>(s.fires_run)}};
        for (const auto& [reason, n] : s.fires_not_run) {
          out.push_back({{IsSkip(reason) ? "skipped" : "missed", reason},
                         static_cast<double>(n)});
        }
        return out;
      }));
  RETURN_IF_ERROR(r.AddCounterCallback(
      "chime_runs_finished_total", "Runs that ended, by final state.",
      {"state"}, [stats] {
        const SchedulerStats s = stats();
        return std::vector<Sample>{
            {{"succeeded"}, static_cast<double>(s.runs_succeeded)},
            {{"failed"}, static_cast<double>(s.runs_failed)},
            {{"cancelled"}, static_cast<double>(s.runs_cancelled)}};
      }));
  RETURN_IF_ERROR(r.AddCounterCallback(
      "chime_retries_total", "Attempts scheduled again after a failed one.", {},
      [stats] { return One(static_cast<double>(stats().retries)); }));
  RETURN_IF_ERROR(r.AddCounterCallback(
      "chime_attempt_timeouts_total", "Attempts that hit their timeout.", {},
      [stats] { return One(static_cast<double>(stats().timeouts)); }));
  RETURN_IF_ERROR(r.AddCounterCallback(
      "chime_clock_steps_total",
      "Wall-clock steps detected (the wall clock jumped relative to the "
      "monotonic clock).",
      {}, [stats] { return One(static_cast<double>(stats().clock_steps)); }));
  RETURN_IF_ERROR(
      AddClockOffsetGauge(r, [stats] { return stats().clock_offset; }));
  RETURN_IF_ERROR(r.AddGaugeCallback(
      "chime_runs", "Runs not finished, by namespace and state.",
      {"namespace", "state"}, [stats] {
        std::vector<Sample> out;
        for (const auto& [ns, load] : stats().by_namespace) {
          out.push_back({{ns, "pending"}, static_cast<double>(load.pending)});
          out.push_back({{ns, "running"}, static_cast<double>(load.running)});
        }
        return out;
      }));
  RETURN_IF_ERROR(
      r.AddGaugeCallback("chime_jobs", "Jobs, by state.", {"state"}, [stats] {
        const SchedulerStats s = stats();
        return std::vector<Sample>{
            {{"active"}, static_cast<double>(s.jobs - s.jobs_paused)},
            {{"paused"}, static_cast<double>(s.jobs_paused)},
            {{"elsewhere"}, static_cast<double>(s.jobs_elsewhere)}};
      }));
  RETURN_IF_ERROR(r.AddGaugeCallback(
      "chime_shards_held",
      "Shards this node holds and schedules (with shards; 0 otherwise).", {},
      [stats] { return One(static_cast<double>(stats().shards.size())); }));
  RETURN_IF_ERROR(r.AddGaugeCallback(
      "chime_job_file_errors",
      "Job files that did not load (the version loaded before stays in "
      "force).",
      {}, [file_errors = std::move(file_errors)] {
        return One(static_cast<double>(file_errors()));
      }));
  ASSIGN_OR_RETURN(lost_, r.AddCounter("chime_runs_lost_total",
                                       "Runs found unfinished after a crash "
                                       "(recorded lost).",
                                       {}));
  ASSIGN_OR_RETURN(executor_errors_,
                   r.AddCounter("chime_executor_errors_total",
                                "Attempts that failed before their target "
                                "could run (spawn, connect, TLS, ...).",
                                {"executor", "kind"}));
  ASSIGN_OR_RETURN(store_errors_,
                   r.AddCounter("chime_store_write_errors_total",
                                "Store writes that failed (re-sent when the "
                                "store was unavailable).",
                                {"op"}));
  ASSIGN_OR_RETURN(pruned_,
                   r.AddCounter("chime_history_deleted_total",
                                "Run history deleted by retention: finished "
                                "runs, missed records.",
                                {"kind"}));
  const std::vector<double> seconds =
      metrics::ExponentialBuckets(0.001, 4, 10);  // 1 ms .. ~4.4 min
  ASSIGN_OR_RETURN(
      duration_,
      r.AddHistogram("chime_run_duration_seconds",
                     "Runs from their first start to their end.", seconds));
  ASSIGN_OR_RETURN(lag_,
                   r.AddHistogram("chime_schedule_lag_seconds",
                                  "How late runs start: first start minus the "
                                  "scheduled time.",
                                  metrics::ExponentialBuckets(0.0005, 4, 10)));
  ASSIGN_OR_RETURN(
      store_latency_,
      r.AddHistogram("chime_store_write_seconds",
                     "Store write latency, by operation.",
                     metrics::ExponentialBuckets(0.0001, 4, 10), {"op"}));
  ASSIGN_OR_RETURN(
      store_items_,
      r.AddHistogram("chime_store_write_items",
                     "Items per store write (group commit batch "
                     "size), by operation.",
                     metrics::ExponentialBuckets(1, 4, 8), {"op"}));
  lost_->With({});
  return absl::OkStatus();
}

void DaemonMetrics::OnRunEvent(const RunEvent& e) {
  if (e.run_id == 0) return;  // fires not run: counted from Stats
  if (e.to == "lost") lost_->With({}).Increment();
  if (e.to == "running") {
    absl::MutexLock lock(&mu_);
    if (started_.emplace(e.run_id, e.at).second &&
        e.fire.scheduled_time != absl::Time()) {
      lag_->With({}).Observe(
          absl::ToDoubleSeconds(e.at - e.fire.scheduled_time));
    }
    return;
  }
  if (!IsFinal(e.to)) return;
  absl::MutexLock lock(&mu_);
  auto it = started_.find(e.run_id);
  if (it == started_.end()) return;  // ended before it started
  duration_->With({}).Observe(absl::ToDoubleSeconds(e.at - it->second));
  started_.erase(it);
}

void DaemonMetrics::OnHistoryPruned(int64_t runs, int64_t missed) {
  pruned_->With({"runs"}).Increment(static_cast<double>(runs));
  pruned_->With({"missed"}).Increment(static_cast<double>(missed));
}

void DaemonMetrics::OnStoreWrite(const StoreWrite& w) {
  const std::string op(w.op);
  store_latency_->With({op}).Observe(absl::ToDoubleSeconds(w.latency));
  store_items_->With({op}).Observe(static_cast<double>(w.items));
  if (!w.status.ok()) store_errors_->With({op}).Increment();
}

void DaemonMetrics::OnExecutorError(absl::string_view executor,
                                    absl::string_view kind) {
  executor_errors_->With({std::string(executor), std::string(kind)})
      .Increment();
}

}  // namespace chime::daemon
